"""A site's own policy family with a mechanic of its own (examples/site-family: a cap on
each user's running CPUs, played in the slurm mode by the family's player and enacted as a
QOS limit with sacctmgr), installed by pip as a real package: nothing under advisor/ or
policies/ knows it. Listed; played on a recorded snapshot of the real cluster, where no
job the cap covers starts past it; refused where slurmctld would not enforce it; and on
the real slurmctld, applied, enforced and put back."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.test_site_plugin import pip_install
from tests.integration.test_slurm_snapshot import submit

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "site-family"
CAP = 2          # the recorded jobs of the QOS normal ask 1 to 4 CPUs


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("family")
    pip_install(EXAMPLE, target)
    return target


def python(site: Path, code: str, *args: str) -> subprocess.CompletedProcess:
    """``code`` in a process that sees the installed family (and the repository's tests)."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=f"{site}:{ROOT}"))


PLAY = """
import json, sys
from advisor.model import job_limit
from advisor.engine.slurm import slurm_input
from advisor.plugins.spec import parse_policy
from advisor.whatif.candidates import candidates_for
from advisor.whatif.scenario import candidate_input, candidate_starts, nice_of
from tests.unit.adapters.test_slurm_accounting import recorded_snapshot
snap = recorded_snapshot()
cands = candidates_for(snap, [parse_policy(sys.argv[1])])
# each job runs 10 min from its start (those running: from the snapshot, in id order)
runtimes = {j.job_id: 600 + 60 * j.job_id for j in (*snap.running, *snap.pending)}
base = slurm_input(snap, runtimes, config=snap.config)
out = {"player": type(cands[-1].player).__name__, "starts": {}, "jobs": {}}
for c in cands:
    inp = candidate_input(base, c, snap, nice_of(base, snap), runtimes)
    start = candidate_starts(inp, c, snap, runtimes)
    out["starts"][c.spec] = dict(zip(map(str, inp.job_ids.tolist()), start.tolist()))
for j in (*snap.running, *snap.pending):
    began = j.start_time if j.start_time is not None else None
    out["jobs"][str(j.job_id)] = [j.user, j.qos, j.cpus, began, runtimes[j.job_id]]
out["time"] = snap.time
print(json.dumps(out))
"""


def test_the_family_is_listed_from_its_package(site):
    done = subprocess.run([sys.executable, "-m", "advisor.cli", "policies", "--json"],
                          capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(site)))
    assert done.returncode == 0, done.stderr
    family = next(f for f in json.loads(done.stdout)["families"] if f["family"] == "usercap")
    assert family["members"][0]["package"] == "advisor-site-usercap 0.1.0"


def test_its_player_keeps_every_user_under_the_cap_in_the_slurm_mode(site):
    spec = f"easy:FCFS + usercap/cpus:cpus={CAP}"
    done = python(site, PLAY, spec)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["player"] == "CapPlayer"
    capped, free = doc["starts"][spec], doc["starts"]["current"]
    jobs = {int(k): v for k, v in doc["jobs"].items()}

    def running_cpus(starts, at, user):
        return sum(cpus for j, (u, qos, cpus, _, runtime) in jobs.items()
                   if u == user and qos == "normal" and 0 <= starts.get(str(j), -1) <= at
                   < starts[str(j)] + runtime)

    started = [j for j, v in jobs.items() if v[1] == "normal" and v[3] is None
               and capped.get(str(j), -1) >= doc["time"]]
    assert started, "no job the cap covers started in the play"
    for j in started:            # a job starts only within its user's cap, as slurmctld
        assert running_cpus(capped, capped[str(j)], jobs[j][0]) <= CAP, j
    # without the cap the same jobs start sooner: the cap is what moved them
    assert sum(capped[str(j)] for j in started) > sum(free[str(j)] for j in started)


def test_it_is_refused_where_slurmctld_would_not_enforce_it(site, tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "advisor.cli", "recommend", "--from", "swf:KTH-SP2@150d",
         "--candidate", f"easy:FCFS + usercap/cpus:cpus={CAP}", "--no-store"],
        capture_output=True, text=True, cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(site)))
    assert done.returncode == 2 and "AccountingStorageEnforce=limits" in done.stderr


APPLY = """
import json, sys
from advisor.adapters import slurm_cli
from advisor.adapters.slurm_apply import apply_change
from advisor.plugins.spec import parse_policy
from advisor.whatif.candidates import context_for, slurm_candidate
from advisor.whatif.slurmconf import change_for
commands = slurm_cli.SlurmCommands()
snap = slurm_cli.snapshot(commands)
cand = slurm_candidate(parse_policy(sys.argv[1]), context_for(snap))
change = change_for(cand, snap)
applied = apply_change(change, snap, commands)
print(json.dumps({"commands": list(change.commands), "undo": list(change.undo),
                  "applied": applied.as_dict()}))
"""


def qos_cap(slurm) -> str:
    out = slurm.run("sacctmgr", "-n", "-P", "show", "qos", "where", "name=normal",
                    "format=MaxTRESPU")
    return out.strip()


@pytest.mark.slurm
def test_the_cap_is_applied_enforced_by_slurmctld_and_put_back(site, included):
    slurm, _, _ = included
    spec = "easy:FCFS + usercap/cpus:cpus=16"
    try:
        done = python(site, APPLY, spec)
        assert done.returncode == 0, done.stderr
        doc = json.loads(done.stdout)
        cap = "sacctmgr -i modify qos where name=normal set MaxTRESPerUser=cpu=16"
        assert cap in doc["commands"] and doc["undo"] == [
            "sacctmgr -i modify qos where name=normal set MaxTRESPerUser=cpu=-1"]
        assert qos_cap(slurm) == "cpu=16"
        # three 16-CPU jobs of one user on 64 idle CPUs: slurmctld runs one at a time
        ids = [submit(slurm, ["-n", "16", "-t", "5", "--qos", "normal"], 60)
               for _ in range(3)]
        time.sleep(4)
        states = {int(i): (s, r) for i, s, r in (
            line.split(maxsplit=2) for line in slurm.run(
                "squeue", "-h", "-o", "%i %T %r", "-j", ",".join(map(str, ids))).splitlines())}
        assert sorted(s for s, _ in states.values()) == ["PENDING", "PENDING", "RUNNING"]
        assert all("QOSMaxCpuPerUserLimit" in r for s, r in states.values() if s == "PENDING")
    finally:
        slurm.run("sacctmgr", "-i", "modify", "qos", "where", "name=normal", "set",
                  "MaxTRESPerUser=cpu=-1")
    assert qos_cap(slurm) == ""
