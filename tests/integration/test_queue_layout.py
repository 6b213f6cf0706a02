"""Runtime-class queues (queues/runtime) on the real slurmctld: the partitions and the
job_submit.lua the advisor emits are accepted, pending jobs are moved to their classes,
new jobs land where the route sends them, a boundary change moves a pending job, and one
class again removes the classes with every pending job back in the default partition.

The test cluster's default partition ``batch`` holds n[1-4] (16 CPUs each); two classes
split it into n[1-2] and n[3-4]; a job holding all 64 CPUs keeps the others pending."""
from __future__ import annotations

import time

import pytest

from advisor.adapters import slurm_cli
from advisor.adapters.slurm_apply import apply_change
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.adapters.slurm_text import parse_partitions
from advisor.plugins.contract import Context
from advisor.plugins.spec import parse_policy
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.slurmconf import change_for
from tests.integration.test_slurm_snapshot import submit

pytestmark = pytest.mark.slurm


def _apply(spec: str):
    commands = SlurmCommands()
    snap = slurm_cli.snapshot(commands)
    cand = slurm_candidate(parse_policy(spec), Context(snap.machine, snap.config))
    change = change_for(cand, snap)
    return change, apply_change(change, snap, commands)


def _pending(slurm) -> dict[int, str]:
    out = slurm.run("squeue", "-h", "-t", "PD", "-o", "%i %P")
    return {int(i): p for i, p in (line.split() for line in out.splitlines() if line.strip())}


def _partitions(slurm) -> dict:
    text = slurm.run("scontrol", "show", "partition", "-o")
    nodes = tuple(f"n{i}" for i in range(1, 5))
    return {p.name: p for p in parse_partitions(text, nodes)}


def test_runtime_classes_on_the_real_slurmctld(included):
    slurm, fragment, lua = included
    blocker = submit(slurm, ["-n", "64", "-t", "15"], 900)
    time.sleep(2)
    short = submit(slurm, ["-n", "16", "-t", "10"], 20)
    middle = submit(slurm, ["-n", "16", "-t", "30"], 20)
    long_ = submit(slurm, ["-n", "16", "-t", "120"], 20)
    wide = submit(slurm, ["-n", "48", "-t", "10"], 20)      # wider than either class
    other = submit(slurm, ["-n", "1", "-t", "10", "-p", "high"], 20)
    time.sleep(2)

    change, applied = _apply("easy:FCFS:P=2:cuts=20m")
    print(f"\n{change.fragment}\n{applied}")
    assert "PartitionName=batch1 Nodes=n[1-2] MaxTime=20" in fragment.read_text()
    assert lua.exists() and "advisor_route" in lua.read_text()
    parts = _partitions(slurm)
    assert parts["batch1"].nodes == ("n1", "n2") and parts["batch1"].max_time == 1200
    assert parts["batch2"].nodes == ("n3", "n4") and parts["batch2"].max_time is None
    assert parts["batch"].default and parts["batch"].state == "UP"    # the site's own stays
    where = _pending(slurm)
    assert where[short] == "batch1,batch2" and where[middle] == "batch2"
    assert where[long_] == "batch2" and where[wide] == "batch" and where[other] == "high"

    # new jobs: job_submit.lua routes them by limit (no limit: the default's, unlimited)
    quick = submit(slurm, ["-n", "1", "-t", "5"], 5)
    hour = submit(slurm, ["-n", "1", "-t", "60"], 5)
    unset = submit(slurm, ["-n", "1"], 5)
    time.sleep(1)
    where = _pending(slurm)
    assert (where[quick], where[hour], where[unset]) == ("batch1,batch2", "batch2", "batch2")

    # the boundaries move to 40 minutes: the 30-minute job may now use the first class
    _apply("easy:FCFS:P=2:cuts=40m")
    assert _partitions(slurm)["batch1"].max_time == 2400
    assert _pending(slurm)[middle] == "batch1,batch2"

    # one queue again: the classes go, and every job waiting in them is back in batch
    change, _ = _apply("easy:FCFS:P=1")
    assert set(change.removed) == {"batch1", "batch2"}
    assert not {"batch1", "batch2"} & set(_partitions(slurm))
    where = _pending(slurm)
    assert {where[j] for j in (short, middle, long_, wide, quick, hour, unset)} == {"batch"}
    assert slurm.run("squeue", "-h", "-j", str(blocker), "-o", "%T").strip() == "RUNNING"
