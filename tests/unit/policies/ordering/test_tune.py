import numpy as np

from advisor.engine import job_arrays
from advisor.model import SECONDS_PER_WEEK
from advisor.whatif.runner import ProcessExecutor, SerialExecutor
from advisor.plugins.spec import BASELINE, parse_policy
from advisor.policies.ordering.study import WeekSampler, candidates, split, tune


def test_candidates_are_the_49_combinations_then_thresholds():
    c = candidates((3600,))
    assert len(c) == 98 and len({p.spec for p in c}) == 98
    assert c[0] == parse_policy(BASELINE) and c[49] == parse_policy("easy:FCFS:FCFS:T=1h")
    assert [p.label for p in c[:8]] == ["EASY-FCFS-FCFS", "EASY-FCFS-LCFS", "EASY-FCFS-SPF",
                                        "EASY-FCFS-LPF", "EASY-FCFS-SQF", "EASY-FCFS-LQF",
                                        "EASY-FCFS-EXP", "EASY-LCFS-FCFS"]
    assert all(parse_policy(p.spec) == p for p in c)


def test_sampled_week_takes_each_users_jobs_from_one_week(trace):
    w = trace("KTH-SP2")
    arrays = job_arrays(w)
    user = w.jobs["user"].to_numpy()
    begin, end = int(arrays.submit[0]), split(w)
    inside = arrays.submit < end
    sampler = WeekSampler(arrays.take(inside), user[inside], begin, end)
    week = sampler.sample(np.random.default_rng(1))
    assert len(week) > 0
    assert (week.submit >= 0).all() and (week.submit < SECONDS_PER_WEEK).all()
    assert (np.diff(week.submit) >= 0).all()
    # the same seed gives the same week; another seed another
    again = sampler.sample(np.random.default_rng(1))
    assert np.array_equal(week.submit, again.submit)
    assert not np.array_equal(week.submit, sampler.sample(np.random.default_rng(2)).submit)
    # on average a sampled week carries the half's weekly job count
    sizes = [len(sampler.sample(np.random.default_rng(s))) for s in range(40)]
    per_week = inside.sum() / sampler.weeks
    assert 0.7 * per_week < np.mean(sizes) < 1.3 * per_week


def test_tune_is_deterministic_and_executors_agree(trace):
    w = trace("KTH-SP2")
    serial = tune(w, weeks=4, seed=3, executor=SerialExecutor())
    with ProcessExecutor(2) as pool:
        parallel = tune(w, weeks=4, seed=3, executor=pool)
    assert np.array_equal(serial.train, parallel.train)
    assert np.array_equal(serial.test, parallel.test)
    rows = serial.rows()
    assert rows[serial.baseline]["train_avg_wait_ratio"] == 1.0
    best = rows[serial.best]
    assert best["train_avg_wait"] == min(r["train_avg_wait"] for r in rows)
