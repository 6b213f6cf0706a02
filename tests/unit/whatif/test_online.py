"""Online replay: the advisor sees only what a live cluster would show it, and the system it
steers plays on from exactly the state it saw."""
import numpy as np
import pytest

from advisor.adapters.swf import read_swf
from advisor.engine import Estimates
from advisor.engine.slurm import run_slurm, workload_input
from advisor.plugins.spec import BASELINE, parse_policy
from advisor.whatif.online import ReplaySystem, compare, online_replay
from advisor.settings import Settings
from advisor.adapters.swf import resolve_trace
from advisor.whatif.runner import SerialExecutor


@pytest.fixture(scope="module")
def kth_weeks():
    """KTH-SP2's first 1,500 jobs (about three weeks)."""
    workload = read_swf(resolve_trace("KTH-SP2"))
    return workload.with_jobs(workload.jobs.iloc[:1500].reset_index(drop=True))


def test_each_decision_sees_the_state_then_and_only_finished_jobs(kth_weeks):
    system = ReplaySystem(kth_weeks, Estimates(), parse_policy(BASELINE))
    points = system.decision_points(2 * 86400)
    seen = []

    def keep(t, snap, history, current):
        seen.append((t, {j.job_id for j in snap.running}, {j.job_id for j in snap.pending},
                     len(history)))
        return current

    start = system.play(points, keep)
    assert [s[0] for s in seen] == points and len(points) > 5
    assert (start >= system.submit).all()
    ids, end = system.ids, start + system.runtime
    for t, running, pending, finished in seen:
        # the final schedule agrees with every state the advisor was shown
        assert running == set(ids[(start <= t) & (end > t)].tolist())
        assert pending == set(ids[(system.submit <= t) & (start > t)].tolist())
        assert finished == int((end <= t).sum())
        assert all(system.submit[system.row[i]] <= t for i in pending)


def test_cutting_the_run_at_decision_points_costs_little(kth_weeks):
    """The baseline played in 2-day pieces against the same policy in one piece: the cuts
    (each a fresh slurmctld state: backfill timers, the first pass) may move starts a
    little, not the averages. Tolerance: 5% of the average wait."""
    system = ReplaySystem(kth_weeks, Estimates(), parse_policy(BASELINE))
    pieces = system.play(system.decision_points(2 * 86400), lambda t, s, h, c: c)
    whole, _ = run_slurm(workload_input(kth_weeks, system.first.config))
    submit = system.submit
    assert (pieces - submit).mean() == pytest.approx((whole - submit).mean(), rel=0.05)


def test_lawson_smirni_ratio_is_zero_for_the_same_schedule_and_signed(kth_weeks):
    system = ReplaySystem(kth_weeks, Estimates(), parse_policy(BASELINE))
    start = system.submit + np.arange(len(system.submit)) % 7 * 100
    weeks, total = compare(kth_weeks, system.runtime, start, start)
    assert total["r"] == 0 and (weeks["r"] == 0).all()
    later = start + 3600
    weeks, total = compare(kth_weeks, system.runtime, start, later)
    assert total["r"] < 0 and total["avg_wait_online"] == total["avg_wait_static"] + 3600


def test_online_replay_follows_its_recommendations(kth_weeks):
    settings = Settings(samples=2, min_wins=0.5,
                        policies=(parse_policy("easy:SPF"), parse_policy("easy:LCFS")))
    result = online_replay(kth_weeks, 2 * 86400, settings, SerialExecutor())
    assert len(result.decisions) == len(ReplaySystem(kth_weeks, Estimates(),
                                                parse_policy(BASELINE)).decision_points(2 * 86400))
    specs = {d.spec for d in result.decisions}
    assert specs <= {"easy:FCFS:FCFS", "easy:SPF", "easy:LCFS"}
    # a change shows in the schedule; with none, online equals static
    if result.total["changes"]:
        assert not np.array_equal(result.start, result.static_start)
    else:
        assert np.array_equal(result.start, result.static_start)
    assert result.total["jobs"] == len(kth_weeks)
