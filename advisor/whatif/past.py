"""The recent past replayed under each candidate: what a site tuning by hand reads off its
log, and the evidence the recommender weighs beside its sampled futures.

The jobs submitted in the ``weeks`` whole weeks before the current one (a week of the
clock, from its zero) are played again, from an idle machine, in their own order: those
the history records with their actual runtimes, those still running or pending with a
runtime drawn as a future's (on a busy machine part of the last week's jobs have not
finished, and they are the ones that waited longest), under each candidate's Slurm
form, enacted once at the start and kept (the engine's slurm mode, as every future is
played: ``advisor.whatif.scenario.evaluate``). Figures count from each job's submission,
over every job of those weeks and week by week (a win that holds in most weeks is not
one good week). A sampled future says what a candidate would do from the exact state now,
for a day or three of jobs drawn from the past; the replay says what it did do, or would
have, over weeks of the jobs that really came: fewer assumptions, a larger scale, and the
scale on which a site judges its longest waits.

A candidate whose Slurm form orders the very jobs pending when it is made (a plan) has no
replay: enacted once for an idle machine it orders nothing, and re-made daily over weeks
it would cost a decision minutes. Nor has a candidate of the default grid that a long
queue leaves out (conservative backfilling: weeks of jobs replayed are a long queue, and
each of its replays takes seconds where the others take tens of milliseconds): it is
replayed only before it is recommended, when it would win on its futures or replace a
configuration over a risk limit. A plan's figures stay NaN, and it is judged on its
futures.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from advisor.metrics import bounded_slowdown
from advisor.model import (ACCOUNTING_COLUMNS, SECONDS_PER_WEEK, Accounting, Job, Snapshot,
                           job_limit)
from advisor.whatif.candidates import Candidate
from advisor.whatif.futures import ARRIVAL_ID0, FutureSample, RuntimeModel, job_asks
from advisor.whatif.runner import Executor, SerialExecutor, batch_bounds
from advisor.whatif.scenario import METRICS, Task, evaluate

#: a replay of fewer jobs than this says nothing: no figures
MIN_PAST_JOBS = 20
#: what a replay of finished jobs can judge (every one of them runs: not utilisation)
PAST_OBJECTIVES = ("avg_wait", "avg_bsld", "p95_wait")


@dataclass(frozen=True)
class PastReplay:
    """Each candidate's METRICS over the replayed weeks, and each objective week by week
    (NaN: no replay, see above)."""

    results: np.ndarray          # (candidates, len(METRICS))
    weekly: np.ndarray           # (candidates, weeks, len(PAST_OBJECTIVES)), by submit week
    jobs: int
    begin: int                   # the first replayed submission
    end: int                     # the start of the snapshot's week

    def figure(self, name: str) -> np.ndarray:
        return self.results[:, METRICS.index(name)]

    def by_week(self, objective: str) -> np.ndarray:
        """(candidates, weeks): ``objective`` over each replayed week's submissions."""
        return self.weekly[:, :, PAST_OBJECTIVES.index(objective)]


def week_start(t: int) -> int:
    """The start of the clock's week holding ``t`` (weeks counted from its zero)."""
    return int(t) - int(t) % SECONDS_PER_WEEK


def past_sample(history: pd.DataFrame, snapshot: Snapshot, weeks: int
                ) -> tuple[Snapshot, FutureSample] | None:
    """The jobs submitted in the ``weeks`` whole weeks before the snapshot's week
    (``week_start``), as a sample played from an idle machine just before the first of
    them (None: too few): the history's, and those still running or pending now
    (``unfinished``), each with what it asked beside CPUs where the history holds it
    (account, QOS, memory, GPUs), and the accounts' shares (``unused``). Each keeps its
    time limit: one whose recorded runtime overran it is
    killed at it plus OverTimeLimit, as Slurm kills it and as the futures play it (a
    trace's jobs overran their requested times by the thousand: replayed to their end,
    they made a busier past than any candidate had, docs/advice.md)."""
    if history is None or not len(history):
        return None
    end = week_start(snapshot.time)
    submit = history["submit"].to_numpy(np.int64)
    recent = history[(submit >= end - weeks * SECONDS_PER_WEEK)
                     & (submit < end) & (history["runtime"].to_numpy() >= 0)]
    if len(recent) < MIN_PAST_JOBS:
        return None
    recent = pd.concat([recent, unfinished(history, snapshot, end - weeks * SECONDS_PER_WEEK,
                                           end)], ignore_index=True)
    recent = recent.sort_values("submit", kind="mergesort")
    names = {p.name for p in snapshot.machine.partitions}
    default = snapshot.machine.default_partition
    default = default.name if default else ""
    jobs, runtimes = [], {}
    cpus = snapshot.machine.cpus
    asks = {c: recent[c].to_numpy() for c in ACCOUNTING_COLUMNS if c in recent}
    cols = zip(recent["user"].astype(str), recent["submit"], recent["runtime"],
               recent["limit"], recent["cpus"], recent["nodes"], recent["partition"])
    for k, (user, sub, run, limit, ncpu, nodes, part) in enumerate(cols):
        part = part if part in names else default
        job_id = ARRIVAL_ID0 + k
        jobs.append(Job(job_id=job_id, user=user, partition=part, partitions=(part,),
                        cpus=int(min(max(ncpu, 1), cpus)), state="PENDING",
                        submit_time=int(sub), eligible_time=int(sub),
                        time_limit=int(limit) if limit > 0 else None,
                        nodes=int(max(nodes, 1)), **job_asks(asks, k)))
        runtimes[job_id] = int(run)
    begin = jobs[0].submit_time
    idle = Snapshot(time=begin - 1, machine=snapshot.machine, running=(), pending=(),
                    config=snapshot.config, accounting=unused(snapshot.accounting),
                    source={"kind": "past replay"})
    return idle, FutureSample(0, runtimes, tuple(jobs))


def unused(accounting: Accounting) -> Accounting:
    """The accounts' shares without usage, for the fairness figures of the weeks replayed,
    and no user association: fair share is not played on them (with it, a decision on a
    fair-share trace took four times as long, docs/native.md), so each job's fair-share
    factor there is none, under every candidate alike."""
    return replace(accounting, decay_ran=None, associations=tuple(
        replace(a, raw_usage=0.0) for a in accounting.associations if not a.user))


def unfinished(history: pd.DataFrame, snapshot: Snapshot, begin: int, end: int
               ) -> pd.DataFrame:
    """The snapshot's running and pending jobs submitted in [begin, end), as history rows:
    left out, the weeks replayed would lose the jobs that wait longest (on a busy machine,
    part of the last week's). Each runtime is drawn as a future's is (``RuntimeModel``: a
    ratio of the user's finished jobs, one that keeps a running job running), by a
    generator seeded with ``end``: the same jobs every replay of the week."""
    jobs = [j for j in (*snapshot.running, *snapshot.pending) if begin <= j.submit_time < end]
    if not jobs:
        return history.iloc[:0]
    model, rng = RuntimeModel(history), np.random.default_rng(end)
    rows = []
    for j in jobs:
        limit = job_limit(j, snapshot.machine)
        elapsed = int(j.elapsed or 0) if j.state == "RUNNING" else 0
        rows.append({"user": j.user, "submit": j.submit_time, "limit": limit,
                     "runtime": model.draw(j.user, limit, elapsed, rng), "cpus": j.cpus,
                     "nodes": j.nodes, "partition": j.partition, "account": j.account,
                     "qos": j.qos, "mem_per_node": j.memory_per_node,
                     "mem_per_cpu": j.memory_per_cpu,
                     "gpus": j.gres_per_node.get("gpu", 0)})
    out = pd.DataFrame(rows)
    return out[[c for c in out.columns if c in history.columns]]


def replay_past(snapshot: Snapshot, history: pd.DataFrame, candidates: list[Candidate],
                weeks: int, executor: Executor | None = None,
                costly: frozenset[str] = frozenset(), memo: dict | None = None
                ) -> PastReplay | None:
    """Each candidate over the history's ``weeks`` whole weeks before this one (module
    docstring), but those whose spec is in ``costly`` (NaN, as a plan's); None when the
    history holds fewer than ``MIN_PAST_JOBS`` of them. ``memo``: the figures of the
    replays made already this week, by what each candidate enacts, and the week's jobs
    (read and filled: a decision a day replays each candidate once a week)."""
    memo = {} if memo is None else memo
    end = week_start(snapshot.time)
    keys = [(end, weeks, repr(c.enacts)) for c in candidates]
    results = np.full((len(candidates), len(METRICS)), np.nan)
    weekly = np.full((len(candidates), weeks, len(PAST_OBJECTIVES)), np.nan)
    for i, key in enumerate(keys):
        if key in memo:
            results[i], weekly[i] = memo[key]
    playable = [i for i, c in enumerate(candidates) if c.enactment.replayable
                and c.spec not in costly and keys[i] not in memo]
    if not playable and (end, weeks) in memo:       # all replayed already this week
        jobs, begin = memo[end, weeks]
        return PastReplay(results, weekly, jobs, begin, end)
    # the week's sample, kept for the replays made later this week (the latest only)
    if memo.get("sample", (None,))[0] != (end, weeks):
        memo["sample"] = ((end, weeks), past_sample(history, snapshot, weeks))
    made = memo["sample"][1]
    if made is None:
        return None
    idle, sample = made
    span = int(end - idle.time)
    memo[end, weeks] = (len(sample.arrivals), int(idle.time + 1))
    executor = executor or SerialExecutor()
    batches = [playable[a:b] for a, b in batch_bounds(len(playable), 1, executor.workers)
               if b > a]
    tasks = [Task(idle, tuple(candidates[i] for i in b), sample, span) for b in batches]
    submit = np.array([j.submit_time for j in sample.arrivals], np.int64)
    runtime = np.array([sample.runtimes[j.job_id] for j in sample.arrivals], np.float64)
    week = (submit - (end - weeks * SECONDS_PER_WEEK)) // SECONDS_PER_WEEK
    for i, (out, waits, *_) in executor.map_unordered(evaluate, tasks):
        results[batches[i]] = out
        for k, row, wait in zip(batches[i], out, waits):
            weekly[k] = week_figures(wait.astype(np.float64), runtime, week, weeks)
            memo[keys[k]] = (row, weekly[k])
    return PastReplay(results, weekly, len(sample.arrivals), int(idle.time + 1), end)


def week_figures(wait: np.ndarray, runtime: np.ndarray, week: np.ndarray,
                 weeks: int) -> np.ndarray:
    """(weeks, len(PAST_OBJECTIVES)): each objective over each week's submissions (the
    jobs in submit order, as ``evaluate`` gives their waits; NaN: none, or never ran)."""
    out = np.full((weeks, len(PAST_OBJECTIVES)), np.nan)
    for w in range(weeks):
        mine = (week == w) & ~np.isnan(wait)
        if mine.any():
            out[w] = (wait[mine].mean(), bounded_slowdown(wait[mine], runtime[mine]).mean(),
                      np.percentile(wait[mine], 95))
    return out
