"""The reference multiple-queue backfilling (tests/multiqueue_reference.py) keeps the
promises of its reading: every job starts, the machine is never over-allocated, no pivot
starts later than the reservation it had when it became a pivot (estimates hold), and one
partition is EASY-FCFS as the textbook engine runs it."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tests.helpers import peak_usage, starts
from tests.multiqueue_reference import simulate


@st.composite
def workloads(draw):
    machine = draw(st.integers(2, 16))
    parts = draw(st.integers(1, 4))
    n = draw(st.integers(1, 18))
    jobs = []
    t = 0
    for _ in range(n):
        t += draw(st.integers(0, 30))
        runtime = draw(st.integers(1, 60))
        estimate = runtime + draw(st.integers(0, 40))
        jobs.append((t, draw(st.integers(1, machine)), runtime, estimate,
                     draw(st.integers(0, parts - 1))))
    return machine, parts, jobs


@settings(max_examples=300, deadline=None)
@given(workloads(), st.booleans())
def test_every_job_starts_within_the_machine_and_no_pivot_is_delayed(case, exact):
    """With exact estimates nothing ends early, so a reservation can only move if a start
    moved it: no pivot may then start after the reservation it had on becoming pivot. (When
    jobs end early, an earlier pivot moving up may take a later one's slot: allowed.)"""
    machine, parts, jobs = case
    submit, procs, runtime, estimate, klass = (list(x) for x in zip(*jobs))
    if exact:
        estimate = runtime
    promised: dict = {}
    start = simulate(submit, runtime, estimate, procs, machine, klass, parts, promised)
    assert all(s >= t for s, t in zip(start, submit))
    assert peak_usage(start, runtime, procs) <= machine
    if exact:
        for j, t in promised.items():
            assert start[j] <= t, (j, start[j], t)


@settings(max_examples=300, deadline=None)
@given(workloads())
def test_one_partition_is_easy_fcfs(case):
    machine, _, jobs = case
    submit, procs, runtime, estimate, _ = (list(x) for x in zip(*jobs))
    start = simulate(submit, runtime, estimate, procs, machine, [0] * len(jobs), 1)
    assert start == starts([(s, p, r, e) for s, p, r, e, _ in jobs], machine,
                           "easy:FCFS:FCFS")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=200), st.integers(1, 4))
def test_boundaries_balance_the_job_counts(estimates, parts):
    """Distinct estimates: every class within one job of n/P; boundaries never decrease."""
    from tests.multiqueue_reference import boundaries, classify
    cuts = boundaries(estimates, parts)
    assert cuts == sorted(cuts) and len(cuts) == parts - 1
    counts = [0] * parts
    for e in estimates:
        counts[classify(e, cuts)] += 1
    if len(set(estimates)) == len(estimates):
        assert max(counts) - min(counts) <= 1, (counts, cuts)
    assert sum(counts) == len(estimates)


@settings(max_examples=400, deadline=None)
@given(workloads())
def test_the_compiled_engine_is_the_reference(case):
    from advisor.engine import make_arrays
    from advisor.policies.queues.kernel import run_queues
    machine, parts, jobs = case
    submit, procs, runtime, estimate, klass = (list(x) for x in zip(*jobs))
    arrays = make_arrays(submit, runtime, estimate, procs, machine)
    for local in (False, True):
        promised: dict = {}
        want = simulate(submit, runtime, estimate, procs, machine, klass, parts, promised,
                        local=local)
        start, first = run_queues(arrays, parts, klass, local=local)
        assert start.tolist() == want, local
        assert {j: t for j, t in enumerate(first.tolist()) if t >= 0} == promised, local
    # classes from the previous "week" (here 40 s) of completions, in both readings
    for local in (False, True):
        promised = {}
        want = simulate(submit, runtime, estimate, procs, machine, None, parts, promised, 40,
                        local)
        start, first = run_queues(arrays, parts, None, 40, local)
        assert start.tolist() == want, local
        assert {j: t for j, t in enumerate(first.tolist()) if t >= 0} == promised, local


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=1, max_size=200), st.integers(1, 4))
def test_compiled_cuts_are_the_reference(estimates, parts):
    import numpy as np

    from advisor.policies.queues.kernel import classify as classify_c, weekly_cuts
    from tests.multiqueue_reference import boundaries, classify
    cuts = weekly_cuts(np.array(estimates, np.int64), parts)
    assert cuts[:parts - 1].tolist() == boundaries(estimates, parts)
    for e in estimates[:20]:
        assert classify_c(e, cuts, parts - 1) == classify(e, boundaries(estimates, parts))


@settings(max_examples=300, deadline=None)
@given(workloads())
def test_the_local_reading_starts_every_job_within_the_machine(case):
    machine, parts, jobs = case
    submit, procs, runtime, estimate, klass = (list(x) for x in zip(*jobs))
    start = simulate(submit, runtime, estimate, procs, machine, klass, parts, local=True)
    assert all(s >= t for s, t in zip(start, submit))
    assert peak_usage(start, runtime, procs) <= machine


@settings(max_examples=200, deadline=None)
@given(workloads(), st.integers(0, 400), st.booleans())
def test_a_run_stopped_copied_and_resumed_is_the_same_run(case, stop, local):
    """The state is whole: stopping at any time, copying, and going on changes nothing."""
    import numpy as np

    from advisor.engine import make_arrays
    from advisor.policies.queues.kernel import MultiQueue
    machine, parts, jobs = case
    submit, procs, runtime, estimate, _ = (list(x) for x in zip(*jobs))
    arrays = make_arrays(submit, runtime, estimate, procs, machine)
    whole = MultiQueue(arrays, parts, week=40, local=local)
    whole.advance()
    part = MultiQueue(arrays, parts, week=40, local=local)
    part.advance(until=stop)
    again = part.copy()
    part.advance()
    again.advance()
    assert np.array_equal(part.start, whole.start) and np.array_equal(again.start,
                                                                        whole.start)


@settings(max_examples=200, deadline=None)
@given(workloads(), st.integers(0, 400), st.integers(1, 4))
def test_repartitioning_at_any_moment_starts_every_job_within_the_machine(case, stop, new):
    from advisor.engine import make_arrays
    from advisor.policies.queues.kernel import MultiQueue
    machine, parts, jobs = case
    submit, procs, runtime, estimate, _ = (list(x) for x in zip(*jobs))
    arrays = make_arrays(submit, runtime, estimate, procs, machine)
    run = MultiQueue(arrays, parts, week=40)
    run.advance(until=stop)
    run.repartition(new)
    assert run.parts[0].sum() == machine and (run.parts[0] >= run.parts[1]).all()
    run.advance()
    start = run.start.tolist()
    assert all(s >= t for s, t in zip(start, submit))
    assert peak_usage(start, runtime, procs) <= machine


@settings(max_examples=200, deadline=None)
@given(workloads(), st.integers(0, 400))
def test_a_run_continued_into_its_own_future_is_the_same_run(case, stop):
    """``with_future`` given the run's own jobs (what the honest setting replaces with a
    drawn future) changes nothing: the heap of running jobs is rebuilt exactly."""
    import numpy as np

    from advisor.engine import make_arrays
    from advisor.policies.queues.kernel import MultiQueue
    machine, parts, jobs = case
    submit, procs, runtime, estimate, _ = (list(x) for x in zip(*jobs))
    arrays = make_arrays(submit, runtime, estimate, procs, machine)
    whole = MultiQueue(arrays, parts, week=40)
    whole.advance()
    part = MultiQueue(arrays, parts, week=40)
    part.advance(until=stop)
    part.scalars[11] = min(stop, int(arrays.submit.max()))        # NOW
    again = part.with_future(arrays)
    again.advance()
    assert np.array_equal(again.start, whole.start)
