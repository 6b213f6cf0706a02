"""Lawson and Smirni's online simulation policy (§3, Appendix A), replayed on a trace in the
paper's own setting: the number of runtime classes P of multiple-queue backfilling is chosen
again whenever the queue's mean bounded slowdown exceeds T (at most once a week), by
simulating P = 1 .. P_max for the next L weeks from the exact current state and keeping the
best.

What "the paper's setting" means here, read from §3: the what-ifs are "trace-driven
simulation[s]" of L weeks from the real system's exact state, so they see the trace's own
future arrivals and actual runtimes (the scheduler inside them still plans with the
estimates): hindsight that no real site has. "Best" is the lowest mean bounded slowdown
s = 1 + wait / max(10, runtime) over the jobs waiting at the test or arriving within the L
weeks (a job still waiting at the horizon counts its wait so far); ties keep the current P,
then the fewest classes. The run starts with four classes (§2's policy, which this one
adapts), and classes are recomputed every week from the previous week's completions.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from advisor.engine import JobArrays
from advisor.engine.multiqueue import TRIGGERED, MultiQueue
from advisor.model import SECONDS_PER_WEEK


@dataclass
class OnlineRun:
    start: np.ndarray
    weeks: int
    tests: int = 0
    changes: int = 0
    to_parts: dict[int, int] = field(default_factory=dict)
    decisions: list[tuple[int, int, int, dict[int, float]]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"weeks": self.weeks, "tests": self.tests, "changes": self.changes,
                "to_parts": {str(p): n for p, n in sorted(self.to_parts.items())},
                "decisions": [{"time": t, "from": a, "to": b,
                               "scores": {str(p): s for p, s in scores.items()}}
                              for t, a, b, scores in self.decisions]}


def period_slowdown(run: MultiQueue, now: int, horizon: int) -> float:
    """Mean bounded slowdown of the jobs waiting at ``now`` or arriving before ``horizon``,
    a job not started by the horizon counting its wait up to it."""
    a = run.arrays
    waiting = (a.submit <= now) & ((run.start < 0) | (run.start > now))
    arriving = (a.submit > now) & (a.submit < horizon)
    jobs = np.flatnonzero(waiting | arriving)
    if not len(jobs):
        return 1.0
    start = run.start[jobs]
    until = np.where((start >= 0) & (start <= horizon), start, horizon)
    wait = np.maximum(until - a.submit[jobs], 0)
    return float(np.mean(1.0 + wait / np.maximum(10, a.runtime[jobs])))


def online_queue_counts(arrays: JobArrays, trigger: float, weeks_ahead: int,
                        max_parts: int = 4, start_parts: int = 4, local: bool = True,
                        week: int = SECONDS_PER_WEEK) -> OnlineRun:
    """The whole trace under the online simulation policy with threshold ``trigger`` (T)
    and ``weeks_ahead`` (L)."""
    run = MultiQueue(arrays, start_parts, None, week, local)
    span = int(arrays.submit.max() // week - arrays.submit.min() // week + 1)
    result = OnlineRun(run.start, span)
    while run.advance(trigger=trigger) == TRIGGERED:
        now, current = run.now, run.parts_now
        horizon = now + weeks_ahead * week
        scores = {}
        for parts in range(1, max_parts + 1):
            what_if = run.copy()
            if parts != current:
                what_if.repartition(parts)
            what_if.advance(until=horizon)
            scores[parts] = period_slowdown(what_if, now, horizon)
        best = min(scores, key=lambda p: (scores[p], p != current, p))
        result.tests += 1
        result.decisions.append((now, current, best, scores))
        if best != current:
            run.repartition(best)
            result.changes += 1
            result.to_parts[best] = result.to_parts.get(best, 0) + 1
    result.start = run.start
    return result
