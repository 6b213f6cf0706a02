"""The textbook core's steps: a job started and queued, a pass's primary order, EASY's
pass (Lelong et al.'s Algorithm 1 with Mu'alem and Feitelson's shadow), the profile pass of
depth-k and conservative backfilling, and the lists kept after a pass.

Each takes the run's state (``core_state``) and the scalars the kernel keeps in its own
variables, and returns those it changes. All are inlined into ``core.simulate``: a call per
job started would cost more than the start.
"""
from __future__ import annotations

from numba import njit

from advisor.engine.core_state import (CONSERVATIVE, DEPTH, EASY, NEVER, QUEUED, RUNNING,
                                       SHADOW_ALL)
from advisor.engine.structures import (EXP, KEYED, count_started, heap_push, keep_queued,
                                       order_key, profile_add, profile_anchor,
                                       profile_of_running, running_insert, sort_by_key)

@njit(cache=True, inline="always")
def held(estimate):
    """How long a job holds processors in the reservation profile: at least one second, as
    for an overdue job, so that a zero estimate cannot share its processors."""
    return max(estimate, 1)


@njit(cache=True, inline="always")
def launch(st, j, t, free, hn, nrl):
    """Start job j now: returns the new (free processors, heap size, running count)."""
    st.state[j] = RUNNING
    st.start[j] = t
    st.exp_end[j] = t + st.estimate[j]
    hn = heap_push(st.ht, st.hj, hn, t + st.runtime[j], j)
    nrl = running_insert(st.rl, nrl, j, st.exp_end, st.procs)
    return free - st.procs[j], hn, nrl


@njit(cache=True, inline="always")
def enqueue(st, j, nq, npr, npb):
    """Job j joins the queue (arrival order) and the lists kept in primary/backfill order,
    with its static sort keys (EXP's, which change with time, are written at each pass
    instead)."""
    st.q[nq] = j
    st.qp[nq] = st.procs[j]
    st.opr[npr] = j
    st.opb[npb] = j
    st.state[j] = QUEUED
    primary, secondary = st.primary, st.secondary
    st.kpr[j] = st.pkey[j] if primary >= KEYED else order_key(primary, j, 0, st.submit,
                                                              st.estimate, st.procs)
    st.kb[j] = st.skey[j] if secondary >= KEYED else order_key(secondary, j, 0, st.submit,
                                                               st.estimate, st.procs)
    return nq + 1, npr + 1, npb + 1


@njit(cache=True, inline="always")
def shadow_of(st, t, free, need, nrl):
    """Shadow time and extra processors for a head job needing `need` (Mu'alem and
    Feitelson Fig. 2). Running jobs are taken in order of expected end, then processors.
    SHADOW_ALL (textbook) counts every job expected to end exactly at the shadow time toward
    the extra processors; SHADOW_FIRST counts only the jobs up to the first whose release
    satisfies the head job."""
    rl, procs, exp_end = st.rl, st.procs, st.exp_end
    avail = free
    for r in range(nrl):
        j = rl[r]
        avail += procs[j]
        if avail >= need:
            shadow = max(exp_end[j], t + 1)
            if st.shadow_rule == SHADOW_ALL:
                r2 = r + 1
                while r2 < nrl and max(exp_end[rl[r2]], t + 1) == shadow:
                    avail += procs[rl[r2]]
                    r2 += 1
            return shadow, avail - need
    return t, free - need


@njit(cache=True, inline="always")
def still_first(st, head, j, t, npr):
    """(settled) Whether the settled pass's head still comes first in the primary order at
    t, job j having arrived behind it. EXP's keys move with time: the head must then still
    lead every queued job (a job with a shorter estimate gains on it)."""
    primary, kpr = st.primary, st.kpr
    if primary != EXP:
        return not st.sort_pr or kpr[j] > kpr[head] or (kpr[j] == kpr[head] and j > head)
    kh = order_key(primary, head, t, st.submit, st.estimate, st.procs)
    for a in range(npr):
        i = st.opr[a]
        ki = order_key(primary, i, t, st.submit, st.estimate, st.procs)
        if ki < kh or (ki == kh and i < head):
            return False
    return True


@njit(cache=True, inline="always")
def fitting_by_exp(st, t, npb, head, free, shadow, extra):
    """(EASY, backfill order EXP) The queued jobs that could start now beside the head,
    into fit in EXP order; returns how many. The scan's free and extra processors only
    shrink, so a job that does not fit at its start never does, in whatever order: only
    those that fit need keys at t and a place in the order."""
    opb, procs, estimate, fit, kb = st.opb, st.procs, st.estimate, st.fit, st.kb
    m = 0
    for a in range(npb):
        j = opb[a]
        if j != head and st.state[j] == QUEUED and procs[j] <= free and (
                t + estimate[j] <= shadow or procs[j] <= extra):
            kb[j] = order_key(st.secondary, j, t, st.submit, estimate, procs)
            fit[m] = j
            m += 1
    sort_by_key(fit, m, kb, 1)
    return m


@njit(cache=True, inline="always")
def sort_backfill(st, t, npb, sorted_pb):
    """When the backfill queue has an order of its own (sort_pb), sorts opb[:npb] (static
    keys were written at arrival, and opb[:sorted_pb] is in order already); returns how
    much of opb is in order."""
    if not st.sort_pb:
        return sorted_pb
    opb, kb = st.opb, st.kb
    if st.secondary == EXP:
        for a in range(npb):
            j = opb[a]
            kb[j] = order_key(st.secondary, j, t, st.submit, st.estimate, st.procs)
        sorted_pb = 1
    sort_by_key(opb, npb, kb, sorted_pb)
    return npb


@njit(cache=True, inline="always")
def primary_order(st, t, nq, npr, sorted_pr):
    """This pass's primary order: over-threshold jobs first, by submit (Lelong et al. §6),
    then the others in the primary order; returns (the order, its length, how much of opr
    is in order)."""
    if not st.sort_pr:
        return st.q, nq, sorted_pr
    opr, kpr, primary = st.opr, st.kpr, st.primary
    if primary == EXP:  # the one ordering whose keys change with time
        for a in range(npr):
            j = opr[a]
            kpr[j] = order_key(primary, j, t, st.submit, st.estimate, st.procs)
        sorted_pr = 1
    sort_by_key(opr, npr, kpr, sorted_pr)
    if st.threshold < 0:
        return opr, npr, npr
    po, q, submit, threshold = st.po, st.q, st.submit, st.threshold
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
    return po, npo, npr


@njit(cache=True, inline="always")
def easy_pass(st, t, order, npo, nq, npr, npb, sorted_pb, free, hn, nrl):
    """Lelong et al.'s Algorithm 1: start in primary order until one does not fit; then
    (EASY) backfill in the secondary order without delaying that head (Mu'alem and
    Feitelson Fig. 2). Returns (free, heap size, running count, how much of opb is in
    order, the head, its shadow and extra processors; head -1: none blocked)."""
    procs = st.procs
    head = -1
    for a in range(npo):
        j = order[a]
        if procs[j] > free:
            head = j
            break
        free, hn, nrl = launch(st, j, t, free, hn, nrl)
    if head < 0 or st.mode != EASY:
        return free, hn, nrl, sorted_pb, -1, 0, 0
    shadow, extra = shadow_of(st, t, free, procs[head], nrl)
    if st.first_resv[head] < 0:
        st.first_resv[head] = shadow
    if st.sort_pb and st.secondary == EXP:
        border, nb = st.fit, fitting_by_exp(st, t, npb, head, free, shadow, extra)
    else:
        sorted_pb = sort_backfill(st, t, npb, sorted_pb)
        border, nb = (st.opb, npb) if st.sort_pb else (st.opr, npr) if st.by_primary else \
            (st.q, nq)
    qp, state, estimate, arrival_order = st.qp, st.state, st.estimate, st.arrival_order
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
            free, hn, nrl = launch(st, j, t, free, hn, nrl)
    return free, hn, nrl, sorted_pb, head, shadow, extra


@njit(cache=True, inline="always")
def profile_pass(st, t, order, npo, border, nb, free, hn, nrl):
    """Reservation-based backfilling on a free-processor profile (Mu'alem and Feitelson,
    Fig. 1).

    DEPTH: in primary order, a job starts if it fits now, else gets a reservation, until
    `depth` jobs hold one; the others then backfill, in the secondary order, if they fit
    now without delaying any reservation. CONSERVATIVE: every job keeps its reservation
    between passes, and each pass takes each job out and puts it back as early as it fits
    (compression, Mu'alem and Feitelson §2.1), so no job is ever pushed back.
    Returns (free processors, heap size, running count, wake-up time)."""
    pt, pf, resv, estimate, procs, mark = st.pt, st.pf, st.resv, st.estimate, st.procs, \
        st.mark
    mode = st.mode
    m = profile_of_running(t, free, st.rl, nrl, st.exp_end, procs, pt, pf)
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
        elif mode == DEPTH and nres >= st.depth:
            mark[j] = 1
            continue
        anchor = profile_anchor(pt, pf, m, procs[j], held(estimate[j]))
        m = profile_add(pt, pf, m, anchor, anchor + held(estimate[j]), -procs[j])
        if anchor == t:
            free, hn, nrl = launch(st, j, t, free, hn, nrl)
            continue
        if st.first_resv[j] < 0:
            st.first_resv[j] = anchor
        nres += 1
        if mode == CONSERVATIVE:
            resv[j] = anchor  # the promise, kept to the next pass
            # A promise can fall on a second when nothing completes or arrives (after an
            # overdue job's or a zero estimate's one-second hold) with its processors
            # free: the scheduler wakes up then, as a real one does. DEPTH needs no
            # wake-up: it recomputes reservations, and processors free up only at
            # completions (events).
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
                free, hn, nrl = launch(st, j, t, free, hn, nrl)
    return free, hn, nrl, t_wake


@njit(cache=True, inline="always")
def keep_pending(st, nq, npr, npb, sorted_pr, sorted_pb):
    """After a pass that started jobs, the lists hold the queued jobs alone, in order:
    returns their new lengths and how much of opr and opb is in order."""
    q, qp, state = st.q, st.qp, st.state
    m = 0
    for a in range(nq):
        if state[q[a]] == QUEUED:
            q[m], qp[m] = q[a], qp[a]
            m += 1
    if st.sort_pr:
        npr = sorted_pr = keep_queued(st.opr, npr, state, QUEUED)
    else:
        npr = 0
    if st.sort_pb:
        # the jobs left of opb[:sorted_pb] stay in order, at its front
        sorted_pb = sorted_pb - count_started(st.opb, sorted_pb, state, QUEUED)
        npb = keep_queued(st.opb, npb, state, QUEUED)
    else:
        npb = 0
    return m, npr, npb, sorted_pr, sorted_pb
