"""What each event does in the process-level model (``kernel_cosched``): a CPU's due step
(a computation, a spin or a quantum ends), an exchange completing, a global context switch
(with Algorithm 2 at the end of a slot), a job's end, and the matrix admitting queued jobs.

Each step takes the run's state view ``s`` (``kernel_cosched_state``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import cache
from advisor.engine.rng import uniform
from advisor.policies.timeshare.kernel_cosched_cpu import (account, eligible, pick, polling, prio,
                                                           run, schedule, set_csmode)
from advisor.policies.timeshare.kernel_cosched_state import (COUNTER, CS, DC, EPS, F, FCS, GS, NRUN,
                                                             QUEUED, REMAINING, SLOT, SLOT_LIVE,
                                                             SLOT_ROW, SLOT_VERSION, WAKE, push)
from advisor.policies.timeshare.kernel_matrix import admit, release

cache.guard(__file__)   # before any kernel of this folder is loaded

IDLE = -2   # a CPU's due step found it running nothing


@njit(cache=True, inline="always")
def next_rank(s):
    """A fresh round-robin rank: the local queue's tail."""
    rank = s.sc[COUNTER]
    s.sc[COUNTER] += 1
    return rank


@njit(cache=True, inline="always")
def neighbour(s, j, c, d):
    """The CPU of the ring neighbour ``d`` (-1 or +1) of job ``j``'s process on ``c``."""
    first, size = s.job_first[j], s.size[j]
    return first + (c - first + d + size) % size


@njit(cache=True, inline="always")
def sent_at(s, j, q, k):
    """When job ``j``'s process on CPU ``q`` sent its message of iteration ``k`` (-1: not
    yet)."""
    if s.it[j, q] > k or (s.it[j, q] == k and s.incomm[j, q]):
        return s.sent[j, q, k & 1]
    return -1.0


@njit(cache=True, inline="always")
def check_comm(s, j, c):
    """If job ``j``'s process on ``c`` waits and both neighbours have sent, its exchange
    completes when the later message arrives."""
    if not s.incomm[j, c] or s.waking[j, c]:
        return
    k = s.it[j, c]
    left = sent_at(s, j, neighbour(s, j, c, -1), k)
    right = sent_at(s, j, neighbour(s, j, c, 1), k)
    if left < 0 or right < 0:
        return
    s.waking[j, c] = True
    push(s, max(s.reach[j, c], left + s.lat, right + s.lat), WAKE, j, c, k)


@njit(cache=True, inline="always")
def finish(s, j, c, t):
    """Job ``j``'s process on ``c`` is done at ``t``; True if it was the job's last."""
    s.done[j, c] = True
    s.left[j] -= 1
    if s.left[j] == 0:
        s.end[j] = t
        return True
    return False


@njit(cache=True, inline="always")
def computed(s, j, c, t):
    """Job ``j``'s process on ``c`` ends an iteration's computation at ``t``: without
    exchanges it starts the next, otherwise it sends and waits. The job if it ended
    (-1: none)."""
    if not s.sync[j]:
        s.it[j, c] += 1
        s.rem[j, c] = s.work[j, c - s.job_first[j]]
        if s.it[j, c] >= s.iters[j] and finish(s, j, c, t):
            return j
        return -1
    s.incomm[j, c] = True
    s.reach[j, c] = t
    s.sent[j, c, s.it[j, c] & 1] = t
    s.ccomm[j, c] += 1
    s.spin_end[c] = t + s.spin
    check_comm(s, j, neighbour(s, j, c, -1))
    check_comm(s, j, c)
    check_comm(s, j, neighbour(s, j, c, 1))
    return -1


@njit(cache=True, inline="always")
def cpu_due(s, c, t):
    """CPU ``c``'s due step at ``t``: its process's computation, spin or quantum ends.
    The job that ended (-1: none; IDLE: the CPU runs nothing)."""
    account(s, c, t)
    j = s.cur[c]
    if j < 0:
        return IDLE
    ended = -1
    # done computing; past ~10^7 ms a remainder above EPS may still be below what t can
    # add (t + rem == t): counted as done, or time would stand still
    if not s.incomm[j, c] and (s.rem[j, c] <= EPS or t + s.rem[j, c] <= t):
        ended = computed(s, j, c, t)
    spun_out = s.incomm[j, c] and not polling(s, c) and t >= s.spin_end[c] - EPS
    if s.done[j, c] or spun_out:
        s.blocked[j, c] = spun_out
        s.cur[c] = -1
    elif not polling(s, c) and t >= s.qend[c] - EPS and t >= s.ready[c]:
        nxt = pick(s, c, s.sc[SLOT_ROW])       # the quantum is over: round robin
        if nxt >= 0:
            s.seq[j, c] = next_rank(s)
            run(s, c, nxt, t, s.lsw)
        else:
            s.qend[c] = t + s.quantum * (0.5 + uniform(s.rng))
    return ended


@njit(cache=True, inline="always")
def exchanged(s, j, c, t):
    """Job ``j``'s process on ``c`` completes its exchange at ``t`` and starts its next
    iteration (a blocked process is woken; the slot's F process preempts a lesser one).
    The job if it ended (-1: none)."""
    ended = -1
    s.waking[j, c] = False
    if s.cur[c] == j:
        account(s, c, t)
    s.tcomm[j, c] += t - s.reach[j, c]
    s.incomm[j, c] = False
    s.it[j, c] += 1
    s.rem[j, c] = s.work[j, c - s.job_first[j]] + (s.mon if s.mode == FCS else 0.0)
    if s.it[j, c] >= s.iters[j] and finish(s, j, c, t):
        ended = j
    slot = s.sc[SLOT_ROW]
    if s.cur[c] == j:
        s.spin_end[c] = np.inf
        if s.done[j, c]:
            s.cur[c] = -1
    elif s.blocked[j, c]:
        s.blocked[j, c] = False
        s.seq[j, c] = next_rank(s)
        q = s.cur[c]
        if q >= 0 and not s.done[j, c] and eligible(s, j, c, slot) \
                and prio(s, j, c, slot) == 0 and prio(s, q, c, slot) > 0:
            account(s, c, t)                    # the slot's F process preempts
            s.seq[q, c] = next_rank(s)
            run(s, c, j, t, s.lsw)
    return ended


@njit(cache=True)
def reclassify(s, j, c):
    """Algorithm 2 for job ``j``'s process on ``c`` at the end of its assigned slot."""
    s.tslots[j, c] += 1
    s.cslots[j, c] += 1
    if s.cslots[j, c] < s.cslots_min:
        return
    if s.ccomm[j, c] > 0:
        g = (s.tcpu[j, c] + s.tcomm[j, c]) / s.ccomm[j, c]
        avg_cpu = s.tcpu[j, c] / s.ccomm[j, c]
    else:
        g = np.inf
        avg_cpu = np.inf
    if s.tslots[j, c] % int(s.tslots_max) == 0 or g < s.cs_t:
        new = CS
    elif g < s.dc_t and avg_cpu < s.f_t:
        new = F
    else:
        new = DC
    if new != s.cls[j, c]:
        s.cls[j, c] = new
        s.cslots[j, c] = 0
        s.tcpu[j, c] = 0.0
        s.tcomm[j, c] = 0.0
        s.ccomm[j, c] = 0


@njit(cache=True)
def next_row(s):
    """The next matrix row after the slot's that holds a job (-1: none)."""
    for step in range(1, s.rows + 1):
        row = (s.sc[SLOT_ROW] + step) % s.rows
        if s.row_jobs[row] > 0:
            return row
    return -1


@njit(cache=True)
def switch_cpu(s, c, t):
    """CPU ``c`` at a global context switch to the slot's row: a process that may not run
    now is suspended, the slot's F process comes first, and an idle CPU picks."""
    slot = s.sc[SLOT_ROW]
    account(s, c, t)
    set_csmode(s, c, slot)
    q = s.cur[c]
    own = s.row_cpu[slot, c]
    if q >= 0 and not eligible(s, q, c, slot):
        s.cur[c] = -1                           # suspended until its next turn
    elif q >= 0 and own >= 0 and q != own and eligible(s, own, c, slot) \
            and not s.blocked[own, c] and prio(s, own, c, slot) == 0:
        s.seq[q, c] = next_rank(s)              # the slot's F process comes first
        s.cur[c] = -1
    if s.cur[c] < 0:
        nxt = pick(s, c, slot)
        if nxt >= 0:
            run(s, c, nxt, t, s.gsw)
    elif s.incomm[s.cur[c], c] and not polling(s, c):
        s.spin_end[c] = max(t, s.ready[c]) + s.spin
    schedule(s, c, t)


@njit(cache=True)
def switch(s, t, early):
    """A global context switch at ``t`` to the next row holding jobs (none: the switches
    stop); under FCS, Algorithm 2 first if the slot ran its full length (not ``early``)."""
    sc = s.sc
    if s.mode == FCS and not early:
        for c in range(s.n_cpus):
            j = s.row_cpu[sc[SLOT_ROW], c]
            if j >= 0 and not s.done[j, c]:
                reclassify(s, j, c)
    row = next_row(s)
    if row < 0:
        sc[SLOT_LIVE] = 0
        return
    sc[SLOT_ROW] = row
    sc[SLOT_VERSION] += 1
    push(s, t + s.tslice, SLOT, 0, sc[SLOT_VERSION], 0)
    for c in range(s.n_cpus):
        switch_cpu(s, c, t)


@njit(cache=True)
def job_ended(s, j, t):
    """Job ``j`` ended at ``t``: its CPUs leave the matrix; an emptied row's slot ends."""
    sc = s.sc
    sc[REMAINING] -= 1
    row = s.job_row[j]
    sc[NRUN] = release(j, s.row_cpu, s.row_jobs, s.job_row, s.job_first, s.size, s.running,
                       sc[NRUN])
    if (s.mode == GS or s.mode == FCS) and row == sc[SLOT_ROW] and s.row_jobs[row] == 0:
        sc[SLOT_VERSION] += 1
        push(s, t, SLOT, 1, sc[SLOT_VERSION], 0)


@njit(cache=True)
def place(s, j, t):
    """Job ``j`` starts at ``t`` in the row and CPUs the matrix gave it: its processes
    with work join their CPUs' local queues; the first job of an idle machine starts the
    slots."""
    sc = s.sc
    first, size = s.job_first[j], s.size[j]
    s.start[j] = t
    s.touched[first:first + size] = True
    s.running[sc[NRUN]] = j
    sc[NRUN] += 1
    s.row_jobs[s.job_row[j]] += 1
    for c in range(first, first + size):
        w = s.work[j, c - first]
        if s.iters[j] > 0 and (w > 0.0 or s.sync[j]):
            s.done[j, c] = False
            s.rem[j, c] = w
            s.seq[j, c] = next_rank(s)
            s.left[j] += 1
    if s.left[j] == 0:                          # nothing to do: done at once
        s.end[j] = t
        sc[REMAINING] -= 1
        sc[NRUN] = release(j, s.row_cpu, s.row_jobs, s.job_row, s.job_first, s.size,
                           s.running, sc[NRUN])
        return
    if (s.mode == GS or s.mode == FCS) and not sc[SLOT_LIVE]:
        sc[SLOT_ROW] = s.job_row[j]
        sc[SLOT_LIVE] = 1
        sc[SLOT_VERSION] += 1
        push(s, t + s.tslice, SLOT, 0, sc[SLOT_VERSION], 0)
        for c in range(s.n_cpus):
            set_csmode(s, c, sc[SLOT_ROW])


@njit(cache=True)
def admit_queued(s, t):
    """The matrix admits queued jobs at ``t`` (``kernel_matrix.admit``); True if it
    placed any."""
    sc = s.sc
    n, queued = admit(t, s.queue, sc[QUEUED], s.row_cpu, s.running, sc[NRUN], s.start,
                      s.estimate, s.job_row, s.job_first, s.size, s.placed)
    sc[QUEUED] = queued
    for i in range(n):
        place(s, s.placed[i], t)
    return n > 0
