"""Multiple-queue backfilling (Lawson and Smirni, Fig. 2), compiled: P runtime classes, one
queue each, a pivot per queue, in the reading that ``tests/multiqueue_reference.py`` writes
down and the tests check this against, job by job:

* pivots (each class's first queued job) hold reservations on the whole machine, in the
  order they became pivots; a pivot starts when its reservation is now;
* any other queued job, in arrival order across classes, starts if it fits now without
  moving a pivot's reservation (Fig. 2's (c), which then holds (a) and (b));
* ``local``: the other reading, where (a) and (b) also start a job on its own partition's
  idle processors when its own pivot is not delayed, whatever other pivots count on. Only
  then do the partitions' sizes matter: they start even, and processors a job borrows are
  reassigned to its partition. This is the reading the paper's Fig. 4 supports: with it,
  four queues beat one with exact runtimes on all four traces, and with user estimates on
  all but CTC, where they lose (the strict reading wins there too);
  tests/papers/test_seed000_directions.py.

Running jobs are expected to end at start + estimate, or one second from now once overdue;
one pass after the completions and arrivals of each second.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import JobArrays
from advisor.engine.core import DONE, NEVER, QUEUED, held, start_job
from advisor.engine.structures import (heap_pop, keep_queued, profile_add, profile_anchor,
                                       running_remove)


@njit(cache=True)
def _profile(t, free, rl, nrl, exp_end, procs, pt, pf):
    """The free-processor profile of the running jobs from t on; returns its size."""
    pt[0] = t
    pf[0] = free
    m = 1
    for r in range(nrl):
        e = max(exp_end[rl[r]], t + 1)
        if e == pt[m - 1]:
            pf[m - 1] += procs[rl[r]]
        else:
            pt[m] = e
            pf[m] = pf[m - 1] + procs[rl[r]]
            m += 1
    return m


@njit(cache=True)
def _plan(t, free, rl, nrl, exp_end, procs, estimate, pt, pf, pivot, rank, anchor, promised,
          parts):
    """The profile of the running jobs, with each pivot reserved in rank order; returns its
    size."""
    m = _profile(t, free, rl, nrl, exp_end, procs, pt, pf)
    for c in range(parts):
        if pivot[c] >= 0:
            anchor[pivot[c]] = NEVER
    for _ in range(parts):
        p = -1
        for c in range(parts):
            j = pivot[c]
            if j >= 0 and anchor[j] == NEVER and (p < 0 or rank[j] < rank[pivot[p]]):
                p = c
        if p < 0:
            break
        m = _reserve(pivot[p], pt, pf, m, anchor, promised, procs, estimate)
    return m


@njit(cache=True)
def _reserve(j, pt, pf, m, anchor, promised, procs, estimate):
    """Job j's reservation: the earliest time it fits, held in the profile."""
    anchor[j] = profile_anchor(pt, pf, m, procs[j], held(estimate[j]))
    if promised[j] < 0:
        promised[j] = anchor[j]
    return profile_add(pt, pf, m, anchor[j], anchor[j] + held(estimate[j]), -procs[j])


@njit(cache=True)
def _extra(c, t, size, pivot, anchor, rl, nrl, exp_end, klass, procs):
    """x_P: partition c's processors free at its pivot's reservation that the pivot does
    not need."""
    j = pivot[c]
    if j < 0:
        return 0
    busy = 0
    for r in range(nrl):
        k = rl[r]
        if klass[k] == c and max(exp_end[k], t + 1) > anchor[j]:
            busy += procs[k]
    return max(size[c] - busy - procs[j], 0)


@njit(cache=True)
def _take(c, need, size, busy, parts):
    """Job of partition c starts on `need` processors: its own idle ones first, then the
    idle ones of the partitions with the most (the lowest index first), reassigned to c."""
    short = need - (size[c] - busy[c])
    while short > 0:
        best = -1
        for d in range(parts):
            if d != c and (best < 0 or size[d] - busy[d] > size[best] - busy[best]):
                best = d
        take = min(short, size[best] - busy[best])
        size[best] -= take
        size[c] += take
        short -= take
    busy[c] += need


@njit(cache=True)
def weekly_cuts(estimates, parts):
    """Fig. 3 as reconstructed: the class boundaries that balance the job counts of
    ``estimates`` across ``parts`` classes (boundary k: the value at rank ceil(k n / P) of the
    sorted estimates; ties stay together)."""
    ordered = np.sort(estimates)
    n = ordered.shape[0]
    cuts = np.empty(parts - 1, np.int64)
    for k in range(1, parts):
        b = ordered[min(n - 1, (k * n + parts - 1) // parts)]
        cuts[k - 1] = max(b, cuts[k - 2]) if k > 1 else b
    return cuts


@njit(cache=True)
def classify(estimate, cuts, ncuts):
    """The first class whose boundary exceeds the estimate; past the last, the last class."""
    for k in range(ncuts):
        if estimate < cuts[k]:
            return k
    return ncuts


WEEK = 7 * 86400


@njit(cache=True)
def simulate_multiqueue(submit, runtime, estimate, procs, machine, klass, parts, weekly,
                        week, local):
    """Start times, and each job's reservation when it became a pivot (-1: never one).

    ``weekly``: ``klass`` is written, not read: a job's class comes from its estimate at
    arrival, against the cuts that the estimates of the jobs completed in the previous week
    (weeks of ``week`` seconds from time 0) give; a week with no completions before it keeps
    the cuts it had, and the first week has none (one class). ``local``: see the module."""
    n = submit.shape[0]
    cuts = np.zeros(max(parts - 1, 1), np.int64)
    ncuts = 0
    done_t = np.empty(n, np.int64)      # completions in order: time and estimate
    done_e = np.empty(n, np.int64)
    nd = 0
    first_of_week = 0                   # index into done_t of the previous week's first
    this_week = 0
    start = np.full(n, -1, np.int64)
    promised = np.full(n, -1, np.int64)
    rank = np.full(n, -1, np.int64)     # order in which jobs became pivots
    anchor = np.full(n, NEVER, np.int64)  # this pass's reservation of each pivot
    exp_end = np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    q = np.empty(n, np.int64)
    rl = np.empty(n, np.int64)
    ht = np.empty(n, np.int64)
    hj = np.empty(n, np.int64)
    pt = np.empty(n + 2 * parts + 8, np.int64)
    pf = np.empty(n + 2 * parts + 8, np.int64)
    pivot = np.empty(parts, np.int64)
    size = np.full(parts, machine // parts, np.int64)   # the partitions: processors owned
    size[:machine % parts] += 1
    busy = np.zeros(parts, np.int64)                    # ... and in use
    extra = np.zeros(parts, np.int64)                   # x_P (local reading)
    nq = nrl = hn = ai = 0
    ranks = 0
    free = machine
    while True:
        t = min(submit[ai] if ai < n else NEVER, ht[0] if hn > 0 else NEVER)
        if t == NEVER:
            break
        while hn > 0 and ht[0] == t:
            j, hn = heap_pop(ht, hj, hn)
            state[j] = DONE
            free += procs[j]
            busy[klass[j]] -= procs[j]
            nrl = running_remove(rl, nrl, j)
            done_t[nd] = t
            done_e[nd] = estimate[j]
            nd += 1
        while ai < n and submit[ai] == t:
            if weekly:
                if t // week > this_week:
                    this_week = t // week
                    while first_of_week < nd and done_t[first_of_week] // week < \
                            this_week - 1:
                        first_of_week += 1
                    last = first_of_week
                    while last < nd and done_t[last] // week == this_week - 1:
                        last += 1
                    if last > first_of_week and parts > 1:
                        cuts = weekly_cuts(done_e[first_of_week:last], parts)
                        ncuts = parts - 1
                klass[ai] = classify(estimate[ai], cuts, ncuts)
            q[nq] = ai
            state[ai] = QUEUED
            nq += 1
            ai += 1
        if nq == 0:
            continue
        # the pivots, ranked by when they became pivots (new ones in arrival order)
        pivot[:] = -1
        for a in range(nq):
            j = q[a]
            if pivot[klass[j]] < 0:
                pivot[klass[j]] = j
                if rank[j] < 0:
                    rank[j] = ranks
                    ranks += 1
        m = _plan(t, free, rl, nrl, exp_end, procs, estimate, pt, pf, pivot, rank, anchor,
                  promised, parts)
        stale = True                     # x_P to compute again
        # the walk, in arrival order: a pivot starts when its reservation is now (and the
        # next job of its class becomes the pivot); any other job if it fits now around them
        for a in range(nq):
            j = q[a]
            if procs[j] > free:
                continue
            c = klass[j]
            hold = held(estimate[j])
            if pivot[c] == j:
                if anchor[j] != t:
                    continue
                pivot[c] = -1
                for b in range(a + 1, nq):
                    k = q[b]
                    if klass[k] == c:
                        pivot[c] = k
                        rank[k] = ranks
                        ranks += 1
                        m = _reserve(k, pt, pf, m, anchor, promised, procs, estimate)
                        break
            else:
                own = False
                if local and procs[j] <= size[c] - busy[c]:
                    if stale:
                        for d in range(parts):
                            extra[d] = _extra(d, t, size, pivot, anchor, rl, nrl, exp_end,
                                              klass, procs)
                        stale = False
                    own = t + hold <= anchor[pivot[c]] or procs[j] <= extra[c]
                if own:
                    if profile_anchor(pt, pf, m, procs[j], hold) == t:
                        m = profile_add(pt, pf, m, t, t + hold, -procs[j])
                    else:                # it moves another pivot: plan again after it
                        m = -1
                elif profile_anchor(pt, pf, m, procs[j], hold) == t:
                    m = profile_add(pt, pf, m, t, t + hold, -procs[j])
                else:
                    continue
            _take(c, procs[j], size, busy, parts)
            stale = True
            free, hn, nrl = start_job(j, t, free, hn, nrl, state, start, exp_end, ht, hj, rl,
                                      runtime, estimate, procs)
            if m < 0:
                m = _plan(t, free, rl, nrl, exp_end, procs, estimate, pt, pf, pivot, rank,
                          anchor, promised, parts)
        nq = keep_queued(q, nq, state, QUEUED)
        for c in range(parts):          # reservations are recomputed at the next pass
            if pivot[c] >= 0:
                anchor[pivot[c]] = NEVER
    return start, promised


def a_priori_classes(submit: np.ndarray, values: np.ndarray, parts: int,
                     week: int = WEEK) -> np.ndarray:
    """§2.3's a-priori case: each job's class from the values (the actual runtimes) of the
    jobs submitted in its own week (weeks of ``week`` seconds from time 0), balanced as in
    ``weekly_cuts``."""
    klass = np.zeros(len(submit), np.int64)
    if parts == 1:
        return klass
    weeks = submit // week
    for w in np.unique(weeks):
        idx = np.flatnonzero(weeks == w)
        cuts = weekly_cuts(values[idx], parts)
        klass[idx] = [classify(v, cuts, parts - 1) for v in values[idx]]
    return klass


def run_queues(arrays: JobArrays, parts: int, classes: np.ndarray | None = None,
               week: int = WEEK, local: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Multiple-queue backfilling with ``parts`` classes: given ``classes``, or (None) from
    the previous week's completions as the run goes (§2.1). ``local``: the reading of Fig. 2
    that the paper's Fig. 4 supports (see the module). Returns (start times, each pivot's
    first reservation or -1); one class is EASY-FCFS."""
    given = classes is not None
    klass = np.array(classes if given else np.zeros(len(arrays)), np.int64)
    return simulate_multiqueue(arrays.submit, arrays.runtime, arrays.estimate, arrays.procs,
                               arrays.machine, klass, parts, not given, week, local)
