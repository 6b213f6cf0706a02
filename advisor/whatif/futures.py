"""What the advisor cannot know at decision time, drawn from the site's history.

Nothing here looks at the future: a ``History`` holds only jobs that had *finished* by the
snapshot's time (sacct, or a trace replayed up to that moment), and every draw comes from it.

* ``RuntimeModel``: a job's actual runtime is its time limit times a ratio drawn from the
  ratios (actual / requested) of the same user's finished jobs, or of everyone's when the
  user has fewer than ``min_jobs``. A running job's draw is conditioned on the time it has
  already run: only ratios that would still have it running are eligible.
* ``ArrivalSampler``: the jobs submitted over the horizon, by Lelong et al.'s user-week
  resampling (§4.1): every user of the recent weeks contributes the submissions of one of
  their weeks drawn at random (a week they were idle contributes nothing), shifted to start
  at the snapshot's time. Resampled jobs keep their own limit, size and actual runtime.

``draw_sample`` puts both together into one ``FutureSample``; its seed alone decides it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from advisor.whatif.trace_accounts import account_names, memory_per_cpu
from advisor.model import (ACCOUNTING_COLUMNS, EFFICIENCY, HISTORY_COLUMNS, SECONDS_PER_WEEK,
                           Job, Snapshot, Workload, job_limit)

#: users with fewer finished jobs than this borrow everyone's ratios
MIN_JOBS = 5
#: ids of sampled arrivals start here, far above any real job id
ARRIVAL_ID0 = 1 << 40


def history_from_workload(workload: Workload, until: int, exclude: set[int] = frozenset(),
                          partition: str = "") -> pd.DataFrame:
    """The jobs of a trace that finished by ``until`` (the trace's clock), leaving out
    ``exclude`` (the snapshot's running and pending jobs)."""
    jobs = workload.jobs
    end = jobs["submit"] + jobs["wait"].clip(lower=0) + jobs["runtime"].clip(lower=0)
    done = (jobs["submit"] <= until) & ~jobs["job_id"].isin(list(exclude))
    done &= (jobs["runtime"] >= 0) & ((jobs["wait"] < 0) | (end <= until))
    past = jobs[done]
    known = (past["avg_cpu"] >= 0) & (past["runtime"] > 0)
    efficiency = (past["avg_cpu"] / past["runtime"].where(known)).clip(0.0, 1.0)
    return pd.DataFrame({
        "user": past["user"].astype(str), "submit": past["submit"],
        "runtime": past["runtime"], "limit": past["req_time"], "cpus": past["procs"],
        "nodes": past["procs"], "partition": partition,
        EFFICIENCY: efficiency,
        # what each job asked beside CPUs (ACCOUNTING_COLUMNS): its group as its account,
        # SWF field 10 as its memory per CPU
        "account": account_names(past["group"].to_numpy()), "qos": "", "mem_per_node": 0,
        "mem_per_cpu": memory_per_cpu(past["req_mem"].to_numpy()), "gpus": 0,
    }).reset_index(drop=True)


class RuntimeModel:
    """Actual/requested runtime ratios from history, per user with a population fallback."""

    def __init__(self, history: pd.DataFrame, min_jobs: int = MIN_JOBS):
        known = history[(history["limit"] > 0) & (history["runtime"] >= 0)]
        ratio = np.clip(known["runtime"].to_numpy(float) / known["limit"].to_numpy(float),
                        0.0, 1.0)  # Slurm ends a job at its limit: overruns count as 1
        self.population = np.sort(ratio)
        self.by_user = {}
        for user, idx in known.groupby("user").indices.items():
            if len(idx) >= min_jobs:
                self.by_user[str(user)] = np.sort(ratio[idx])

    def draw(self, user: str, limit: int, elapsed: int, rng: np.random.Generator) -> int:
        """A total runtime in (elapsed, limit] for a job that has run ``elapsed`` seconds.
        With no ratio that keeps it running, the job runs to its limit."""
        if limit <= 0:
            return max(elapsed + 1, 1)
        for ratios in (self.by_user.get(user), self.population):
            if ratios is None or len(ratios) == 0:
                continue
            # ratios r with r * limit > elapsed: the job has not ended yet
            k = int(np.searchsorted(ratios, elapsed / limit, side="right"))
            if k < len(ratios):
                r = ratios[k + int(rng.integers(len(ratios) - k))]
                return int(min(max(int(np.ceil(r * limit)), elapsed + 1, 1), limit))
        return int(max(limit, elapsed + 1))


class ArrivalSampler:
    """Lelong et al.'s user-week resampling over the ``weeks`` whole weeks before ``now``."""

    def __init__(self, history: pd.DataFrame, now: int, weeks: int = 4):
        self.now = now
        self.weeks = max(1, weeks)
        begin = now - self.weeks * SECONDS_PER_WEEK
        recent = history[(history["submit"] >= begin) & (history["submit"] < now)]
        recent = recent.sort_values(["submit"], kind="mergesort")
        week = ((recent["submit"] - begin) // SECONDS_PER_WEEK).to_numpy()
        self.offset = (recent["submit"] - begin).to_numpy() - week * SECONDS_PER_WEEK
        self.cols = {c: recent[c].to_numpy() for c in HISTORY_COLUMNS}
        # (a live cluster's history: each drawn job asks what its original asked)
        self.asks = {c: recent[c].to_numpy() for c in ACCOUNTING_COLUMNS if c in recent}
        self.cells = {}
        groups = recent.assign(week=week).reset_index(drop=True).groupby(["user", "week"])
        for (user, w), idx in groups.indices.items():
            self.cells[(str(user), int(w))] = idx
        self.users = sorted({u for u, _ in self.cells})

    def draw(self, horizon: int, rng: np.random.Generator
             ) -> tuple[list[Job], dict[int, int]]:
        """The jobs submitted in (now, now + horizon] and their actual runtimes: one drawn
        week per user per week of horizon."""
        out = []
        for block in range(-(-horizon // SECONDS_PER_WEEK)):
            weeks = rng.integers(self.weeks, size=len(self.users))
            for user, w in zip(self.users, weeks):
                for i in self.cells.get((user, int(w)), ()):
                    submit = self.now + block * SECONDS_PER_WEEK + int(self.offset[i]) + 1
                    if submit <= self.now + horizon:
                        out.append((submit, user, i))
        out.sort()
        c = self.cols
        jobs, runtimes = [], {}
        for k, (submit, user, i) in enumerate(out):
            limit = int(c["limit"][i]) if c["limit"][i] > 0 else None
            part = str(c["partition"][i])
            jobs.append(Job(job_id=ARRIVAL_ID0 + k, user=user, partition=part,
                            partitions=(part,), cpus=int(c["cpus"][i]), state="PENDING",
                            submit_time=submit, eligible_time=submit, time_limit=limit,
                            nodes=int(c["nodes"][i]), **self._asks(i)))
            runtimes[ARRIVAL_ID0 + k] = int(c["runtime"][i])
        return jobs, runtimes

    def _asks(self, i: int) -> dict:
        return job_asks(self.asks, i)


def job_asks(asks: dict[str, np.ndarray], i: int) -> dict:
    """What history job i asked beside CPUs (account, QOS, memory, GPUs: ``asks``, the
    history's ``ACCOUNTING_COLUMNS`` as arrays), as Job fields; nothing for a history
    without those columns."""
    if len(asks) < len(ACCOUNTING_COLUMNS):
        return {}
    gpus = int(asks["gpus"][i])
    return {"account": str(asks["account"][i]), "qos": str(asks["qos"][i]),
            "memory_per_node": int(asks["mem_per_node"][i]),
            "memory_per_cpu": int(asks["mem_per_cpu"][i]),
            "gres_per_node": {"gpu": gpus} if gpus > 0 else {}}


@dataclass(frozen=True)
class FutureSample:
    """One possible future: every job's actual runtime, and the jobs yet to arrive."""

    seed: int
    runtimes: dict[int, int]
    arrivals: tuple[Job, ...]


def draw_sample(snapshot: Snapshot, history: pd.DataFrame, horizon: int, seed: int,
                runtimes: RuntimeModel | None = None,
                arrivals: ArrivalSampler | None = None) -> FutureSample:
    """The runtimes of the snapshot's jobs and the arrivals over ``horizon``, all drawn with
    ``seed``; a job's runtime is at most the limit Slurm plans with (``job_limit``)."""
    rng = np.random.default_rng(seed)
    runtimes = runtimes or RuntimeModel(history)
    arrivals = arrivals or ArrivalSampler(history, snapshot.time)
    out = {}
    for job in (*snapshot.running, *snapshot.pending):
        elapsed = snapshot.time - job.start_time if job.state == "RUNNING" else 0
        out[job.job_id] = runtimes.draw(job.user, job_limit(job, snapshot.machine),
                                        max(elapsed, 0), rng)
    default = snapshot.machine.default_partition
    default = default.name if default else ""
    names = {p.name for p in snapshot.machine.partitions}
    new, new_runtimes = arrivals.draw(horizon, rng)
    # a partition that no longer exists (or a trace's): the default partition
    new = [j if j.partition in names else replace(j, partition=default, partitions=(default,))
           for j in new]
    out.update(new_runtimes)
    return FutureSample(seed, out, tuple(new))

