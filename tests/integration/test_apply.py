"""Live snapshot -> recommend -> ``--apply`` on the real test cluster (issue 5, item 9).

The queue is built so that the answer is not in doubt: a job holding all 64 CPUs (for up to
fifteen minutes; the test cancels it), then a wide, long job (64 CPUs, 60 min limit) and,
after it, four narrow short ones (16 CPUs, 2 min). The test cluster's own weights (age, job
size favouring large jobs, partition) put the wide job first; shortest-first puts the four
short ones first and waits far less. The test recommends between the two with the
advisor's CLI, applies, and checks on slurmctld itself: ``scontrol show config``,
``sprio``, the pending order, and the order in which the jobs really start when the first
job ends.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from advisor.adapters import slurm_cli
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.adapters.slurm_text import parse_config, parse_sprio, SPRIO_FORMAT
from advisor.whatif.candidates import candidates_for
from advisor.cli import main
from advisor.engine.slurm import run_slurm, slurm_input
from advisor.model import job_limit
from advisor.plugins.spec import parse_policy
from advisor.whatif.scenario import candidate_input, nice_of
from tests.integration.test_slurm_snapshot import submit

pytestmark = pytest.mark.slurm
#: the site's check of the day before refuses nothing here: these tests are of --apply (a
#: run near midnight would judge the session's own jobs; docs/check.md, section 3)
TRUSTING = ("--fidelity-floor", "0")


def _recommend(tmp_path: Path, capsys, *extra: str) -> tuple[int, dict, str]:
    # (SPF zeroes the lab's PriorityWeightPartition, its policy: allowed here)
    code = main(["recommend", "--from", "slurm:cli", *TRUSTING, "--candidate", "easy:SPF",
                 "--samples", "2", "--executor", "serial", "--store",
                 str(tmp_path / "a.sqlite"), "--json", "--replace-site-policy", *extra])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def _queue(slurm) -> tuple[int, int, list[int]]:
    """The blocker (running), then the wide job and the four short ones (pending)."""
    # long enough to outlast a cold compile of the engine (about 2 min on a fresh clone)
    blocker = submit(slurm, ["-n", "64", "-t", "15"], 900)
    time.sleep(2)
    wide = submit(slurm, ["-n", "64", "-t", "60"], 600)
    short = [submit(slurm, ["-n", "16", "-t", "2"], 20) for _ in range(4)]
    time.sleep(3)                      # priorities computed (PriorityCalcPeriod=1)
    return blocker, wide, short


def _pending_by_priority(slurm) -> list[int]:
    out = slurm.run("squeue", "-h", "-t", "PD", "--sort=-p,i", "-o", "%i")
    return [int(x) for x in out.split()]


def _simulated_first(commands, spec: str = "easy:SPF") -> set[int]:
    """The pending jobs that ``spec``, as the advisor simulates it from a live snapshot,
    starts first (every job running to its limit)."""
    snap = slurm_cli.snapshot(commands)
    cand = candidates_for(snap, [parse_policy(spec)])[1]
    limits = {j.job_id: job_limit(j, snap.machine) for j in (*snap.running, *snap.pending)}
    base = slurm_input(snap, limits, config=snap.config)
    start, _ = run_slurm(candidate_input(base, cand, snap, nice_of(base, snap)))
    ids = base.job_ids
    pending = {j.job_id for j in snap.pending}
    starts = {int(i): int(t) for i, t in zip(ids, start) if int(i) in pending}
    return {i for i, t in starts.items() if t == min(starts.values())}


def test_recommend_apply_reorders_the_real_queue(included, tmp_path, capsys):
    slurm, fragment, lua = included
    blocker, wide, short = _queue(slurm)
    assert _pending_by_priority(slurm)[0] == wide, "the cluster's own weights favour the " \
        "wide job: the test's premise"

    # the lab's partitions differ in PriorityJobFactor under PriorityWeightPartition=1000:
    # a policy SPF would zero, so it is refused unless the site allows it
    assert main(["recommend", "--from", "slurm:cli", *TRUSTING, "--candidate", "easy:SPF",
                 "--samples", "2", "--executor", "serial", "--no-store", "--apply"]) == 2
    assert "PriorityWeightPartition=1000" in capsys.readouterr().err
    first = _simulated_first(SlurmCommands())   # the snapshot --apply will also see
    code, doc, _ = _recommend(tmp_path, capsys, "--apply")
    assert code == 10, doc["reason"]
    assert doc["chosen"]["spec"] == "easy:SPF"
    # the site was checked first: the day before, from its accounting (on a cluster
    # started today, nothing to judge, and so no refusal)
    site = doc["site_check"]
    assert site["until"] - site["since"] == 86400 and site["until"] <= doc["snapshot_time"]
    applied = doc["applied"]
    assert "error" not in applied, applied

    # the fragment overrides slurm.conf's own SchedulerParameters (a later line wins), and
    # slurmctld reports every key the simulation played
    shown = parse_config(slurm.run("scontrol", "show", "config"))
    assert "bf_job_part_count_reserve" not in (slurm.root / "etc" / "slurm.conf").read_text()
    assert shown.backfill.bf_job_part_count_reserve == 1
    assert shown.priority_weight_age == 0 and shown.priority_weight_job_size == 0
    assert "lua" in shown.job_submit_plugins and lua.exists()
    for key, value in applied["verified"].items():
        assert value.lower().replace(" ", "") == \
            doc["change_detail"]["diff"][key]["recommended"].lower().replace(" ", "")

    # sprio: site factors as the simulation gave them (SPF: 1440*... - limit in minutes)
    factors = parse_sprio(slurm.run("sprio", "--noheader", "--format", SPRIO_FORMAT))
    site = {job: f["site"] for (job, _), f in factors.items()}
    print(f"\napplied: {applied}\nsite factors: wide {site[wide]}, short {site[short[0]]}")
    assert site[short[0]] > site[wide]
    assert len({site[j] for j in short}) == 1
    assert _pending_by_priority(slurm)[:4] == sorted(short)

    # and the real starts follow: when the blocker ends, the four short jobs start first
    slurm.run("scancel", str(blocker))
    deadline = time.monotonic() + 60
    running: set[int] = set()
    while time.monotonic() < deadline and not running - {blocker}:
        time.sleep(1)
        running = {int(x) for x in slurm.run("squeue", "-h", "-t", "R", "-o", "%i").split()}
    assert running == set(short) == first, (running, short, wide, first)

    # a job submitted now gets its site factor from the applied job_submit.lua
    late = submit(slurm, ["-n", "1", "-t", "5"], 5)
    time.sleep(2)
    factors = parse_sprio(slurm.run("sprio", "--noheader", "--format", SPRIO_FORMAT))
    late_site = next(f["site"] for (job, _), f in factors.items() if job == late)
    assert site[wide] < late_site < site[short[0]]     # a 5 min limit: between them
    assert "PriorityWeightAge=0" in fragment.read_text()


def test_failed_reconfigure_rolls_back(included, tmp_path, capsys):
    """scontrol reconfigure fails (a wrapper in front of the real scontrol): the files are
    put back and slurmctld keeps the configuration it had."""
    slurm, fragment, lua = included
    _queue(slurm)
    # the first reconfigure fails, the rollback's succeeds
    bin_dir = _scontrol_wrapped(tmp_path, 'echo "slurm_reconfigure '
                                'error: Zero Bytes were transmitted or received" >&2; exit 1')
    before = fragment.read_text()
    code, _, err = _recommend(tmp_path, capsys, "--apply", "--slurm-bin", str(bin_dir))
    assert code == 6, err
    assert "rolled back" in err and "Zero Bytes" in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "once").exists()
    assert fragment.read_text() == before and not lua.exists()
    shown = parse_config(SlurmCommands().run("scontrol", "show", "config"))
    assert shown.priority_weight_age == 1000 and "lua" not in shown.job_submit_plugins


def _scontrol_wrapped(tmp_path: Path, first_reconfigure: str) -> Path:
    """A folder of Slurm's commands in front of the real ones, for --slurm-bin: the first
    'scontrol reconfigure' runs the shell line ``first_reconfigure`` before (or instead of)
    the real one; every other call is the real command's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("squeue", "sinfo", "sprio", "sacct", "scontrol", "sacctmgr", "sshare"):
        guard = (f'if [ "$1" = reconfigure ] && [ ! -e {tmp_path}/once ]; then touch '
                 f'{tmp_path}/once; {first_reconfigure}; fi\n') if name == "scontrol" else ""
        (bin_dir / name).write_text(f"#!/bin/sh\n{guard}exec {_which(name)} \"$@\"\n")
        (bin_dir / name).chmod(0o755)
    return bin_dir


def test_a_sigterm_during_apply_rolls_back(included, tmp_path):
    """SIGTERM reaches the advisor while --apply reconfigures (the wrapper in front of
    scontrol sends it at the first reconfigure, the new files written): the files are put
    back, slurmctld reconfigured again and left with the configuration it had, and the run
    ends with 143 and one line (issue 54)."""
    slurm, fragment, lua = included
    _queue(slurm)
    bin_dir = _scontrol_wrapped(tmp_path, "kill -TERM $PPID; sleep 5")
    before = fragment.read_text()
    done = subprocess.run([sys.executable, "-m", "advisor.cli", "recommend", "--from",
                           "slurm:cli", *TRUSTING, "--candidate", "easy:SPF", "--samples", "2",
                           "--executor", "serial", "--store", str(tmp_path / "a.sqlite"),
                           "--replace-site-policy", "--apply", "--slurm-bin", str(bin_dir)],
                          capture_output=True, text=True, timeout=900)
    assert (tmp_path / "once").exists(), "the signal was never sent: no change to apply?"
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "advisor: terminated", done.stderr
    assert "Traceback" not in done.stderr
    assert fragment.read_text() == before and not lua.exists()
    shown = parse_config(SlurmCommands().run("scontrol", "show", "config"))
    assert shown.priority_weight_age == 1000 and "lua" not in shown.job_submit_plugins


def _which(name: str) -> str:
    import shutil
    path = shutil.which(name)
    assert path, name
    return path


def test_an_os_error_while_writing_rolls_back(included, tmp_path, capsys, monkeypatch):
    """A raw OSError (not the advisor's own error) while --apply writes job_submit.lua,
    after the fragment was written: the fragment is put back and slurmctld keeps its
    configuration (issue 18, item 11)."""
    import errno

    import advisor.adapters.slurm_apply as slurm_apply
    slurm, fragment, lua = included
    _queue(slurm)
    real = slurm_apply.atomic_write

    def disk_full(path, data, *args, **kw):
        if Path(path).name == "job_submit.lua":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real(path, data, *args, **kw)

    monkeypatch.setattr(slurm_apply, "atomic_write", disk_full)
    before = fragment.read_text()
    code, _, err = _recommend(tmp_path, capsys, "--apply")
    assert code == 6, err
    assert "rolled back" in err and "No space left on device" in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert fragment.read_text() == before and not lua.exists()
    shown = parse_config(SlurmCommands().run("scontrol", "show", "config"))
    assert shown.priority_weight_age == 1000 and "lua" not in shown.job_submit_plugins


def test_a_plan_is_applied_as_site_factors_in_plan_order(included, tmp_path, capsys):
    """recommend --candidate plan2 --apply on the same queue: slurmctld accepts every
    SiteFactor command, and sprio and squeue then show the pending jobs in plan order (the
    short jobs first: PLAN 2 does not keep them behind the wide one)."""
    slurm, fragment, lua = included
    blocker, wide, short = _queue(slurm)
    code = main(["recommend", "--from", "slurm:cli", *TRUSTING, "--candidate", "plan2", "--samples",
                 "2", "--executor", "serial", "--store", str(tmp_path / "a.sqlite"),
                 "--json", "--apply"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 10, (doc.get("reason"), err)
    assert doc["chosen"]["spec"] == "plan2" and "error" not in doc["applied"]
    change = doc["change_detail"]
    assert change["diff"] == {} and change["job_submit_lua"] == ""
    planned = {}
    for line in change["commands"]:
        if line.startswith("scontrol update"):
            fields = dict(f.split("=") for f in line.split()[2:])
            planned[int(fields["JobId"])] = int(fields["SiteFactor"])
    assert set(planned) == {wide, *short}
    order = sorted(planned, key=lambda j: -planned[j])
    assert order[-1] == wide, order
    factors = parse_sprio(slurm.run("sprio", "--noheader", "--format", SPRIO_FORMAT))
    assert {job: int(f["site"]) for (job, _), f in factors.items()} == planned
    assert _pending_by_priority(slurm) == order


@pytest.mark.parametrize("spec, wide_site, short_site", [
    ("easy:SPF:scale=4", 1222, 3972),   # floor(4000 x (1 - limit / 1440) + 0.5), minutes
    ("easy:SQF:scale=4", 4000, 4000)])  # a base; CPUs by PriorityWeightTRES=CPU=-4000
def test_an_ordering_added_to_the_labs_policy_keeps_it(included, tmp_path, capsys, spec,
                                                       wide_site, short_site):
    """recommend --candidate SPEC --apply, without --replace-site-policy: the lab's
    PriorityWeightPartition (its policy) and job-size weight stay, the ordering is added at
    4 x 1000 (SPF: site factors by the limit over a day; SQF: a normalized negative CPU
    weight over a base site factor), and the narrow short jobs pass the wide long one that
    the lab's own weights put first."""
    slurm, fragment, lua = included
    submit(slurm, ["-n", "64", "-t", "15"], 900)
    time.sleep(2)
    wide = submit(slurm, ["-n", "64", "-t", "1000"], 600)
    short = [submit(slurm, ["-n", "16", "-t", "10"], 20) for _ in range(2)]
    time.sleep(3)
    assert _pending_by_priority(slurm)[0] == wide, "the test's premise"
    # the slurm mode plays the added form over the lab's weights: the short jobs first
    assert _simulated_first(SlurmCommands(), spec) == set(short)
    code = main(["recommend", "--from", "slurm:cli", *TRUSTING, "--candidate", spec,
                 "--samples", "2", "--executor", "serial", "--min-gain", "0", "--min-wins",
                 "0", "--risk", "1000", "--store", str(tmp_path / "a.sqlite"), "--json",
                 "--apply"])
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert code == 10, (doc.get("reason"), err)
    assert doc["chosen"]["overrides_site_policy"] == [] and "error" not in doc["applied"]
    shown = parse_config(slurm.run("scontrol", "show", "config"))
    assert (shown.priority_weight_partition, shown.priority_weight_job_size) == (1000, 500)
    time.sleep(2)
    factors = parse_sprio(slurm.run("sprio", "--noheader", "--format", SPRIO_FORMAT))
    site = {job: f["site"] for (job, _), f in factors.items()}
    assert (site[wide], site[short[0]]) == (wide_site, short_site), site
    assert _pending_by_priority(slurm)[:2] == sorted(short)


def _config_lines(slurm) -> dict[str, str]:
    """``scontrol show config`` as {key: value}, as slurmctld reports every key but its
    BOOT_TIME (from 23.11 ``scontrol reconfigure`` restarts slurmctld)."""
    return {k.strip(): v.strip() for k, _, v in
            (line.partition(" = ") for line in slurm.run("scontrol", "show", "config")
             .splitlines()) if v and k.strip() != "BOOT_TIME"}


@pytest.mark.parametrize("label, spec", [
    ("PriorityWeightJobSize=1000 PriorityFavorSmall=YES",
     "prio/jobsize:PriorityWeightJobSize=1000:PriorityFavorSmall=YES"),
    # (wide: 412 of job size and partition, less 600 x 64/64: 1; short: 225 - 150)
    ("PriorityWeightTRES=CPU=-600", "prio/tres:PriorityWeightTRES=CPU=-600")],
    ids=["jobsize", "tres"])
def test_a_native_change_sets_exactly_its_keys_and_rolls_back(included, tmp_path, capsys,
                                                              label, spec):
    """--apply of a knob (prio/jobsize: small jobs first, at twice the lab's weight;
    prio/tres: a CPU weight below 0 that puts the small jobs first too) on the same
    queue: first with a
    reconfigure that fails, which puts back every key slurmctld reports as it was; then
    for real, after which slurmctld reports exactly the keys the change shows changed, to
    the values shown, and no job_submit.lua (issue 58, item 5)."""
    slurm, fragment, lua = included
    _, _, short = _queue(slurm)
    before = _config_lines(slurm)
    args = ["recommend", "--from", "slurm:cli", *TRUSTING, "--candidate", label, "--samples", "2",
            "--executor", "serial", "--min-gain", "0", "--min-wins", "0", "--risk", "1000",
            "--store", str(tmp_path / "a.sqlite"), "--json", "--apply"]

    bin_dir = _scontrol_wrapped(tmp_path, 'echo "slurm_reconfigure error: '
                                'Zero Bytes were transmitted or received" >&2; exit 1')
    assert main([*args, "--slurm-bin", str(bin_dir)]) == 6
    err = capsys.readouterr().err
    assert "rolled back" in err and len(err.strip().splitlines()) == 1, err
    assert _config_lines(slurm) == before

    assert main(args) == 10
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["chosen"]["spec"] == spec, doc["chosen"]
    assert "error" not in doc["applied"], doc["applied"]
    change = doc["change_detail"]
    # slurm.conf lines and a reconfigure alone: no job_submit.lua, no job updated
    assert change["job_submit_lua"] == "" and not lua.exists()
    assert change["commands"] == ["scontrol reconfigure"]
    assert set(change["diff"]) == {k.split("=")[0] for k in label.split()}
    after = _config_lines(slurm)
    moved = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert moved == set(change["diff"]), (moved, change["diff"])
    for key, d in change["diff"].items():
        assert after[key].lower() == str(d["recommended"]).lower(), (key, after[key], d)
    # and the queue follows: the four short jobs ahead of the wide one once slurmctld
    # recomputes the priorities, at its next PriorityCalcPeriod (1 minute here)
    deadline = time.monotonic() + 90
    while _pending_by_priority(slurm)[:4] != sorted(short) and time.monotonic() < deadline:
        time.sleep(2)
    assert _pending_by_priority(slurm)[:4] == sorted(short)
