"""A cluster's state at a moment of its past, rebuilt from its job log, and what followed.

The jobs running at the moment (started before it, ended after it) keep their start times;
the jobs pending then (submitted before it, started after it or never) their submit and
eligible times; the jobs submitted after it arrive as they did, each with the runtime it
really had. The machine and the configuration are the ones given (a live cluster's now,
or a slurm.conf file's): the log does not say what they were then, and a check names
what it can find of a change (``advisor.whatif.sitecheck``).

Fair share is rebuilt from the same log and the decay (``usage_at``): each job's billable
TRES charged second by second as it ran, decayed to the moment by PriorityDecayHalfLife
as slurmctld's decay thread does, from the usage sshare reports now backwards (every
job that ran since the moment is in the log), or forwards from the last usage reset (or
the log's first job) where sshare's figure cannot be carried back over a reset.

What the log holds that cannot be played is left out and counted by what it is (a job
cancelled before it started, a job in an advanced reservation, a job larger than its
partition). A trace from a Slurm-run site is read as its log (``trace_job_log``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import pandas as pd

from advisor.engine.slurm_fairshare import (decay_per_second, fair_tree_factors,
                                            last_boundary)
from advisor.engine.slurm_fairshare import played as fairshare_played
from advisor.errors import BadInput
from advisor.units import format_duration
from advisor.model import (RESET_PERIODS, Accounting, Cluster, Job, JobLog, Snapshot,
                           SchedulingConfig, Workload, job_log_table, planned_limit)
from advisor.whatif.trace_accounts import account_names, memory_per_cpu

#: a job's row read as never started: no start logged
NEVER = -1
#: the least of a usage's decay between sshare's reading and the moment carried over
CARRIED = 1e-9
#: SWF's status of a cancelled job
SWF_CANCELLED = 5
#: how long after a window the jobs submitted in it are followed: a job that started
#: later is not judged (a replay would play every job submitted until it started)
REACH = 86400


@dataclass(frozen=True)
class PastState:
    """The state at ``snapshot.time`` and what followed: the jobs submitted after it
    (``arrivals``), every job's runtime by id, the jobs a replay is judged on (pending then
    or submitted by the window's end, with a real start), and the jobs left out, by what
    they are."""

    snapshot: Snapshot
    arrivals: tuple[Job, ...]
    runtimes: dict[int, int]
    judged: tuple[int, ...]
    left_out: dict[str, tuple[int, ...]]


class _Rows(NamedTuple):
    """Which of a log's rows run at a moment, wait, arrive after it, are judged, and are
    left out (cancelled before they started, in a reservation, started past the reach)."""

    running: np.ndarray
    waiting: np.ndarray
    arriving: np.ndarray
    judged: np.ndarray
    cancelled: np.ndarray
    reserved: np.ndarray
    too_late: np.ndarray


def _rows_at(jobs: pd.DataFrame, at: int, until: int, judge_pending: bool,
             reach: int) -> _Rows:
    start, end, submit = (jobs[c].to_numpy(np.int64) for c in ("start", "end", "submit"))
    started = start >= 0
    running = started & (start <= at) & ((end > at) | (end < 0))
    gone = ~started & (end >= 0) & (end <= at)       # cancelled before the moment
    waiting = (submit <= at) & (~started | (start > at)) & ~gone
    reserved = (jobs["reservation"] != "").to_numpy()
    candidates = ((waiting & judge_pending) | ((submit > at) & (submit <= until))) & \
        started & ~reserved
    judged = candidates & (start <= until + reach)
    horizon = max(until, int(start[judged].max()) if judged.any() else until)
    arriving = (submit > at) & (submit <= horizon)
    return _Rows(running, waiting, arriving, judged,
                 (waiting | arriving) & ~started & (end >= 0),
                 (waiting | arriving | running) & reserved,
                 candidates & (start > until + reach))


def state_at(log: JobLog, at: int, until: int, cluster: Cluster, config: SchedulingConfig,
             accounting: Accounting = Accounting(), decay_ran: int | None = None,
             judge_pending: bool = True, reach: int = REACH,
             usage_known_at: int | None = None) -> PastState:
    """The state at ``at`` and the jobs submitted after it, judged on those submitted by
    ``until`` (and, with ``judge_pending``, those pending at ``at``) that started by
    ``reach`` after it; arrivals until the last of their real starts (each judged job
    meets the competition it met). ``accounting``'s usage was read at
    ``usage_known_at`` (default: the log's reading)."""
    jobs = log.jobs
    r = _rows_at(jobs, at, until, judge_pending, reach)
    ids = jobs["job_id"].to_numpy(np.int64)
    out: dict[str, tuple[int, ...]] = {}
    _left_out(out, "jobs cancelled before they started (left out)", ids[r.cancelled])
    _left_out(out, f"jobs that started over {format_duration(reach)} after the window "
                   "(not judged)", ids[r.too_late])
    _left_out(out, "jobs in an advanced reservation (left out)", ids[r.reserved])
    rows = jobs[(r.running | r.waiting | r.arriving) & ~r.cancelled & ~r.reserved]
    parts, fits, moved = _partitions(rows, cluster)
    played_ids = rows["job_id"].to_numpy(np.int64)
    _left_out(out, "jobs larger than their partition (left out)", played_ids[~fits])
    default = cluster.default_partition.name if cluster.default_partition else "-"
    _left_out(out, "jobs in a partition the configuration does not have (played in "
                   f"{default})", played_ids[moved & fits])
    rows, parts = rows[fits], [p for p, ok in zip(parts, fits) if ok]
    made = [_job(row, p, at) for row, p in zip(rows.itertuples(index=False), parts)]
    runtimes = {j.job_id: _runtime(row, j, cluster, log.read_at)
                for j, row in zip(made, rows.itertuples(index=False))}
    judged = tuple(int(i) for i in ids[r.judged] if int(i) in runtimes)
    snapshot = Snapshot(
        time=at, machine=cluster,
        running=tuple(j for j in made if j.state == "RUNNING"),
        pending=tuple(j for j in made if j.state == "PENDING" and j.submit_time <= at),
        config=config, source={"kind": "past", "log": log.source, "at": str(at)},
        accounting=replace(fair_share_at(log, accounting, config, at, decay_ran,
                                         usage_known_at),
                           decay_ran=decay_ran, last_reset=None) if accounting else
        accounting)
    arrivals = tuple(j for j in made if j.submit_time > at)
    return PastState(snapshot, arrivals, runtimes, judged, out)


def _left_out(out: dict[str, tuple[int, ...]], what: str, ids: np.ndarray) -> None:
    if len(ids):
        out[what] = tuple(int(i) for i in ids)


def _partitions(rows: pd.DataFrame, cluster: Cluster):
    """Each job's partitions that the cluster has (its default where it has none of
    them), whether the job fits the largest of them, and whether it was moved."""
    sizes = cluster.partition_sizes
    default = cluster.default_partition.name if cluster.default_partition else ""
    parts, fits, moved = [], [], []
    for text, cpus in zip(rows["partition"].to_numpy(), rows["cpus"].to_numpy()):
        asked = tuple(p for p in str(text).split(",") if p in sizes)
        moved.append(not asked)
        asked = asked or ((default,) if default else ())
        parts.append(asked)
        fits.append(bool(asked) and int(cpus) <= max(sizes[p][0] for p in asked))
    return parts, np.array(fits, bool), np.array(moved, bool)


def _job(r, partitions: tuple[str, ...], at: int) -> Job:
    """A log's row as the scheduler saw the job at ``at``."""
    running = 0 <= r.start <= at
    return Job(
        job_id=int(r.job_id), user=r.user or "root", partition=partitions[0],
        cpus=max(int(r.cpus), 1), state="RUNNING" if running else "PENDING",
        submit_time=int(r.submit), time_limit=None if r.limit < 0 else int(r.limit),
        nodes=max(int(r.nodes), 1), account=r.account, qos=r.qos,
        partitions=() if running else partitions,
        eligible_time=int(r.eligible) if r.eligible >= 0 else int(r.submit),
        start_time=int(r.start) if running else None,
        elapsed=at - int(r.start) if running else None,
        node_list=tuple(n for n in r.node_list.split(",") if n) if running else (),
        memory_per_node=int(r.mem_per_node), memory_per_cpu=int(r.mem_per_cpu),
        gres_per_node={"gpu": int(r.gpus)} if r.gpus > 0 else {},
        features=r.features)


def _runtime(r, job: Job, cluster: Cluster, read_at: int) -> int:
    """What the job ran: its logged run; a second past the log's reading for one still
    running then; its planned limit for one not started then."""
    if r.start >= 0 and r.end >= 0:
        return max(int(r.end - r.start), 0)
    if r.start >= 0:
        return max(read_at - int(r.start), 0) + 1
    return planned_limit(job.time_limit, cluster.partition(job.partition))


# ------------------------------------------------------------------ fair share, rebuilt
def fair_share_at(log: JobLog, accounting: Accounting, config: SchedulingConfig, at: int,
                  decay_ran: int | None = None, known_at: int | None = None) -> Accounting:
    """The associations as slurmctld held them at ``at``: their usage then (``usage_at``),
    and each user's factor as its decay thread's last pass before ``at`` computed it,
    from the usage of that pass (at ``decay_ran`` and every PriorityCalcPeriod from it;
    at multiples of the period where that is not known, as the slurm mode plays the
    passes). Where fair share is not played, the usage alone."""
    now = usage_at(log, accounting, config, at, known_at)
    if not fairshare_played(config, accounting):
        return now
    period = max(config.priority_calc_period, 1)
    phase = decay_ran or 0
    last = phase + (at - phase) // period * period
    factors = fair_tree_factors(usage_at(log, accounting, config, last, known_at))
    return replace(now, associations=tuple(
        replace(a, fairshare=factors.get((a.account, a.user), -1.0)) if a.user else a
        for a in now.associations))


def usage_at(log: JobLog, accounting: Accounting, config: SchedulingConfig, at: int,
             known_at: int | None = None) -> Accounting:
    """``accounting`` with each association's raw usage at ``at`` (its factor now
    unknown: Fair Tree computes it). From sshare's usage read at ``known_at`` (default:
    the log's reading), carried back or forward by the log's jobs and the decay, unless a
    usage reset falls between; else forwards from the last reset before ``at`` (or the
    log's first job)."""
    known_at = log.read_at if known_at is None else known_at
    period = config.priority_usage_reset_period
    resets = period in RESET_PERIODS[2:]
    reset = last_boundary(period, at, config.utc_offset) if resets else None
    reset_between = resets and last_boundary(period, max(at, known_at),
                                             config.utc_offset) > min(at, known_at)
    have_now = any(a.raw_usage > 0 for a in accounting.associations)
    decay = decay_per_second(config.priority_decay_half_life)
    # usage carried back over tens of half-lives would undo a decay of 1e-9 and more, and
    # a float's rounding with it: the usage then is the log's alone
    have_now = have_now and decay ** abs(known_at - at) > CARRIED
    if have_now and not reset_between and known_at >= at:
        charged = _charged(log, accounting, at, known_at, decay)
        back = decay ** (known_at - at)
        usage = {k: max(a.raw_usage - charged.get(k, 0.0), 0.0) / back
                 for k, a in _keyed(accounting)}
    elif have_now and not reset_between:
        charged = _charged(log, accounting, known_at, at, decay)
        usage = {k: a.raw_usage * decay ** (at - known_at) + charged.get(k, 0.0)
                 for k, a in _keyed(accounting)}
    else:
        begin = reset if reset is not None else int(log.jobs["submit"].min()) \
            if len(log) else at
        charged = _charged(log, accounting, begin, at, decay)
        usage = {k: charged.get(k, 0.0) for k, _ in _keyed(accounting)}
    return replace(accounting, associations=tuple(
        replace(a.with_usage(usage[k]), fairshare=-1.0) for k, a in _keyed(accounting)))


def _keyed(accounting: Accounting):
    return [((a.account, a.user), a) for a in accounting.associations]


def _charged(log: JobLog, accounting: Accounting, begin: int, end: int,
             decay: float) -> dict[tuple[str, str], float]:
    """Usage the log's jobs added between ``begin`` and ``end``, decayed to ``end``, by
    (account, user), each account's the sum of all below it."""
    jobs = log.jobs
    start = jobs["start"].to_numpy(np.float64)
    stop = np.where(jobs["end"].to_numpy() >= 0, jobs["end"].to_numpy(), log.read_at)
    a, b = np.maximum(start, begin), np.minimum(stop.astype(np.float64), end)
    ran = (start >= 0) & (b > a)
    if decay < 1.0:
        k = -math.log(decay)
        weight = (np.power(decay, end - b) - np.power(decay, end - a)) / k
    else:
        weight = b - a
    amount = np.where(ran, weight, 0.0) * jobs["billing"].to_numpy(np.float64)
    frame = pd.DataFrame({"account": jobs["account"], "user": jobs["user"],
                          "amount": amount})
    by_user = frame[ran].groupby(["account", "user"])["amount"].sum()
    parent = {a.account: a.parent for a in accounting.associations if not a.user}
    out: dict[tuple[str, str], float] = {}
    for (account, user), value in by_user.items():
        out[(account, user)] = out.get((account, user), 0.0) + float(value)
        seen = set()
        while account and account not in seen:       # (a loop in the tree must end)
            seen.add(account)
            out[(account, "")] = out.get((account, ""), 0.0) + float(value)
            account = parent.get(account, "")
    return out


# ------------------------------------------------------------------ a trace as a log
def trace_job_log(workload: Workload, epoch: bool = True) -> JobLog:
    """A trace as the job log of the site that ran it: times on the epoch of its
    UnixStartTime (0 without; ``epoch=False``: on its own clock, as a trace's snapshots
    are), partitions by the names of its header's legend, groups as
    accounts (``g12``). A job that ran no second and was cancelled, or had no
    processor, never started: the SWF converters log a job cancelled while it waited so,
    with its wait up to the cancel (docs/check.md). A job without a logged wait is left
    out, and the log says so."""
    jobs = workload.jobs
    logged = jobs["wait"].to_numpy() >= 0
    if not logged.any():
        raise BadInput(f"{workload.source or 'the trace'} logs no start time (SWF field 3, "
                       f"the wait, is -1 for all {len(jobs)} jobs): there is nothing to "
                       "compare a simulation with; take a log that has them")
    jobs = jobs[logged]
    t0 = (workload.header.unix_start_time or 0) if epoch else 0
    names = workload.header.partition_names
    submit = jobs["submit"].to_numpy(np.int64) + t0
    never = ((jobs["runtime"] <= 0) & ((jobs["alloc_procs"] <= 0) |
                                       (jobs["status"] == SWF_CANCELLED))).to_numpy()
    start = submit + jobs["wait"].to_numpy(np.int64)
    alloc = jobs["alloc_procs"].to_numpy(np.int64)
    cpus = np.where(alloc > 0, alloc, jobs["procs"].to_numpy(np.int64))
    limit = jobs["req_time"].to_numpy(np.int64)
    n = len(jobs)
    table = job_log_table({
        "job_id": jobs["job_id"].to_numpy(np.int64), "user": jobs["user"].astype(str),
        "account": account_names(jobs["group"].to_numpy()), "qos": "",
        "partition": [names.get(p, str(p)) if p >= 0 else ""
                      for p in jobs["partition"].tolist()],
        "submit": submit, "eligible": submit, "start": np.where(never, NEVER, start),
        "end": np.where(never, start, start + jobs["runtime"].to_numpy(np.int64)),
        "state": np.where(never, "CANCELLED", "COMPLETED"), "cpus": cpus,
        "nodes": np.ones(n, np.int64), "node_list": "",
        "limit": np.where(limit < 0, -1, -(-limit // 60) * 60),
        "mem_per_node": 0, "mem_per_cpu": memory_per_cpu(jobs["req_mem"].to_numpy()),
        "gpus": 0, "billing": cpus, "features": "", "reservation": "", "backfilled": False,
        "requeued": 0, "reason": ""})
    dropped = int(n and len(workload.jobs) - n)
    notes = (f"{dropped} jobs without a logged wait (SWF field 3 -1) left out",) \
        if dropped else ()
    return JobLog(table, read_at=int(table["end"].max()) if n else t0,
                  source=workload.source, zone=workload.header.time_zone_string,
                  notes=notes)
