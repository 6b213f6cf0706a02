"""The Ousterhout matrix of the process-level model (``kernel_cosched``): rows of CPUs,
each CPU of a row holding at most one job; a job takes a contiguous run of CPUs in one row.
Batch scheduling is the one-row case. Jobs are admitted FCFS with EASY backfilling; with
more than one row a running job is expected to end at its start plus its estimate times
the rows (Frachtenberg et al.'s §5: "multiplying the requested run time by the MPL to estimate
run and reservation times").
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import cache

cache.guard(__file__)   # before any kernel of this folder is loaded


@njit(cache=True)
def first_fit(row_cpu, size):
    """The first (row, first CPU) with ``size`` free contiguous CPUs, or (-1, -1)."""
    rows, cpus = row_cpu.shape
    for r in range(rows):
        run = 0
        for c in range(cpus):
            run = run + 1 if row_cpu[r, c] < 0 else 0
            if run == size:
                return r, c - size + 1
    return -1, -1


@njit(cache=True)
def _shadow(row_cpu, size, now, running, nrun, start, estimate, factor, job_row, job_first,
            job_size):
    """When and where the job of ``size`` at the queue's head could start, releasing the
    running jobs at their expected ends: (time, row, first CPU)."""
    ends = np.empty(nrun)
    for k in range(nrun):
        j = running[k]
        ends[k] = start[j] + estimate[j] * factor
    order = np.argsort(ends)
    future = row_cpu.copy()
    for k in range(nrun):
        j = running[order[k]]
        r = job_row[j]
        for c in range(job_first[j], job_first[j] + job_size[j]):
            future[r, c] = -1
        rr, ff = first_fit(future, size)
        if rr >= 0:
            return max(ends[order[k]], now), rr, ff
    return np.inf, -1, -1


@njit(cache=True)
def admit(now, queue, qn, row_cpu, running, nrun, start, estimate, job_row, job_first,
          job_size, placed):
    """Place queued jobs (``queue[:qn]``, FCFS order) by EASY backfilling; the jobs placed
    go to ``placed`` (their row and first CPU set, ``row_cpu`` filled). Returns (placed,
    jobs left in the queue)."""
    factor = float(row_cpu.shape[0])
    n = 0
    while qn > 0:
        head = queue[0]
        r, f = first_fit(row_cpu, job_size[head])
        if r < 0:
            break
        _place(head, r, f, row_cpu, job_row, job_first, job_size)
        placed[n] = head
        n += 1
        queue[:qn - 1] = queue[1:qn]
        qn -= 1
    if qn > 1:
        head = queue[0]
        shadow, rr, rf = _shadow(row_cpu, job_size[head], now, running, nrun, start, estimate,
                                 factor, job_row, job_first, job_size)
        w = 1
        for a in range(1, qn):
            j = queue[a]
            r, f = first_fit(row_cpu, job_size[j])
            ok = r >= 0 and (now + estimate[j] * factor <= shadow or r != rr
                             or f + job_size[j] <= rf or f >= rf + job_size[head])
            if ok:
                _place(j, r, f, row_cpu, job_row, job_first, job_size)
                placed[n] = j
                n += 1
            else:
                queue[w] = j
                w += 1
        qn = w
    return n, qn


@njit(cache=True)
def _place(j, r, f, row_cpu, job_row, job_first, job_size):
    job_row[j] = r
    job_first[j] = f
    for c in range(f, f + job_size[j]):
        row_cpu[r, c] = j


@njit(cache=True)
def release(j, row_cpu, row_jobs, job_row, job_first, size, running, nrun):
    """Job j leaves the matrix and the running list; returns the running count."""
    r = job_row[j]
    for c in range(job_first[j], job_first[j] + size[j]):
        row_cpu[r, c] = -1
    row_jobs[r] -= 1
    for k in range(nrun):
        if running[k] == j:
            running[k] = running[nrun - 1]
            return nrun - 1
    return nrun
