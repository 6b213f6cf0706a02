"""A time-sliced partition over a trace: the what-if of Frachtenberg et al. at job level.

The machine is split: ``share`` of its processors become a gang-scheduled partition
(OverSubscribe=FORCE:mpl, SchedulerTimeSlice ``slice_s``; ``kernel_gang``) and the rest
stays a space-shared partition under EASY-FCFS (the textbook engine). job_submit.lua sends
the jobs of the routed users (their class by CPU efficiency, ``inputs``) to the
time-sliced partition when they fit there; every other job stays space-shared, and a job
too wide for its side goes to the other if it fits there. The baseline is EASY-FCFS on the
whole machine. Both play the same jobs from an empty machine.

A user's class comes from their jobs submitted before the window (what a site would know
then); with no window start, from the whole trace, in hindsight (the study says which).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from advisor.engine import EngineConfig, Estimates, job_arrays, run
from advisor.policies.timeshare.kernel_gang import run_gang
from advisor.errors import BadInput
from advisor.model import Workload
from advisor.plugins.registry import registry
from advisor.units import month_of
from advisor.policies.timeshare.inputs import CLASSES, ClassRule, user_classes

BOUND = 10.0          # seconds: bounded slowdown's floor on the runtime


def gang_ranges() -> dict[str, tuple]:
    """timeshare/gang's parameters' (min, max), which the study takes as its own."""
    fields = dataclasses.fields(registry().plugin("timeshare", "gang").Params)
    return {f.name: (f.metadata.get("min"), f.metadata.get("max")) for f in fields}


@dataclass(frozen=True)
class TimeShare:
    """The split, in timeshare/gang's terms and ranges (its share, mpl, slice, route)."""

    share: float = 0.25          # of the processors, to the time-sliced partition
    mpl: int = 2                 # jobs per CPU: OverSubscribe=FORCE:mpl
    slice_s: float = 30.0        # SchedulerTimeSlice (Slurm's default)
    switch_s: float = 0.5        # progress lost at each switch of a shared CPU
    route: tuple[str, ...] = ("idle",)

    def __post_init__(self):
        ranges = gang_ranges()
        top = ranges["share"][1]
        if not 0.0 < self.share <= top:
            raise BadInput(f"share={self.share:g}: give the time-sliced partition a fraction "
                           f"of the machine above 0 and at most {top:g}")
        low, high = ranges["mpl"]
        if not low <= self.mpl <= high:
            raise BadInput(f"mpl={self.mpl}: time sharing takes {low} to {high} jobs per CPU")
        low, high = ranges["slice"]
        if not low <= self.slice_s <= high or not 0 <= self.switch_s < self.slice_s:
            raise BadInput(f"the time slice is {low} s to {high} s (Slurm's "
                           "SchedulerTimeSlice) and the switch shorter than it")
        if not self.route or set(self.route) - set(CLASSES):
            raise BadInput(f"route={','.join(self.route)}: name classes among "
                           f"{', '.join(CLASSES)}")


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


def timeshare_study(window: Workload, setting: TimeShare = TimeShare(),
                    before: pd.DataFrame | None = None, rule: ClassRule = ClassRule(),
                    estimates: Estimates = Estimates()) -> TimeShareStudy:
    """Play ``window`` (a trace's window: ``cleaning.trace_window``) space-shared and split.
    Users are classed by their jobs in ``before`` (the jobs submitted before the window, as
    a site knows its users), or, when None, by the window's own jobs (hindsight)."""
    jobs = window.jobs
    history = jobs if before is None else before
    classes = user_classes(history, rule)
    if classes.empty:
        raise BadInput(_no_classes(jobs, before))
    arrays = job_arrays(window, estimates)
    procs = window.machine.procs
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
    name = Path(window.source).name if window.source else window.machine.name
    days = month_of(np.array([arrays.submit.min(), arrays.submit.max()]), window.header,
                    "%Y-%m-%d")
    return TimeShareStudy(trace=name, window=(str(days[0]), str(days[1])), setting=setting,
                          hindsight=before is None, partition_cpus=(g_cpus, r_cpus),
                          jobs=table)


def _no_classes(window: pd.DataFrame, before: pd.DataFrame | None) -> str:
    """Why no user could be classed, and what to do about it."""
    recorded = (window["avg_cpu"] >= 0).any()
    if before is not None and recorded:
        return ("none of the jobs before the window gives its CPU time (SWF field 6), so no "
                "user can be classed; start the window later, after jobs that do")
    return ("no job of this trace's window gives its CPU time (SWF field 6), so no user can "
            "be classed by CPU efficiency; use a trace (or a window) that records it")
