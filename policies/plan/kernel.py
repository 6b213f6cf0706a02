"""Plan-based scheduling by simulated annealing (Zheng et al., Zheng et al.), compiled.

A *plan* gives every waiting job a start time. It is represented by a permutation of the
waiting jobs (§IV-C): the schedule of a permutation places each job, front to back, at the
earliest time it fits in the free-processor profile of the running jobs (expected to end
at start + estimate) and the jobs placed before it, so no job could start earlier without
delaying another. With the queue's own (submit) order this is conservative backfilling's
plan; it is the initial permutation, and the best plan found is never worse.

Algorithm 1: neighbours remove one job and insert it elsewhere; N moves per temperature
from T0, cooling by r while T > Tth: (1, 0.0001, 100, 0.9) gives 88 temperatures, 8,800
evaluations. The paper gives no acceptance formula or cost scale. This module accepts a
worse neighbour with Metropolis probability exp(-dC / T) where dC is the change in cost
*relative to the initial plan's cost*, so that a temperature means the same at every queue
size and for every objective (T0 = 1: a move that adds the initial plan's whole cost is
taken with probability 1/e at the start). A move that changes nothing (dC = 0) is taken.

Costs: WAIT (PLAN 1, mean wait: the sum of start - submit), SQUARED (PLAN 2, mean squared
wait, so a job that has waited long weighs more) and MAKESPAN (PLAN 3, the time at which
all running and waiting jobs are expected to be done).

Speed: the profile after each position of the permutation is kept (one row per position),
so a neighbour is rebuilt from the first position the move changed, not from the front.
After a rejected move the rows past that position describe the rejected permutation; the
next rebuild starts at the earlier of its own first change and that position.

A starvation threshold T (Lelong et al. §6, as the queue orderings have it): at each plan, the
jobs that have waited longer than T lead the permutation in submit order and the search
moves only the others, so such a job is placed before any younger one. Without it, each
re-plan may put an old wide job behind the new arrivals again.

Pure: the seed is an argument (a xorshift64* generator whose state is passed along).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from advisor.engine import cache
from advisor.engine.rng import seed_state, uniform

cache.guard(__file__)   # before any kernel of this folder is loaded

WAIT, SQUARED, MAKESPAN = 0, 1, 2
#: the objectives by name, and the paper's names for them
COSTS = {"wait": WAIT, "squared": SQUARED, "makespan": MAKESPAN}
PAPER_NAMES = {"wait": "PLAN 1", "squared": "PLAN 2", "makespan": "PLAN 3"}


@dataclass(frozen=True)
class Annealing:
    """Algorithm 1's parameters (T0, Tth, N, r); the defaults are the paper's."""

    t0: float = 1.0
    t_end: float = 1e-4
    moves: int = 100
    cooling: float = 0.9

    @property
    def evaluations(self) -> int:
        """Neighbours evaluated by one plan of two or more jobs."""
        temps, t = 0, self.t0
        while t > self.t_end:
            temps, t = temps + 1, t * self.cooling
        return temps * self.moves


#: a rebuild restarts from the checkpoint at or before the first position a move changed:
#: one every STRIDE positions (a copy of the profile each, instead of one per position)
STRIDE = 8
NEVER = np.iinfo(np.int64).max


@njit(cache=True)
def running_profile(now, run_end, run_procs, machine, pt, pf):
    """The free-processor profile from ``now`` of running jobs expected to end at
    ``run_end`` (at least now + 1): breakpoints ``pt``, free processors ``pf`` from each
    until the next; returns its size. The last segment has the whole machine."""
    order = np.argsort(run_end)
    free = machine
    for r in range(len(run_end)):
        free -= run_procs[r]
    pt[0] = now
    pf[0] = free
    size = 1
    for r in order:
        end = max(run_end[r], now + 1)
        if end == pt[size - 1]:
            pf[size - 1] += run_procs[r]
        else:
            pt[size] = end
            pf[size] = pf[size - 1] + run_procs[r]
            size += 1
    return size


@njit(cache=True)
def _place(pt, pf, m, need, dur):
    """Place a job (``need`` processors for ``dur`` s) at the earliest time it fits in the
    profile (pt, pf, m), in place; returns (start, new size). Starts are always
    breakpoints, so at most one is added (its end)."""
    i = 0
    while True:                        # the last segment has the whole machine: it ends
        if pf[i] >= need:
            end = pt[i] + dur
            k = i + 1
            while k < m and pt[k] < end and pf[k] >= need:
                k += 1
            if k == m or pt[k] >= end:
                break
            i = k + 1
        else:
            i += 1
    s = pt[i]
    e = s + dur
    k = i
    while k < m and pt[k] < e:
        pf[k] -= need
        k += 1
    if k < m and pt[k] == e:
        return s, m
    for b in range(m, k, -1):
        pt[b] = pt[b - 1]
        pf[b] = pf[b - 1]
    pt[k] = e
    pf[k] = pf[k - 1] + need
    return s, m + 1


@njit(cache=True)
def _build(first, perm, n, submit, dur, procs, cost_kind, wt, wf, ct, cf, cs, starts, acc):
    """Place perm[first:] from checkpoint ``first // STRIDE`` (checkpoint c: the profile
    with perm's first c * STRIDE jobs placed, in ``ct``/``cf``/``cs``), in the work profile
    ``wt``/``wf``, saving the checkpoints it passes; fills ``starts`` (by position) and the
    running cost ``acc``; returns the plan's cost (acc[n])."""
    c = first // STRIDE
    m = cs[c]
    for b in range(m):
        wt[b] = ct[c, b]
        wf[b] = cf[c, b]
    for k in range(c * STRIDE, n):
        if k % STRIDE == 0 and k > c * STRIDE:
            d = k // STRIDE
            cs[d] = m
            for b in range(m):
                ct[d, b] = wt[b]
                cf[d, b] = wf[b]
        j = perm[k]
        s, m = _place(wt, wf, m, procs[j], dur[j])
        starts[k] = s
        if cost_kind == MAKESPAN:
            acc[k + 1] = max(acc[k], float(s + dur[j]))
        elif cost_kind == SQUARED:
            w = float(s - submit[j])
            acc[k + 1] = acc[k] + w * w
        else:
            acc[k + 1] = acc[k] + float(s - submit[j])
    return acc[n]


@njit(cache=True)
def _move(perm, i, j):
    """Remove the job at position i and insert it at position j (in place)."""
    x = perm[i]
    if i < j:
        for k in range(i, j):
            perm[k] = perm[k + 1]
    else:
        for k in range(i, j, -1):
            perm[k] = perm[k - 1]
    perm[j] = x


@njit(cache=True)
def anneal(now, run_end, run_procs, machine, submit, dur, procs, cost_kind,
           t0, t_end, moves, cooling, state, head=0):
    """Algorithm 1 over the waiting jobs (``submit``, ``dur`` = estimate of at least 1 s,
    ``procs``, in queue order) and the running jobs (``run_end``, ``run_procs``); the
    first ``head`` jobs keep their places (those past a threshold), the rest are searched.

    Returns (permutation: job indices in plan order, start of each job by index, cost of
    the initial permutation's plan, cost of the plan returned, neighbours evaluated)."""
    n = len(submit)
    width = len(run_end) + n + 2
    wt = np.empty(width, np.int64)
    wf = np.empty(width, np.int64)
    ct = np.empty((n // STRIDE + 1, width), np.int64)
    cf = np.empty((n // STRIDE + 1, width), np.int64)
    cs = np.empty(n // STRIDE + 1, np.int64)
    cs[0] = running_profile(now, run_end, run_procs, machine, ct[0], cf[0])
    acc = np.empty(n + 1, np.float64)
    acc[0] = float(ct[0, cs[0] - 1]) if cost_kind == MAKESPAN else 0.0
    starts = np.empty(n, np.int64)
    perm = np.arange(n)
    cost = _build(0, perm, n, submit, dur, procs, cost_kind, wt, wf, ct, cf, cs, starts, acc)
    offset = float(now) if cost_kind == MAKESPAN else 0.0
    initial = cost - offset
    best_perm = perm.copy()
    best = cost
    evaluated = 0
    # every job starting now is optimal for all three costs: nothing to search
    free = n - head
    if free >= 2 and initial > 0.0 and starts.max() > now:
        scale = initial
        valid = n                      # the profile holds perm's plan up to this position
        temp = t0
        while temp > t_end:
            for _ in range(moves):
                i = head + int(uniform(state) * free)
                j = head + int(uniform(state) * (free - 1))
                if j >= i:
                    j += 1
                first = min(i, j)
                _move(perm, i, j)
                new = _build(min(first, valid), perm, n, submit, dur, procs, cost_kind, wt,
                             wf, ct, cf, cs, starts, acc)
                evaluated += 1
                delta = (new - cost) / scale
                if delta <= 0.0 or uniform(state) < np.exp(-delta / temp):
                    cost = new
                    valid = n
                    if cost < best:
                        best = cost
                        best_perm[:] = perm
                else:
                    _move(perm, j, i)
                    valid = first
            temp *= cooling
        _build(0, best_perm, n, submit, dur, procs, cost_kind, wt, wf, ct, cf, cs, starts,
               acc)
    start_of = np.empty(n, np.int64)
    for k in range(n):
        start_of[best_perm[k]] = starts[k]
    return best_perm, start_of, initial, best - offset, evaluated


@njit(cache=True)
def simulate_plans(submit, runtime, estimate, procs, machine, cost_kind, t0, t_end, moves,
                   cooling, seed, threshold=-1):
    """Replay with a plan at every scheduling iteration (§III): each instant at which a
    job arrives, ends (at its runtime, or terminated at its estimate) or reaches its
    planned start re-plans every waiting job, and the jobs planned to start at that
    instant start. Jobs waiting longer than ``threshold`` (if >= 0) lead each plan in
    submit order: the queue is kept in arrival order, so they are its first jobs. Returns
    (start of each job, its start in the first plan that held it, plans made, neighbours
    evaluated)."""
    n = len(submit)
    dur = np.maximum(estimate, 1)
    run_for = np.minimum(runtime, dur)
    start = np.full(n, -1, np.int64)
    promised = np.full(n, -1, np.int64)
    planned = np.full(n, NEVER, np.int64)
    waiting = np.empty(n, np.int64)
    running = np.empty(n, np.int64)
    nw = nr = arrived = done = plans = evaluated = 0
    state = np.empty(1, np.uint64)
    while done < n:
        t = submit[arrived] if arrived < n else NEVER
        for r in range(nr):
            t = min(t, start[running[r]] + run_for[running[r]])
        for q in range(nw):
            t = min(t, planned[waiting[q]])
        kept = 0
        for r in range(nr):
            j = running[r]
            if start[j] + run_for[j] <= t:
                done += 1
            else:
                running[kept] = j
                kept += 1
        nr = kept
        while arrived < n and submit[arrived] == t:
            waiting[nw] = arrived
            nw += 1
            arrived += 1
        if nw == 0:
            continue
        queue = waiting[:nw]
        busy = running[:nr]
        head = 0
        while threshold >= 0 and head < nw and t - submit[queue[head]] > threshold:
            head += 1
        state[0] = seed_state(np.uint64(seed), np.uint64(plans))
        _, at, _, _, ev = anneal(t, start[busy] + dur[busy], procs[busy], machine,
                                 submit[queue], dur[queue], procs[queue], cost_kind, t0,
                                 t_end, moves, cooling, state, head)
        plans += 1
        evaluated += ev
        kept = 0
        for q in range(nw):
            j = waiting[q]
            if promised[j] < 0:
                promised[j] = at[q]
            if at[q] == t:
                start[j] = t
                running[nr] = j
                nr += 1
            else:
                planned[j] = at[q]
                waiting[kept] = j
                kept += 1
        nw = kept
    return start, promised, plans, evaluated


def plan(now: int, run_end, run_procs, machine: int, submit, estimate, procs,
         cost: str = "squared", annealing: Annealing = Annealing(), seed: int = 0,
         threshold: int | None = None):
    """One plan (see ``anneal``) from numpy inputs; estimates below 1 s count as 1 s.
    Jobs waiting longer than ``threshold`` at ``now`` lead it in submit order; the
    permutation returned lists them first."""
    def i64(x):
        return np.ascontiguousarray(x, dtype=np.int64)

    submit, estimate, procs = i64(submit), i64(estimate), i64(procs)
    over = now - submit > (threshold if threshold is not None else np.iinfo(np.int64).max)
    old = np.flatnonzero(over)
    order = np.concatenate([old[np.argsort(submit[old], kind="stable")],
                            np.flatnonzero(~over)])
    state = np.array([seed_state(np.uint64(seed), np.uint64(0))], np.uint64)
    perm, at, initial, best, evaluated = anneal(
        int(now), i64(run_end), i64(run_procs), int(machine), submit[order],
        np.maximum(estimate[order], 1), procs[order], COSTS[cost], float(annealing.t0),
        float(annealing.t_end), int(annealing.moves), float(annealing.cooling), state,
        len(old))
    start_of = np.empty_like(at)
    start_of[order] = at
    return order[perm], start_of, initial, best, evaluated
