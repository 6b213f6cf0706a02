"""Lawson and Smirni's online simulation policy (§3, Appendix A), replayed on a trace: the
number of runtime classes P of multiple-queue backfilling is chosen again whenever the
queue's mean bounded slowdown exceeds T (at most once a week), by simulating P = 1 .. P_max
for the next L weeks from the exact current state and keeping the best. Two kinds of
futures:

* ``hindsight``, the paper's, read from §3: the what-ifs are "trace-driven simulation[s]"
  of L weeks from the real system's exact state, so they see the trace's own future
  arrivals and actual runtimes (the scheduler inside them still plans with the estimates):
  hindsight that no real site has;
* ``sampled``: only what is known at the test. The advisor's futures
  (``advisor.whatif.futures``) are drawn from the jobs finished by then: runtimes of the
  running and queued jobs from their users' actual/requested ratios (a running job's
  conditioned on its elapsed time), arrivals by user-week resampling of the last four
  weeks; each P is scored on ``samples`` such futures, the same for every P.

"Best" is the lowest mean bounded slowdown s = 1 + wait / max(10, runtime) over the jobs
waiting at the test or arriving within the L weeks (a job still waiting at the horizon
counts its wait so far; sampled: averaged over the samples); ties keep the current P, then
the fewest classes. The run starts with four classes (§2's policy, which this one adapts),
and classes are recomputed every week from the previous week's completions.

``queue_count_study`` puts the paper's comparisons together for one trace: P fixed and the
online policy, each against one queue, as the aggregate and weekly slowdown ratio R (Figs.
4-7), and the tests and changes of Table 2.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from advisor.engine import Estimates, JobArrays, job_arrays, make_arrays
from advisor.engine.core import DONE, QUEUED, RUNNING
from advisor.policies.queues.kernel import TRIGGERED, MultiQueue, a_priori_classes, run_queues
from advisor.errors import BadInput
from advisor.metrics import schedule_table, slowdown_ratio, slowdown_ratio_weekly
from advisor.model import SECONDS_PER_WEEK, TRACE_PARTITION, Workload
from advisor.whatif.futures import ArrivalSampler, RuntimeModel

FUTURES = ("hindsight", "sampled")
#: weeks of finished jobs a sampled future resamples arrivals from (the advisor's default)
HISTORY_WEEKS = 4


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


def known_future(run: MultiQueue, users: np.ndarray, length: int, seed: int) -> MultiQueue:
    """``run`` continued into one future drawn from what is known at ``run.now``: the
    finished jobs are the history (``advisor.whatif.futures``), from which the running and
    queued jobs get runtimes and the next ``length`` seconds get arrivals."""
    a, now, known = run.arrays, run.now, run.known
    done = np.flatnonzero(run.state[:known] == DONE)
    history = pd.DataFrame({"user": users[done], "submit": a.submit[done],
                            "runtime": a.runtime[done], "limit": a.estimate[done],
                            "cpus": a.procs[done], "nodes": a.procs[done],
                            "partition": TRACE_PARTITION})
    rng = np.random.default_rng(seed)
    model = RuntimeModel(history)
    runtime = a.runtime[:known].copy()
    for j in np.flatnonzero((run.state[:known] == RUNNING) | (run.state[:known] == QUEUED)):
        elapsed = now - run.start[j] if run.state[j] == RUNNING else 0
        runtime[j] = model.draw(str(users[j]), int(a.estimate[j]), int(elapsed), rng)
    jobs, runtimes = ArrivalSampler(history, now, HISTORY_WEEKS).draw(length, rng)
    new_runtime = [runtimes[j.job_id] for j in jobs]
    arrays = make_arrays(
        np.concatenate([a.submit[:known], [j.submit_time for j in jobs]]),
        np.concatenate([runtime, new_runtime]),
        np.concatenate([a.estimate[:known], [j.time_limit if j.time_limit else r
                                             for j, r in zip(jobs, new_runtime)]]),
        np.concatenate([a.procs[:known], [min(j.cpus, a.machine) for j in jobs]]),
        a.machine)
    return run.with_future(arrays)


def score_parts(run: MultiQueue, length: int, max_parts: int = 4,
                futures_kind: str = "hindsight", users: np.ndarray | None = None,
                samples: int = 4, seed=0) -> dict[int, float]:
    """One test: each P = 1 .. ``max_parts`` simulated ``length`` seconds from ``run``'s
    exact state, and its mean bounded slowdown over that period (sampled: over ``samples``
    futures, the same for every P, drawn with ``seed``)."""
    now = run.now
    horizon = now + length
    if futures_kind == "hindsight":
        futures = [run]
    else:
        futures = [known_future(run, users, length, int(np.random.SeedSequence(
            [*np.atleast_1d(seed), s]).generate_state(1)[0])) for s in range(samples)]
    scores = {}
    for parts in range(1, max_parts + 1):
        total = 0.0
        for future in futures:
            what_if = future.copy()
            if parts != run.parts_now:
                what_if.repartition(parts)
            what_if.advance(until=horizon)
            total += period_slowdown(what_if, now, horizon)
        scores[parts] = total / len(futures)
    return scores


def online_queue_counts(arrays: JobArrays, trigger: float, weeks_ahead: int,
                        max_parts: int = 4, start_parts: int = 4, local: bool = True,
                        week: int = SECONDS_PER_WEEK, futures: str = "hindsight",
                        users: np.ndarray | None = None, samples: int = 4, seed: int = 0,
                        on_progress: Callable[[int, int], None] | None = None
                        ) -> OnlineRun:
    """The whole trace under the online simulation policy with threshold ``trigger`` (T)
    and ``weeks_ahead`` (L), with ``hindsight`` or ``sampled`` futures (``users``: each
    job's user, which sampled futures resample by; ``samples`` futures per test).
    ``weeks`` counts every week the run was active in, from the first submission's to the
    last completion's: a test can come in the weeks after the last submission, while the
    queue drains, and there is at most one test a week. ``on_progress(weeks done, weeks)``
    at each test."""
    if futures not in FUTURES:
        raise BadInput(f"unknown futures '{futures}'; use {' or '.join(FUTURES)}")
    if futures == "sampled" and (users is None or samples < 1):
        raise BadInput("sampled futures are drawn per user: give users and samples")
    run = MultiQueue(arrays, start_parts, None, week, local)
    first = int(arrays.submit.min() // week)
    submitted = int(arrays.submit.max() // week) - first + 1
    result = OnlineRun(run.start, submitted)
    while run.advance(trigger=trigger) == TRIGGERED:
        now, current = run.now, run.parts_now
        if on_progress:
            on_progress(min(now // week - first, submitted), submitted)
        scores = score_parts(run, weeks_ahead * week, max_parts, futures, users, samples,
                             [seed, result.tests])
        best = min(scores, key=lambda p: (scores[p], p != current, p))
        result.tests += 1
        result.decisions.append((now, current, best, scores))
        if best != current:
            run.repartition(best)
            result.changes += 1
            result.to_parts[best] = result.to_parts.get(best, 0) + 1
    result.start = run.start
    ran = run.start >= 0
    last = int((run.start[ran] + arrays.runtime[ran]).max()) if ran.any() else 0
    result.weeks = max(submitted, last // week - first + 1)
    if on_progress:
        on_progress(submitted, submitted)
    return result


@dataclass
class QueueCountStudy:
    """One trace, the paper's way: ``parts`` fixed classes and the online policy, each
    against one queue (R per job, crashed jobs left out), and the online tests."""

    trace: str
    estimates: str
    futures: str
    trigger: float
    weeks_ahead: int
    parts: int
    r_fixed: float
    r_online: float
    weekly: pd.DataFrame          # week, jobs, r_fixed, r_online
    online: OnlineRun

    def table2(self) -> dict:
        tests, weeks = self.online.tests, self.online.weeks
        return {"weeks": weeks, "tests": tests,
                "pct_weeks_with_test": 100.0 * tests / max(weeks, 1),
                "changes": self.online.changes,
                "pct_tests_with_change": 100.0 * self.online.changes / max(tests, 1),
                "to_parts": {str(p): self.online.to_parts.get(p, 0) for p in range(1, 5)}}

    def as_dict(self) -> dict:
        return {"trace": self.trace, "estimates": self.estimates, "futures": self.futures,
                "trigger": self.trigger, "weeks_ahead": self.weeks_ahead,
                "parts": self.parts, "r_fixed": self.r_fixed, "r_online": self.r_online,
                "table2": self.table2(), "weeks": self.weekly.to_dict(orient="records"),
                "decisions": self.online.as_dict()["decisions"]}


def queue_count_study(workload: Workload, trigger: float, weeks_ahead: int,
                      estimates: str = "user", futures: str = "hindsight", parts: int = 4,
                      samples: int = 4, seed: int = 0,
                      on_progress: Callable[[int, int], None] | None = None
                      ) -> QueueCountStudy:
    """Figs. 4-7 and Table 2 for one trace: with ``estimates`` "exact" the fixed classes
    are a priori (each week's own runtimes, §2.3), with "user" last week's estimates."""
    if estimates not in ("user", "exact"):
        raise BadInput(f"estimates '{estimates}': the queue-count study takes user or exact")
    arrays = job_arrays(workload, Estimates(estimates))
    request = workload.jobs["req_time"].to_numpy()
    users = workload.jobs["user"].astype(str).to_numpy()
    classes = a_priori_classes(arrays.submit, arrays.runtime, parts) \
        if estimates == "exact" else None
    one, _ = run_queues(arrays, 1)
    fixed, _ = run_queues(arrays, parts, classes)
    online = online_queue_counts(arrays, trigger, weeks_ahead, futures=futures, users=users,
                                 samples=samples, seed=seed, on_progress=on_progress)
    tables = {name: schedule_table(arrays.submit, start, arrays.runtime, arrays.procs)
              for name, start in (("one", one), ("fixed", fixed), ("online", online.start))}
    weekly = pd.DataFrame({
        "r_fixed": slowdown_ratio_weekly(tables["one"], tables["fixed"], request),
        "r_online": slowdown_ratio_weekly(tables["one"], tables["online"], request)})
    week = (arrays.submit - arrays.submit.min()) // SECONDS_PER_WEEK
    weekly.insert(0, "jobs", pd.Series(week).value_counts().reindex(weekly.index)
                  .fillna(0).astype(int))
    weekly = weekly.reset_index()
    return QueueCountStudy(
        Path(workload.source).name, estimates, futures, trigger, weeks_ahead, parts,
        float(slowdown_ratio(tables["one"], tables["fixed"], request).mean()),
        float(slowdown_ratio(tables["one"], tables["online"], request).mean()),
        weekly, online)
