"""The risk limits' floor from the recent past: the reference replayed on the history."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from advisor.model import SECONDS_PER_WEEK
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.recommend import (MIN_TAIL_JOBS, Tails, decide, recommend,
                                      reference_tails)
from advisor.whatif.scenario import METRICS, Task, evaluate, tail_push
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup
from tests.unit.whatif.test_recommend import _cands, _results

FCFS = parse_policy("easy:FCFS:FCFS")


def _history(n, cpus, runtime, submit0=0):
    """n jobs, each as wide as the machine, one a second: under FCFS job k waits for the k
    before it, k * runtime - k seconds."""
    return pd.DataFrame({"user": "u", "submit": submit0 + np.arange(n), "runtime": runtime,
                         "limit": runtime, "cpus": cpus, "nodes": 1, "partition": "batch"})


def test_the_reference_is_replayed_on_the_last_weeks_of_history():
    hist = _history(30, 8, 100)
    tails = reference_tails(hist, 8, FCFS, 4)
    waits = np.arange(30) * 99.0
    assert tails == Tails(waits.max(), float(np.percentile(waits, 95)), 30)
    # a job as wide as two machines is clipped to the machine, not left unstarted
    wide = hist.assign(cpus=16)
    assert reference_tails(wide, 8, FCFS, 4) == tails
    # older weeks are left out: the recent 30 jobs alone set the tails
    old = _history(30, 8, 5000, submit0=-5 * SECONDS_PER_WEEK)
    assert reference_tails(pd.concat([old, hist]), 8, FCFS, 4) == tails
    # too little history gives no floor
    assert reference_tails(hist[:MIN_TAIL_JOBS - 1], 8, FCFS, 4) is None
    assert reference_tails(hist.iloc[:0], 8, FCFS, 4) is None


def test_a_job_is_not_pushed_until_its_wait_from_submission_passes_the_floor():
    ref = [100, 5000, 20000, 60]
    starve = [10, 200, 9000, 25000]             # a 60 s job taken to 25,000 s
    waits = np.array([ref, starve], np.float32)
    assert tail_push(waits, 0)[1] == pytest.approx(25000 / 60)
    ages = np.array([0, 0, 0, 10000.0])
    allow = 36000 - ages                         # 1.5 x a 24,000 s MaxWait on history
    assert tail_push(waits, 0, allow)[1] == 0   # 35,000 s from submission: within
    older = np.array([0, 0, 0, 20000.0])         # 45,000 s from submission: pushed
    assert tail_push(waits, 0, 36000 - older)[1] == pytest.approx(25000 / 60)


def test_a_floor_loosens_the_limits_and_never_tightens_them():
    cands = _cands(3)
    res = _results([[10] * 4, [5] * 4, [12] * 4], max_wait=[1000, 1600, 1000])
    s = Settings(risk=1.5)
    assert not decide(cands, res, s, ref=2)[2][1]["safe"]          # 1,600 > 1,560
    chosen, _, table = decide(cands, res, s, ref=2, floor=Tails(2000.0, 0.0, 100))
    assert table[1]["safe"] and chosen == 1                        # 1,600 < 3,000
    low = decide(cands, res, s, ref=2, floor=Tails(10.0, 10.0, 100))
    assert not low[2][1]["safe"]                                   # a low floor: as before


def test_evaluate_gives_each_jobs_age_at_the_snapshot():
    from advisor.whatif.futures import draw_sample
    snap, hist = _setup(bundled("KTH-SP2", False))
    sample = draw_sample(snap, hist, 86400, 1)
    out, waits, ages, *_ = evaluate(Task(snap, tuple(_cands(2)), sample, 86400))
    pending = sorted(snap.time - j.submit_time for j in snap.pending)
    assert len(ages) == waits.shape[1] == len(snap.pending) + len(sample.arrivals)
    assert sorted(ages)[-len(pending):] == pytest.approx(pending)   # arrivals: 0
    assert (np.sort(ages)[:len(sample.arrivals)] == 0).all()


def test_with_a_reference_the_recommendation_records_its_floor_and_keeps_more_candidates():
    """KTH-SP2: the floor is EASY-FCFS-FCFS on the 4 weeks before the snapshot; with it,
    every candidate safe without it is still safe."""
    snap, hist = _setup(bundled("KTH-SP2", False))
    policies = tuple(parse_policy(p) for p in ("easy:SPF:T=1d", "easy:SQF", "easy:LPF"))
    s = Settings(samples=2, objective="avg_wait", policies=policies, reference=FCFS)
    floored = recommend(snap, hist, s)
    plain = recommend(snap, hist, replace(s, history_floor=False))
    assert plain.floor is None and floored.floor is not None
    assert floored.floor == reference_tails(hist, snap.machine.cpus, FCFS, 4)
    assert floored.as_dict()["reference_tails"]["jobs"] == floored.floor.jobs > MIN_TAIL_JOBS
    np.testing.assert_array_equal(np.delete(floored.results, METRICS.index("tail_push"), 2),
                                  np.delete(plain.results, METRICS.index("tail_push"), 2))
    safe = [(a["safe"], b["safe"]) for a, b in zip(plain.table, floored.table)]
    assert all(f for p, f in safe if p)
