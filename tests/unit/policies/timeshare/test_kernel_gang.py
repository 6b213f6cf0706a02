"""The job-level time-sliced partition (advisor.policies.timeshare.kernel_gang)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.engine import EngineConfig, job_arrays, run
from advisor.policies.timeshare.kernel_gang import run_gang


def test_jobs_sharing_nodes_progress_at_one_over_k_less_the_switch():
    start, end = run_gang([0, 0], [100, 100], [100, 100], [4, 4], nodes=4, mpl=2)
    assert list(start) == [0, 0] and np.allclose(end, [200, 200])
    _, end = run_gang([0, 5], [100, 10], [100, 10], [4, 4], nodes=4, mpl=2)
    assert np.allclose(end, [110, 25])          # 5 s alone, then both at half speed
    _, end = run_gang([0, 0], [100, 100], [100, 100], [4, 4], nodes=4, mpl=2,
                      slice_s=30, switch_s=3)
    assert np.allclose(end, 200 / 0.9)


def test_mpl_one_is_easy_backfilling():
    workload = read_swf(resolve_trace("KTH-SP2"))
    arrays = job_arrays(workload).take(slice(0, 600))
    textbook, _ = run(arrays, EngineConfig(backfill="easy"))
    start, end = run_gang(arrays.submit, arrays.runtime, arrays.estimate, arrays.procs,
                          nodes=arrays.machine, mpl=1)
    assert np.array_equal(start.astype(np.int64), textbook)
    assert np.allclose(end - start, arrays.runtime)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 500), st.integers(1, 400), st.integers(1, 8)),
                min_size=1, max_size=30),
       st.integers(1, 3), st.floats(0.0, 0.2))
def test_no_job_is_slower_than_mpl_times_its_runtime(rows, mpl, switch_share):
    rows.sort()
    submit, runtime, need = (np.array(c) for c in zip(*rows))
    start, end = run_gang(submit, runtime, runtime, need, nodes=8, mpl=mpl,
                          slice_s=30.0, switch_s=30.0 * switch_share)
    assert np.all(start >= submit)
    assert np.all(end >= start + runtime - 1e-6)
    slowest = mpl / (1.0 - switch_share) if mpl > 1 else 1.0
    assert np.all(end <= start + runtime * slowest + 1e-6)


def test_a_job_alone_holds_its_nodes_at_full_speed_until_it_ends():
    # job 0 (alone, 2 of 4 nodes, 100 s) leaves room for one 2-node job at a time ... twice
    start, end = run_gang([0, 0, 0], [100, 50, 50], [100, 50, 50], [2, 2, 2], nodes=4,
                          mpl=2, alone=[True, False, False])
    assert np.allclose(end[0], 100)                     # never slowed by the others
    assert list(start) == [0, 0, 0]                     # the two share the free nodes
    assert np.allclose(end[1:], 100)
    # a job wider than the free nodes waits for the one alone to end
    start, end = run_gang([0, 0], [100, 50], [100, 50], [2, 3], nodes=4, mpl=2,
                          alone=[True, False])
    assert start[1] == 100 and np.allclose(end[1], 150)
