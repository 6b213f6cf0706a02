"""A time-sliced partition at job level (Slurm's gang scheduling), compiled.

The partition has ``nodes`` identical nodes, each shared by at most ``mpl`` jobs
(``OverSubscribe=FORCE:mpl``). Gang scheduling suspends and resumes whole jobs every time
slice; over many slices a job whose busiest node is shared by k jobs progresses at 1/k of
full speed, less the switch: ``(1 - switch / slice) / k`` when k > 1 (the job-level model
of the issue; a suspended job's idle CPUs are not lent to the running one, since gang
scheduling stops whole jobs). Rates change whenever a job starts or ends on shared nodes.

A job takes the least loaded nodes with room (idle ones first, ties by index). The queue
is FCFS with EASY backfilling; a running job is expected to end at its start plus its
limit times the MPL, as in Frachtenberg et al.'s §5 ("multiplying the requested run time by the
MPL to estimate run and reservation times"). A job's work is its runtime at full speed; time
spent suspended does not count against its limit.

A job marked ``alone`` (one already running when a snapshot is taken, from a partition that
does not share) starts at its submit time whatever the queue holds, holds its nodes alone
(they count as full) and runs at full speed: it must fit on idle nodes when it arrives.

Pure: times in seconds, no randomness.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import cache

cache.guard(__file__)   # before any kernel of this folder is loaded

_EPS = 1e-6


@njit(cache=True)
def simulate_gang(submit, runtime, limit, need, alone, nodes, mpl, slice_s, switch_s):
    """Start and end (float seconds) of each job, in submit order. A job needing more nodes
    than the partition has never starts (-1)."""
    n = submit.shape[0]
    start = np.full(n, -1.0)
    end = np.full(n, -1.0)
    left = runtime.astype(np.float64).copy()     # work still to do, at full speed
    rate = np.zeros(n)
    load = np.zeros(nodes, np.int64)
    first = np.zeros(n, np.int64)                # job j holds pool[first[j]:first[j]+need]
    total = 0
    for j in range(n):
        total += need[j] if need[j] <= nodes else 0
    pool = np.empty(max(total, 1), np.int64)
    used = 0
    running = np.empty(n, np.int64)
    nrun = 0
    queue = np.empty(n, np.int64)
    qh, qt = 0, 0
    shared = 1.0 - switch_s / slice_s if slice_s > 0 else 1.0
    arrive = 0
    now = submit[0] if n > 0 else 0.0
    finished = 0
    for j in range(n):
        if need[j] > nodes or need[j] <= 0:
            finished += 1                        # never runs
    order = np.empty(nodes, np.int64)

    def room():
        c = 0
        for q in range(nodes):
            if load[q] < mpl:
                c += 1
        return c

    while finished < n:
        # the next event: an arrival, or the earliest completion at current rates
        t_next = np.inf
        if arrive < n:
            t_next = float(submit[arrive])
        for k in range(nrun):
            j = running[k]
            t_next = min(t_next, now + left[j] / rate[j])
        if t_next == np.inf:
            break
        dt = t_next - now
        for k in range(nrun):
            j = running[k]
            left[j] -= dt * rate[j]
        now = t_next
        # completions at this instant
        k = 0
        while k < nrun:
            j = running[k]
            if left[j] <= _EPS * max(1.0, runtime[j]):
                end[j] = now
                finished += 1
                for i in range(first[j], first[j] + need[j]):
                    load[pool[i]] -= mpl if alone[j] else 1
                nrun -= 1
                running[k] = running[nrun]
            else:
                k += 1
        # arrivals at this instant
        while arrive < n and submit[arrive] <= now + _EPS:
            j = arrive
            arrive += 1
            if not 0 < need[j] <= nodes:
                continue
            if alone[j]:
                first[j] = used
                used = _take(j, need[j], load, mpl, nodes, pool, used, order)
                for i in range(first[j], first[j] + need[j]):
                    load[pool[i]] += mpl - 1
                start[j] = now
                running[nrun] = j
                nrun += 1
            else:
                queue[qt] = j
                qt += 1
        # FCFS, then EASY backfilling behind the head
        started = True
        while started:
            started = False
            free = room()
            if qh < qt and need[queue[qh]] <= free:
                j = queue[qh]
                qh += 1
                first[j] = used
                used = _take(j, need[j], load, mpl, nodes, pool, used, order)
                start[j] = now
                running[nrun] = j
                nrun += 1
                started = True
                continue
            if qh >= qt:
                break
            # the head's shadow: release running jobs by expected end until it fits
            head = queue[qh]
            shadow, extra = _shadow(need[head], load, mpl, nodes, running, nrun, start,
                                    limit, first, need, alone, pool)
            for a in range(qh + 1, qt):
                j = queue[a]
                if j < 0 or need[j] > free:
                    continue
                fits_before = now + limit[j] * mpl <= shadow
                if fits_before or need[j] <= extra:
                    if not fits_before:
                        extra -= need[j]
                    first[j] = used
                    used = _take(j, need[j], load, mpl, nodes, pool, used, order)
                    start[j] = now
                    running[nrun] = j
                    nrun += 1
                    queue[a] = -1
                    free = room()
            # drop the started ones from the queue, keeping order
            w = qh
            for a in range(qh, qt):
                if queue[a] >= 0:
                    queue[w] = queue[a]
                    w += 1
            qt = w
        # rates: 1/k of full speed on the busiest node, less the switch when shared
        for k in range(nrun):
            j = running[k]
            busiest = 1
            for i in range(first[j], first[j] + need[j]):
                busiest = max(busiest, load[pool[i]])
            rate[j] = 1.0 if busiest == 1 or alone[j] else shared / busiest
    return start, end


@njit(cache=True)
def _take(j, count, load, mpl, nodes, pool, used, order):
    """Give job j the ``count`` least loaded nodes with room; returns the new pool end."""
    m = 0
    for level in range(mpl):
        for q in range(nodes):
            if load[q] == level and m < count:
                order[m] = q
                m += 1
    for i in range(count):
        pool[used + i] = order[i]
        load[order[i]] += 1
    return used + count


@njit(cache=True)
def _shadow(count, load, mpl, nodes, running, nrun, start, limit, first, need, alone, pool):
    """When ``count`` nodes would have room, releasing running jobs at their expected ends
    (start + limit x MPL; a job alone, start + limit), and how many more than ``count``
    would have room then."""
    ends = np.empty(nrun)
    for k in range(nrun):
        j = running[k]
        ends[k] = start[j] + limit[j] * (1 if alone[j] else mpl)
    idx = np.argsort(ends)
    future = load.copy()
    c = 0
    for q in range(nodes):
        if future[q] < mpl:
            c += 1
    for k in range(nrun):
        j = running[idx[k]]
        for i in range(first[j], first[j] + need[j]):
            q = pool[i]
            was = future[q]
            future[q] -= mpl if alone[j] else 1
            if was >= mpl and future[q] < mpl:
                c += 1
        if c >= count:
            return ends[idx[k]], c - count
    return np.inf, 0


def run_gang(submit, runtime, limit, need, nodes: int, mpl: int, slice_s: float = 30.0,
             switch_s: float = 0.0, alone=None) -> tuple[np.ndarray, np.ndarray]:
    """``simulate_gang`` on any array-likes (one compiled specialisation: float64 times,
    int64 node counts); ``alone``: which jobs hold their nodes alone (default none)."""
    if mpl < 1 or nodes < 1:
        raise ValueError("a time-sliced partition needs nodes >= 1 and mpl >= 1")
    if slice_s <= 0 or not 0 <= switch_s < slice_s:
        raise ValueError("the time slice must be positive and the switch shorter than it")
    need = np.array(need, np.int64)
    alone = np.zeros(len(need), np.bool_) if alone is None else np.array(alone, np.bool_)
    return simulate_gang(np.array(submit, np.float64), np.array(runtime, np.float64),
                         np.array(limit, np.float64), need, alone,
                         int(nodes), int(mpl), float(slice_s), float(switch_s))
