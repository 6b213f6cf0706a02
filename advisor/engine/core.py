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
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import register_jitable

from advisor.engine.borrow import borrowed
from advisor.engine.structures import (EXP, FCFS, KEYED, count_started, heap_pop, heap_push,
                                       keep_queued, order_key, profile_add, profile_anchor,
                                       profile_of_running, running_insert, running_remove,
                                       sort_by_key)

# Backfilling modes.
NO_BACKFILL, EASY, DEPTH, CONSERVATIVE = 0, 1, 2, 3
# Shadow-time ties in EASY (see ``shadow_of`` in ``simulate``).
SHADOW_ALL, SHADOW_FIRST = 0, 1

QUEUED, RUNNING, DONE = 1, 2, 3  # job states; 0: not submitted yet
NEVER = np.iinfo(np.int64).max
NO_RESUME = np.iinfo(np.int64).min


@register_jitable
def held(estimate):
    """How long a job holds processors in the reservation profile: at least one second, as
    for an overdue job, so that a zero estimate cannot share its processors."""
    return max(estimate, 1)


@register_jitable
def start_job(j, t, free, hn, nrl, state, start, exp_end, ht, hj, rl, runtime, estimate, procs):
    """Start job j now: returns the new (free processors, heap size, running count). (The
    multiple-queue engine's; ``simulate`` has the same as a closure: calling this one from
    it is slower, docs/performance.md.)"""
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
    """
    n = submit.shape[0]
    start = np.full(n, -1, np.int64)
    first_resv = np.full(n, -1, np.int64)
    resv = np.full(n, -1, np.int64)
    exp_end = np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    kpr = np.zeros(n, np.float64)  # sort keys of the primary and the backfill order
    kb = np.zeros(n, np.float64)
    q = np.empty(n, np.int64)      # queue in arrival order
    qp = np.empty(n, np.int64)     # their processors, read in turn by the backfill scan
    opr = np.empty(n, np.int64)    # queue in primary order
    opb = np.empty(n, np.int64)    # queue in backfill order
    po = np.empty(n, np.int64)     # this pass's primary order, threshold applied
    fit = np.empty(n, np.int64)    # (EASY, EXP backfill order) the jobs that fit, in order
    rl = np.empty(n, np.int64)     # running jobs by (expected end, procs, id)
    ht = np.empty(n, np.int64)     # completion heap: times
    hj = np.empty(n, np.int64)     # completion heap: jobs
    mark = np.zeros(n, np.int8)    # deferred to backfill (DEPTH)
    cap = 3 * n + 8
    pt = np.empty(cap, np.int64)
    pf = np.empty(cap, np.int64)
    # the simulation works on views of these that own nothing (engine.borrow); ``owners``
    # keeps the arrays themselves alive until it returns
    owners = (start, first_resv, resv, exp_end, state, kpr, kb, q, qp, opr, opb, po, fit,
              rl, ht, hj, mark, pt, pf)
    start = borrowed(start)
    first_resv = borrowed(first_resv)
    resv = borrowed(resv)
    exp_end = borrowed(exp_end)
    state = borrowed(state)
    kpr = borrowed(kpr)
    kb = borrowed(kb)
    q = borrowed(q)
    qp = borrowed(qp)
    opr = borrowed(opr)
    opb = borrowed(opb)
    po = borrowed(po)
    fit = borrowed(fit)
    rl = borrowed(rl)
    ht = borrowed(ht)
    hj = borrowed(hj)
    mark = borrowed(mark)
    pt = borrowed(pt)
    pf = borrowed(pf)
    submit = borrowed(submit)
    runtime = borrowed(runtime)
    estimate = borrowed(estimate)
    procs = borrowed(procs)
    fixed = borrowed(fixed)
    pkey = borrowed(pkey)
    skey = borrowed(skey)
    nq = npr = npb = nrl = hn = 0
    sorted_pr = sorted_pb = 0       # opr[:sorted_pr], opb[:sorted_pb] are in order
    free = machine
    ai = 0
    t_wake = NEVER                  # CONSERVATIVE: next promised start (see profile_pass)
    sort_pr = primary != FCFS
    sort_pb = secondary != FCFS and secondary != primary and (mode == EASY or mode == DEPTH)
    profile_mode = mode == DEPTH or mode == CONSERVATIVE
    # the backfill queue: opb (an order of its own), opr (the primary's), or q (arrival)
    by_primary = secondary == primary and sort_pr
    arrival_order = not (sort_pb or by_primary)
    # An EASY pass is settled when its head stays blocked behind a shadow time that a
    # running job sets: until the next completion, while no running job is overdue (its
    # shadow would move with time), every queued job it did not start fails again, for the
    # shadow and the extra processors only shrink (docs/performance.md), in whatever order
    # they are tried. With ties by every job ending at the shadow (SHADOW_ALL: the extra
    # does not depend on which job meets the need first), the next pass need only try a job
    # that arrived, while the head still comes first (still_first).
    can_settle = (mode == EASY and batch and threshold < 0 and shadow_rule == SHADOW_ALL)
    settled = -1                    # the settled pass's head, shadow and extra processors
    s_shadow = s_extra = 0

    # Helpers are closures over the arrays, not compiled functions taking them: an array
    # passed to a compiled function is reference-counted (atomic operations) at each call,
    # which took a third of an EASY run (docs/performance.md).
    def launch(j, t, free, hn, nrl):
        """Start job j now: returns the new (free processors, heap size, running count)."""
        state[j] = RUNNING
        start[j] = t
        exp_end[j] = t + estimate[j]
        hn = heap_push(ht, hj, hn, t + runtime[j], j)
        nrl = running_insert(rl, nrl, j, exp_end, procs)
        return free - procs[j], hn, nrl

    def enqueue(j, nq, npr, npb):
        """Job j joins the queue (arrival order) and the lists kept in primary/backfill
        order, with its static sort keys (EXP's, which change with time, are written at
        each pass instead)."""
        q[nq] = j
        qp[nq] = procs[j]
        opr[npr] = j
        opb[npb] = j
        state[j] = QUEUED
        kpr[j] = pkey[j] if primary >= KEYED else order_key(primary, j, 0, submit, estimate,
                                                            procs)
        kb[j] = skey[j] if secondary >= KEYED else order_key(secondary, j, 0, submit,
                                                             estimate, procs)
        return nq + 1, npr + 1, npb + 1

    def shadow_of(t, free, need, nrl):
        """Shadow time and extra processors for a head job needing `need` (Mu'alem and Feitelson
        Fig. 2). Running jobs are taken in order of expected end, then processors. SHADOW_ALL
        (textbook) counts every job expected to end exactly at the shadow time toward the
        extra processors; SHADOW_FIRST counts only the jobs up to the first whose release
        satisfies the head job."""
        avail = free
        for r in range(nrl):
            j = rl[r]
            avail += procs[j]
            if avail >= need:
                shadow = max(exp_end[j], t + 1)
                if shadow_rule == SHADOW_ALL:
                    r2 = r + 1
                    while r2 < nrl and max(exp_end[rl[r2]], t + 1) == shadow:
                        avail += procs[rl[r2]]
                        r2 += 1
                return shadow, avail - need
        return t, free - need

    def still_first(head, j, t, npr):
        """(settled) Whether the settled pass's head still comes first in the primary order
        at t, job j having arrived behind it. EXP's keys move with time: the head must then
        still lead every queued job (a job with a shorter estimate gains on it)."""
        if primary != EXP:
            return not sort_pr or kpr[j] > kpr[head] or (kpr[j] == kpr[head] and j > head)
        kh = order_key(primary, head, t, submit, estimate, procs)
        for a in range(npr):
            i = opr[a]
            ki = order_key(primary, i, t, submit, estimate, procs)
            if ki < kh or (ki == kh and i < head):
                return False
        return True

    def fitting_by_exp(t, npb, head, free, shadow, extra):
        """(EASY, backfill order EXP) The queued jobs that could start now beside the head,
        into fit in EXP order; returns how many. The scan's free and extra processors only
        shrink, so a job that does not fit at its start never does, in whatever order: only
        those that fit need keys at t and a place in the order."""
        m = 0
        for a in range(npb):
            j = opb[a]
            if j != head and state[j] == QUEUED and procs[j] <= free and (
                    t + estimate[j] <= shadow or procs[j] <= extra):
                kb[j] = order_key(secondary, j, t, submit, estimate, procs)
                fit[m] = j
                m += 1
        sort_by_key(fit, m, kb, 1)
        return m

    def profile_pass(t, order, npo, border, nb, free, hn, nrl):
        """Reservation-based backfilling on a free-processor profile (Mu'alem and Feitelson,
        Fig. 1).

        DEPTH: in primary order, a job starts if it fits now, else gets a reservation,
        until `depth` jobs hold one; the others then backfill, in the secondary order, if
        they fit now without delaying any reservation. CONSERVATIVE: every job keeps its
        reservation between passes, and each pass takes each job out and puts it back as
        early as it fits (compression, Mu'alem and Feitelson §2.1), so no job is ever pushed
        back.
        Returns (free processors, heap size, running count, wake-up time)."""
        m = profile_of_running(t, free, rl, nrl, exp_end, procs, pt, pf)
        if mode == CONSERVATIVE:  # and the promises made to queued jobs (border) hold theirs
            for a in range(nb):
                j = border[a]
                if resv[j] >= 0:
                    s = max(resv[j], t)
                    m = profile_add(pt, pf, m, s, s + held(estimate[j]), -procs[j])
        t_wake = NEVER
        nres = 0
        for a in range(npo):
            j = order[a]
            if mode == CONSERVATIVE and resv[j] >= 0:
                s = max(resv[j], t)   # compression: out, then back in as early as it fits
                m = profile_add(pt, pf, m, s, s + held(estimate[j]), procs[j])
            elif mode == DEPTH and nres >= depth:
                mark[j] = 1
                continue
            anchor = profile_anchor(pt, pf, m, procs[j], held(estimate[j]))
            m = profile_add(pt, pf, m, anchor, anchor + held(estimate[j]), -procs[j])
            if anchor == t:
                free, hn, nrl = launch(j, t, free, hn, nrl)
                continue
            if first_resv[j] < 0:
                first_resv[j] = anchor
            nres += 1
            if mode == CONSERVATIVE:
                resv[j] = anchor  # the promise, kept to the next pass
                # A promise can fall on a second when nothing completes or arrives (after
                # an overdue job's or a zero estimate's one-second hold) with its
                # processors free: the scheduler wakes up then, as a real one does. DEPTH
                # needs no wake-up: it recomputes reservations, and processors free up only
                # at completions (events).
                t_wake = min(t_wake, anchor)
        if mode == DEPTH:
            for a in range(nb):
                j = border[a]
                if mark[j] == 0:
                    continue
                mark[j] = 0
                if procs[j] <= free and profile_anchor(pt, pf, m, procs[j],
                                                       held(estimate[j])) == t:
                    m = profile_add(pt, pf, m, t, t + held(estimate[j]), -procs[j])
                    free, hn, nrl = launch(j, t, free, hn, nrl)
        return free, hn, nrl, t_wake

    def sort_backfill(t, npb, sorted_pb):
        """When the backfill queue has an order of its own (sort_pb), sorts opb[:npb]
        (static keys were written at arrival, and opb[:sorted_pb] is in order already);
        returns how much of opb is in order."""
        if not sort_pb:
            return sorted_pb
        if secondary == EXP:
            for a in range(npb):
                j = opb[a]
                kb[j] = order_key(secondary, j, t, submit, estimate, procs)
            sorted_pb = 1
        sort_by_key(opb, npb, kb, sorted_pb)
        return npb

    if t0 != NO_RESUME:  # the snapshot's state: running jobs and the queue at t0
        while ai < n and submit[ai] <= t0:
            if fixed[ai] >= 0:
                free, hn, nrl = launch(ai, fixed[ai], free, hn, nrl)
            else:
                nq, npr, npb = enqueue(ai, nq, npr, npb)
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
            state[j] = DONE
            free += procs[j]
            nrl = running_remove(rl, nrl, j)
            done_one = True
        ended = done_one
        j = ai                      # the first job to arrive now, if any
        while ai < n and submit[ai] == t and not (done_one and not batch):
            nq, npr, npb = enqueue(ai, nq, npr, npb)
            ai += 1
            done_one = True
        if nq == 0:
            continue
        if (settled >= 0 and not ended and ai == j + 1 and exp_end[rl[0]] > t
                and still_first(settled, j, t, npr)):
            # the pass after a settled one, one job having arrived behind the head: only
            # that job can start, as a backfill, and then it is the lists' last entry
            ends_by_shadow = t + estimate[j] <= s_shadow
            if 0 < free and procs[j] <= free and (ends_by_shadow or procs[j] <= s_extra):
                if not ends_by_shadow:
                    s_extra -= procs[j]
                free, hn, nrl = launch(j, t, free, hn, nrl)
                nq, npr, npb = nq - 1, npr - 1, npb - 1
            continue
        settled = -1
        running_before = nrl

        # ---- this pass's primary order: over-threshold jobs first, by submit (Lelong et al. §6)
        if sort_pr:
            if primary == EXP:  # the one ordering whose keys change with time
                for a in range(npr):
                    j = opr[a]
                    kpr[j] = order_key(primary, j, t, submit, estimate, procs)
                sorted_pr = 1
            sort_by_key(opr, npr, kpr, sorted_pr)
            sorted_pr = npr
            order, npo = opr, npr
            if threshold >= 0:
                npo = 0
                for a in range(nq):
                    if t - submit[q[a]] <= threshold:
                        break
                    po[npo] = q[a]
                    npo += 1
                for a in range(npr):
                    j = opr[a]
                    if t - submit[j] <= threshold:
                        po[npo] = j
                        npo += 1
                order = po
        else:
            order = q
            npo = nq

        if not profile_mode:
            # ---- Algorithm 1 of Lelong et al.: start in primary order until one does not fit
            head = -1
            for a in range(npo):
                j = order[a]
                if procs[j] > free:
                    head = j
                    break
                free, hn, nrl = launch(j, t, free, hn, nrl)
            if head >= 0 and mode == EASY:
                shadow, extra = shadow_of(t, free, procs[head], nrl)
                if first_resv[head] < 0:
                    first_resv[head] = shadow
                # ---- backfill in the secondary order without delaying the head
                if sort_pb and secondary == EXP:
                    border, nb = fit, fitting_by_exp(t, npb, head, free, shadow, extra)
                else:
                    sorted_pb = sort_backfill(t, npb, sorted_pb)
                    border, nb = (opb, npb) if sort_pb else (opr, npr) if by_primary else (q, nq)
                for a in range(nb):
                    if free == 0:
                        break
                    if arrival_order and qp[a] > free:
                        continue
                    j = border[a]
                    if j == head or state[j] != QUEUED or procs[j] > free:
                        continue
                    ends_by_shadow = t + estimate[j] <= shadow
                    if ends_by_shadow or procs[j] <= extra:
                        if not ends_by_shadow:
                            extra -= procs[j]
                        free, hn, nrl = launch(j, t, free, hn, nrl)
                if can_settle and shadow > t:
                    settled, s_shadow, s_extra = head, shadow, extra
        else:
            border, nb = q, nq  # conservative backfills nothing: every job has its promise
            if mode == DEPTH:
                sorted_pb = sort_backfill(t, npb, sorted_pb)
                border, nb = (opb, npb) if sort_pb else (opr, npr) if by_primary else (q, nq)
            free, hn, nrl, t_wake = profile_pass(t, order, npo, border, nb, free, hn, nrl)

        if nrl == running_before:
            continue  # the pass started nothing: the lists hold queued jobs alone
        m = 0
        for a in range(nq):
            if state[q[a]] == QUEUED:
                q[m], qp[m] = q[a], qp[a]
                m += 1
        nq = m
        if sort_pr:
            npr = sorted_pr = keep_queued(opr, npr, state, QUEUED)
        else:
            npr = 0
        if sort_pb:
            # the jobs left of opb[:sorted_pb] stay in order, at its front
            sorted_pb = sorted_pb - count_started(opb, sorted_pb, state, QUEUED)
            npb = keep_queued(opb, npb, state, QUEUED)
        else:
            npb = 0
    return owners[0], owners[1]
