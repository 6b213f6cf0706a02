"""The job-level class heuristic (CPU efficiency) standing in for Frachtenberg et al.'s classes.
"""
from __future__ import annotations

import pytest

from advisor.errors import BadInput
from advisor.model import workload_from_records
from advisor.policies.timeshare.inputs import ClassRule, class_shares, cpu_efficiency


def _workload(rows):
    """rows: (user, runtime, procs, avg_cpu)"""
    w = workload_from_records([{"submit": i, "runtime": r, "procs": p, "user": u}
                               for i, (u, r, p, _) in enumerate(rows)], procs=64)
    jobs = w.jobs.copy()
    jobs["avg_cpu"] = [float(a) for *_, a in rows]
    return w.with_jobs(jobs)


def test_efficiency_is_field_6_over_the_runtime_clipped_and_unknown_when_missing():
    w = _workload([(1, 100, 4, 95), (1, 100, 4, 130), (1, 0, 4, 10), (1, 100, 4, -1)])
    e = cpu_efficiency(w.jobs)
    assert e.iloc[0] == pytest.approx(0.95) and e.iloc[1] == 1.0
    assert e.iloc[2:].isna().all()


def test_classes_shares_and_users_by_their_median_job():
    w = _workload([(1, 100, 8, 95), (1, 100, 8, 92), (1, 100, 8, 10),    # user 1: busy
                   (2, 300, 2, 60), (2, 100, 2, 20), (2, 100, 2, 30),    # user 2: idle
                   (3, 100, 1, -1)])                                     # unknown
    s = class_shares(w, ClassRule(busy=0.9, idle=0.5))
    assert (s.jobs, s.known) == (7, 6)
    assert list(s.shares["jobs"]) == [2, 0, 4]
    assert s.shares["job_share"].sum() == pytest.approx(1.0)
    cs_hours = 2 * 100 * 8 / 3600
    assert s.shares.loc["busy", "cpu_hours"] == pytest.approx(cs_hours)
    assert s.shares["cpu_hour_share"].sum() == pytest.approx(1.0)
    assert dict(s.users) == {"busy": 1, "mixed": 0, "idle": 1}


def test_a_trace_without_field_6_is_refused_not_guessed():
    with pytest.raises(BadInput, match="field 6"):
        class_shares(_workload([(1, 100, 4, -1)]))
    with pytest.raises(BadInput, match="idle <= busy"):
        ClassRule(busy=0.4, idle=0.5)
