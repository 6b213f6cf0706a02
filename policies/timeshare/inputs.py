"""Which jobs would share CPUs: a job-level heuristic for Frachtenberg et al.'s classes.

Frachtenberg et al. classes *processes* by their communication granularity, measured inside MPI;
no site logs that. What a site has is each job's CPU efficiency: TotalCPU / (Elapsed x
AllocCPUS) in sacct, or the SWF's field 6 (average CPU time per processor) over the
runtime. A job whose CPUs sit idle much of the time leaves holes another job can fill when
the two share processors; one that keeps them busy gains nothing from sharing, and a
tightly coupled code that busy-waits looks busy too, so it is left dedicated either way.
The heuristic's classes (the paper's CS, F and DC stand behind them) are labelled as a
heuristic:

- busy, efficiency >= ``busy`` (default 0.9): keeps its CPUs busy: dedicated;
- mixed, between: loses part of its CPUs to waiting;
- idle, efficiency < ``idle`` (default 0.5): idle over half of its CPU time.

A job's class is known only after it ran, and job_submit.lua routes at submission, so the
routing unit is the user: a user's class is that of the median efficiency of their
finished jobs. A site that knows its codes tags jobs instead (a QOS or a comment).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from advisor.errors import BadInput
from advisor.model import EFFICIENCY, SECONDS_PER_WEEK, Workload

CLASSES = ("busy", "mixed", "idle")
#: the weeks of history a user's class is taken from
CLASS_WEEKS = 4
HEURISTIC = ("a job-level heuristic by CPU efficiency (Frachtenberg et al. class processes "
             "by how they communicate, which no log records)")


@dataclass(frozen=True)
class ClassRule:
    busy: float = 0.9            # at or above: busy
    idle: float = 0.5            # below: idle

    def __post_init__(self):
        if not 0.0 < self.idle <= self.busy <= 1.0:
            raise BadInput(f"class thresholds idle={self.idle}, busy={self.busy}: need "
                           "0 < idle <= busy <= 1 (efficiency is CPU time over allocated "
                           "CPU time)")

    def classify(self, efficiency: pd.Series) -> pd.Series:
        """busy, mixed or idle per job; empty where the efficiency is unknown."""
        e = efficiency.to_numpy(float)
        out = np.where(e >= self.busy, "busy", np.where(e < self.idle, "idle", "mixed"))
        return pd.Series(np.where(np.isnan(e), "", out), index=efficiency.index)


def cpu_efficiency(jobs: pd.DataFrame) -> pd.Series:
    """SWF field 6 (average CPU seconds per processor) over the runtime, clipped to [0, 1];
    NaN where either is missing or the job did not run."""
    known = (jobs["avg_cpu"] >= 0) & (jobs["runtime"] > 0)
    ratio = jobs["avg_cpu"] / jobs["runtime"].where(jobs["runtime"] > 0)
    return ratio.where(known).clip(0.0, 1.0)


def user_classes(jobs: pd.DataFrame, rule: ClassRule) -> pd.Series:
    """Each user's class: that of the median CPU efficiency of their jobs in ``jobs``."""
    return median_classes(jobs["user"], cpu_efficiency(jobs), rule)


def median_classes(user: pd.Series, efficiency: pd.Series, rule: ClassRule) -> pd.Series:
    """Each user's class by the median of their jobs' ``efficiency`` (NaN: unknown)."""
    known = efficiency.notna()
    return rule.classify(efficiency[known].groupby(user[known]).median())


def history_classes(history: pd.DataFrame | None, rule: ClassRule = ClassRule()
                    ) -> tuple[tuple[str, str], ...]:
    """(user, class) by the median CPU efficiency of each user's jobs in the history's last
    ``CLASS_WEEKS`` weeks; () when the history gives no efficiency."""
    if history is None or not len(history) or EFFICIENCY not in history:
        return ()
    submit = history["submit"].to_numpy(np.int64)
    recent = history[submit > submit.max() - CLASS_WEEKS * SECONDS_PER_WEEK]
    classes = median_classes(recent["user"].astype(str), recent[EFFICIENCY].astype(float),
                             rule)
    return tuple((str(u), str(c)) for u, c in classes.items() if c)


@dataclass(frozen=True)
class ClassShares:
    trace: str
    rule: ClassRule
    jobs: int
    known: int                   # jobs whose efficiency the trace gives
    shares: pd.DataFrame         # per class: jobs, share of jobs, CPU-hours, share of them
    users: pd.Series             # users per class (by their median efficiency)
    quartiles: tuple[float, float, float]

    def as_dict(self) -> dict:
        return {"trace": self.trace, "heuristic": HEURISTIC,
                "rule": {"busy": self.rule.busy, "idle": self.rule.idle},
                "jobs": self.jobs, "known": self.known,
                "efficiency_quartiles": list(self.quartiles),
                "classes": self.shares.reset_index().to_dict(orient="records"),
                "users": {k: int(v) for k, v in self.users.items()}}


def class_shares(workload: Workload, rule: ClassRule = ClassRule()) -> ClassShares:
    """The heuristic's classes over a trace: shares of jobs and of CPU-hours, and of users.
    A trace without field 6 is refused with a message saying so, rather than guessed."""
    jobs = workload.jobs
    efficiency = cpu_efficiency(jobs)
    known = efficiency.notna()
    name = Path(workload.source).name if workload.source else workload.machine.name
    if not known.any():
        raise BadInput(f"{name} gives no average CPU time (SWF field 6) for any job, so no "
                       "class can be told from it; tag jobs by QOS or comment instead")
    classes = rule.classify(efficiency)[known]
    cpu_hours = (jobs["runtime"] * jobs["procs"])[known] / 3600.0
    table = pd.DataFrame({"class": classes, "cpu_hours": cpu_hours})
    shares = table.groupby("class").agg(jobs=("cpu_hours", "size"),
                                        cpu_hours=("cpu_hours", "sum"))
    shares = shares.reindex(list(CLASSES), fill_value=0)
    shares["job_share"] = shares["jobs"] / max(int(known.sum()), 1)
    shares["cpu_hour_share"] = shares["cpu_hours"] / max(float(cpu_hours.sum()), 1e-9)
    users = user_classes(jobs, rule).value_counts().reindex(list(CLASSES), fill_value=0)
    q = efficiency[known].quantile([0.25, 0.5, 0.75]).to_numpy()
    return ClassShares(trace=name, rule=rule, jobs=len(jobs), known=int(known.sum()),
                       shares=shares, users=users, quartiles=tuple(float(x) for x in q))
