"""The planner of plan-based scheduling (Zheng et al.): its parameters, the schedule of a
permutation, the search, and the textbook replay's refusals."""
import itertools

import numpy as np
import pytest

from advisor.engine import EngineConfig, make_arrays, run
from advisor.policies.plan.kernel import Annealing, plan
from advisor.policies.plan.mechanic import Plans
from advisor.errors import BadInput

#: Algorithm 1 with no temperature above Tth: the initial permutation's plan, unsearched
NO_SEARCH = Annealing(t0=1e-5)


def test_the_papers_parameters_make_about_8800_evaluations():
    assert Annealing().evaluations == 8800        # 88 temperatures from 1 down to 1e-4


def test_the_queue_orders_plan_is_conservative_backfillings():
    """All jobs queued at 0 with exact estimates: conservative backfilling (which plans
    every job in queue order and never re-plans, nothing ending early) starts each job
    where the initial permutation's plan does."""
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, machine = 30, 16
        procs = rng.integers(1, machine + 1, n)
        runtime = rng.integers(1, 500, n)
        _, planned, *_ = plan(0, [], [], machine, np.zeros(n), runtime, procs, "wait",
                              NO_SEARCH)
        arrays = make_arrays(np.zeros(n), runtime, runtime, procs, machine)
        start, _ = run(arrays, EngineConfig(backfill="conservative"))
        assert np.array_equal(planned, start)


def brute_force(now, run_end, run_procs, machine, submit, estimate, procs, cost):
    """The best cost over every permutation's plan."""
    best = np.inf
    for order in itertools.permutations(range(len(submit))):
        o = list(order)
        _, _, c, *_ = plan(now, run_end, run_procs, machine, np.asarray(submit)[o],
                           np.asarray(estimate)[o], np.asarray(procs)[o], cost, NO_SEARCH)
        best = min(best, c)
    return best


@pytest.mark.parametrize("cost", ["wait", "squared", "makespan"])
def test_annealing_finds_the_best_permutation_of_a_small_queue(cost):
    """A wide long job at the head of the queue holds back five short narrow ones: leaving
    processors idle for it is what the queue order does; the plans that win put the short
    ones first (or, for the makespan, pack them beside other work)."""
    q = (100, [300, 150], [2, 1], 4, [0, 10, 20, 30, 40, 50],
         [1000, 10, 10, 10, 60, 10], [4, 1, 1, 2, 1, 3])
    _, starts, initial, best, evaluated = plan(*q, cost)
    assert evaluated == 8800
    assert best == pytest.approx(brute_force(*q, cost))
    if cost != "makespan":
        assert best < initial


def test_a_plan_may_leave_processors_idle_now():
    """Fig. 1's point: two processors are free now and the queue's first job fits there,
    but starting it delays the 4-processor job that has waited long until it ends; the
    plan keeps the two processors idle for 5 s instead."""
    q = (0, [5], [2], 4, [0, -1000], [1000, 5], [2, 4])
    _, starts, initial, best, _ = plan(*q, "squared")
    assert starts.tolist() == [10, 5] and best < initial


def test_jobs_past_the_threshold_lead_the_plan_in_submit_order():
    """The queue above at 100 s with T = 50 s: the five jobs queued before 50 s lead the
    permutation in submit order and are placed as the queue's order places them (the
    wide job first, where PLAN 1 and 2 without T move it back); the search moves only the
    last one."""
    q = (100, [300, 150], [2, 1], 4, [0, 10, 20, 30, 40, 50],
         [1000, 10, 10, 10, 60, 10], [4, 1, 1, 2, 1, 3])
    _, queue_order, *_ = plan(*q, "wait", NO_SEARCH)
    for cost in ("wait", "squared", "makespan"):
        _, free, *_ = plan(*q, cost)
        perm, starts, *_ = plan(*q, cost, threshold=50)
        assert perm[:5].tolist() == [0, 1, 2, 3, 4]
        assert starts[:5].tolist() == queue_order[:5].tolist()
        assert starts[0] == queue_order[0]
        assert free[0] > queue_order[0] or cost == "makespan"
    # a job past T is one that has waited longer than T: at exactly T it is not
    perm, *_ = plan(*q, "wait", threshold=60)
    assert perm[:4].tolist() == [0, 1, 2, 3] and 4 not in perm[:4]


def test_a_threshold_ends_a_plans_starvation_of_a_wide_job():
    """A 4-processor job queued at 1 s on 4 processors, then a 2-processor job every 10 s
    for 2,000 s: every plan without a threshold keeps the stream going ahead of it (the
    mean wait and the makespan gain nothing by starting it); with T = 50 s it leads the
    first plan made after 51 s and starts when the two running jobs end (at most 15 s
    and one arrival later); a T longer than the replay changes nothing."""
    submit = [0, 1] + list(range(10, 2000, 10))
    runtime = [15, 100] + [15] * (len(submit) - 2)
    procs = [2, 4] + [2] * (len(submit) - 2)
    arrays = make_arrays(submit, runtime, runtime, procs, 4)
    for cost in ("wait", "squared", "makespan"):
        free, _ = run(arrays, EngineConfig(mechanic=Plans(cost)))
        bounded, _ = run(arrays, EngineConfig(mechanic=Plans(cost), threshold=50))
        assert free[1] - 1 > 500 and bounded[1] - 1 <= 50 + 10 + 15
        same, _ = run(arrays, EngineConfig(mechanic=Plans(cost), threshold=10**6))
        assert np.array_equal(same, free)


def test_the_textbook_replay_refuses_queue_settings_and_snapshots():
    arrays = make_arrays([0, 1], [10, 10], [10, 10], [1, 1], 2)
    with pytest.raises(BadInput, match="without a backfilling"):
        run(arrays, EngineConfig(mechanic=Plans("wait"), backfill="conservative"))
    with pytest.raises(BadInput, match="unknown plan objective"):
        run(arrays, EngineConfig(mechanic=Plans("fastest")))
    with pytest.raises(BadInput, match="T0 > Tth"):
        run(arrays, EngineConfig(mechanic=Plans("wait", Annealing(cooling=1.0))))
    resumed = make_arrays([0, 1], [10, 10], [10, 10], [1, 1], 2, t0=1, fixed=[0, -1])
    with pytest.raises(BadInput, match="snapshot"):
        run(resumed, EngineConfig(mechanic=Plans("wait")))


def test_a_job_ends_at_its_estimate_at_the_latest():
    """The paper's termination event: a job running past its estimate is ended there, so
    the job behind it starts then."""
    arrays = make_arrays([0, 1], [100, 10], [50, 10], [2, 2], 2)
    start, promised = run(arrays, EngineConfig(mechanic=Plans("wait")))
    assert start.tolist() == [0, 50] and promised.tolist() == [0, 50]


def test_a_plan_for_a_live_queue_is_site_factors_in_planned_start_order():
    """On a snapshot (KTH-SP2 replayed to day 150): every pending job gets a site factor,
    highest first in order of planned start, steps above what the configuration in effect
    can add; the change is scontrol commands only; priority/basic becomes multifactor with
    every weight 0, since only multifactor reads site factors."""
    from dataclasses import replace

    from advisor.model import SchedulingConfig
    from advisor.plugins.spec import parse_policy
    from advisor.policies.plan.inputs import queue_state
    from advisor.whatif.candidates import candidates_for
    from advisor.whatif.slurmconf import change_for
    from advisor.whatif.snapshot import trace_snapshot
    from tests.conftest import bundled
    snap = trace_snapshot(bundled("KTH-SP2", False), parse_policy("easy:FCFS:FCFS"),
                          150 * 86400)
    weighted = replace(snap, config=replace(snap.config, priority_weight_age=1000,
                                            priority_weight_job_size=500))
    cand = candidates_for(weighted, [parse_policy("plan2")])[1]
    order = cand.site
    factors = [f for _, f in order.factors]
    assert len(factors) == len(queue_state(snap).job_id) == len(snap.pending) > 10
    assert factors == sorted(factors, reverse=True) and min(factors) == 1501
    assert len(set(factors)) == len(factors) and factors[0] - factors[1] == 1501
    assert list(order.starts) == sorted(order.starts)
    change = change_for(cand, weighted)
    assert change.diff == {} and change.script == "" and not change.empty
    assert sorted(change.commands) == sorted(f"scontrol update JobId={j} SiteFactor={f}"
                                             for j, f in order.factors)
    basic = replace(snap, config=SchedulingConfig())
    cand = candidates_for(basic, [parse_policy("plan2")])[1]
    assert cand.config.priority_type == "priority/multifactor"
    assert cand.config.priority_weight_age == 0


def test_a_plans_threshold_in_slurm_gives_the_old_jobs_the_top_site_factors():
    """The same snapshot with T = the median age of its pending jobs: those older than T
    get the highest site factors, in submit order, then the others in order of planned
    start; without T the order differs (the plan has moved an old job back)."""
    from advisor.plugins.spec import parse_policy
    from advisor.whatif.candidates import candidates_for
    from advisor.whatif.snapshot import trace_snapshot
    from tests.conftest import bundled
    snap = trace_snapshot(bundled("KTH-SP2", False), parse_policy("easy:FCFS:FCFS"),
                          150 * 86400)
    submit = {j.job_id: j.submit_time for j in snap.pending}
    age = int(np.median([snap.time - t for t in submit.values()]))
    free, bounded = candidates_for(snap, [parse_policy("plan1"),
                                          parse_policy(f"plan1:T={age}s")])[1:]
    assert "T=" in bounded.site.name and "T is read when the plan is made" in \
        " ".join(bounded.caveats)
    ids = [j for j, _ in bounded.site.factors]
    old = [j for j in ids if snap.time - submit[j] > age]
    assert 0 < len(old) < len(ids) and ids[:len(old)] == sorted(old, key=submit.get)
    rest = list(bounded.site.starts[len(old):])
    assert rest == sorted(rest)
    assert [j for j, _ in free.site.factors][:len(old)] != ids[:len(old)]


def test_every_job_reserving_keeps_slurm_at_least_as_close_to_the_plan():
    """SDSC-BLUE on day 44 at noon, 30 jobs pending, every job running to its limit: Slurm
    under the configuration in effect (EASY's one reservation) and with every job
    reserving; conservative backfilling starts at least as many planned jobs within a
    minute of their planned start (docs/slurm-mapping.md, "Plans", gives the figures)."""
    from advisor.plugins.spec import parse_policy
    from advisor.policies.plan.study import realised_vs_planned
    from advisor.whatif.snapshot import trace_snapshot
    from tests.conftest import bundled
    snap = trace_snapshot(bundled("SDSC-BLUE", False), parse_policy("easy:FCFS:FCFS"),
                          44 * 86400 + 43200)
    easy, conservative = realised_vs_planned(snap, "plan2").rows
    assert easy[1] == conservative[1] == 30
    assert conservative[3] >= easy[3] > 0.3
