"""The process-level coscheduling model (policies/timeshare/kernel_cosched.py): exact cases
and invariants."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.policies.timeshare.kernel_cosched import CS, DC, F, Costs, simulate, simulate_jobs
from advisor.policies.timeshare.study_cosched import FITTED, scenarios

FREE = Costs(global_switch=0.0, local_switch=0.0, monitor=0.0)


def test_fcfs_runs_jobs_back_to_back_one_exchange_per_iteration():
    work = np.full((2, 8), 1.0)
    out = simulate(work, [500, 300], [True, True], "FCFS", FREE)
    per = 1.0 + FREE.latency
    assert np.allclose(out.end, [500 * per, 800 * per])


def test_a_job_without_exchanges_ends_at_its_busiest_cpu():
    work = np.array([[30.0, 10.0, 0.0, 20.0]])
    out = simulate(work, [100], [False], "FCFS", FREE)
    assert np.isclose(out.end[0], 3000.0)


def test_gang_scheduling_shares_the_machine_by_slices():
    work = np.full((2, 8), 1.0)
    alone = 5000 * (1.0 + FREE.latency)
    out = simulate(work, [5000, 5000], [True, True], "GS", FREE)
    assert np.all(out.end <= 2 * alone + FREE.slice)
    assert np.all(out.end >= 2 * alone - FREE.slice)
    costly = simulate(work, [5000, 5000], [True, True], "GS", Costs(global_switch=3.0))
    assert costly.end.max() > out.end.max() + 40 * 3.0      # ~100 switches lost 3 ms each


def test_spin_block_fills_the_holes_of_complementing_imbalanced_jobs():
    s = scenarios()["imbalanced"]
    gang = simulate(s.work, s.iterations, s.sync, "GS", FITTED).end.max()
    sb = simulate(s.work, s.iterations, s.sync, "SB", FITTED).end.max()
    assert sb < 0.9 * gang


def test_fcs_classes_follow_algorithm_2():
    s = scenarios()
    balanced = simulate(s["balanced"].work, s["balanced"].iterations, s["balanced"].sync,
                        "FCS", FITTED)
    assert np.all(balanced.classes == CS)
    imb = simulate(s["imbalanced"].work, s["imbalanced"].iterations, s["imbalanced"].sync,
                   "FCS", FITTED)
    node_a = np.arange(8) < 4
    # job 1 is slow on node A: its A processes compute (DC), its B processes wait (F)
    assert np.all(imb.classes[0, node_a] == DC) and np.all(imb.classes[0, ~node_a] == F)
    assert np.all(imb.classes[1, node_a] == F) and np.all(imb.classes[1, ~node_a] == DC)
    comp = s["complementing"]
    out = simulate(comp.work, comp.iterations, comp.sync, "FCS", FITTED)
    assert np.all(out.classes[2, node_a] == F) and np.all(out.classes[2, ~node_a] == DC)
    assert np.all(out.classes[:2, node_a] == DC)


def test_the_seed_is_the_only_source_of_noise():
    s = scenarios()["imbalanced"]
    a = simulate(s.work, s.iterations // 20, s.sync, "SB", FITTED, seed=3)
    b = simulate(s.work, s.iterations // 20, s.sync, "SB", FITTED, seed=3)
    assert np.array_equal(a.end, b.end) and a.events == b.events


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(2, 8), st.integers(0, 2**31),
       st.sampled_from(["FCFS", "GS", "SB", "FCS"]))
def test_every_job_ends_no_sooner_than_its_work_allows(jobs, cpus, seed, scheduler):
    rng = np.random.default_rng(seed)
    work = rng.uniform(0.2, 4.0, (jobs, cpus))
    iterations = rng.integers(1, 300, jobs)
    sync = rng.random(jobs) < 0.7
    out = simulate(work, iterations, sync, scheduler, FITTED, seed=seed)
    alone = iterations * work.max(axis=1)
    assert np.all(out.end >= alone - 1e-6)
    # no CPU does more than one thing at a time
    assert out.end.max() >= (work * iterations[:, None]).sum(axis=0).max() - 1e-6


def test_the_matrix_admits_fcfs_with_easy_backfilling():
    # 4 CPUs, one row: a 4-wide job waits for the running 2-wide one; a short 2-wide job
    # backfills beside it, a long one does not
    work = np.ones((4, 4))
    size = np.array([2, 4, 2, 2])
    iterations = np.array([1000, 100, 100, 5000])
    arrival = np.array([0.0, 1.0, 2.0, 200.0])        # job 3: after job 2 has ended
    alone = iterations * (1.0 + FREE.latency)
    out = simulate_jobs(work, size, iterations, np.ones(4, bool), arrival, alone, 4, 1,
                        "FCFS", FREE)
    assert out.start[0] == 0.0 and np.isclose(out.start[1], out.end[0])
    assert np.isclose(out.start[2], 2.0)                    # backfilled: ends before
    assert out.end[2] < 200.0
    assert out.start[3] >= out.end[1] - 1e-9                # would delay the 4-wide job


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.sampled_from(["FCFS", "GS", "SB", "FCS"]))
def test_arriving_jobs_all_end_and_batch_never_oversubscribes(seed, scheduler):
    rng = np.random.default_rng(seed)
    jobs, cpus = 12, 8
    size = rng.integers(1, cpus + 1, jobs)
    work = rng.uniform(0.5, 5.0, (jobs, cpus))
    iterations = rng.integers(1, 200, jobs)
    arrival = np.sort(rng.uniform(0, 500, jobs))
    alone = iterations * (work.max(axis=1) + FREE.latency)
    out = simulate_jobs(work, size, iterations, rng.random(jobs) < 0.8, arrival, alone,
                        cpus, 1 if scheduler == "FCFS" else 3, scheduler, FITTED, seed=seed)
    assert np.all(out.start >= arrival - 1e-9) and np.all(out.end >= out.start)
    if scheduler == "FCFS":
        for t in np.concatenate([out.start, out.end]):
            busy = size[(out.start <= t) & (out.end > t)].sum()
            assert busy <= cpus


def test_time_goes_on_where_a_remainder_is_below_what_the_clock_can_add():
    """At 4 x 10^7 ms a float step is 7.5 ns: a computation remainder of a few ns (above the
    kernel's epsilon) could not be consumed, and a dynamic workload of 210 jobs stood still
    (a case found by search: this one stalled in its first iteration)."""
    arrival, work = 40014586.905202106, 14.380233520308977
    out = simulate_jobs(np.array([[work]]), [1], [3], [False], [arrival], [3 * work], 1, 1,
                        "FCFS")
    assert out.end[0] == pytest.approx(arrival + 3 * work, abs=1e-6)
