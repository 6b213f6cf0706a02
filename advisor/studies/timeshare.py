"""A time-sliced partition over a trace: the what-if of seed 003 at job level.

The machine is split: ``share`` of its processors become a gang-scheduled partition
(OverSubscribe=FORCE:mpl, SchedulerTimeSlice ``slice_s``; advisor.engine.gang) and the rest
stays a space-shared partition under EASY-FCFS (the textbook engine). job_submit.lua sends
the jobs of the routed users (their class by CPU efficiency, studies.share_classes) to the
time-sliced partition when they fit there; every other job stays space-shared, and a job
too wide for its side goes to the other if it fits there. The baseline is EASY-FCFS on the
whole machine. Both play the same jobs from an empty machine.

A user's class comes from their jobs submitted before the window (what a site would know
then); with no window start, from the whole trace, in hindsight (the study says which).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from advisor.engine import EngineConfig, Estimates, job_arrays, run
from advisor.engine.gang import run_gang
from advisor.errors import BadInput
from advisor.model import Workload
from advisor.studies.plans import month_of
from advisor.studies.share_classes import CLASSES, ClassRule, user_classes

BOUND = 10.0          # seconds: bounded slowdown's floor on the runtime


@dataclass(frozen=True)
class TimeShare:
    share: float = 0.25          # of the processors, to the time-sliced partition
    mpl: int = 2                 # OverSubscribe=FORCE:mpl
    slice_s: float = 30.0        # SchedulerTimeSlice (Slurm's default)
    switch_s: float = 0.5        # progress lost at each switch of a shared node
    route: tuple[str, ...] = ("DC",)

    def __post_init__(self):
        if not 0.0 < self.share < 1.0:
            raise BadInput(f"share={self.share}: give the time-sliced partition a fraction "
                           "of the machine strictly between 0 and 1")
        if not 2 <= self.mpl <= 16:
            raise BadInput(f"mpl={self.mpl}: time sharing needs 2 to 16 jobs per node")
        if self.slice_s < 5 or not 0 <= self.switch_s < self.slice_s:
            raise BadInput("the time slice is at least 5 s (Slurm's minimum) and the switch "
                           "shorter than it")
        if not self.route or set(self.route) - set(CLASSES):
            raise BadInput(f"route={'+'.join(self.route)}: name classes among CS, F, DC")


@dataclass(frozen=True)
class TimeShareStudy:
    trace: str
    window: tuple[str, str]
    setting: TimeShare
    hindsight: bool              # user classes from the whole trace
    partition_cpus: tuple[int, int]     # (time-sliced, space-shared)
    jobs: pd.DataFrame           # per job: side, baseline and split start/end

    def metrics(self) -> pd.DataFrame:
        """Per group (all, routed, the others) and layout: jobs, mean wait, mean response,
        mean bounded slowdown (runtime floored at 10 s)."""
        rows = []
        j = self.jobs
        groups = {"all jobs": np.ones(len(j), bool), "time-sliced": j.side == "shared",
                  "space-shared": j.side == "space"}
        for group, mask in groups.items():
            part = j[mask]
            for layout in ("baseline", "split"):
                wait = part[f"{layout}_start"] - part.submit
                response = part[f"{layout}_end"] - part.submit
                bsld = np.maximum(response / np.maximum(part.runtime, BOUND), 1.0)
                rows.append({"group": group, "layout": layout, "jobs": int(len(part)),
                             "mean_wait": float(wait.mean()) if len(part) else 0.0,
                             "mean_response": float(response.mean()) if len(part) else 0.0,
                             "mean_bsld": float(bsld.mean()) if len(part) else 0.0})
        return pd.DataFrame(rows)

    def as_dict(self) -> dict:
        s = self.setting
        return {"trace": self.trace, "window": list(self.window), "hindsight": self.hindsight,
                "setting": {"share": s.share, "mpl": s.mpl, "slice_s": s.slice_s,
                            "switch_s": s.switch_s, "route": list(s.route)},
                "partition_cpus": {"time_sliced": self.partition_cpus[0],
                                   "space_shared": self.partition_cpus[1]},
                "metrics": self.metrics().to_dict(orient="records")}


def timeshare_study(workload: Workload, setting: TimeShare = TimeShare(),
                    since: int | None = None, until: int | None = None,
                    rule: ClassRule = ClassRule(),
                    estimates: Estimates = Estimates()) -> TimeShareStudy:
    jobs = workload.jobs
    lo = int(jobs.submit.min()) if since is None else since
    hi = int(jobs.submit.max()) + 1 if until is None else until
    inside = ((jobs.submit >= lo) & (jobs.submit < hi)).to_numpy()
    if not inside.any():
        raise BadInput("no job is submitted in the window; widen --since/--until")
    hindsight = since is None
    history = jobs if hindsight else jobs[jobs.submit < lo]
    classes = user_classes(history, rule)
    if classes.empty:
        raise BadInput("no job before the window gives its CPU efficiency (SWF field 6), so "
                       "no user can be classed; start the window later or use a trace with "
                       "field 6")
    window = workload.with_jobs(jobs[inside])
    arrays = job_arrays(window, estimates)
    procs = workload.machine.procs
    g_cpus = max(1, int(round(setting.share * procs)))
    r_cpus = procs - g_cpus
    if r_cpus < 1:
        raise BadInput(f"share={setting.share} leaves no processor space-shared")
    routed = window.jobs["user"].map(classes).isin(setting.route).to_numpy()
    need = arrays.procs
    side = np.where(routed & (need <= g_cpus), "shared",
                    np.where(need <= r_cpus, "space", np.where(need <= g_cpus, "shared", "")))
    base_start, _ = run(arrays, EngineConfig(backfill="easy"))
    split_start = np.full(len(arrays), -1.0)
    split_end = np.full(len(arrays), -1.0)
    space = np.flatnonzero(side == "space")
    if len(space):
        part = arrays.take(space)
        s, _ = run(replace(part, machine=r_cpus), EngineConfig(backfill="easy"))
        split_start[space] = s
        split_end[space] = s + part.runtime
    shared = np.flatnonzero(side == "shared")
    if len(shared):
        part = arrays.take(shared)
        s, e = run_gang(part.submit, part.runtime, part.estimate, part.procs, g_cpus,
                        setting.mpl, setting.slice_s, setting.switch_s)
        split_start[shared], split_end[shared] = s, e
    table = pd.DataFrame({"submit": arrays.submit, "runtime": arrays.runtime,
                          "procs": arrays.procs, "side": side,
                          "baseline_start": base_start.astype(float),
                          "baseline_end": (base_start + arrays.runtime).astype(float),
                          "split_start": split_start, "split_end": split_end})
    table = table[table.side != ""].reset_index(drop=True)
    name = Path(workload.source).name if workload.source else workload.machine.name
    days = month_of(np.array([lo, hi - 1]), workload.header, "%Y-%m-%d")
    return TimeShareStudy(trace=name, window=(str(days[0]), str(days[1])), setting=setting,
                          hindsight=hindsight, partition_cpus=(g_cpus, r_cpus), jobs=table)
