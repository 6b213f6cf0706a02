"""The one data model every part of the advisor speaks.

A ``Workload`` is a table of jobs (pandas) plus the facts about the machine that ran them. Its
columns are the 18 fields of the Standard Workload Format (SWF, Parallel Workloads Archive),
named as below, with ``-1`` meaning "missing" exactly as in SWF, plus two derived columns the
simulator uses:

* ``procs``    = requested processors if > 0, else allocated processors;
* ``estimate`` = requested time if >= 0, else the actual runtime (the request is missing).

Times are integer seconds relative to the trace's start (SWF convention); the absolute
epoch of time 0 is ``TraceHeader.unix_start_time`` when the trace says it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

#: SWF fields in file order (SWF v2.2 definition).
SWF_FIELDS: tuple[str, ...] = (
    "job_id", "submit", "wait", "runtime", "alloc_procs", "avg_cpu", "used_mem",
    "req_procs", "req_time", "req_mem", "status", "user", "group", "app", "queue",
    "partition", "prev_job", "think_time",
)
#: Fields SWF allows to be fractional; every other field is an integer.
SWF_FLOAT_FIELDS = frozenset({"avg_cpu", "used_mem", "req_mem"})

SECONDS_PER_WEEK = 7 * 24 * 3600


@dataclass(frozen=True)
class TraceHeader:
    """What an SWF header says about the log. ``lines`` keeps every header line verbatim."""

    max_procs: int | None = None
    max_nodes: int | None = None
    unix_start_time: int | None = None
    time_zone_string: str | None = None
    notes: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class CleaningReport:
    """How many jobs each cleaning rule removed, in the order the rules ran."""

    jobs_read: int
    removed: dict[str, int] = field(default_factory=dict)

    @property
    def jobs_kept(self) -> int:
        return self.jobs_read - sum(self.removed.values())


@dataclass(frozen=True)
class Machine:
    """A homogeneous machine of ``procs`` processors (the textbook model of the papers)."""

    procs: int
    name: str = ""


@dataclass(frozen=True)
class Workload:
    """Jobs (one row each, sorted by submit time then job id) and the machine they ran on."""

    jobs: pd.DataFrame
    machine: Machine
    header: TraceHeader = TraceHeader()
    source: str = ""
    cleaning: CleaningReport | None = None

    def __len__(self) -> int:
        return len(self.jobs)

    def with_jobs(self, jobs: pd.DataFrame, **changes) -> "Workload":
        return replace(self, jobs=sort_jobs(jobs), **changes)


def sort_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """Submit order, ties by job id: the order the engine breaks every tie with."""
    return jobs.sort_values(["submit", "job_id"], kind="mergesort").reset_index(drop=True)


def derive_columns(jobs: pd.DataFrame) -> pd.DataFrame:
    """Add ``procs`` and ``estimate`` (see the module docstring) to an SWF table."""
    jobs = jobs.copy()
    jobs["procs"] = np.where(jobs["req_procs"] > 0, jobs["req_procs"], jobs["alloc_procs"])
    jobs["estimate"] = np.where(jobs["req_time"] >= 0, jobs["req_time"], jobs["runtime"])
    return jobs


def empty_jobs() -> pd.DataFrame:
    cols = {f: pd.Series(dtype="float64" if f in SWF_FLOAT_FIELDS else "int64")
            for f in SWF_FIELDS}
    return derive_columns(pd.DataFrame(cols))


def workload_from_records(records: list[dict], procs: int, name: str = "memory") -> Workload:
    """Build a Workload from a few hand-written jobs (tests, examples).

    Each record needs ``submit``, ``runtime`` and ``procs``; ``estimate`` defaults to the
    runtime, ``job_id`` to the position (1-based), ``user`` to 1; other SWF fields are -1.
    """
    rows = []
    for i, r in enumerate(records, start=1):
        row = {f: -1 for f in SWF_FIELDS}
        row.update(job_id=r.get("job_id", i), submit=r["submit"], runtime=r["runtime"],
                   req_procs=r["procs"], alloc_procs=r["procs"],
                   req_time=r.get("estimate", r["runtime"]), user=r.get("user", 1), wait=-1)
        rows.append(row)
    jobs = pd.DataFrame(rows, columns=list(SWF_FIELDS)) if rows else empty_jobs()
    for f in SWF_FIELDS:
        jobs[f] = jobs[f].astype("float64" if f in SWF_FLOAT_FIELDS else "int64")
    return Workload(jobs=sort_jobs(derive_columns(jobs)), machine=Machine(procs, name),
                    source=name)
