"""Named cleaning rules for a Workload; each one is counted in a CleaningReport.

The rules run in the order below, so a job is counted under the first rule that removes it.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from advisor.errors import BadInput
from advisor.model import CleaningReport, Workload


@dataclass(frozen=True)
class CleaningOptions:
    #: non-positive size or negative (missing) runtime: such a job cannot be simulated.
    drop_invalid: bool = True
    #: requested or allocated processors above the machine's (Lelong et al. §7.2's filter).
    drop_oversize: bool = False
    #: actual runtime above the requested time (Lelong et al. §7.2's filter, "p~_j < p_j").
    drop_overruns: bool = False


def _invalid(jobs: pd.DataFrame, procs: int) -> pd.Series:
    return (jobs["procs"] <= 0) | (jobs["runtime"] < 0)


def _oversize(jobs: pd.DataFrame, procs: int) -> pd.Series:
    return (jobs["req_procs"] > procs) | (jobs["alloc_procs"] > procs) | (jobs["procs"] > procs)


def _overruns(jobs: pd.DataFrame, procs: int) -> pd.Series:
    return (jobs["req_time"] >= 0) & (jobs["runtime"] > jobs["req_time"])


RULES = (("invalid", "drop_invalid", _invalid),
         ("oversize", "drop_oversize", _oversize),
         ("overruns", "drop_overruns", _overruns))


def clean(workload: Workload, options: CleaningOptions) -> Workload:
    """Apply the enabled rules; the report counts the jobs each rule removed."""
    jobs = workload.jobs
    removed: dict[str, int] = {}
    for name, flag, rule in RULES:
        if getattr(options, flag):
            mask = rule(jobs, workload.machine.procs)
            removed[name] = int(mask.sum())
            jobs = jobs[~mask]
    report = CleaningReport(jobs_read=len(workload.jobs), removed=removed)
    return workload.with_jobs(jobs, cleaning=report)


def trace_window(workload: Workload, since: int | None = None, until: int | None = None,
                 load: float = 1.0) -> Workload:
    """The jobs submitted in [since, until) (the trace's clock; None: its ends), their
    inter-arrival times divided by ``load`` (> 1 raises the offered load: a log without a
    queue says nothing about a scheduler). Sizes and runtimes are kept."""
    if not load > 0:
        raise BadInput("--load must be a positive factor (1.2: arrivals 1.2 times as dense)")
    jobs = workload.jobs
    keep = pd.Series(True, index=jobs.index)
    if since is not None:
        keep &= jobs["submit"] >= since
    if until is not None:
        keep &= jobs["submit"] < until
    jobs = jobs[keep]
    if jobs.empty:
        raise BadInput("no job of the trace is submitted in the window; widen --since/--until")
    if load != 1.0:
        t0 = int(jobs["submit"].min())
        jobs = jobs.assign(submit=t0 + ((jobs["submit"] - t0) / load).round().astype("int64"))
    return workload.with_jobs(jobs)
