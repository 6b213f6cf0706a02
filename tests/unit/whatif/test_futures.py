"""Futures drawn from history only: deterministic per seed, never peeking at what is unknown."""
import numpy as np
import pandas as pd

from advisor.model import job_limit
from advisor.whatif.futures import (ArrivalSampler, RuntimeModel, draw_sample,
                             history_from_workload)
from advisor.model import SECONDS_PER_WEEK
from advisor.plugins.spec import parse_policy
from advisor.whatif.snapshot import trace_snapshot
from tests.conftest import bundled

AT = 150 * 86400


def _setup(workload):
    snap = trace_snapshot(workload, parse_policy("easy:FCFS:FCFS"), AT)
    ids = {j.job_id for j in (*snap.running, *snap.pending)}
    return snap, history_from_workload(workload, AT, ids, "batch")


def _draw(snap, hist, seed):
    return draw_sample(snap, hist, 86400, seed)


def test_same_seed_same_future_and_different_seed_another():
    snap, hist = _setup(bundled("KTH-SP2", False))
    a, b, c = _draw(snap, hist, 7), _draw(snap, hist, 7), _draw(snap, hist, 8)
    assert a == b
    assert a.runtimes != c.runtimes
    assert len(a.arrivals) > 10


def test_nothing_unknown_at_decision_time_is_used():
    """Changing what happens after the snapshot (the actual runtimes of its running and
    pending jobs, every later job) changes neither the history nor the draws."""
    workload = bundled("KTH-SP2", False)
    snap, hist = _setup(workload)
    jobs = workload.jobs.copy()
    unknown = (jobs["submit"] > AT) | jobs["job_id"].isin(
        [j.job_id for j in (*snap.running, *snap.pending)])
    jobs.loc[unknown, "runtime"] = jobs.loc[unknown, "runtime"] * 3 + 17
    jobs.loc[jobs["submit"] > AT, "user"] = 999
    changed = workload.with_jobs(jobs)
    snap2, hist2 = _setup(changed)
    pd.testing.assert_frame_equal(hist, hist2)
    assert _draw(snap, hist, 3) == _draw(snap2, hist2, 3)
    assert (hist["submit"] <= AT).all()


def test_running_jobs_are_drawn_past_their_elapsed_time_and_within_their_limit():
    snap, hist = _setup(bundled("CTC-SP2", False))
    assert snap.running
    for seed in range(20):
        s = _draw(snap, hist, seed)
        for j in snap.running:
            limit = job_limit(j, snap.machine)
            assert snap.time - j.start_time < s.runtimes[j.job_id] <= max(
                limit, snap.time - j.start_time + 1)


def test_runtime_ratio_is_the_users_own_with_the_population_as_fallback():
    rows = [("a", 0, 50, 100)] * 6 + [("b", 0, 900, 1000)] * 2 + [("c", 0, 10, 100)] * 20
    hist = pd.DataFrame(rows, columns=["user", "submit", "runtime", "limit"])
    model = RuntimeModel(hist)
    rng = np.random.default_rng(0)
    assert {model.draw("a", 3600, 0, rng) for _ in range(50)} == {1800}
    # b has too few jobs: everyone's ratios (0.5, 0.9 or 0.1)
    assert {model.draw("b", 1000, 0, rng) for _ in range(200)} == {100, 500, 900}
    # a running job past every ratio of its user's runs to its limit
    assert model.draw("a", 100, 60, rng) in (90, 100)


def test_arrivals_resample_whole_user_weeks_into_the_horizon():
    week = SECONDS_PER_WEEK
    now = 4 * week
    rows = [("u1", w * week + 3600 * k, 60, 600, 1, 1, "batch")
            for w in range(4) for k in range(w + 1)]
    hist = pd.DataFrame(rows, columns=["user", "submit", "runtime", "limit", "cpus", "nodes",
                                       "partition"])
    sampler = ArrivalSampler(hist, now, weeks=4)
    counts = set()
    for seed in range(40):
        jobs, runtimes = sampler.draw(week, np.random.default_rng(seed))
        assert all(now < j.submit_time <= now + week for j in jobs)
        assert all(runtimes[j.job_id] == 60 and j.time_limit == 600 for j in jobs)
        counts.add(len(jobs))
    assert counts == {1, 2, 3, 4}  # one of the user's four weeks, whole
