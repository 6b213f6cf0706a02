"""Multiple-queue backfilling (Lawson and Smirni, Fig. 2), compiled: P runtime classes, one
queue each, a pivot per queue, in the reading that ``tests/multiqueue_reference.py`` writes
down and the tests check this against, job by job:

* pivots (each class's first queued job) hold reservations on the whole machine, in the
  order they became pivots; a pivot starts when its reservation is now;
* any other queued job, in arrival order across classes, starts if it fits now without
  moving a pivot's reservation (Fig. 2's (a), (b) and (c) together, on the whole machine).

Under this reading which processors belong to which partition does not change a start time,
so the partitions' sizes are not tracked here (the Slurm form, where they matter, is
simulated by the slurm mode). Running jobs are expected to end at start + estimate, or one
second from now once overdue; one pass after the completions and arrivals of each second.
"""
from __future__ import annotations

import numpy as np
from numba import njit

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
def _reserve(j, pt, pf, m, anchor, promised, procs, estimate):
    """Job j's reservation: the earliest time it fits, held in the profile."""
    anchor[j] = profile_anchor(pt, pf, m, procs[j], held(estimate[j]))
    if promised[j] < 0:
        promised[j] = anchor[j]
    return profile_add(pt, pf, m, anchor[j], anchor[j] + held(estimate[j]), -procs[j])


@njit(cache=True)
def simulate_multiqueue(submit, runtime, estimate, procs, machine, klass, parts):
    """Start times, and each job's reservation when it became a pivot (-1: never one)."""
    n = submit.shape[0]
    start = np.full(n, -1, np.int64)
    promised = np.full(n, -1, np.int64)
    rank = np.full(n, -1, np.int64)   # order in which jobs became pivots
    exp_end = np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    q = np.empty(n, np.int64)
    rl = np.empty(n, np.int64)
    ht = np.empty(n, np.int64)
    hj = np.empty(n, np.int64)
    pt = np.empty(n + 2 * parts + 8, np.int64)
    pf = np.empty(n + 2 * parts + 8, np.int64)
    pivot = np.empty(parts, np.int64)
    anchor = np.full(n, NEVER, np.int64)  # this pass's reservation of each pivot
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
            nrl = running_remove(rl, nrl, j)
        while ai < n and submit[ai] == t:
            q[nq] = ai
            state[ai] = QUEUED
            nq += 1
            ai += 1
        if nq == 0:
            continue
        m = _profile(t, free, rl, nrl, exp_end, procs, pt, pf)
        # the pivots, ranked by when they became pivots (new ones in arrival order), each
        # reserved in rank order
        pivot[:] = -1
        for a in range(nq):
            j = q[a]
            if pivot[klass[j]] < 0:
                pivot[klass[j]] = j
                if rank[j] < 0:
                    rank[j] = ranks
                    ranks += 1
        for _ in range(parts):
            p = -1
            for c in range(parts):
                j = pivot[c]
                if j >= 0 and anchor[j] == NEVER and (p < 0 or rank[j] < rank[pivot[p]]):
                    p = c
            if p < 0:
                break
            m = _reserve(pivot[p], pt, pf, m, anchor, promised, procs, estimate)
        # the walk, in arrival order: a pivot starts when its reservation is now (and the
        # next job of its class becomes the pivot); any other job if it fits now around them
        for a in range(nq):
            j = q[a]
            if procs[j] > free:
                continue
            c = klass[j]
            if pivot[c] == j:
                if anchor[j] != t:
                    continue
                free, hn, nrl = start_job(j, t, free, hn, nrl, state, start, exp_end, ht, hj,
                                          rl, runtime, estimate, procs)
                pivot[c] = -1
                for b in range(a + 1, nq):
                    k = q[b]
                    if klass[k] == c:
                        pivot[c] = k
                        rank[k] = ranks
                        ranks += 1
                        m = _reserve(k, pt, pf, m, anchor, promised, procs, estimate)
                        break
            elif profile_anchor(pt, pf, m, procs[j], held(estimate[j])) == t:
                m = profile_add(pt, pf, m, t, t + held(estimate[j]), -procs[j])
                free, hn, nrl = start_job(j, t, free, hn, nrl, state, start, exp_end, ht, hj,
                                          rl, runtime, estimate, procs)
        for c in range(parts):          # reservations are recomputed at the next pass
            if pivot[c] >= 0:
                anchor[pivot[c]] = NEVER
        nq = keep_queued(q, nq, state, QUEUED)
    return start, promised
