"""Invariants of the engine on random small workloads (hypothesis)."""
from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine import EngineConfig, make_arrays, run
from tests.helpers import peak_usage

ORDERS = ["FCFS", "LCFS", "SPF", "LPF", "SQF", "LQF", "EXP"]


@st.composite
def workloads(draw, exact=False, no_overruns=False):
    machine = draw(st.integers(1, 8))
    n = draw(st.integers(1, 25))
    submit = sorted(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    procs = draw(st.lists(st.integers(1, machine), min_size=n, max_size=n))
    runtime = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    if exact:
        estimate = runtime
    elif no_overruns:
        estimate = [r + draw(st.integers(0, 40)) for r in runtime]
    else:
        estimate = draw(st.lists(st.integers(0, 60), min_size=n, max_size=n))
    return make_arrays(submit, runtime, estimate, procs, machine)


configs = st.builds(
    EngineConfig,
    backfill=st.sampled_from(["none", "easy", "depth", "conservative"]),
    depth=st.integers(1, 4),
    primary=st.sampled_from(ORDERS),
    secondary=st.sampled_from(ORDERS),
    threshold=st.one_of(st.none(), st.integers(0, 50)),
    shadow=st.sampled_from(["all", "first"]),
    batch=st.booleans(),
)


@settings(max_examples=400, deadline=None)
@given(workloads(), configs)
def test_schedule_is_feasible(arrays, config):
    start, _ = run(arrays, config)
    assert (start >= 0).all(), "every job starts"
    assert (start >= arrays.submit).all(), "no job starts before it is submitted"
    assert peak_usage(start, arrays.runtime, arrays.procs) <= arrays.machine


@settings(max_examples=200, deadline=None)
@given(workloads(), configs)
def test_deterministic(arrays, config):
    a, ra = run(arrays, config)
    b, rb = run(arrays, config)
    assert np.array_equal(a, b) and np.array_equal(ra, rb)


@settings(max_examples=400, deadline=None)
@given(workloads(no_overruns=True), st.sampled_from(ORDERS), st.sampled_from(["all", "first"]))
def test_easy_head_never_starts_after_its_reservation(arrays, secondary, shadow):
    # With FCFS as the primary order the head keeps its reservation until it starts, and
    # with no job overrunning its estimate, nothing can push it back (Mu'alem and Feitelson
    # Property 2).
    config = EngineConfig(backfill="easy", secondary=secondary, shadow=shadow)
    start, reservation = run(arrays, config)
    reserved = reservation >= 0
    assert (start[reserved] <= reservation[reserved]).all()


@settings(max_examples=600, deadline=None)
@given(st.one_of(workloads(exact=True), workloads(no_overruns=True)), st.sampled_from(ORDERS))
def test_conservative_never_starts_a_job_after_its_first_reservation(arrays, primary):
    # With exact estimates the schedule never changes; with jobs ending early, compression
    # only moves reservations earlier (Mu'alem and Feitelson §2.1).
    start, reservation = run(arrays, EngineConfig(backfill="conservative", primary=primary))
    reserved = reservation >= 0
    assert (start[reserved] <= reservation[reserved]).all()


@settings(max_examples=400, deadline=None)
@given(workloads(), st.sampled_from(ORDERS), st.sampled_from(ORDERS), st.booleans())
def test_skipping_a_pass_after_a_settled_one_changes_nothing(arrays, primary, secondary,
                                                             overruns):
    """EASY tries only the job that arrived after a settled pass (core.simulate); a
    threshold no job reaches turns that off and changes nothing else."""
    if not overruns:
        arrays = replace(arrays, estimate=np.maximum(arrays.estimate, arrays.runtime))
    easy = EngineConfig(backfill="easy", primary=primary, secondary=secondary)
    full = replace(easy, threshold=10**15)
    assert np.array_equal(run(arrays, easy)[0], run(arrays, full)[0])
    assert np.array_equal(run(arrays, easy)[1], run(arrays, full)[1])


@settings(max_examples=400, deadline=None)
@given(workloads(), st.sampled_from(ORDERS), st.one_of(st.none(), st.integers(0, 50)))
def test_easy_keys_only_the_jobs_that_fit_by_exp(arrays, primary, t):
    """EASY with EXP as the backfill order keys and sorts only the jobs that fit when the
    scan begins (core.simulate); through the profile (depth 1) every queued job is sorted."""
    easy = EngineConfig(backfill="easy", primary=primary, secondary="EXP", threshold=t)
    depth1 = replace(easy, backfill="depth", depth=1)
    assert np.array_equal(run(arrays, easy)[0], run(arrays, depth1)[0])


@settings(max_examples=400, deadline=None)
@given(workloads(), st.sampled_from(ORDERS), st.sampled_from(ORDERS),
       st.one_of(st.none(), st.integers(0, 50)))
def test_one_reservation_through_the_profile_is_textbook_easy(arrays, primary, secondary, t):
    easy = EngineConfig(backfill="easy", primary=primary, secondary=secondary, threshold=t)
    depth1 = replace(easy, backfill="depth", depth=1)
    assert np.array_equal(run(arrays, easy)[0], run(arrays, depth1)[0])
