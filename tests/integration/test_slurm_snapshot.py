"""Snapshots and history against each real Slurm release of the harness (Debian's daemons,
22.05, 24.11 and 26.05): what the advisor sees must be what was submitted and what scontrol
reports."""
import json
import shutil
import time
from pathlib import Path

import pytest

from advisor.adapters import slurm_cli
from advisor.adapters.slurm_text import key_values, slurm_duration
from advisor.adapters.swf import read_swf, write_swf
from advisor.cli import main
from advisor.model import Snapshot
from tests.unit.adapters.test_slurm_accounting import whole_nodes

pytestmark = pytest.mark.slurm

# (name, sbatch options, sleep seconds): sizes, limits, partitions, one held, one dependent.
MIX = [
    ("wide", ["-n", "48", "-t", "10"], 300),
    ("short", ["-p", "short", "-n", "8", "-t", "20"], 300),
    ("big", ["-n", "32", "-t", "20"], 60),
    ("unlimited", ["-n", "4"], 60),
    ("two-partitions", ["-p", "batch,high", "-n", "24", "-t", "7"], 10),
    ("held", ["-H", "-n", "1", "-t", "5"], 10),
    ("dependent", ["-d", "afterok:{wide}", "-n", "2", "-t", "5"], 10),
    ("per-task", ["-c", "4", "-t", "15"], 10),
    ("whole-node", ["--exclusive", "-n", "1", "-t", "5"], 10),
]


def submit(slurm, options: list[str], sleep: int) -> int:
    out = slurm.run("sbatch", "--parsable", "-o", "/dev/null", *options,
                    "--wrap", f"sleep {sleep}")
    return int(out.strip().split(";")[0])


def scontrol_jobs(slurm) -> dict[int, dict[str, str]]:
    jobs = {}
    for line in slurm.run("scontrol", "show", "job", "--oneliner").splitlines():
        if line.strip():
            kv = key_values(line)
            jobs[int(kv["JobId"])] = kv
    return jobs


def epoch(text: str) -> int | None:
    if text in ("Unknown", "None", "N/A", ""):
        return None
    return int(time.mktime(time.strptime(text, "%Y-%m-%dT%H:%M:%S")))


@pytest.fixture()
def submitted(clean_queue):
    slurm = clean_queue
    ids: dict[str, int] = {}
    for name, options, sleep in MIX:
        ids[name] = submit(slurm, [o.format(**ids) for o in options], sleep)
    time.sleep(4)  # a few backfill cycles (bf_interval=1): the schedule settles
    return slurm, ids


def test_snapshot_matches_what_was_submitted_and_scontrol(submitted):
    slurm, ids = submitted
    snap = slurm_cli.snapshot()
    truth = scontrol_jobs(slurm)
    jobs = {j.job_id: j for j in (*snap.running, *snap.pending)}
    assert set(ids.values()) <= set(jobs)
    for name, options, _ in MIX:
        job, kv = jobs[ids[name]], truth[ids[name]]
        assert job.state == kv["JobState"], name
        assert job.cpus == int(kv["NumCPUs"]), name
        assert job.time_limit == slurm_duration(kv["TimeLimit"]), name
        assert ",".join(job.partitions) == kv["Partition"], name
        assert job.exclusive == whole_nodes(kv) == (name == "whole-node"), name
        assert abs(job.submit_time - epoch(kv["SubmitTime"])) <= 1, name
        if job.state == "RUNNING":
            assert abs(job.start_time - epoch(kv["StartTime"])) <= 1, name
            assert 0 <= job.elapsed <= snap.time - job.start_time + 1
        else:
            assert job.priority == int(kv["Priority"]), name
        if "-t" in options:  # the limit asked for, in seconds
            assert job.time_limit == int(options[options.index("-t") + 1]) * 60, name
    # batch has MaxTime=INFINITE: UNLIMITED while the job waits; once it runs, 22.05 to
    # 26.05 report a year (365-00:00:00, as scontrol does: checked above)
    unlimited = jobs[ids["unlimited"]]
    assert unlimited.time_limit == (None if unlimited.state == "PENDING" else 365 * 86400)
    assert jobs[ids["per-task"]].cpus == 4
    assert jobs[ids["wide"]].cpus == 48
    # which of them start depends on priorities and on the order slurmctld saw them; the
    # mix fills the 64 CPUs, so some run and some wait
    assert snap.running and snap.pending and snap.busy_cpus <= 64
    held = jobs[ids["held"]]
    assert held.held and held.state_reason == "JobHeldUser" and held.priority == 0
    dependent = jobs[ids["dependent"]]
    assert dependent.state == "PENDING" and f"afterok:{ids['wide']}" in dependent.dependency
    both = jobs[ids["two-partitions"]]  # pending: both asked for; running: where it runs
    assert both.partitions == (("batch", "high") if both.state == "PENDING" else
                               (both.partition,)) and both.partition in ("batch", "high")


def test_snapshot_machine_config_and_priorities(submitted):
    slurm, ids = submitted
    snap = slurm_cli.snapshot()
    assert [(n.name, n.cpus) for n in snap.machine.nodes] == [(f"n{i}", 16) for i in
                                                              range(1, 5)]
    assert sum(n.alloc_cpus for n in snap.machine.nodes) == snap.busy_cpus
    # each node's own allocation, as scontrol shows it (24.11's sinfo sums a group's)
    shown = [key_values(line) for line in slurm.run("scontrol", "show", "node",
                                                    "--oneliner").splitlines() if line]
    assert {n.name: (n.alloc_cpus, n.alloc_memory) for n in snap.machine.nodes} == \
        {kv["NodeName"]: (int(kv["CPUAlloc"]), int(kv["AllocMem"])) for kv in shown}
    short = snap.machine.partition("short")
    assert (short.nodes, short.max_time, short.default_time, short.priority_job_factor) == \
        (("n3", "n4"), 1800, 300, 5)
    assert snap.machine.partition("batch").default
    c = snap.config
    assert (c.priority_type, c.priority_weight_job_size, c.priority_weight_partition) == \
        ("priority/multifactor", 500, 1000)
    assert c.backfill.bf_interval == 1 and c.backfill.bf_continue
    assert c.priority_calc_period == 60 and c.slurm_version.startswith(slurm.release.name)
    # sprio's factors add up to the priority squeue reports (a tolerance of 1 for the
    # truncation Slurm applies to the sum).
    scored = [j for j in snap.pending if j.priority_factors]
    assert scored
    for j in scored:
        parts = sum(v for k, v in j.priority_factors.items() if k not in ("priority", "nice"))
        assert abs(parts - j.priority) <= 1, (j.job_id, j.priority_factors)
    assert not jobs_without_factors(snap) - {ids["held"], ids["dependent"]}
    # lossless through JSON
    assert Snapshot.from_dict(json.loads(json.dumps(snap.to_dict()))) == snap


def jobs_without_factors(snap):
    return {j.job_id for j in snap.pending if not j.priority_factors}


def test_cli_snapshot_json_contract(submitted, capsys):
    assert main(["snapshot", "--from", "slurm:cli", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"time", "machine", "running", "pending", "config"} <= set(doc)
    for job in doc["running"]:
        assert {"job_id", "user", "partition", "cpus", "submit_time", "start_time",
                "time_limit"} <= set(job)
    for job in doc["pending"]:
        assert {"job_id", "user", "partition", "cpus", "submit_time", "time_limit",
                "priority"} <= set(job)
    assert main(["snapshot", "--from", "slurm"]) == 0  # the rich view, auto adapter
    assert "Top of the queue" in capsys.readouterr().out


def test_history_round_trips_to_swf(clean_queue, tmp_path, capsys):
    slurm = clean_queue
    sleeps = {submit(slurm, ["-n", str(n), "-t", "1"], s): (n, s)
              for n, s in ((1, 1), (4, 2), (16, 3))}
    out = tmp_path / "site.swf.gz"
    deadline = time.monotonic() + 60
    while True:  # sacct lags: records reach slurmdbd asynchronously
        assert main(["history", "--since", "10m", "--out", str(out), "--procs", "64",
                     "--json"]) == 0
        capsys.readouterr()
        jobs = read_swf(out).jobs.set_index("job_id")
        if set(sleeps) <= set(jobs.index) or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert set(sleeps) <= set(jobs.index)
    for job_id, (cpus, sleep) in sleeps.items():
        row = jobs.loc[job_id]
        assert row["req_procs"] == cpus and row["alloc_procs"] == cpus
        assert row["req_time"] == 60 and row["status"] == 1
        assert sleep <= row["runtime"] <= sleep + 2
        # field 6: sacct's TotalCPU per allocated CPU; a sleep uses next to none (DC-like)
        assert 0 <= row["avg_cpu"] <= 0.5 * max(row["runtime"], 1)
    workload = read_swf(out)
    assert workload.machine.procs == 64 and workload.header.unix_start_time
    again = tmp_path / "again.swf"
    write_swf(workload, again)
    assert read_swf(again).jobs.equals(workload.jobs)


def test_unreachable_slurmctld_is_one_line_and_exit_3(slurm, tmp_path, capsys, monkeypatch):
    conf = Path(slurm.env["SLURM_CONF"])
    text = conf.read_text()
    for key in ("SlurmctldPort=", "AccountingStoragePort="):  # nothing listens on port 9
        line = next(line for line in text.splitlines() if line.startswith(key))
        text = text.replace(line, f"{key}9")
    dead = tmp_path / "slurm.conf"
    dead.write_text(text)
    monkeypatch.setenv("SLURM_CONF", str(dead))
    assert main(["snapshot", "--from", "slurm:cli"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "squeue" in err and "slurmctld" in err
    assert main(["history", "--since", "1h", "--out", str(tmp_path / "h.swf")]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sacct" in err and not (tmp_path / "h.swf").exists()


def test_timeout_and_missing_binaries(slurm, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(tmp_path / "missing.conf"))  # clients retry: hang
    assert main(["snapshot", "--from", "slurm:cli", "--slurm-timeout", "1"]) == 3
    assert "no answer within 1 s" in capsys.readouterr().err
    assert main(["snapshot", "--from", "slurm:cli", "--slurm-bin", str(tmp_path)]) == 3
    assert "squeue: not found" in capsys.readouterr().err
    # the configured directory is honoured
    bindir = Path(shutil.which("squeue")).parent
    monkeypatch.setenv("SLURM_CONF", slurm.env["SLURM_CONF"])
    assert main(["snapshot", "--from", "slurm:cli", "--slurm-bin", str(bindir)]) == 0
