"""Zheng et al.'s study (Zheng et al.): plans against EASY-FCFS-FCFS over a trace.

Every policy replays the same jobs, each ended at its estimate at the latest (the paper's
termination event; Slurm's time limit), so that the queue policy and the plans run the
same work. Reported as the paper does: utilisation over the whole replay (Table II), mean
wait and response per calendar month of submission, on the trace's clock (Figs. 4-5), and
mean wait binned by job size and runtime in 15 logarithmic bins each, with the ratio of
a plan to the baseline (Fig. 6).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from advisor import metrics
from advisor.engine import Estimates, JobArrays, job_arrays, make_arrays, run
from advisor.errors import BadInput
from advisor.model import Workload
from advisor.plugins.spec import BASELINE, Policy, parse_policy
from advisor.policies.plan.mechanic import Plans
from advisor.units import month_of

#: the paper's policies (its FCFS is EASY-FCFS-FCFS), the study's default
PAPER_POLICIES = (BASELINE, "plan1", "plan2", "plan3")
#: the wait table's bins per axis (the paper's Fig. 6)
BINS = 15


def ended_at_estimate(arrays: JobArrays) -> JobArrays:
    """The jobs with each runtime cut at its estimate (at least 1 s)."""
    return make_arrays(arrays.submit, np.minimum(arrays.runtime, np.maximum(arrays.estimate, 1)),
                       arrays.estimate, arrays.procs, arrays.machine)


@dataclass(frozen=True)
class PlanRun:
    name: str                    # the policy's label (EASY-FCFS-FCFS, PLAN2, ...)
    policy: Policy
    table: pd.DataFrame          # metrics.schedule_table, with "month"
    summary: dict                # metrics.summary

    def monthly(self) -> pd.DataFrame:
        """Mean wait and response (s) and jobs per month of submission."""
        t = self.table.assign(response=self.table["wait"] + self.table["runtime"])
        return t.groupby("month", sort=True).agg(jobs=("wait", "size"),
                                                 wait=("wait", "mean"),
                                                 response=("response", "mean"))


@dataclass(frozen=True)
class PlanStudy:
    trace: str
    window: tuple[str, str]      # the first and the last day of submission replayed
    runs: tuple[PlanRun, ...]    # the baseline first

    @property
    def baseline(self) -> PlanRun:
        return self.runs[0]

    def months(self) -> pd.DataFrame:
        """Mean wait per month (rows) and policy (columns), then each policy's mean
        response."""
        wait = pd.DataFrame({r.name: r.monthly()["wait"] for r in self.runs})
        resp = pd.DataFrame({f"{r.name} response": r.monthly()["response"]
                             for r in self.runs})
        jobs = self.baseline.monthly()["jobs"].rename("jobs")
        return pd.concat([jobs, wait, resp], axis=1)

    def run_named(self, name: str) -> PlanRun:
        """The run whose label or spec is ``name`` (as --policy gave it, or as printed)."""
        for r in self.runs:
            if name in (r.name, r.policy.spec):
                return r
        try:
            wanted = parse_policy(name)
        except BadInput:
            wanted = None
        found = next((r for r in self.runs if r.policy == wanted), None)
        if found is None:
            names = ", ".join(r.name for r in self.runs[1:])
            raise BadInput(f"no run named {name} in this study; the runs are {names}")
        return found

    def bins(self, name: str) -> WaitBins:
        """The wait by size and runtime (the paper's Fig. 6) of the run ``name`` against
        the baseline."""
        return wait_bins(self.baseline.table, self.run_named(name).table)

    def as_dict(self) -> dict:
        months = self.months()
        return {"trace": self.trace, "window": list(self.window),
                "runs": [{"name": r.name, "policy": r.policy.spec, **r.summary}
                         for r in self.runs],
                "months": [{"month": str(m), **{k: _num(v) for k, v in row.items()}}
                           for m, row in months.iterrows()],
                "bins": {r.name: self.bins(r.name).as_dict() for r in self.runs[1:]}}


def _num(v):
    return None if pd.isna(v) else float(v)


@dataclass(frozen=True)
class WaitBins:
    """Mean wait (s) of the jobs in each (size, runtime) bin, for the baseline and for a
    plan, and their ratio; NaN where a bin holds no job. Edges are logarithmic."""

    size_edges: np.ndarray       # BINS + 1 edges, processors
    runtime_edges: np.ndarray    # BINS + 1 edges, seconds
    base: np.ndarray             # (BINS, BINS): rows are sizes, columns runtimes
    plan: np.ndarray
    jobs: np.ndarray

    @property
    def ratio(self) -> np.ndarray:
        """plan / baseline; a bin where both wait 0 is 1, where only the baseline does
        is inf."""
        with np.errstate(divide="ignore", invalid="ignore"):
            r = self.plan / self.base
        return np.where((self.plan == 0) & (self.base == 0), 1.0, r)

    def as_dict(self) -> dict:
        def rows(a):
            return [[None if not np.isfinite(v) else float(v) for v in row] for row in a]
        return {"size_edges": self.size_edges.tolist(),
                "runtime_edges": self.runtime_edges.tolist(), "jobs": self.jobs.tolist(),
                "base_wait": rows(self.base), "plan_wait": rows(self.plan),
                "ratio": rows(self.ratio)}


def log_edges(values: np.ndarray, bins: int = BINS) -> np.ndarray:
    """``bins`` logarithmic bins over the range of ``values`` (at least 1)."""
    lo, hi = max(float(values.min()), 1.0), max(float(values.max()), 1.0)
    return np.geomspace(lo, hi * (1 + 1e-9) if hi > lo else lo + 1, bins + 1)


def wait_bins(base: pd.DataFrame, plan: pd.DataFrame, bins: int = BINS) -> WaitBins:
    """Fig. 6: both schedules' mean wait per (size, runtime) bin (same jobs, same bins)."""
    size = base["procs"].to_numpy(float)
    runtime = base["runtime"].to_numpy(float)
    se, re_ = log_edges(size, bins), log_edges(runtime, bins)
    i = np.clip(np.searchsorted(se, np.maximum(size, 1), side="right") - 1, 0, bins - 1)
    k = np.clip(np.searchsorted(re_, np.maximum(runtime, 1), side="right") - 1, 0, bins - 1)
    cell = i * bins + k
    jobs = np.bincount(cell, minlength=bins * bins)

    def mean(wait):
        total = np.bincount(cell, weights=wait, minlength=bins * bins)
        with np.errstate(invalid="ignore"):
            return (total / np.where(jobs > 0, jobs, np.nan)).reshape(bins, bins)

    return WaitBins(se, re_, mean(base["wait"].to_numpy(float)),
                    mean(plan["wait"].to_numpy(float)), jobs.reshape(bins, bins))


def plan_study(workload: Workload, policies: Sequence[str] | None = None,
               estimates: Estimates = Estimates(), seed: int = 0,
               on_progress: Callable[[int, int], None] | None = None) -> PlanStudy:
    """Replay ``workload`` (a window of a trace: ``cleaning.trace_window``) under the
    baseline and each of ``policies`` (default: the paper's PLAN 1-3), every job ended at
    its estimate; ``seed``: the plans' moves; ``on_progress(done, total)`` after each."""
    specs = [BASELINE, *(policies if policies is not None else PAPER_POLICIES[1:])]
    parsed = {p.label: p for p in map(parse_policy, specs)}
    arrays = ended_at_estimate(job_arrays(workload, estimates))
    months = month_of(arrays.submit, workload.header)
    ids = workload.jobs["job_id"].to_numpy()
    runs = []
    for done, (name, policy) in enumerate(parsed.items()):
        if on_progress:
            on_progress(done, len(parsed))
        config = policy.engine_config()
        if isinstance(config.mechanic, Plans):
            config = replace(config, mechanic=replace(config.mechanic, seed=seed))
        start, _ = run(arrays, config)
        table = metrics.schedule_table(arrays.submit, start, arrays.runtime, arrays.procs,
                                       ids).assign(month=months)
        runs.append(PlanRun(name, policy, table, metrics.summary(table, arrays.machine)))
    if on_progress:
        on_progress(len(parsed), len(parsed))
    days = month_of(arrays.submit[[0, -1]], workload.header, "%Y-%m-%d")
    return PlanStudy(workload.machine.name, (str(days[0]), str(days[1])), tuple(runs))


@dataclass(frozen=True)
class PlanFidelity:
    """How Slurm runs a plan's order (the slurm mode, every job running to its limit, no
    new job): per setting, the planned jobs, their mean |realised - planned start| (s),
    and the share that start within ``slack`` of the plan, earlier, and later."""

    slack: int
    rows: tuple[tuple[str, int, float, float, float, float], ...]

    def as_dict(self) -> dict:
        keys = ("setting", "jobs", "mean_abs_s", "within", "earlier", "later")
        return {"slack": self.slack, "settings": [dict(zip(keys, r)) for r in self.rows]}


def realised_vs_planned(snapshot, spec: str = "plan2", slack: int = 60,
                        settings: dict | None = None) -> PlanFidelity:
    """Simulate the plan's site factors on ``snapshot`` under the configuration in effect
    and under each of ``settings`` (name: SchedulerParameters changes; default: every job
    reserves, bf_job_part_count_reserve=0, as conservative backfilling), with every job
    running to its limit, and compare each planned job's start with the plan's. ``slack``:
    Slurm's backfill works in bf_resolution steps (60 s by default)."""
    from advisor.engine.slurm import slurm_input, start_times, with_backfill
    from advisor.model import job_limit
    from advisor.plugins.contract import Context
    from advisor.whatif.candidates import slurm_candidate
    from advisor.whatif.scenario import candidate_input, nice_of
    settings = {"conservative (bf_job_part_count_reserve=0)":
                {"bf_job_part_count_reserve": 0}} if settings is None else settings
    machine = snapshot.machine
    # an overdue running job ends a second after the snapshot, as the plan assumes
    runtimes = {j.job_id: max(job_limit(j, machine), snapshot.time + 1 - (
        j.start_time if j.start_time is not None else snapshot.time))
        for j in (*snapshot.running, *snapshot.pending)}
    rows = []
    for name, changes in {"in effect": {}, **settings}.items():
        config = with_backfill(snapshot.config, **changes)
        snap = replace(snapshot, config=config)
        cand = slurm_candidate(parse_policy(spec), Context(machine, config, snapshot=snap))
        order = cand.site
        base = slurm_input(snap, runtimes, config=config)
        start = start_times(candidate_input(base, cand, snap, nice_of(base, snap), runtimes))
        where = {int(j): k for k, j in enumerate(base.job_ids)}
        ids = [job for job, _ in order.factors]
        diff = np.array([start[where[j]] - s for j, s in zip(ids, order.starts)], float)
        if not len(diff):
            raise BadInput("no pending job can start: nothing to plan")
        rows.append((name, len(diff), float(np.abs(diff).mean()),
                     float((np.abs(diff) <= slack).mean()), float((diff < -slack).mean()),
                     float((diff > slack).mean())))
    return PlanFidelity(slack, tuple(rows))
