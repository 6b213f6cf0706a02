"""The process-level model's steps, each called alone on a small state
(``kernel_cosched_state.new_state``): its event heap against Python's heapq, and one job
of two processes on two CPUs worked out by hand."""
from __future__ import annotations

import heapq
from dataclasses import astuple

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.policies.timeshare.kernel_cosched import Constants, Costs
from advisor.policies.timeshare.kernel_cosched_cpu import dispatch_idle
from advisor.policies.timeshare.kernel_cosched_events import admit_queued, cpu_due
from advisor.policies.timeshare.kernel_cosched_state import (ARRIVE, CPU, FCFS, PENDING, QUEUED,
                                                             WAKE, grow_heap, heap_short, new_state,
                                                             pop, push)

COSTS = Costs(global_switch=0.0, local_switch=0.0, monitor=0.0)


def small_state(work, sync=True, cpus=None, mode=FCFS):
    """(arrays, state) of jobs arriving at 0, each on as many CPUs as ``work``'s row."""
    work = np.asarray(work, np.float64)
    jobs, size = work.shape
    return new_state(work, np.full(jobs, size), np.full(jobs, 10), np.full(jobs, sync),
                     np.zeros(jobs), np.ones(jobs), cpus or size, 1, mode,
                     np.array(astuple(COSTS), np.float64),
                     np.array(astuple(Constants()), np.float64), np.int64(0))


EVENTS = st.tuples(st.sampled_from([0.0, 0.5, 1.0, 2.5]), st.integers(0, 3),
                   st.integers(0, 2), st.integers(0, 2), st.integers(0, 1))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(EVENTS, st.none()), max_size=80))
def test_the_event_heap_pops_as_heapq_does_and_grows(ops):
    """Each ``None`` pops (when any is pending); the heap starts with room for 10 events
    (no job, one CPU) and grows as the kernel grows it."""
    arrays, state = small_state(np.zeros((0, 1)))
    reference: list = []
    for op in ops:
        if heap_short(state):
            grow_heap(state)
        if op is not None:
            push(state, *op)
            heapq.heappush(reference, op)
        elif reference:
            assert pop(state) == heapq.heappop(reference)
    assert arrays.sc[PENDING] == len(reference)
    assert [pop(state) for _ in reference] == sorted(reference)


def test_arrivals_wait_on_the_heap_in_order():
    arrays, state = small_state([[1.0, 3.0], [2.0, 2.0]], cpus=4)
    assert [pop(state) for _ in range(2)] == [(0.0, ARRIVE, 0, 0, 0), (0.0, ARRIVE, 1, 0, 0)]


def test_an_exchange_completes_when_both_neighbours_messages_have_arrived():
    """Process 0 computes 1 ms, process 1 3 ms (a ring of two: each is the other's both
    neighbours). 0 sends at 1 and waits; 1 sends at 3 and finds 0's message there, so its
    exchange completes at once, and 0's one latency later, when 1's message arrives."""
    arrays, state = small_state([[1.0, 3.0]])
    pop(state)
    arrays.queue[0] = 0
    arrays.sc[QUEUED] = 1
    assert admit_queued(state, 0.0)
    assert arrays.start[0] == 0.0 and not arrays.done[0].any()
    for c in (0, 1):
        dispatch_idle(state, c, 0.0, 0)
    due = sorted(pop(state) for _ in range(2))
    assert [(t, kind, c) for t, kind, c, _, _ in due] == [(1.0, CPU, 0), (3.0, CPU, 1)]
    assert cpu_due(state, 0, 1.0) == -1
    assert arrays.incomm[0, 0] and arrays.sc[PENDING] == 0      # waits for CPU 1's message
    assert cpu_due(state, 1, 3.0) == -1
    assert [pop(state) for _ in range(2)] == [(3.0, WAKE, 0, 1, 0),
                                              (3.0 + COSTS.latency, WAKE, 0, 0, 0)]
