"""The textbook core's passes, each called alone on a small state (``core_state``): four
processors, four jobs worked out by hand.

A (3 processors, 100 s expected) runs; B (4) is the head and cannot start; C (1, 50 s)
ends before B's shadow at 100 and backfills; D (1, 500 s) would delay B: EASY leaves it."""
from __future__ import annotations

import numpy as np

from advisor.engine.core_passes import (easy_pass, enqueue, keep_pending, launch,
                                        primary_order, profile_pass, shadow_of)
from advisor.engine.core_state import (CONSERVATIVE, EASY, NO_RESUME, QUEUED, RUNNING,
                                       SHADOW_ALL, new_core_state)
from advisor.engine.structures import FCFS

A, B, C, D = range(4)


def small_state(mode=EASY):
    submit = np.zeros(4, np.int64)
    runtime = np.array([100, 200, 50, 500], np.int64)
    procs = np.array([3, 4, 1, 1], np.int64)
    none = np.zeros(4, np.float64)
    return new_core_state(submit, runtime, runtime.copy(), procs, 4, mode, 1, FCFS, FCFS,
                          -1, SHADOW_ALL, True, NO_RESUME, np.full(4, -1, np.int64), False,
                          none, none)


def queued(mode=EASY):
    arrays, st = small_state(mode)
    free, hn, nrl = launch(st, A, 0, 4, 0, 0)
    nq = npr = npb = 0
    for j in (B, C, D):
        nq, npr, npb = enqueue(st, j, nq, npr, npb)
    return arrays, st, free, hn, nrl, nq


def test_a_started_job_is_running_until_its_expected_end():
    arrays, st, free, hn, nrl, nq = queued()
    assert (free, hn, nrl, nq) == (1, 1, 1, 3)
    assert arrays.state[A] == RUNNING and arrays.exp_end[A] == 100
    assert list(arrays.state[1:]) == [QUEUED] * 3
    assert list(arrays.q[:3]) == [B, C, D]


def test_the_head_s_shadow_is_the_running_job_s_expected_end():
    arrays, st, free, hn, nrl, nq = queued()
    assert shadow_of(st, 0, free, 4, nrl) == (100, 0)


def test_easy_backfills_what_ends_before_the_shadow_and_nothing_else():
    arrays, st, free, hn, nrl, nq = queued()
    order, npo, _ = primary_order(st, 0, nq, nq, 0)
    free, hn, nrl, _, head, shadow, extra = easy_pass(st, 0, order, npo, nq, nq, nq, 0,
                                                      free, hn, nrl)
    assert (head, shadow, extra) == (B, 100, 0)
    assert list(arrays.start) == [0, -1, 0, -1] and free == 0
    assert arrays.first_resv[B] == 100
    nq, npr, npb, _, _ = keep_pending(st, nq, nq, nq, 0, 0)
    assert nq == 2 and list(arrays.q[:2]) == [B, D]


def test_conservative_gives_every_blocked_job_a_promise():
    arrays, st, free, hn, nrl, nq = queued(CONSERVATIVE)
    order, npo, _ = primary_order(st, 0, nq, nq, 0)
    free, hn, nrl, wake = profile_pass(st, 0, order, npo, arrays.q, nq, free, hn, nrl)
    assert list(arrays.resv) == [-1, 100, -1, 300]      # D after B, C now
    assert arrays.start[C] == 0 and wake == 100
