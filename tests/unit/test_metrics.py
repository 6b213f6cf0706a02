import numpy as np
import pandas as pd
import pytest

from advisor import metrics


def table(submit, start, runtime, procs):
    return metrics.schedule_table(submit, start, runtime, procs)


def test_bounded_slowdown_uses_ten_seconds_and_floors_at_one():
    bsld = metrics.bounded_slowdown([0, 90, 20, 0], [100, 10, 2, 5])
    # (0+100)/100, (90+10)/10, (20+2)/10, (0+5)/10 floored at 1
    assert bsld.tolist() == [1.0, 10.0, 2.2, 1.0]


def test_summary_figures():
    t = table(submit=[0, 0, 10], start=[0, 100, 110], runtime=[100, 10, 50], procs=[2, 4, 1])
    s = metrics.summary(t, machine=4)
    assert s["jobs"] == 3
    assert s["avg_wait"] == pytest.approx((0 + 100 + 100) / 3)
    assert s["max_wait"] == 100
    assert s["makespan"] == 160  # last end 160, first submit 0
    assert s["utilization"] == pytest.approx((200 + 40 + 50) / (4 * 160))
    assert s["avg_response"] == pytest.approx((100 + 110 + 150) / 3)
    assert s["p50_wait"] == 100


def test_weekly_series():
    week = 7 * 86400
    t = table(submit=[0, 10, week + 5], start=[0, 20, week + 5], runtime=[1, 1, 1],
              procs=[1, 1, 1])
    w = metrics.weekly(t)
    assert w["jobs"].tolist() == [2, 1] and w["max_wait"].tolist() == [10, 0]


def test_slowdown_ratio_and_footnote_4():
    base = table(submit=[0, 0, 0], start=[90, 0, 50], runtime=[10, 100, 5], procs=[1, 1, 1])
    other = table(submit=[0, 0, 0], start=[0, 100, 0], runtime=[10, 100, 5], procs=[1, 1, 1])
    request = np.array([10, 100, 3600])  # job 3 ran 5 s on a 1-hour request: crashed
    r = metrics.slowdown_ratio(base, other, request)
    # job 1: s1 = 1 + 90/10 = 10, s2 = 1 -> R = 9; job 2: s1 = 1, s2 = 2 -> R = -1
    assert r.tolist() == [9.0, -1.0]
    assert metrics.slowdown_ratio_weekly(base, other, request).tolist() == [4.0]


def test_slowdown_ratio_needs_the_same_jobs():
    a = table([0], [0], [1], [1])
    b = pd.concat([a, a])
    with pytest.raises(ValueError):
        metrics.slowdown_ratio(a, b, [1])
