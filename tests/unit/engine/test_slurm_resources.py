"""The slurm mode's resources beside CPUs: memory (when SelectTypeParameters makes it
consumable) and GRES, each case small enough to work out by hand, and an invariant over
random mixes: no node ever holds more than it has of any resource."""
from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.slurm import run_slurm, slurm_input
from advisor.engine.slurm_resources import memory_need, tres_rows
from advisor.engine.slurm_layout import WHOLE_NODE
from advisor.model import Cluster, Job, Node, Partition, SchedulingConfig, Snapshot

MEMORY = replace(SchedulingConfig(), select_type_parameters="CR_Core_Memory",
                 def_mem_per_cpu=500)


def machine(gpus=(0, 2), cpus=8, memory=4000) -> Cluster:
    names = tuple(f"n{i}" for i in range(1, len(gpus) + 1))
    nodes = tuple(Node(n, cpus, memory=memory, gres={"gpu": g} if g else {})
                  for n, g in zip(names, gpus))
    return Cluster("lab", nodes, (Partition("batch", names, default=True),))


def job(i, submit, cpus, limit=100, **kw) -> Job:
    return Job(job_id=i, user="u", partition="batch", cpus=cpus, state="PENDING",
               submit_time=submit, time_limit=limit, partitions=("batch",), **kw)


def starts(jobs, runtimes, config=MEMORY, cluster=None):
    snap = Snapshot(time=-1, machine=cluster or machine(), running=(), pending=(),
                    config=config)
    inp = slurm_input(snap, dict(zip([j.job_id for j in jobs], runtimes)), jobs, timing=None)
    start, _ = run_slurm(inp)
    order = {int(k): i for i, k in enumerate(inp.job_ids)}
    return [int(start[order[j.job_id]]) for j in jobs], inp


def test_a_gpu_job_waits_for_a_gpu_while_cpus_are_free():
    """n2 has the only 2 GPUs: two one-GPU jobs run there, the third GPU job waits for one
    of them (at 50) with 14 CPUs free. The main scheduler stops at it (no job behind a
    blocked one starts, F2), so a CPU job submitted after it starts at the next backfill
    cycle (bf_interval 30), not at once."""
    jobs = [job(1, 0, 1, gres_per_node={"gpu": 1}), job(2, 0, 1, gres_per_node={"gpu": 1}),
            job(3, 1, 1, gres_per_node={"gpu": 1}), job(4, 2, 1)]
    got, inp = starts(jobs, [50, 80, 10, 10])
    assert inp.tres == ("gres/gpu",)  # memory never binds: 500 MB x 8 CPUs fit 4000 MB
    assert got == [0, 0, 50, 30]


def test_the_same_jobs_without_gres_start_on_cpus_alone():
    jobs = [job(1, 0, 1), job(2, 0, 1), job(3, 1, 1), job(4, 2, 1)]
    got, inp = starts(jobs, [50, 80, 10, 10])
    assert inp.tres == () and got == [0, 0, 1, 2]


def test_memory_per_node_holds_a_job_back_until_memory_is_free():
    """Two 3000 MB jobs take a 4000 MB node each; a third waits for the first to end
    though 14 CPUs are free; a 500 MB job fits beside them, at the next backfill cycle
    (the main scheduler stops at the blocked job, F2)."""
    jobs = [job(1, 0, 1, memory_per_node=3000), job(2, 0, 1, memory_per_node=3000),
            job(3, 1, 1, memory_per_node=3000), job(4, 2, 1, memory_per_node=500)]
    got, inp = starts(jobs, [40, 60, 10, 10])
    assert inp.tres == ("mem",)
    assert got == [0, 0, 40, 30]


def test_memory_is_not_played_when_it_is_not_consumable():
    jobs = [job(1, 0, 1, memory_per_node=3000), job(2, 0, 1, memory_per_node=3000),
            job(3, 1, 1, memory_per_node=3000)]
    got, inp = starts(jobs, [40, 60, 10], config=SchedulingConfig())
    assert inp.tres == () and got == [0, 0, 1]


def test_memory_per_cpu_limits_the_cpus_a_node_offers():
    """1000 MB per CPU on 4000 MB nodes: an 8-CPU job needs two nodes' memory, so with
    min 1 node it spreads over both (4 CPUs each), and a 1-CPU job then waits for it."""
    jobs = [job(1, 0, 8, memory_per_cpu=1000), job(2, 1, 1, memory_per_cpu=1000)]
    got, _ = starts(jobs, [30, 5])
    assert got == [0, 30]


def test_backfill_plans_with_memory_too():
    """Job 3 wants 4000 MB (a whole node's) and reserves n1, where job 1 ends at 100 (n2's
    job 2 holds 3500 MB to 200). Only n1 has memory for a 1000 MB job: a short one
    backfills there before 100; a long one would run into the reservation, and waits for
    job 3 to end (at 110, before n2's memory is free at 120)."""
    config = replace(MEMORY, backfill=replace(MEMORY.backfill, bf_interval=1,
                                              bf_resolution=1))
    jobs = [job(1, 0, 1, limit=100, memory_per_node=2500),
            job(2, 0, 1, limit=200, memory_per_node=3500),
            job(3, 1, 1, limit=100, memory_per_node=4000),
            job(4, 2, 1, limit=50, memory_per_node=1000),
            job(5, 60, 1, limit=500, memory_per_node=1000)]
    got, _ = starts(jobs, [100, 120, 10, 50, 10], config=config)
    assert got[:3] == [0, 0, 100]
    assert got[3] < 100
    assert got[4] == 110


def test_defaults_and_exclusive_jobs_set_the_memory_need():
    bare = job(1, 0, 2)
    assert memory_need(bare, MEMORY) == -500
    assert memory_need(bare, replace(MEMORY, def_mem_per_cpu=0, def_mem_per_node=3000)) == 3000
    assert memory_need(bare, replace(MEMORY, def_mem_per_cpu=0)) == WHOLE_NODE
    assert memory_need(replace(bare, exclusive=True, memory_per_node=10), MEMORY) == WHOLE_NODE
    names, _, _ = tres_rows(machine(), [replace(bare, memory_per_cpu=600)], MEMORY)
    assert names == ("mem",)  # 600 MB x 8 CPUs exceed 4000 MB: memory may bind


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 8), st.integers(0, 4000),
                          st.integers(0, 2), st.integers(1, 60)), min_size=1, max_size=25))
def test_no_node_holds_more_than_it_has(specs):
    """Replaying the starts node by node is not possible from outside, so the invariant is
    checked in totals at every instant: CPUs, memory and GPUs in use never exceed the
    machine's, and every job starts (each fits an empty node)."""
    cluster = machine(gpus=(0, 2, 2))
    jobs = [job(i, s, c, memory_per_node=m, gres_per_node={"gpu": g} if g else {})
            for i, (s, c, m, g, _) in enumerate(specs, start=1)]
    runtimes = [r for *_, r in specs]
    got, _ = starts(jobs, runtimes, cluster=cluster)
    assert all(s >= 0 for s in got)
    for t in sorted(set(got)):
        now = [(j, r) for j, s, r in zip(jobs, got, runtimes) if s <= t < s + r]
        assert sum(j.cpus for j, _ in now) <= 24
        assert sum(j.memory_per_node or 500 * j.cpus for j, _ in now) <= 3 * 4000
        assert sum(j.gres_per_node.get("gpu", 0) for j, _ in now) <= 4
