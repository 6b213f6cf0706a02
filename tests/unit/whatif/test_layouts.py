"""An enactment with a partition layout and a route: rendered as PartitionName lines (the
replaced partition kept drained while it runs jobs), job_submit.lua and ``scontrol update
Partition=``, and simulated on the same layout with the same routing; ``--apply`` refuses
to redefine a partition that slurm.conf itself holds."""
from dataclasses import dataclass

import numpy as np
import pytest

from advisor.adapters.slurm_apply import check_partitions, merged_fragment
from advisor.engine.slurm import run_slurm, slurm_input
from advisor.engine.slurm_layout import FIXED, LIMIT
from advisor.errors import BadInput
from advisor.model import Partition
from advisor.plugins import Enactment, JobColumns, LuaFragment, NoParams
from advisor.plugins.contract import Context
from advisor.plugins.registry import check
from advisor.plugins.spec import Choice, Policy, parse_policy
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.futures import draw_sample
from advisor.whatif.scenario import Task, candidate_input, evaluate, nice_of
from advisor.whatif.slurmconf import change_for
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup
from tests.unit.plugins.test_plugins import Toy

SHORT = 3600


@dataclass(frozen=True)
class ByLimit:
    """Jobs of an hour or less to ``short``, the others to ``long``."""

    name: str = "by-limit"
    lua: LuaFragment = LuaFragment(
        "route by limit", submit="   if job_desc.time_limit <= 60 then job_desc.partition = "
        "'short' else job_desc.partition = 'long' end\n")

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        return np.where(jobs.limit <= SHORT, "short", "long")


class Split(Toy):
    family, name, summary = "layout", "split", "two partitions, routed by limit"

    def enact(self, params, context):
        nodes = tuple(n.name for n in context.cluster.nodes)
        half = len(nodes) // 2
        return Enactment(partitions=(
            Partition("short", nodes[:half], max_time=SHORT, default=True),
            Partition("long", nodes[half:])), route=ByLimit(), fidelity="approximate")


@pytest.fixture(scope="module")
def kth():
    snap, hist = _setup(bundled("KTH-SP2", False))
    split = check(Split(), "layout/split", "tests")
    policy = Policy.of([*parse_policy("easy:FCFS").choices, Choice(split, NoParams())])
    return snap, hist, slurm_candidate(policy, Context(snap.machine, snap.config))


def test_the_layout_is_rendered_with_its_route(kth, tmp_path):
    snap, _, cand = kth
    change = change_for(cand, snap)
    half = len(snap.machine.nodes) // 2
    assert snap.running and change.removed == ()
    assert change.partitions == (
        f"PartitionName=short Nodes=p[1-{half}] MaxTime=60 PriorityTier=1 PriorityJobFactor=1 "
        "OverSubscribe=NO State=UP Default=YES",
        f"PartitionName=long Nodes=p[{half + 1}-{2 * half}] MaxTime=UNLIMITED PriorityTier=1 "
        "PriorityJobFactor=1 OverSubscribe=NO State=UP",
        # batch runs jobs: Slurm would fail them if it vanished
        f"PartitionName=batch Nodes=p[1-{2 * half}] MaxTime=UNLIMITED PriorityTier=1 "
        "PriorityJobFactor=1 OverSubscribe=NO State=DRAIN")
    assert all(line in change.fragment for line in change.partitions)
    assert "job_desc.partition = 'short'" in change.script
    moved = [c for c in change.commands if "Partition=" in c]
    long_jobs = [j for j in snap.pending if j.time_limit > SHORT]
    assert len(moved) == len(snap.pending) and long_jobs
    assert {f"scontrol update JobId={j.job_id} Partition=long" for j in long_jobs} <= set(moved)
    assert change.commands[0] == "scontrol reconfigure"
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=p[1-100] CPUs=1\nPartitionName=batch Nodes=ALL Default=YES\n")
    with pytest.raises(BadInput,
                       match=r"defines partition batch itself \(line 2\).*: move that line"):
        check_partitions(conf, set(change.layout_names))
    merged = merged_fragment("PartitionName=batch Nodes=ALL\nSchedulerType=sched/backfill\n",
                             change)
    assert merged.count("PartitionName=") == 3 and "State=DRAIN" in merged


def test_the_simulation_plays_the_layout_and_the_route(kth):
    snap, hist, cand = kth
    sample = draw_sample(snap, hist, 86400, 3)
    base = slurm_input(snap, sample.runtimes, sample.arrivals, config=snap.config)
    inp = candidate_input(base, cand, snap, nice_of(base, snap), sample.runtimes,
                          sample.arrivals)
    assert inp.part_nodes.shape == (2, len(snap.machine.nodes))
    assert inp.part_nodes.sum() == len(snap.machine.nodes)       # disjoint, all nodes
    limits = inp.jobs[LIMIT][inp.rec_job]
    pending = inp.jobs[FIXED][inp.rec_job] < 0
    assert ((inp.rec_part[pending] == 0) == (limits[pending] <= SHORT)).all()
    start, _ = run_slurm(inp)
    unsplit, _ = run_slurm(base)
    assert (start[base.jobs[FIXED] < 0] >= 0).any() and not np.array_equal(start, unsplit)
    out, waits, *_ = evaluate(Task(snap, (cand,), sample, 86400))
    assert out.shape[0] == 1 and np.isfinite(out[0, 1])
