"""One CPU's local scheduler in the process-level model (``kernel_cosched``): which of the
processes it hosts may run, which runs next, the time it computes, and its next due step.

Each step takes the run's state view ``s`` (``kernel_cosched_state``); ``slot`` is the
matrix row in its time slot.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import cache
from advisor.engine.rng import uniform
from advisor.policies.timeshare.kernel_cosched_state import CPU, CS, DC, FCFS, FCS, GS, SB, push

cache.guard(__file__)   # before any kernel of this folder is loaded


@njit(cache=True, inline="always")
def polling(s, c):
    """Whether a waiting process on CPU ``c`` busy-waits (FCFS, GS, and FCS's CS slots)
    rather than spin-blocking."""
    return s.mode == FCFS or s.mode == GS or (s.mode == FCS and s.csmode[c])


@njit(cache=True, inline="always")
def eligible(s, j, c, slot):
    """Whether job ``j``'s process on CPU ``c`` may run now: under FCFS and GS, only in
    its row's slot; under SB, always; under FCS, the slot's CS process alone in a CS slot,
    otherwise any F or DC process."""
    if s.done[j, c]:
        return False
    if s.mode == FCFS or s.mode == GS:
        return s.job_row[j] == slot
    if s.mode == SB:
        return True
    if s.csmode[c]:
        return j == s.row_cpu[slot, c]
    return s.cls[j, c] != CS


@njit(cache=True, inline="always")
def prio(s, j, c, slot):
    """The local queue's rank of job ``j``'s process on CPU ``c`` (lower first): under
    FCS the slot's own F process, then the other F ones, then DC (§2.2, item 2)."""
    if s.mode != FCS or s.cls[j, c] == DC:
        return 2
    return 0 if s.job_row[j] == slot else 1


@njit(cache=True, inline="always")
def pick(s, c, slot):
    """The process CPU ``c`` runs next, other than its current one (-1: none): the best
    rank, then round-robin order."""
    best, bp, bs = -1, 9, 0
    for r in range(s.rows):
        j = s.row_cpu[r, c]
        if j < 0 or j == s.cur[c] or s.blocked[j, c] or not eligible(s, j, c, slot):
            continue
        p = prio(s, j, c, slot)
        if best < 0 or p < bp or (p == bp and s.seq[j, c] < bs):
            best, bp, bs = j, p, s.seq[j, c]
    return best


@njit(cache=True, inline="always")
def set_csmode(s, c, slot):
    """Under FCS, CPU ``c`` runs its slot's process alone if that process is CS
    (Algorithm 1)."""
    j = s.row_cpu[slot, c]
    s.csmode[c] = s.mode == FCS and j >= 0 and s.cls[j, c] == CS and not s.done[j, c]


@njit(cache=True, inline="always")
def account(s, c, t):
    """Count CPU ``c``'s time up to ``t`` as computation of its current process (not
    while it exchanges, nor during a switch)."""
    j = s.cur[c]
    if j >= 0 and not s.incomm[j, c]:
        since = max(s.upd[c], s.ready[c])
        if t > since:
            s.rem[j, c] -= t - since
            s.tcpu[j, c] += t - since
    s.upd[c] = t


@njit(cache=True, inline="always")
def run(s, c, j, t, cost):
    """CPU ``c`` switches to job ``j``'s process at ``t`` (``cost``: the switch's, if the
    process changes), with a fresh quantum."""
    if s.last[c] >= 0 and s.last[c] != j:
        s.ready[c] = max(s.ready[c], t) + cost
    s.cur[c] = j
    s.last[c] = j
    begin = max(t, s.ready[c])
    s.qend[c] = begin + s.quantum * (0.5 + uniform(s.rng))
    s.spin_end[c] = begin + s.spin if s.incomm[j, c] else np.inf


@njit(cache=True, inline="always")
def schedule(s, c, t):
    """Queue CPU ``c``'s next due step (older ones go stale): its process's computation
    ends, or, without polling, its spin or its quantum ends."""
    cver = s.cver
    cver[c] += 1
    j = s.cur[c]
    if j < 0:
        return
    begin = max(t, s.ready[c])
    nxt = np.inf
    polls = polling(s, c)
    if not s.incomm[j, c]:
        nxt = begin + max(s.rem[j, c], 0.0)
    elif not polls:
        nxt = max(s.spin_end[c], begin)
    if not polls:
        nxt = min(nxt, max(s.qend[c], begin))
    if nxt < np.inf:
        push(s, nxt, CPU, c, cver[c], 0)


@njit(cache=True, inline="always")
def dispatch_idle(s, c, t, slot):
    """An idle CPU ``c`` takes what it may run."""
    if s.cur[c] < 0:
        account(s, c, t)
        nxt = pick(s, c, slot)
        if nxt >= 0:
            run(s, c, nxt, t, 0.0 if s.mode == FCFS or s.mode == GS else s.lsw)
            schedule(s, c, t)
