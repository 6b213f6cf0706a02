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
  tests/papers/test_lawson_smirni_directions.py.

Running jobs are expected to end at start + estimate, or one second from now once overdue;
one pass after the completions and arrivals of each second.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine import JobArrays, cache
from advisor.engine.core import DONE, NEVER, QUEUED, RUNNING, held, start_job
from advisor.engine.structures import (heap_pop, keep_queued, profile_add, profile_anchor,
                                       profile_of_running, running_remove)
from advisor.model import SECONDS_PER_WEEK

cache.guard(__file__)   # before any kernel of this folder is loaded

@njit(cache=True)
def _plan(t, free, rl, nrl, exp_end, procs, estimate, pt, pf, pivot, rank, anchor, promised,
          parts):
    """The profile of the running jobs, with each pivot reserved in rank order; returns its
    size."""
    m = profile_of_running(t, free, rl, nrl, exp_end, procs, pt, pf)
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
        cuts[k - 1] = ordered[min(n - 1, (k * n + parts - 1) // parts)]
    return cuts


@njit(cache=True)
def classify(estimate, cuts, ncuts):
    """The first class whose boundary exceeds the estimate; past the last, the last class."""
    for k in range(ncuts):
        if estimate < cuts[k]:
            return k
    return ncuts


def classes_of(estimates: np.ndarray, cuts: np.ndarray) -> np.ndarray:
    """``classify`` of every estimate at once."""
    return np.searchsorted(np.asarray(cuts, np.int64), estimates, side="right").astype(
        np.int64)


#: the scalars of a run's state, in ``MultiQueue.scalars``
NQ, NRL, HN, AI, RANKS, FREE, ND, FOW, WEEKNO, NCUTS, PARTS, NOW, TESTED = range(13)
MAX_PARTS = 8
#: what ``advance`` stopped at
FINISHED, AT_STOP, TRIGGERED = 0, 1, 2


def _share(size: np.ndarray, parts: int, count: int) -> None:
    """Add ``count`` processors to the first ``parts`` partitions evenly (the first
    ``count % parts`` get one more)."""
    size[:parts] += count // parts
    size[:count % parts] += 1


class MultiQueue:
    """The whole state of one multiple-queue run, so that it can be stopped, copied (a
    what-if from the exact state) and resumed. ``parts`` may change between steps
    (``repartition``)."""

    def __init__(self, arrays: JobArrays, parts: int, classes: np.ndarray | None = None,
                 week: int = SECONDS_PER_WEEK, local: bool = True):
        if not 1 <= parts <= MAX_PARTS:
            raise ValueError(f"1 to {MAX_PARTS} classes")
        n = len(arrays)
        self.arrays, self.week, self.local = arrays, int(week), bool(local)
        self.weekly = classes is None
        self.klass = np.zeros(n, np.int64) if classes is None else \
            np.array(classes, np.int64)
        self.start = np.full(n, -1, np.int64)
        self.promised = np.full(n, -1, np.int64)
        self.rank = np.full(n, -1, np.int64)
        self.anchor = np.full(n, NEVER, np.int64)
        self.exp_end = np.zeros(n, np.int64)
        self.state = np.zeros(n, np.int8)
        self.jobs = np.empty((6, n), np.int64)     # q, rl, ht, hj, done_t, done_e
        self.parts = np.zeros((5, MAX_PARTS), np.int64)   # size, busy, extra, pivot, cuts
        self.profile = np.empty((2, n + 2 * MAX_PARTS + 8), np.int64)
        self.scalars = np.zeros(13, np.int64)
        self.scalars[FREE] = arrays.machine
        self.scalars[TESTED] = -1
        self.scalars[PARTS] = parts
        _share(self.parts[0], parts, arrays.machine)

    @property
    def now(self) -> int:
        return int(self.scalars[NOW])

    def copy(self) -> "MultiQueue":
        other = object.__new__(MultiQueue)
        other.__dict__ = {k: v.copy() if isinstance(v, np.ndarray) else v
                          for k, v in self.__dict__.items()}
        return other

    @property
    def known(self) -> int:
        """How many jobs (in submit order) have arrived by ``now``."""
        return int(self.scalars[AI])

    def with_future(self, arrays: JobArrays) -> "MultiQueue":
        """A copy of this run whose future is ``arrays``: the jobs known now (the first
        ``known``, same submit times, estimates and sizes; their runtimes, for the running
        and queued ones, as ``arrays`` says) followed by other arrivals. Running jobs end at
        their start plus the new runtime, which must leave them running now."""
        known = self.known
        if not (self.weekly and len(arrays) >= known and arrays.machine ==
                self.arrays.machine and np.array_equal(arrays.submit[:known],
                                                      self.arrays.submit[:known])):
            raise ValueError("a future continues this run's known jobs, with weekly classes")
        n = len(arrays)
        other = self.copy()
        other.arrays = arrays

        def grown(a, fill):
            out = np.full(n, fill, a.dtype)
            out[:known] = a[:known]
            return out

        for name, fill in (("klass", 0), ("start", -1), ("promised", -1), ("rank", -1),
                           ("anchor", NEVER), ("exp_end", 0), ("state", 0)):
            setattr(other, name, grown(getattr(self, name), fill))
        other.jobs = np.zeros((6, n), np.int64)
        sc = self.scalars
        for row, size in ((0, sc[NQ]), (1, sc[NRL]), (4, sc[ND]), (5, sc[ND])):
            other.jobs[row, :size] = self.jobs[row, :size]
        running = self.jobs[3, :sc[HN]]
        ends = other.start[running] + arrays.runtime[running]
        if (ends <= self.now).any():
            raise ValueError("a running job's new runtime ends it before now")
        order = np.lexsort((running, ends))     # sorted: a valid heap
        other.jobs[2, :len(order)] = ends[order]
        other.jobs[3, :len(order)] = running[order]
        other.profile = np.empty((2, n + 2 * MAX_PARTS + 8), np.int64)
        return other

    @property
    def parts_now(self) -> int:
        return int(self.scalars[PARTS])

    def repartition(self, parts: int) -> None:
        """Switch to ``parts`` classes from the exact current state (Appendix A): the new
        boundaries split [0, t_P) evenly, t_P being the current last boundary (A.1; from one
        class, which has none, the previous week's completions balanced for ``parts`` as at a
        week's start). Queued and running jobs are classed again by their estimates; each
        partition keeps the processors its running jobs use, and the idle ones are shared
        evenly. Pivots (A.2): jobs that were pivots keep their rank, and each class's pivot
        is its first queued job, as in every pass; a demoted pivot keeps no reservation of
        its own (reservations are recomputed at every pass here)."""
        if not 1 <= parts <= MAX_PARTS:
            raise ValueError(f"1 to {MAX_PARTS} classes")
        sc, cuts = self.scalars, self.parts[4]
        old, ncuts = int(sc[PARTS]), int(sc[NCUTS])
        if parts == 1:
            new = np.zeros(0, np.int64)
        elif old > 1 and ncuts > 0:
            top = int(cuts[ncuts - 1])
            new = np.array([k * top // parts for k in range(1, parts)], np.int64)
        else:
            done_t, done_e = self.jobs[4], self.jobs[5]
            week = self.week
            last = (done_t[:sc[ND]] // week) == sc[WEEKNO] - 1
            new = weekly_cuts(done_e[:sc[ND]][last], parts) if last.any() else \
                np.zeros(0, np.int64)
        cuts[:] = 0
        cuts[:len(new)] = new
        sc[NCUTS], sc[PARTS] = len(new), parts
        live = (self.state == QUEUED) | (self.state == RUNNING)
        est = self.arrays.estimate
        self.klass[live] = classes_of(est[live], new)
        size, busy = self.parts[0], self.parts[1]
        size[:], busy[:] = 0, 0
        running = np.flatnonzero(self.state == RUNNING)
        np.add.at(busy, self.klass[running], self.arrays.procs[running])
        size[:parts] = busy[:parts]
        _share(size, parts, self.arrays.machine - int(busy.sum()))

    def advance(self, until: int = NEVER, trigger: float = -1.0) -> int:
        """Run events up to time ``until``; with ``trigger`` >= 0, stop too after a pass at
        which the queue's mean bounded slowdown (1 + wait / max(10, estimate)) exceeds it,
        at most once a week (``now`` is then that time). Returns FINISHED, AT_STOP or
        TRIGGERED."""
        a = self.arrays
        q, rl, ht, hj, done_t, done_e = self.jobs
        size, busy, extra, pivot, cuts = self.parts
        return _advance(a.submit, a.runtime, a.estimate, a.procs, a.machine, self.klass,
                        self.weekly, self.week, self.local, self.start, self.promised,
                        self.rank, self.anchor, self.exp_end, self.state, q, rl, ht, hj,
                        done_t, done_e, size, busy, extra, pivot, cuts, self.profile[0],
                        self.profile[1], self.scalars, until, trigger)


@njit(cache=True)
def _advance(submit, runtime, estimate, procs, machine, klass, weekly, week, local, start,
             promised, rank, anchor, exp_end, state, q, rl, ht, hj, done_t, done_e, size,
             busy, extra, pivot, cuts, pt, pf, sc, until, trigger):
    n = submit.shape[0]
    parts = sc[PARTS]
    nq, nrl, hn, ai, ranks, free = sc[NQ], sc[NRL], sc[HN], sc[AI], sc[RANKS], sc[FREE]
    nd, first_of_week, this_week, ncuts = sc[ND], sc[FOW], sc[WEEKNO], sc[NCUTS]
    outcome = FINISHED
    while True:
        t = min(submit[ai] if ai < n else NEVER, ht[0] if hn > 0 else NEVER)
        if t == NEVER:
            break
        if t > until:
            outcome = AT_STOP
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
        new_week = t // week > this_week
        if new_week:
            this_week = t // week
            while first_of_week < nd and done_t[first_of_week] // week < this_week - 1:
                first_of_week += 1
            last = first_of_week
            while last < nd and done_t[last] // week == this_week - 1:
                last += 1
            if weekly and last > first_of_week and parts > 1:
                cuts[:parts - 1] = weekly_cuts(done_e[first_of_week:last], parts)
                ncuts = parts - 1
        while ai < n and submit[ai] == t:
            if weekly:
                klass[ai] = classify(estimate[ai], cuts, ncuts)
            q[nq] = ai
            state[ai] = QUEUED
            nq += 1
            ai += 1
        if nq == 0:
            continue
        # the pivots, ranked by when they became pivots (new ones in arrival order)
        pivot[:parts] = -1
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
        if trigger >= 0 and sc[TESTED] != this_week and nq > 0:
            total = 0.0
            for a in range(nq):
                total += 1.0 + (t - submit[q[a]]) / max(10, estimate[q[a]])
            if total / nq > trigger:
                sc[NOW] = t
                sc[TESTED] = this_week
                outcome = TRIGGERED
                break
    sc[NQ], sc[NRL], sc[HN], sc[AI], sc[RANKS], sc[FREE] = nq, nrl, hn, ai, ranks, free
    sc[ND], sc[FOW], sc[WEEKNO], sc[NCUTS] = nd, first_of_week, this_week, ncuts
    return outcome


def a_priori_classes(submit: np.ndarray, values: np.ndarray, parts: int,
                     week: int = SECONDS_PER_WEEK) -> np.ndarray:
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
        klass[idx] = classes_of(values[idx], cuts)
    return klass


def run_queues(arrays: JobArrays, parts: int, classes: np.ndarray | None = None,
               week: int = SECONDS_PER_WEEK, local: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Multiple-queue backfilling with ``parts`` classes: given ``classes``, or (None) from
    the previous week's completions as the run goes (§2.1). ``local``: the reading of Fig. 2
    that the paper's Fig. 4 supports (see the module). Returns (start times, each pivot's
    first reservation or -1); one class is EASY-FCFS."""
    run = MultiQueue(arrays, parts, classes, week, local)
    run.advance()
    return run.start, run.promised
