"""The online advisor against every candidate kept fixed: the benchmark of the advice.

Lawson and Smirni compares its online policy with one static policy, the site's default. A site
can do better by hand: it can fix the configuration that served the last weeks best. So every
candidate of the grid is also played kept fixed, over the same decision points as the
online run and the baseline (the same cuts cost all alike), and the table ranks them: the
best in hindsight, and the best within the risk limits against the baseline (its MaxWait
and p95 wait at most ``risk`` times the baseline's), the oracle the advice must approach.

A candidate kept fixed is enacted anew at each decision point with what it was given at
the start (the time limits of the history before the window): the same Slurm form, except
that a plan orders the jobs pending at each point, as a site running it daily would. Jobs
carry no CPU efficiency here, as in the online replay, so no time-sliced candidate appears.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from advisor.cleaning import trace_window
from advisor.engine import Estimates, job_arrays
from advisor.errors import BadInput
from advisor.metrics import bounded_slowdown, lawson_slowdown
from advisor.model import SECONDS_PER_WEEK, SchedulingConfig, Workload, trace_machine
from advisor.plugins.contract import Context
from advisor.plugins.grid import default_grid
from advisor.plugins.spec import BASELINE, Policy, parse_policy
from advisor.whatif.candidates import queue_state, slurm_candidate
from advisor.whatif.futures import history_from_workload
from advisor.settings import Settings
from advisor.whatif.online import OnlineResult, ReplaySystem, online_replay
from advisor.whatif.runner import Executor, SerialExecutor

#: objectives a run can be ranked by, and the column that holds them
RANKED = {"avg_wait": "avg_wait", "avg_bsld": "avg_bsld", "p95_wait": "p95_wait"}
BEST, BEST_SAFE, ONLINE = "best static", "best static within risk", "online"


@dataclass(frozen=True)
class FixedTask:
    """One candidate kept fixed over a window: the unit a worker runs."""

    workload: Workload
    estimates: Estimates
    every: int
    policy: Policy
    limits: tuple[int, ...]


def fixed_starts(task: FixedTask) -> np.ndarray:
    """Start times of the window's jobs under ``task.policy`` kept fixed (module docstring)."""
    system = ReplaySystem(task.workload, task.estimates, parse_policy(BASELINE))
    base = SchedulingConfig()

    def enacted(snap=None):
        return slurm_candidate(task.policy, base, system.machine, task.limits,
                               queue_state(snap) if snap is not None else None)

    return system.play(system.decision_points(task.every), lambda t, snap, h, c: enacted(snap),
                       first=enacted())


@dataclass(frozen=True)
class AdviceBench:
    every: int
    objective: str
    risk: float
    table: pd.DataFrame          # a row per run: name, spec, run_figures' columns, safe
    weeks: pd.DataFrame          # per week of submission: avg wait of the named runs
    online: OnlineResult
    best: str = ""               # the spec of the best static candidate
    best_safe: str = ""          # ... within the risk limits ("" if none)
    total: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"every": self.every, "objective": self.objective, "risk": self.risk,
                "best": self.best, "best_safe": self.best_safe, "total": self.total,
                "runs": self.table.to_dict(orient="records"),
                "weeks": self.weeks.to_dict(orient="records"),
                "decisions": self.online.as_dict()["decisions"]}


def static_policies(machine, limits: tuple[int, ...] = (),
                    policies: tuple[Policy, ...] | None = None) -> list[Policy]:
    """The policies kept fixed: ``policies``, else the whole default grid (a short queue's:
    conservative backfilling and plans too), each Slurm form once."""
    context = Context(machine, SchedulingConfig(), 0, None, limits=limits)
    out, seen = [], []
    for policy in (list(policies) if policies else default_grid(context)):
        enacts = slurm_candidate(policy, SchedulingConfig(), machine, limits).enacts
        if all(enacts != s for s in seen):
            seen.append(enacts)
            out.append(policy)
    return out


def bench_window(whole: Workload, since: int | None = None, until: int | None = None,
                 load: float = 1.0) -> tuple[Workload, pd.DataFrame | None]:
    """The window of ``whole`` the benchmark plays (``trace_window``), and the history a
    live cluster would have at its start: the jobs finished by then (None at the trace's
    start). Its last week's time limits are what a site would cut its queues by."""
    prior = history_from_workload(whole, since) if since is not None else None
    return trace_window(whole, since, until, load), prior


def fixed_runs(workload: Workload, every: int, policies: list[Policy],
               executor: Executor | None = None, estimates: Estimates = Estimates(),
               limits: tuple[int, ...] = (),
               on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Each of ``policies`` kept fixed over the window: {label: (spec, start times)}."""
    tasks = [FixedTask(workload, estimates, every, p, limits) for p in policies]
    starts: list[np.ndarray | None] = [None] * len(tasks)
    executor = executor or SerialExecutor()
    for done, (i, start) in enumerate(executor.map_unordered(fixed_starts, tasks), start=1):
        starts[i] = start
        if on_progress:
            on_progress(done, len(tasks))
    return {p.label: (p.spec, s) for p, s in zip(policies, starts)}


def advice_bench(workload: Workload, every: int, settings: Settings = Settings(),
                 executor: Executor | None = None, baseline: Policy | None = None,
                 estimates: Estimates = Estimates(), limits: tuple[int, ...] = (),
                 on_progress: Callable[[str, int, int], None] | None = None,
                 fixed: dict | None = None, prior: pd.DataFrame | None = None
                 ) -> AdviceBench:
    """The online replay of ``workload`` (``online_replay``, its history starting with
    ``prior``), the baseline, and every static policy (``static_policies(.., limits,
    settings.policies)``) kept fixed over the same decision points, or the ``fixed_runs``
    given; ranked by ``settings.objective``."""
    if settings.objective not in RANKED:
        raise BadInput(f"the benchmark ranks runs by {', '.join(RANKED)}, not "
                       f"'{settings.objective}'")
    baseline = baseline or parse_policy(BASELINE)
    if fixed is None:
        policies = static_policies(trace_machine(workload), limits, settings.policies)
        fixed = fixed_runs(workload, every, policies, executor, estimates, limits,
                           (lambda d, n: on_progress("policies kept fixed", d, n))
                           if on_progress else None)
    online = online_replay(workload, every, settings, executor, baseline, estimates,
                           (lambda d, n: on_progress("decision points", d, n))
                           if on_progress else None, prior)
    runs = {"baseline": (baseline.spec, online.static_start), **fixed,
            ONLINE: ("online", online.start)}
    return judged(workload, job_arrays(workload, estimates).runtime, runs, online, every,
                  settings)


def past_pick(past: Workload, every: int, settings: Settings,
              limits: tuple[int, ...] = (), executor: Executor | None = None,
              fixed: dict | None = None, estimates: Estimates = Estimates()) -> str:
    """What a site tuning by hand on its log would fix: the static candidate best by the
    objective within the risk limit against the baseline over ``past`` (the weeks before a
    window), each kept fixed (``fixed``: those runs, when made already). Its name in
    ``fixed_runs``, or "" when none is within the limit."""
    baseline = parse_policy(BASELINE)
    if fixed is None:
        fixed = fixed_runs(past, every, static_policies(trace_machine(past), limits),
                           executor, estimates, limits)
    base = fixed_runs(past, every, [baseline], executor, estimates, limits)
    runs = {"baseline": base[baseline.label], **fixed}
    table = runs_table(past.jobs["submit"].to_numpy(np.int64),
                       job_arrays(past, estimates).runtime, runs, settings.risk)
    _, pick = best_static(table.iloc[1:], RANKED[settings.objective])
    return "" if pick is None else str(pick["name"])


def best_within_risk(submit: np.ndarray, runtime: np.ndarray, runs: dict, mask: np.ndarray,
                     risk: float, baseline: str, key: str = "avg_wait") -> str:
    """What a site tuning by hand on those jobs would fix: the name of the run of ``runs``
    (name: (spec, starts)) best by ``key`` over the jobs of ``mask``, among those whose
    MaxWait and p95 wait there are within ``risk`` times the ``baseline`` run's (the
    baseline itself when none is)."""
    def figures(start):
        return run_figures((start - submit)[mask], runtime[mask], (start - submit)[mask])

    base = figures(runs[baseline][1])
    best, name = np.inf, baseline
    for label, (_, start) in runs.items():
        f = figures(start)
        if (f["max_wait"] <= risk * base["max_wait"] and
                f["p95_wait"] <= risk * base["p95_wait"] and f[key] < best):
            best, name = f[key], label
    return name


def rolling_picks(submit: np.ndarray, runtime: np.ndarray, runs: dict, first: int,
                  weeks: int, before: int, risk: float, baseline: str) -> list[tuple[int, str]]:
    """The rolling pick, an automated hand-tuner: at ``first`` and every week after it for
    ``weeks`` weeks, ``best_within_risk`` over the jobs submitted in the ``before`` weeks
    before (each run kept fixed there). (time, name) per week."""
    t0 = int(submit.min())
    out = []
    for k in range(weeks):
        at = first + k * SECONDS_PER_WEEK
        mask = (submit >= max(at - before * SECONDS_PER_WEEK, t0)) & (submit < at)
        out.append((at, best_within_risk(submit, runtime, runs, mask, risk, baseline)))
    return out


def switching_starts(workload: Workload, every: int, policies: list[Policy],
                     schedule: list[tuple[int, str]], limits: tuple[int, ...] = (),
                     estimates: Estimates = Estimates()) -> np.ndarray:
    """Start times with the baseline in effect until the first (time, label) of
    ``schedule``, then each label's policy from its time on, enacted anew at every
    decision point (as ``fixed_starts``: a plan orders the jobs pending there)."""
    by_label = {p.label: p for p in policies}
    system = ReplaySystem(workload, estimates, parse_policy(BASELINE))
    machine = trace_machine(workload)

    def decide(t, snap, history, current):
        label = next((name for at, name in reversed(schedule) if t >= at), None)
        if label is None:
            return current
        return slurm_candidate(by_label[label], SchedulingConfig(), machine, limits,
                               queue_state(snap))

    return system.play(system.decision_points(every), decide)


def judged(workload: Workload, runtime: np.ndarray, runs: dict, online: OnlineResult,
           every: int, settings: Settings) -> AdviceBench:
    """The table of ``runs`` (name: (spec, starts)), the best static runs, the weeks."""
    submit = workload.jobs["submit"].to_numpy(np.int64)
    table = runs_table(submit, runtime, runs, settings.risk)
    base = table.iloc[0]
    key = RANKED[settings.objective]
    static = table.iloc[1:-1]
    best, best_safe = best_static(static, key)
    best = base if best is None else best
    on = table.iloc[-1]
    total = {"jobs": len(submit), "static_runs": len(static),
             "online_vs_baseline": _gain(on[key], base[key]),
             "online_vs_best": _gain(on[key], best[key]),
             "online_vs_best_safe": _gain(on[key], best_safe[key])
             if best_safe is not None else None,
             "max_wait_over_baseline": float(on["max_wait"] / max(base["max_wait"], 1.0)),
             **{k: online.total[k] for k in ("decisions", "simulated", "changes")}}
    named = {"baseline": runs["baseline"][1], BEST: runs[best["name"]][1], ONLINE: online.start}
    if best_safe is not None:
        named[BEST_SAFE] = runs[best_safe["name"]][1]
    week = (submit - submit.min()) // SECONDS_PER_WEEK
    weeks = pd.DataFrame({"week": week, **{n: s - submit for n, s in named.items()}})
    weeks = weeks.groupby("week").mean().reset_index()
    return AdviceBench(every, settings.objective, settings.risk, table, weeks, online,
                       best["spec"], best_safe["spec"] if best_safe is not None else "", total)


def runs_table(submit: np.ndarray, runtime: np.ndarray, runs: dict,
               risk: float) -> pd.DataFrame:
    """A row per run (name: (spec, starts), the baseline first): its ``run_figures``, and
    whether its MaxWait and p95 wait are within ``risk`` times the baseline's."""
    base_wait = next(iter(runs.values()))[1] - submit
    table = pd.DataFrame([{"name": name, "spec": spec,
                           **run_figures(start - submit, runtime, base_wait)}
                          for name, (spec, start) in runs.items()])
    base = table.iloc[0]
    table["safe"] = ((table["max_wait"] <= risk * base["max_wait"]) &
                     (table["p95_wait"] <= risk * base["p95_wait"]))
    return table


def best_static(static: pd.DataFrame, key: str
                ) -> tuple[pd.Series | None, pd.Series | None]:
    """The best row of ``static`` by ``key``, and the best of those within the risk limit
    (None where there is none)."""
    best = static.loc[static[key].idxmin()] if len(static) else None
    safe = static[static["safe"]]
    return best, safe.loc[safe[key].idxmin()] if len(safe) else None


def run_figures(wait: np.ndarray, runtime: np.ndarray, base_wait: np.ndarray) -> dict:
    """AvgWait, p95 and MaxWait, the mean bounded slowdown, and Lawson and Smirni's mean R
    against the baseline (> 0: this run served the jobs better)."""
    wait = wait.astype(np.float64)
    s_base, s_run = lawson_slowdown(base_wait, runtime), lawson_slowdown(wait, runtime)
    return {"avg_wait": float(wait.mean()), "p95_wait": float(np.percentile(wait, 95)),
            "max_wait": float(wait.max()), "avg_bsld": float(bounded_slowdown(wait,
                                                                               runtime).mean()),
            "r": float(((s_base - s_run) / np.minimum(s_base, s_run)).mean())}


def _gain(value: float, against: float) -> float:
    """Relative change of a lower-is-better figure: < 0 means ``value`` is better."""
    return float((value - against) / max(abs(against), 1e-9))

