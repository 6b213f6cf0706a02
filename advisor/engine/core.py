"""The compiled discrete-event simulator: arrays in, per-job start times out.

Pure and deterministic: no I/O, no clock, no random state. Jobs are given in (submit time,
job id) order; that order is the final tie-break of every queue ordering.

Event rule: all completions at an instant, then all arrivals at that instant, then one
scheduling pass (``batch=True``). Running one pass after every single event instead
(``batch=False``, completions still first) moves CTC-SP2's average wait (Lelong et al.'s filter)
by +0.04% under EASY-FCFS-FCFS, -0.6% with the 'first' shadow rule, -1.9% under
EASY-SPF-SPF and +0.3% under conservative: 447 of its jobs share a submit second.

Running jobs are expected to end at start + estimate. A job still running past that (it
overran its request) is expected to end one second from now, the least the scheduler can
assume. This only matters for traces not cleaned of overruns.

The passes (``core_passes``) share one state (``core_state``); the kernel keeps the
scalars they change in its own variables.
"""
from __future__ import annotations

from numba import njit
from numba.extending import register_jitable

from advisor.engine.core_passes import (easy_pass, enqueue, held, keep_pending, launch,
                                        primary_order, profile_pass, sort_backfill,
                                        still_first)
from advisor.engine.core_state import (CONSERVATIVE, DEPTH, DONE, EASY, NEVER, NO_BACKFILL,
                                       NO_RESUME, QUEUED, RUNNING, SHADOW_ALL, SHADOW_FIRST,
                                       new_core_state)
from advisor.engine.kernel_state import results, view_of
from advisor.engine.structures import heap_pop, heap_push, running_insert, running_remove

__all__ = ["CONSERVATIVE", "DEPTH", "DONE", "EASY", "NEVER", "NO_BACKFILL", "NO_RESUME",
           "QUEUED", "RUNNING", "SHADOW_ALL", "SHADOW_FIRST", "held", "simulate",
           "start_job"]


@register_jitable
def start_job(j, t, free, hn, nrl, state, start, exp_end, ht, hj, rl, runtime, estimate, procs):
    """Start job j now: returns the new (free processors, heap size, running count). (The
    multiple-queue engine's; ``simulate``'s is ``core_passes.launch``.)"""
    state[j] = RUNNING
    start[j] = t
    exp_end[j] = t + estimate[j]
    hn = heap_push(ht, hj, hn, t + runtime[j], j)
    nrl = running_insert(rl, nrl, j, exp_end, procs)
    return free - procs[j], hn, nrl


@njit(cache=True)
def simulate(submit, runtime, estimate, procs, machine, mode, depth, primary, secondary,
             threshold, shadow_rule, batch, t0, fixed, first_pass, pkey, skey):
    """Simulate one policy. Returns (start times, first reservation of each job or -1).

    mode: NO_BACKFILL, EASY, DEPTH (first `depth` blocked jobs hold reservations) or
    CONSERVATIVE (every job holds one, kept between passes and compressed).
    primary / secondary: orderings of the primary and the backfill queue; pkey / skey: their
    per-job keys when they are KEYED (read only then).
    threshold: seconds of wait after which a job jumps ahead of the primary order, in submit
    order (Lelong et al. §6), or -1 for none.

    An EASY pass is settled when its head stays blocked behind a shadow time that a running
    job sets: until the next completion, while no running job is overdue (its shadow would
    move with time), every queued job it did not start fails again, for the shadow and the
    extra processors only shrink (docs/performance.md), in whatever order they are tried.
    With ties by every job ending at the shadow (SHADOW_ALL: the extra does not depend on
    which job meets the need first), the next pass need only try a job that arrived, while
    the head still comes first (still_first).
    """
    arrays, state = new_core_state(submit, runtime, estimate, procs, machine, mode, depth,
                                   primary, secondary, threshold, shadow_rule, batch, t0,
                                   fixed, first_pass, pkey, skey)
    st = view_of(state)  # (``arrays`` and ``state`` outlive it: the return reads them)
    n, ht, hj, rl, exp_end = st.n, st.ht, st.hj, st.rl, st.exp_end
    profile_mode, can_settle = st.profile_mode, st.can_settle
    nq = npr = npb = nrl = hn = 0
    sorted_pr = sorted_pb = 0       # opr[:sorted_pr], opb[:sorted_pb] are in order
    free = machine
    ai = 0
    t_wake = NEVER                  # CONSERVATIVE: next promised start (see profile_pass)
    settled = -1                    # the settled pass's head, shadow and extra processors
    s_shadow = s_extra = 0
    if t0 != NO_RESUME:  # the snapshot's state: running jobs and the queue at t0
        while ai < n and submit[ai] <= t0:
            if fixed[ai] >= 0:
                free, hn, nrl = launch(st, ai, fixed[ai], free, hn, nrl)
            else:
                nq, npr, npb = enqueue(st, ai, nq, npr, npb)
            ai += 1
        if first_pass:
            t_wake = t0
    while True:
        t_arr = submit[ai] if ai < n else NEVER
        t_end = ht[0] if hn > 0 else NEVER
        t = min(t_arr, t_end, t_wake)
        t_wake = NEVER
        if t == NEVER:
            break
        # Completions first, then arrivals, then one pass (or one event per pass).
        done_one = False
        while hn > 0 and ht[0] == t and not (done_one and not batch):
            j, hn = heap_pop(ht, hj, hn)
            st.state[j] = DONE
            free += procs[j]
            nrl = running_remove(rl, nrl, j)
            done_one = True
        ended = done_one
        j = ai                      # the first job to arrive now, if any
        while ai < n and submit[ai] == t and not (done_one and not batch):
            nq, npr, npb = enqueue(st, ai, nq, npr, npb)
            ai += 1
            done_one = True
        if nq == 0:
            continue
        if (settled >= 0 and not ended and ai == j + 1 and exp_end[rl[0]] > t
                and still_first(st, settled, j, t, npr)):
            # the pass after a settled one, one job having arrived behind the head: only
            # that job can start, as a backfill, and then it is the lists' last entry
            ends_by_shadow = t + estimate[j] <= s_shadow
            if 0 < free and procs[j] <= free and (ends_by_shadow or procs[j] <= s_extra):
                if not ends_by_shadow:
                    s_extra -= procs[j]
                free, hn, nrl = launch(st, j, t, free, hn, nrl)
                nq, npr, npb = nq - 1, npr - 1, npb - 1
            continue
        settled = -1
        running_before = nrl
        order, npo, sorted_pr = primary_order(st, t, nq, npr, sorted_pr)
        if not profile_mode:
            free, hn, nrl, sorted_pb, head, shadow, extra = easy_pass(
                st, t, order, npo, nq, npr, npb, sorted_pb, free, hn, nrl)
            if can_settle and head >= 0 and shadow > t:
                settled, s_shadow, s_extra = head, shadow, extra
        else:
            border, nb = st.q, nq  # conservative backfills nothing: every job has a promise
            if mode == DEPTH:
                sorted_pb = sort_backfill(st, t, npb, sorted_pb)
                border, nb = (st.opb, npb) if st.sort_pb else (st.opr, npr) \
                    if st.by_primary else (st.q, nq)
            free, hn, nrl, t_wake = profile_pass(st, t, order, npo, border, nb, free, hn,
                                                 nrl)
        if nrl == running_before:
            continue  # the pass started nothing: the lists hold queued jobs alone
        nq, npr, npb, sorted_pr, sorted_pb = keep_pending(st, nq, npr, npb, sorted_pr,
                                                          sorted_pb)
    return results(arrays, state)
