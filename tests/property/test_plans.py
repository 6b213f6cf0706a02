"""Invariants of plan-based scheduling (Zheng et al.) on random small queues (hypothesis):
every plan is feasible, starts every waiting job, and is never worse than the plan of the
initial (queue-order) permutation; a replay under plans is a feasible schedule."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine import EngineConfig, run
from advisor.policies.plan.kernel import COSTS, Annealing, plan
from advisor.policies.plan.mechanic import Plans
from tests.helpers import peak_usage
from tests.property.test_invariants import workloads

#: fewer moves than the paper's 8,800 keep a hypothesis run short; the invariants do not
#: depend on how long the search is
QUICK = Annealing(moves=10, cooling=0.5)


@st.composite
def queues(draw):
    machine = draw(st.integers(1, 16))
    now = draw(st.integers(0, 1000))
    m = draw(st.integers(0, 6))
    run_procs = draw(st.lists(st.integers(1, machine), min_size=m, max_size=m))
    while sum(run_procs) > machine:
        run_procs.pop()
    run_end = draw(st.lists(st.integers(now + 1, now + 500), min_size=len(run_procs),
                            max_size=len(run_procs)))
    n = draw(st.integers(1, 14))
    submit = sorted(draw(st.lists(st.integers(0, now), min_size=n, max_size=n)))
    estimate = draw(st.lists(st.integers(0, 400), min_size=n, max_size=n))
    procs = draw(st.lists(st.integers(1, machine), min_size=n, max_size=n))
    return now, run_end, run_procs, machine, submit, estimate, procs


def usage_peak(now, run_end, run_procs, starts, dur, procs) -> int:
    """Most processors in use at once: running jobs until their end, planned ones over
    [start, start + duration)."""
    events = [(now, p) for p in run_procs] + [(e, -p) for e, p in zip(run_end, run_procs)]
    events += [(s, p) for s, p in zip(starts, procs)]
    events += [(s + d, -p) for s, d, p in zip(starts, dur, procs)]
    peak = used = 0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):  # releases first
        used += delta
        peak = max(peak, used)
    return peak


def cost_of(name, starts, submit, dur, run_end, now) -> float:
    wait = np.asarray(starts, float) - np.asarray(submit, float)
    if name == "wait":
        return wait.sum()
    if name == "squared":
        return (wait ** 2).sum()
    return max([now, *run_end, *(np.asarray(starts) + dur)]) - now


@settings(max_examples=300, deadline=None)
@given(queues(), st.sampled_from(sorted(COSTS)), st.integers(0, 2**32))
def test_every_plan_is_feasible_complete_and_no_worse_than_the_queue_order(q, cost, seed):
    now, run_end, run_procs, machine, submit, estimate, procs = q
    perm, starts, initial, best, _ = plan(now, run_end, run_procs, machine, submit,
                                          estimate, procs, cost, QUICK, seed)
    dur = np.maximum(estimate, 1)
    assert sorted(perm) == list(range(len(submit))), "a permutation of the waiting jobs"
    assert (starts >= now).all(), "every waiting job gets a start, none in the past"
    assert usage_peak(now, run_end, run_procs, starts, dur, procs) <= machine
    assert best <= initial
    assert np.isclose(best, cost_of(cost, starts, submit, dur, run_end, now))
    # the plan of the permutation is its greedy schedule: following perm, each job starts
    # at the earliest time it fits with the jobs before it (so no job could start earlier
    # without delaying one of them)
    before = []
    for k in perm:
        earlier = [t for t in {now, *run_end, *(starts[i] + dur[i] for i in before)}
                   if t < starts[k]]
        for t in earlier:
            trial = [starts[i] for i in before] + [t]
            assert usage_peak(now, run_end, run_procs, trial,
                              [dur[i] for i in before] + [dur[k]],
                              [procs[i] for i in before] + [procs[k]]) > machine
        before.append(k)


@settings(max_examples=100, deadline=None)
@given(queues(), st.sampled_from(sorted(COSTS)), st.integers(0, 2**32))
def test_a_plan_is_determined_by_its_seed(q, cost, seed):
    a = plan(*q, cost, QUICK, seed)
    b = plan(*q, cost, QUICK, seed)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


@settings(max_examples=150, deadline=None)
@given(workloads(), st.sampled_from(sorted(COSTS)), st.integers(0, 1000))
def test_a_replay_under_plans_is_a_feasible_schedule(arrays, cost, seed):
    start, promised = run(arrays, EngineConfig(mechanic=Plans(cost, QUICK, seed)))
    held = np.minimum(arrays.runtime, np.maximum(arrays.estimate, 1))
    assert (start >= arrays.submit).all(), "every job starts, never before its submission"
    assert (promised >= arrays.submit).all() and (start >= 0).all()
    assert peak_usage(start, held, arrays.procs) <= arrays.machine
