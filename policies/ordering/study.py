"""Lelong et al.'s train/test protocol for tuning EASY's two queues (§4.1, §7.1).

1. Split the trace at its temporal midpoint into a training and a testing half.
2. From each half, resample week-long logs: for every user, the submissions of one random
   week of that user's (drawn uniformly among the half's whole weeks, so a user who was idle
   that week contributes nothing and the load stays the trace's), shifted into the new week.
3. Simulate every candidate (the 49 EASY-PR-PB combinations, and each again with every
   threshold asked for) on N weeks of each half; compare each week with EASY-FCFS-FCFS.
4. The best policy on the training weeks (lowest mean AvgWait) is the tuned one; its figures
   on the testing weeks say whether the tuning generalises.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from advisor.engine import EngineConfig, Estimates, JobArrays, job_arrays, run
from advisor.errors import BadInput
from advisor.model import SECONDS_PER_WEEK, Workload
from advisor.plugins.registry import registry
from advisor.plugins.spec import BASELINE, Choice, Policy, parse_policy
from advisor.whatif.runner import Executor, SerialExecutor
WEEKS_PER_TASK = 10


def candidates(thresholds: tuple[int, ...] = ()) -> list[Policy]:
    """Lelong et al.'s EASY-PR-PB for every pair of installed orderings (its seven give 49),
    then the same under each queue threshold."""
    reg = registry()
    easy, queue = reg.plugin("backfill", "easy"), reg.plugin("threshold", "queue")
    orders = reg.family("ordering").members
    pairs = [[Choice(pr, pr.Params()), Choice(easy, easy.Params(order=pb.name))]
             for pr in orders for pb in orders]
    return [Policy.of(c) for c in pairs] + [
        Policy.of([*c, Choice(queue, queue.Params(T=t))]) for t in thresholds for c in pairs]


class WeekSampler:
    """Draws week-long logs from one half of a trace by per-user week resampling."""

    def __init__(self, arrays: JobArrays, user: np.ndarray, begin: int, end: int):
        self.arrays = arrays
        self.begin = begin
        self.weeks = max(1, (end - begin) // SECONDS_PER_WEEK)
        users, self.user = np.unique(user, return_inverse=True)
        self.users = len(users)
        week = (arrays.submit - begin) // SECONDS_PER_WEEK
        inside = week < self.weeks
        cell = np.where(inside, self.user * self.weeks + week, -1)
        self.order = np.lexsort((np.arange(len(cell)), cell))
        self.order = self.order[cell[self.order] >= 0]
        self.week = week
        cells = cell[self.order]
        self.offsets = np.searchsorted(cells, np.arange(self.users * self.weeks + 1))

    def sample(self, rng: np.random.Generator) -> JobArrays:
        chosen = rng.integers(0, self.weeks, size=self.users)
        cells = np.arange(self.users) * self.weeks + chosen
        starts, ends = self.offsets[cells], self.offsets[cells + 1]
        lengths = ends - starts
        total = int(lengths.sum())
        shift = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        idx = self.order[shift + np.arange(total)]
        submit = self.arrays.submit[idx] - self.begin - self.week[idx] * SECONDS_PER_WEEK
        keep = np.lexsort((idx, submit))
        return replace(self.arrays.take(idx[keep]), submit=submit[keep])


def split(workload: Workload) -> int:
    """The temporal midpoint of the submissions."""
    submit = workload.jobs["submit"]
    return int((int(submit.min()) + int(submit.max())) // 2)


def evaluate(task: tuple[list[JobArrays], list[EngineConfig]]) -> np.ndarray:
    """AvgWait and MaxWait of every config on every week: shape (2, configs, weeks)."""
    weeks, configs = task
    out = np.zeros((2, len(configs), len(weeks)))
    for w, arrays in enumerate(weeks):
        if not len(arrays):
            continue
        # every policy's waits in one table, reduced at once (not 2 x 49 small reductions)
        wait = np.stack([run(arrays, config)[0] for config in configs]) - arrays.submit
        out[0, :, w] = wait.mean(axis=1)
        out[1, :, w] = wait.max(axis=1)
    return out


@dataclass(frozen=True)
class TuneResult:
    policies: list[Policy]
    train: np.ndarray            # (2 metrics, policies, weeks): AvgWait, MaxWait
    test: np.ndarray
    baseline: int                # index of EASY-FCFS-FCFS in policies

    @property
    def best(self) -> int:
        """Lowest mean training AvgWait; ties go to the earlier candidate."""
        return int(np.argmin(self.train[0].mean(axis=1)))

    def rows(self) -> list[dict]:
        """Per policy, train and test: mean AvgWait/MaxWait, and their mean week-by-week
        difference and ratio of means against EASY-FCFS-FCFS."""
        out = []
        for i, p in enumerate(self.policies):
            row = {"policy": p.spec, "label": p.label}
            for name, data in (("train", self.train), ("test", self.test)):
                for m, metric in enumerate(("avg_wait", "max_wait")):
                    mine, base = data[m, i], data[m, self.baseline]
                    row[f"{name}_{metric}"] = float(mine.mean())
                    row[f"{name}_{metric}_delta"] = float((mine - base).mean())
                    row[f"{name}_{metric}_ratio"] = float(mine.mean() / max(base.mean(), 1e-9))
            out.append(row)
        return out

    def as_dict(self) -> dict:
        rows = self.rows()
        return {"weeks": int(self.train.shape[2]), "baseline": rows[self.baseline],
                "best": rows[self.best], "policies": rows}


def tune(workload: Workload, *, weeks: int = 250, seed: int = 0,
         thresholds: tuple[int, ...] = (), estimates: Estimates = Estimates(),
         executor: Executor | None = None,
         on_progress: Callable[[int, int], None] | None = None) -> TuneResult:
    if weeks < 1:
        raise BadInput("--weeks must be at least 1")
    if len(workload) < 2:
        raise BadInput("the trace has too few jobs to split into a training and a test half")
    policies = candidates(thresholds)
    configs = [p.engine_config() for p in policies]
    baseline = policies.index(parse_policy(BASELINE))
    arrays = job_arrays(workload, estimates)
    user = workload.jobs["user"].to_numpy()
    mid = split(workload)
    first, last = int(arrays.submit[0]), int(arrays.submit[-1]) + 1
    halves = []
    for h, (lo, hi) in enumerate(((first, mid), (mid, last))):
        inside = (arrays.submit >= lo) & (arrays.submit < hi)
        sampler = WeekSampler(arrays.take(inside), user[inside], lo, hi)
        rng = np.random.default_rng([seed, h])
        halves.append([sampler.sample(rng) for _ in range(weeks)])

    run(halves[0][0], configs[0])  # compile (or load) the engine before workers fork
    tasks, where = [], []
    for h, sampled in enumerate(halves):
        for w0 in range(0, weeks, WEEKS_PER_TASK):
            tasks.append((sampled[w0:w0 + WEEKS_PER_TASK], configs))
            where.append((h, w0))
    result = np.zeros((2, 2, len(policies), weeks))
    executor = executor or SerialExecutor()
    for done, (i, out) in enumerate(executor.map_unordered(evaluate, tasks), start=1):
        h, w0 = where[i]
        result[h, :, :, w0:w0 + out.shape[2]] = out
        if on_progress:
            on_progress(done, len(tasks))
    return TuneResult(policies, result[0], result[1], baseline)
