"""Multiple-queue backfilling (Lawson and Smirni, Fig. 2), written plainly: the reference the
compiled engine of issue 19 will be checked against, on small workloads. Slow by design.

The reading, where the text leaves room (each choice is the issue's to confirm against the
paper's tables):
* P disjoint partitions; processors split evenly at first (the first N mod P partitions get
  one more). A job belongs to the partition its class names.
* The pass runs after every batch of events (completions, then arrivals, of one second) and
  walks all queued jobs in arrival order, across partitions, once.
* A partition's pivot is its first queued job. Pivots hold reservations on the *whole
  machine's* processors, in the order the jobs became pivots (so that a new pivot never
  moves an older one's reservation; estimates that hold only move reservations earlier):
  t_P is the earliest time the pivot
  fits beside the running jobs (expected to end at start + estimate, or one second from now
  once overrun) and the earlier pivots' reservations. Counting every partition's processors
  is what keeps a job needing the whole machine from starving.
* A pivot starts when t_P is now. Another job starts when (a) it fits in its partition's idle
  processors and is expected to end by t_P, or (b) it fits in min(idle, x_P), x_P being
  the partition's processors free at t_P that its pivot does not need, or (c) its partition's
  idle processors plus idle ones borrowed from other partitions suffice; and in every case
  only if no pivot's reservation moves (checked on the whole machine: a partition's idle
  processors may be what another partition's pivot counts on).
* Processors a job takes from other partitions (the most idle first, then the lowest index)
  are reassigned to its partition and stay there: the text says "reassign" and never says
  they are given back, so partitions drift with the load.
* After any start, the pivots and their reservations are computed again.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Run:
    job: int
    procs: int
    part: int
    end: int          # actual end
    expected: int     # start + estimate


def split(machine: int, parts: int) -> list[int]:
    base, more = divmod(machine, parts)
    return [base + (p < more) for p in range(parts)]


WEEK = 7 * 86400


def simulate(submit, runtime, estimate, procs, machine: int, klass, parts: int,
             promised: dict | None = None, week: int = WEEK, local: bool = False):
    """Start time of each job (jobs sorted by submit time). ``promised`` (a dict, if given)
    receives each job's t_P when it first became a pivot. ``klass`` gives each job's class,
    or is None: then a job's class comes from its estimate at arrival, against the cuts
    that the estimates of the jobs *completed* in the previous week (weeks from time 0)
    give (Fig. 3); a week with no completions before it keeps the cuts it had, and the
    first week has none (one class). ``local``: the other reading of Fig. 2's (a) and (b)
    (see ``_pass``)."""
    n = len(submit)
    weekly = klass is None
    klass = [0] * n if weekly else list(klass)
    cuts: list[int] = []
    completed: list[tuple[int, int]] = []     # (completion time, estimate)
    this_week = 0
    became: dict[int, int] = {}            # job: its rank among pivots, in order of becoming
    promised = {} if promised is None else promised
    size = split(machine, parts)
    start = [-1] * n
    running: list[Run] = []
    queue: list[int] = []
    arrivals = sorted(range(n), key=lambda j: (submit[j], j))
    a = 0
    while a < n or queue or running:
        times = [r.end for r in running] + ([submit[arrivals[a]]] if a < n else [])
        if not times:
            raise AssertionError(f"jobs {queue} can never start")
        now = min(times)
        completed += [(r.end, estimate[r.job]) for r in running if r.end <= now]
        running = [r for r in running if r.end > now]
        while a < n and submit[arrivals[a]] == now:
            j = arrivals[a]
            if weekly:
                if now // week > this_week:
                    this_week = now // week
                    last = [e for t, e in completed if t // week == this_week - 1]
                    cuts = boundaries(last, parts) if last else cuts
                klass[j] = classify(estimate[j], cuts)
            queue.append(j)
            a += 1
        _pass(now, queue, running, size, start, runtime, estimate, procs, klass, parts,
              machine, became, promised, local)
    return start


def _expected(r: Run, now: int) -> int:
    return max(r.expected, now + 1)


def _free_at(t: int, running, reservations, machine: int) -> int:
    """Whole-machine processors free at instant t (a release at t counts as free)."""
    used = sum(r.procs for r in running if _expected(r, t - 1) > t)
    used += sum(q for s, e, q in reservations if s <= t < e)
    return machine - used


def _fits(s: int, hold: int, need: int, running, reservations, machine: int) -> bool:
    points = {s} | {x for x in [_expected(r, s) for r in running] if s < x < s + hold}
    points |= {b for b, _, _ in reservations if s < b < s + hold}
    return all(_free_at(t, running, reservations, machine) >= need for t in points)


def _earliest(now: int, hold: int, need: int, running, reservations, machine: int) -> int:
    candidates = sorted({now} | {_expected(r, now) for r in running}
                        | {e for _, e, _ in reservations if e > now})
    for s in candidates:
        if _fits(s, hold, need, running, reservations, machine):
            return s
    raise AssertionError("a job wider than the machine")


def _pivots(now, queue, running, size, procs, estimate, klass, machine, became, promised):
    """Each partition's pivot: (job, t_P, x_P), reserved in the order they became pivots."""
    reservations, pivots, first = [], {}, {}
    for j in queue:
        first.setdefault(klass[j], j)
    for j in first.values():
        became.setdefault(j, len(became))
    for j in sorted(first.values(), key=became.__getitem__):
        p = klass[j]
        hold = max(estimate[j], 1)
        t = _earliest(now, hold, procs[j], running, reservations, machine)
        reservations.append((t, t + hold, procs[j]))
        in_part = size[p] - sum(r.procs for r in running
                                if r.part == p and _expected(r, now) > t)
        pivots[p] = (j, t, max(in_part - procs[j], 0))
        promised.setdefault(j, t)
    return pivots, reservations


def _pass(now, queue, running, size, start, runtime, estimate, procs, klass, parts,
          machine, became, promised, local):
    """One walk. (a) and (b) use the job's own partition's idle processors and protect its
    own pivot; (c) borrows and protects every pivot. Read strictly (the default), no start
    may move any pivot's reservation, so (a) and (b) add nothing to (c) and the partitions'
    sizes never matter; read ``local``ly, (a) and (b) look at their own partition only, and
    may use idle processors another partition's pivot counts on."""
    for j in list(queue):
        pivots, reservations = _pivots(now, queue, running, size, procs, estimate, klass,
                                       machine, became, promised)
        p, need, hold = klass[j], procs[j], max(estimate[j], 1)
        pivot, t_p, x_p = pivots[p]
        idle = [size[q] - sum(r.procs for r in running if r.part == q) for q in range(parts)]
        if j == pivot:
            ok = t_p == now
        else:
            own = need <= idle[p] and (now + hold <= t_p or need <= x_p)      # (a), (b)
            ok = (local and own) or (need <= sum(idle) and _fits(             # (c)
                now, hold, need, running, reservations, machine))
        if not ok:
            continue
        short = need - idle[p]
        for q in sorted((q for q in range(parts) if q != p), key=lambda q: (-idle[q], q)):
            if short <= 0:
                break
            take = min(short, idle[q])
            size[q] -= take
            size[p] += take
            short -= take
        assert short <= 0, "started without the processors"
        start[j] = now
        running.append(Run(j, need, p, now + runtime[j], now + estimate[j]))
        queue.remove(j)


def boundaries(estimates, parts: int) -> list[int]:
    """Fig. 3, whose algorithm the text lost (only its caption survives: from the estimates
    of the jobs completed in the previous week, the criteria "that would have balanced the
    number of jobs across all queues"). Reconstructed as count quantiles: boundary k is the
    smallest estimate that has at least k/P of the jobs strictly below it, so that class k
    holds the jobs with b_(k-1) <= estimate < b_k; ties stay together (a class may then hold
    more than its share). No jobs: no boundaries (everything in the last class)."""
    ordered = sorted(estimates)
    n = len(ordered)
    if n == 0:
        return []
    # the value at rank ceil(k n / P), never smaller for a larger k: the list is sorted
    return [ordered[min(n - 1, -(-k * n // parts))] for k in range(1, parts)]


def classify(estimate: int, cuts: list[int]) -> int:
    """The class of a job: the first whose boundary exceeds its estimate; above the last
    boundary, the last class (footnote 8)."""
    for k, b in enumerate(cuts):
        if estimate < b:
            return k
    return len(cuts)
