"""The backfill cycle's cost (``slurm_backfill``, backfill.c): a cycle takes time per job
it tests, ends at bf_max_time, yields its locks every bf_yield_interval for
bf_yield_sleep, and after a yield resumes, or ends when something changed and
bf_continue is off. Worked out by hand on two 4-CPU nodes, whole seconds:

A (6 CPUs, 1,000 s) starts at 0 and leaves 2 CPUs; B (8 CPUs) waits for both nodes; C
(1 CPU, 100 s) fits beside A; D (1 CPU) arrives at 31 s. Cycles are due every 30 s."""
from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine.slurm import run_slurm, slurm_input, state_for, with_backfill
from advisor.engine.slurm_backfill import STARTED, YIELDED, backfill
from advisor.engine.slurm_queue import enqueue, main_pass
from advisor.engine.slurm_state import S_BF_POS, S_BF_RELEASE
from advisor.model import (BackfillCost, Cluster, Job, Node, Partition, SchedulingConfig,
                           Snapshot)

A, B, C, D = 0, 1, 2, 3
CONFIG = with_backfill(SchedulingConfig(), bf_interval=30, bf_resolution=60)


def _input(config, arriving=True):
    names = ("n1", "n2")
    machine = Cluster("lab", tuple(Node(n, 4) for n in names),
                      (Partition("batch", names, default=True),))
    spec = [(6, 1000, 0), (8, 530, 0), (1, 100, 0)] + ([(1, 100, 31)] if arriving else [])
    jobs = [Job(job_id=i + 1, user="u", partition="batch", cpus=cpus, state="PENDING",
                submit_time=submit, time_limit=limit, partitions=("batch",))
            for i, (cpus, limit, submit) in enumerate(spec)]
    snap = Snapshot(time=-1, machine=machine, running=(), pending=(), config=config)
    return slurm_input(snap, {j.job_id: j.time_limit for j in jobs}, jobs, timing=None)


def _costing(job_us, **backfill):
    return replace(with_backfill(CONFIG, **backfill), backfill_cost=BackfillCost(job_us=job_us))


def _cycle_at_30(config):
    arrays, st = state_for(_input(config, arriving=False))
    for j in (A, B, C):
        enqueue(st, j, 0)
    main_pass(st, 0)
    return arrays, st, backfill(st, 30)


def test_a_job_the_cycle_starts_starts_when_its_test_ends():
    """B's test ends at 30.7 s, C's at 31.4 s: C starts at 31, and the cycle lets the locks
    go then. Free cycles start it at 30."""
    arrays, _, out = _cycle_at_30(_costing(700_000))
    assert out == STARTED and arrays.start[C] == 31 and arrays.sc[S_BF_RELEASE] == 31
    arrays, _, out = _cycle_at_30(CONFIG)
    assert out == STARTED and arrays.start[C] == 30


def test_a_cycle_s_fixed_part_counts_toward_its_starts_not_its_first_yield():
    """A 0.8 s fixed part and 0.3 s a job, bf_yield_interval 1 s: B's test ends at 31.1 s,
    C's at 31.4 s, no yield between them (the locks count from the first test); C starts
    at 31."""
    config = replace(with_backfill(CONFIG, bf_yield_interval=1_000_000),
                     backfill_cost=BackfillCost(cycle_us=800_000, job_us=300_000))
    arrays, _, out = _cycle_at_30(config)
    assert out == STARTED and arrays.start[C] == 31


def test_a_cycle_ends_once_bf_max_time_is_spent():
    """B's test takes 16 s of a 10 s bf_max_time: C is never tested; nothing is left under
    way."""
    arrays, _, out = _cycle_at_30(_costing(16_000_000, bf_max_time=10,
                                           bf_yield_interval=10_000_000))
    assert out == 0 and arrays.start[C] == -1
    assert arrays.sc[S_BF_POS] == -1 and arrays.sc[S_BF_RELEASE] == 46


def test_a_cycle_yields_its_locks_after_bf_yield_interval():
    """B's test (1.5 s) passes the 1 s bf_yield_interval: the cycle yields before C, at
    31 s, with C left to test."""
    arrays, _, out = _cycle_at_30(_costing(1_500_000, bf_yield_interval=1_000_000))
    assert out == YIELDED and arrays.start[C] == -1
    assert arrays.sc[S_BF_POS] == 0 and arrays.sc[S_BF_RELEASE] == 31


@pytest.mark.parametrize("bf_continue, arriving, starts", [
    # D arrives during the yield (31 s): without bf_continue the cycle breaks out at 32 s;
    # the next begins at 62 s and, yielding after each test, starts C at 65 and D at 67
    (False, True, [0, 1000, 65, 67]),
    # with it, the cycle resumes at 32 s and starts C at 33; D, not in its list, waits
    # for the next cycle (63 s: bf_interval after this one let the locks go at 33)
    (True, True, [0, 1000, 33, 66]),
    # nothing changes during the yield: the cycle resumes either way
    (False, False, [0, 1000, 33]),
    (True, False, [0, 1000, 33]),
])
def test_after_a_yield_the_cycle_resumes_or_ends_as_bf_continue_says(bf_continue, arriving,
                                                                    starts):
    config = _costing(1_500_000, bf_yield_interval=1_000_000, bf_continue=bf_continue)
    assert list(run_slurm(_input(config, arriving))[0]) == starts


def test_free_cycles_are_as_before():
    """Without a cost, C starts at the first cycle (30 s), D at the one after its arrival
    (60 s)."""
    assert list(run_slurm(_input(CONFIG))[0]) == [0, 1000, 30, 60]
