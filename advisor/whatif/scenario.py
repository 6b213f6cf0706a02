"""A scenario: (snapshot, candidate, future sample, horizon, seed) -> what would happen.

Every candidate is played on the same samples (a paired comparison). ``evaluate`` runs one
sample under every candidate of a batch, in the engine's slurm mode, from the snapshot's
exact state; it is pure (the sample's seed decided the sample) and is what the runner ships
to its workers.

Measured over the jobs the decision can still affect: those pending at the snapshot and
those arriving over the horizon (each job is followed until it starts, even after the
horizon). The average wait and slowdown count from submission; the p95 and maximum wait
(what the risk limits judge) count from the snapshot, or from submission if later: an old
job's past wait is the same under every candidate, and counted in, it would hide that a
candidate starves it further (a week-old job that FCFS starts at once and LCFS leaves for
days differs by days, not by a few per cent). Utilisation is over the horizon itself,
running jobs included.

``evaluate`` also returns each job's wait from the snapshot, as the p95 and maximum count
it (NaN if it never starts), in the same order for every candidate of a sample, and how
long each had waited by the snapshot, for ``tail_push`` (the recommender's per-job risk
limit, filled in by ``advisor.whatif.recommend``: one maximum compared with another can
hide that a candidate starves one particular job). Counted from submission, a job already
days old passed it while daily plans put it behind each new day's jobs: pushed one more
day, a 3-day-old job waits only 4/3 of its wait.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from advisor.engine.slurm import slurm_input, start_times, under_config
from advisor.engine.slurm_layout import CPUS, FIXED, LIMIT, RUNTIME, SUBMIT
from advisor.metrics import bounded_slowdown
from advisor.model import UNLIMITED_SECONDS, Job, Snapshot, job_limit
from advisor.plugins.enactment import JobColumns
from advisor.whatif.fairness import account_of, numbered_accounts, share_deviation
from advisor.whatif.candidates import Candidate
from advisor.whatif.futures import FutureSample

#: what each simulation reports, in this order (waits in seconds; p95 and max from the
#: snapshot, see above)
METRICS = ("avg_bsld", "avg_wait", "p95_wait", "max_wait", "utilization", "unstarted",
           "tail_push", "share_dev", "account_wait")
#: lower is better, except utilisation
HIGHER_IS_BETTER = frozenset({"utilization"})


@dataclass(frozen=True)
class Task:
    """One sample under a batch of candidates: the unit a worker runs."""

    snapshot: Snapshot
    candidates: tuple[Candidate, ...]
    sample: FutureSample
    horizon: int


class Outcome(NamedTuple):
    """What ``evaluate`` finds for one sample under a batch of candidates."""

    metrics: np.ndarray    # (candidates, len(METRICS))
    waits: np.ndarray      # (candidates, jobs) from the snapshot, float32, NaN: never starts
    ages: np.ndarray       # (jobs,) each job's wait before the snapshot (0: arrives later)
    accounts: np.ndarray   # (jobs,) each job's account, numbered as in the sample
    received: np.ndarray   # (candidates, accounts) CPU-seconds within the horizon
    shares: np.ndarray     # (accounts,) each numbered account's normalized share
    names: tuple[str, ...]  # each numbered account's name


def evaluate(task: Task) -> Outcome:
    """Every candidate of the task on its sample (``Outcome``)."""
    snap, sample = task.snapshot, task.sample
    base = slurm_input(snap, sample.runtimes, sample.arrivals, config=snap.config)
    pending = base.jobs[FIXED] < 0          # running jobs keep their start (FIXED)
    nice = nice_of(base, snap)
    out = np.zeros((len(task.candidates), len(METRICS)))
    waits = np.zeros((len(task.candidates), int(pending.sum())), np.float32)
    since = np.maximum(base.jobs[SUBMIT], snap.time)[pending]
    accounts, shares, names = account_columns(base, snap, sample.arrivals)
    received = np.zeros((len(task.candidates), len(names)))
    for c, cand in enumerate(task.candidates):
        inp = candidate_input(base, cand, snap, nice, sample.runtimes, sample.arrivals)
        start = candidate_starts(inp, cand, snap, sample.runtimes, sample.arrivals)
        used = cpu_seconds(inp, start, snap.time, task.horizon)
        out[c] = measure(inp, start, pending, snap.time, task.horizon, snap.machine.cpus,
                         used, accounts, shares)
        received[c] = np.bincount(accounts, weights=used, minlength=len(names))
        own = start[pending]
        waits[c] = np.where(own >= 0, own - since, np.nan)
    return Outcome(out, waits, (since - base.jobs[SUBMIT][pending]).astype(np.float64),
                   accounts[pending], received, shares, names)


def account_columns(base, snap: Snapshot, arrivals: Sequence[Job]
                    ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Each job's account (``fairness.account_of``) numbered, in ``base``'s order, each
    numbered account's normalized share, and its name."""
    by_id = {j.job_id: account_of(j) for j in (*snap.running, *snap.pending, *arrivals)}
    return numbered_accounts(snap.accounting, [by_id.get(int(i), "") for i in base.job_ids])


def tail_push(waits: np.ndarray, ref: int, allow: np.ndarray | None = None) -> np.ndarray:
    """Per candidate (rows of one sample's ``waits``): how much it pushes the job it delays
    most beyond the reference's worst wait, as that job's wait over its wait under the
    reference (0: no job waits longer than the reference's longest wait). A candidate
    that lets one job fall behind everything (a wide job under a short-first order) shows
    here, even when its maximum wait, another job's, looks like the reference's.
    ``allow``: per job, a wait from the snapshot it may reach without counting as pushed
    (the recommender's floor from history, less the job's age)."""
    worst = np.nanmax(waits[ref]) if np.isfinite(waits[ref]).any() else np.inf
    if allow is not None:
        worst = np.maximum(worst, allow)
    # a job the reference never starts counts as waiting forever: nothing can push it
    own = np.where(np.isnan(waits[ref]), np.inf, np.maximum(waits[ref], 60.0))
    cand = np.where(np.isnan(waits), np.inf, waits)
    ratio = np.where(cand > worst, cand / own, 0.0)
    return ratio.max(axis=1, initial=0.0)


def nice_of(base, snap: Snapshot) -> np.ndarray:
    """Each job's nice value, in ``base``'s job order (pending jobs may have one)."""
    return _pending_values(base, snap, lambda j: j.nice)


def _pending_values(inp, snap: Snapshot, value) -> np.ndarray:
    """``value(job)`` of each of ``snap``'s pending jobs, in ``inp``'s job order; 0 for
    the others (running, arriving)."""
    known = {j.job_id: value(j) for j in snap.pending}
    return np.array([known.get(int(i), 0) for i in inp.job_ids], np.float64)


def candidate_input(base, cand: Candidate, snap: Snapshot, nice: np.ndarray,
                    runtimes: Mapping[int, int] | None = None, arrivals: Sequence[Job] = ()):
    """The input ``base`` (built under the configuration in effect from ``snap``, with
    ``runtimes`` and ``arrivals``) under ``cand``: its configuration, and the site factor
    its job_submit.lua gives every job, less ``nice`` (``nice_of``). A candidate with a
    partition layout or a route is built anew on its machine, its jobs routed."""
    e = cand.enactment
    if e.partitions is not None or e.route is not None:
        arrivals = route_jobs(arrivals, snap, cand)
        snap = routed(snap, cand)
        # (_priced sets the priorities anew unless the candidate keeps them)
        base = slurm_input(snap, runtimes, arrivals, config=cand.config,
                           priorities=_keeps_priorities(cand))
    elif _keeps_priorities(cand):
        return base
    return priced(base, cand, snap, nice)


def _keeps_priorities(cand: Candidate) -> bool:
    """The candidate runs with the snapshot's own priorities: the configuration in effect,
    no site-factor rule."""
    return cand.is_current and cand.site is None


def priced(inp, cand: Candidate, snap: Snapshot, nice: np.ndarray):
    """``inp`` under the candidate's priorities: its configuration, its site factor (a
    change of settings alone: the jobs' own) less ``nice``."""
    if _keeps_priorities(cand):
        return inp
    site = np.zeros(len(inp))
    if cand.site is not None:
        site = cand.site.values(columns(inp), snap.time).astype(np.float64)
    elif cand.enactment.keeps_job_rules:
        site = own_site_factors(inp, snap)
    return under_config(inp, cand.config, snap.machine, site - nice)


def own_site_factors(inp, snap: Snapshot) -> np.ndarray:
    """Each job's site factor now (sprio's), in ``inp``'s order: a pending job keeps
    what the configuration in effect gave it, a new one gets none (as under the current
    candidate)."""
    return _pending_values(inp, snap, lambda j: j.priority_factors.get("site", 0.0))


def candidate_starts(inp, cand: Candidate, snap: Snapshot, runtimes: Mapping[int, int],
                     arrivals: Sequence[Job] = (), until: int | None = None) -> np.ndarray:
    """Each job's start under the candidate (``candidate_input``'s ``inp``), in its order:
    the slurm mode's, or its player's when a family plays a partition of its layout that
    the slurm mode does not (``Candidate.player``). With ``until``, the slurm mode's
    stop after that second (-1: not started by then; ``start_times``); a player's
    play to the end."""
    if cand.player is None:
        return start_times(inp, until)
    return cand.player.starts(inp, cand, snap, runtimes, arrivals, SLURM_PLAY)


class SlurmPlay:
    """What a family's player (``advisor.plugins.contract.Player``) asks of the slurm mode
    for the partitions it leaves to it."""

    @staticmethod
    def route(jobs: Sequence[Job], snap: Snapshot, cand: Candidate) -> tuple[Job, ...]:
        return route_jobs(jobs, snap, cand)

    @staticmethod
    def routed(snap: Snapshot, cand: Candidate) -> Snapshot:
        return routed(snap, cand)

    @staticmethod
    def starts(part: Snapshot, runtimes: Mapping[int, int], arrivals: Sequence[Job],
               cand: Candidate, snap: Snapshot) -> dict[int, int]:
        """Each job's start by id in ``part`` (a part of ``snap``, with ``arrivals``)
        under the candidate, priced as in ``candidate_input``."""
        inp = slurm_input(part, runtimes, arrivals, config=cand.config)
        inp = priced(inp, cand, part, nice_of(inp, snap))
        return dict(zip(inp.job_ids.tolist(), start_times(inp).tolist()))

    @staticmethod
    def in_order(inp, starts: Mapping[int, int]) -> np.ndarray:
        """``starts`` (by job id) in ``inp``'s order; a job running at the snapshot keeps
        its start, a job ``starts`` does not hold never starts (-1)."""
        out = inp.jobs[FIXED].copy()
        for k, job_id in enumerate(inp.job_ids.tolist()):
            if out[k] < 0:
                out[k] = starts.get(job_id, -1)
        return out


SLURM_PLAY = SlurmPlay()


def columns(inp) -> JobColumns:
    """A slurm-mode input's job columns a job rule reads."""
    jobs = inp.jobs
    return JobColumns(jobs[SUBMIT], jobs[LIMIT], jobs[CPUS], job_id=inp.job_ids)


def job_columns(jobs: Sequence[Job], snap: Snapshot) -> JobColumns:
    """The same columns for Job records (limits as Slurm plans them on ``snap``'s machine)."""
    return JobColumns(np.array([j.submit_time for j in jobs], np.int64),
                      np.array([job_limit(j, snap.machine) for j in jobs], np.int64),
                      np.array([j.cpus for j in jobs], np.int64),
                      np.array([",".join(j.asked) for j in jobs], object),
                      np.array([j.job_id for j in jobs], np.int64),
                      np.array([j.user for j in jobs], object),
                      np.array([j.qos for j in jobs], object))


def routed(snap: Snapshot, cand: Candidate) -> Snapshot:
    """``snap`` on the candidate's partition layout, its pending jobs sent where the
    candidate's route sends them. A running job keeps its partition when the layout has it,
    else takes the first one holding its first node."""
    e = cand.enactment
    machine = snap.machine.with_layout(e.partitions)
    names = {p.name for p in machine.partitions}

    def home(job: Job) -> Job:
        if job.partition in names:
            return job
        node = job.node_list[0] if job.node_list else None
        part = next((p.name for p in machine.partitions if node in p.nodes),
                    machine.partitions[0].name)
        return replace(job, partition=part, partitions=(part,))

    pending = route_jobs(snap.pending, snap, cand)
    return replace(snap, machine=machine, running=tuple(home(j) for j in snap.running),
                   pending=pending)


def route_jobs(jobs: Sequence[Job], snap: Snapshot, cand: Candidate) -> tuple[Job, ...]:
    """``jobs`` with the partitions the candidate's route gives them (unchanged: none). A
    job without a limit keeps the one its partition gave it (a route's job_submit.lua
    sets it), unless that is no limit at all."""
    rule = cand.enactment.route
    if rule is None or not jobs:
        return tuple(jobs)
    cols = job_columns(jobs, snap)
    where = [tuple(str(w).split(",")) for w in rule.values(cols, snap.time)]
    return tuple(replace(j, partition=w[0], partitions=w,
                         time_limit=j.time_limit if j.time_limit is not None or
                         limit >= UNLIMITED_SECONDS else int(limit))
                 for j, w, limit in zip(jobs, where, cols.limit))


def cpu_seconds(inp, start: np.ndarray, t0: int, horizon: int) -> np.ndarray:
    """Each job's CPU-seconds within the horizon from ``t0`` (0: never started)."""
    jobs = inp.jobs
    started = start >= 0
    end = np.where(started, start + np.minimum(jobs[RUNTIME], jobs[LIMIT]), t0)
    busy = np.clip(np.minimum(end, t0 + horizon) - np.maximum(np.where(started, start, t0),
                                                               t0), 0, None)
    return busy * jobs[CPUS]


def measure(inp, start: np.ndarray, pending: np.ndarray, t0: int, horizon: int,
            cpus: int, used: np.ndarray, accounts: np.ndarray | None = None,
            shares: np.ndarray | None = None) -> np.ndarray:
    """One row of METRICS for a simulated scenario (see the module docstring; ``used``:
    each job's ``cpu_seconds``); the fair-share deviation over ``accounts`` (each job's)
    with their ``shares`` (0 without them); the account wait is 1 here
    (``fairness.account_wait`` fills it in against the reference)."""
    jobs = inp.jobs
    started = start >= 0
    scope = pending & started
    wait = (start - jobs[SUBMIT])[scope]
    still = (start - np.maximum(jobs[SUBMIT], t0))[scope]
    runtime = np.minimum(jobs[RUNTIME], jobs[LIMIT])
    row = np.zeros(len(METRICS))
    if wait.size:
        row[0] = bounded_slowdown(wait, runtime[scope]).mean()
        row[1] = wait.mean()
        row[2] = np.percentile(still, 95)
        row[3] = still.max()
    row[4] = float(used.sum()) / max(cpus * horizon, 1)
    row[5] = int((pending & ~started).sum())
    if accounts is not None and shares is not None:
        row[7] = share_deviation(used, accounts, shares)
    row[8] = 1.0
    return row
