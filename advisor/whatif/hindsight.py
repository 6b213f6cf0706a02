"""The online advisor against every candidate kept fixed and against the picks a site would
make by hand: the benchmark of the advice.

Lawson and Smirni compares its online policy with one static policy, the site's default. A site
can do better by hand: it can fix the configuration that served its last weeks best. So the
benchmark plays, over the same decision points (the same cuts cost all alike):
* every candidate of the grid kept fixed, and ranks them: the best in hindsight, and the
  best within the risk limits against the baseline (its MaxWait and p95 wait at most
  ``risk`` times the baseline's), the oracle the advice must approach;
* the site's pick: the best within the risk limits over the weeks before the window
  (``PICK_WEEKS``, played as a warm-up under the baseline), put in effect at its start;
* the rolling pick: the same rule re-applied every week on the weeks before, an automated
  hand-tuner (it reads each candidate's run kept fixed over those weeks);
* the online advice, deciding from the window's start.
Figures count the jobs submitted in the window, after the warm-up; with the trace's groups as
accounts, each run's fairness too (``fairness_columns``).

A candidate kept fixed is enacted anew at each decision point with the history before the
window (its last ``Settings.history_weeks`` weeks, as the advisor reads them): the same
Slurm form, except that a plan orders the jobs pending at each point, as a site running it
daily would. Jobs carry no CPU efficiency here, as in the online replay, so no time-sliced
candidate appears.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from advisor.cleaning import trace_window
from advisor.engine import Estimates, job_arrays
from advisor.errors import BadInput
from advisor.metrics import bounded_slowdown, lawson_slowdown
from advisor.model import (SECONDS_PER_WEEK, Accounting, SchedulingConfig, Snapshot,
                           Workload, trace_machine)
from advisor.plugins.contract import Context
from advisor.plugins.grid import default_grid
from advisor.plugins.knob import is_knob
from advisor.plugins.spec import Policy, parse_policy
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.futures import history_from_workload
from advisor.settings import Settings
from advisor.whatif.online import OnlineResult, ReplaySystem, online_replay, trace_history
from advisor.whatif.snapshot import trace_snapshot
from advisor.whatif.fairness import account_wait, numbered_accounts, share_deviation
from advisor.whatif.runner import Executor, SerialExecutor
from advisor.whatif.trace_accounts import account_names, baseline_spec, site_config

#: objectives a run can be ranked by, and the column that holds them
RANKED = {"avg_wait": "avg_wait", "avg_bsld": "avg_bsld", "p95_wait": "p95_wait"}
BEST, BEST_SAFE, ONLINE = "best static", "best static within risk", "online"
SITE, ROLLING = "site's pick", "rolling pick"
#: the weeks a site's pick is read from, before a window, and the rolling pick looks back
PICK_WEEKS = 4


@dataclass(frozen=True)
class FixedTask:
    """One candidate kept fixed over a window: the unit a worker runs."""

    workload: Workload
    estimates: Estimates
    every: int
    policy: Policy
    history: pd.DataFrame | None = None


def fixed_starts(task: FixedTask) -> np.ndarray:
    """Start times of the window's jobs under ``task.policy`` kept fixed (module docstring)."""
    system = ReplaySystem(task.workload, task.estimates,
                          parse_policy(baseline_spec(task.workload)))
    base = fixed_base(task.policy, task.workload, system)

    def enacted(snap=None):
        return slurm_candidate(task.policy, Context(system.machine, base, snapshot=snap,
                                                    history=task.history))

    return system.play(system.decision_points(task.every), lambda t, snap, h, c: enacted(snap),
                       first=enacted())


def fixed_base(policy: Policy, workload: Workload, system: ReplaySystem) -> SchedulingConfig:
    """The configuration ``policy`` is enacted over: the site's, or for a knob (keys of
    the configuration in effect changed) the baseline's, which is in effect when the site
    picks."""
    return system.first.config if is_knob(policy) else site_config(workload)


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
    pick: str = ""               # the site's pick's spec ("" without weeks before)
    rolling: tuple[str, ...] = ()  # the rolling pick's spec, week by week
    first: int | None = None     # the judged weeks' start (None: no warm-up)

    def as_dict(self) -> dict:
        return {"every": self.every, "objective": self.objective, "risk": self.risk,
                "best": self.best, "best_safe": self.best_safe, "total": self.total,
                "pick": self.pick, "rolling": list(self.rolling), "first": self.first,
                "runs": self.table.to_dict(orient="records"),
                "weeks": self.weeks.to_dict(orient="records"),
                "decisions": self.online.as_dict()["decisions"]}


def static_policies(machine, history: pd.DataFrame | None = None,
                    policies: tuple[Policy, ...] | None = None,
                    base: SchedulingConfig = SchedulingConfig(),
                    snapshots: tuple[Snapshot, ...] = ()) -> list[Policy]:
    """The policies kept fixed: ``policies``, else the whole default grid (a short queue's:
    conservative backfilling and plans too), each Slurm form once; over a site's ``base``
    with a priority policy (fair share), the grid's candidates that keep it. With
    ``snapshots`` (the states the site picks from, oldest first: ``pick_snapshots``), each
    knob's proposals at the latest of them where it proposes any (the state the site saw
    last), each kept fixed as a site sets a key by hand."""
    context = Context(machine, base, 0, None, history=history)
    chosen = [(p, context) for p in (list(policies) if policies else default_grid(context))]
    proposed: set[str] = set()
    for snapshot in (reversed(snapshots) if not policies else ()):
        # (a knob changes the configuration in effect then: the baseline's)
        now = Context(machine, snapshot.config, len(snapshot.pending), None,
                      snapshot=snapshot, history=history)
        knobs = [p for p in default_grid(now) if is_knob(p) and _knob(p) not in proposed]
        chosen += [(p, now) for p in knobs]
        proposed |= {_knob(p) for p in knobs}
    out, seen = [], []
    for policy, context in chosen:
        candidate = slurm_candidate(policy, context)
        enacts = candidate.enacts
        if candidate.overrides and not policies:
            continue
        if all(enacts != s for s in seen):
            seen.append(enacts)
            out.append(policy)
    return out


def _knob(policy: Policy) -> str:
    return policy.choices[0].plugin.key


def pick_snapshots(workload: Workload, first: int | None, every: int
                   ) -> tuple[Snapshot, ...]:
    """The window's state under the baseline at each decision point (every ``every``
    seconds) of the weeks before ``first`` (its first judged moment, when the site picks)
    and at ``first``: what a site reading its last weeks saw (none without a warm-up)."""
    t0 = int(workload.jobs["submit"].min())
    if first is None or first <= t0:
        return ()
    baseline = parse_policy(baseline_spec(workload))
    return tuple(trace_snapshot(workload, baseline, t)
                 for t in (*range(t0 + every, first, every), first))


def bench_window(whole: Workload, since: int | None = None, until: int | None = None,
                 load: float = 1.0) -> tuple[Workload, pd.DataFrame | None]:
    """The window of ``whole`` the benchmark plays (``trace_window``), and the history a
    live cluster would have at its start: the jobs finished by then (None at the trace's
    start). Its last week's time limits are what a site would cut its queues by."""
    prior = history_from_workload(whole, since) if since is not None else None
    return trace_window(whole, since, until, load), prior


def warm_window(whole: Workload, since: int | None, until: int | None = None,
                load: float = 1.0, weeks: int = PICK_WEEKS
                ) -> tuple[Workload, pd.DataFrame | None, int | None]:
    """The window [since, until) of ``whole`` with up to ``weeks`` weeks before it as a
    warm-up (those the trace has), arrivals ``load`` times as dense throughout; the history
    before the warm-up (``bench_window``); and the window's first moment on the played
    clock (None without ``since``: no warm-up)."""
    if since is None:
        return (*bench_window(whole, None, until, load), None)
    begin = max(since - int(weeks * SECONDS_PER_WEEK * load), int(whole.jobs["submit"].min()))
    workload, prior = bench_window(whole, begin, until, load)
    t0 = int(workload.jobs["submit"].min())
    return workload, prior, t0 + round((max(since, t0) - t0) / load)


def fixed_runs(workload: Workload, every: int, policies: list[Policy],
               executor: Executor | None = None, estimates: Estimates = Estimates(),
               history: pd.DataFrame | None = None,
               on_progress: Callable[[int, int], None] | None = None) -> dict:
    """Each of ``policies`` kept fixed over the window (enacted with ``history``, the
    advisor's before it): {label: (spec, start times)}."""
    tasks = [FixedTask(workload, estimates, every, p, history) for p in policies]
    starts: list[np.ndarray | None] = [None] * len(tasks)
    executor = executor or SerialExecutor()
    for done, (i, start) in enumerate(executor.map_unordered(fixed_starts, tasks), start=1):
        starts[i] = start
        if on_progress:
            on_progress(done, len(tasks))
    return {p.label: (p.spec, s) for p, s in zip(policies, starts)}


def advice_bench(workload: Workload, every: int, settings: Settings = Settings(),
                 executor: Executor | None = None, baseline: Policy | None = None,
                 estimates: Estimates = Estimates(),
                 on_progress: Callable[[str, int, int], None] | None = None,
                 fixed: dict | None = None, prior: pd.DataFrame | None = None,
                 first: int | None = None) -> AdviceBench:
    """The online replay of ``workload`` (``online_replay``, its history starting with
    ``prior``, its first decision at ``first``), the baseline, every static policy
    (``static_policies(.., history, settings.policies)``, ``history`` the advisor's at the
    start: ``prior``'s last weeks) kept fixed over the same decision
    points, or the ``fixed_runs`` given, the site's pick (from the weeks before ``first``)
    and the rolling pick (re-picked every week from ``first``, or from the second week
    without a warm-up); judged on the jobs submitted from ``first`` on, ranked by
    ``settings.objective``."""
    if settings.objective not in RANKED:
        raise BadInput(f"the benchmark ranks runs by {', '.join(RANKED)}, not "
                       f"'{settings.objective}'")
    baseline = baseline or parse_policy(baseline_spec(workload))
    history = trace_history(prior, settings.history_weeks)
    submit = workload.jobs["submit"].to_numpy(np.int64)
    t0 = int(submit.min())
    warm = first is not None and first > t0
    policies = static_policies(trace_machine(workload), history, settings.policies,
                               site_config(workload),
                               pick_snapshots(workload, first, every) if settings.knobs
                               else ())
    if fixed is None:
        fixed = fixed_runs(workload, every, policies, executor, estimates, history,
                           (lambda d, n: on_progress("policies kept fixed", d, n))
                           if on_progress else None)
    runtime = job_arrays(workload, estimates).runtime
    online = online_replay(workload, every, settings, executor, baseline, estimates,
                           (lambda d, n: on_progress("decision points", d, n))
                           if on_progress else None, prior, first if warm else None)
    runs = {"baseline": (baseline.spec, online.static_start), **fixed}
    key = RANKED[settings.objective]
    begin = first if warm else t0 + SECONDS_PER_WEEK
    weeks = max(0, -(-(int(submit.max()) + 1 - begin) // SECONDS_PER_WEEK))
    schedule = rolling_picks(submit, runtime, runs, begin, weeks, PICK_WEEKS, settings.risk,
                             "baseline", key)
    pick = (best_within_risk(submit, runtime, runs, submit < first, settings.risk,
                             "baseline", key) if warm else "")
    by_label = {"baseline": baseline, **{p.label: p for p in policies}}
    played = {}
    if pick:
        played[SITE] = (runs[pick][0], switching_starts(
            workload, every, by_label, [(first, pick)], history, estimates, baseline))
    played[ROLLING] = ("rolling", switching_starts(workload, every, by_label, schedule,
                                                   history, estimates, baseline))
    runs = {**runs, **played, ONLINE: ("online", online.start)}
    bench = judged(workload, runtime, runs, online, every, settings,
                   submit >= first if warm else None, list(fixed), pick, schedule)
    return replace(bench, first=first if warm else None)


def best_within_risk(submit: np.ndarray, runtime: np.ndarray, runs: dict, mask: np.ndarray,
                     risk: float, baseline: str, key: str = "avg_wait") -> str:
    """What a site tuning by hand on those jobs would fix: the name of the run of ``runs``
    (name: (spec, starts)) best by ``key`` over the jobs of ``mask``, among those whose
    MaxWait and p95 wait there are within ``risk`` times the ``baseline`` run's (the
    baseline itself when none is)."""
    ordered = {baseline: runs[baseline], **runs}
    table = runs_table(submit[mask], runtime[mask],
                       {n: (spec, start[mask]) for n, (spec, start) in ordered.items()}, risk)
    _, safe = best_static(table, key)
    return baseline if safe is None else str(safe["name"])


def rolling_picks(submit: np.ndarray, runtime: np.ndarray, runs: dict, first: int,
                  weeks: int, before: int, risk: float, baseline: str,
                  key: str = "avg_wait") -> list[tuple[int, str]]:
    """The rolling pick, an automated hand-tuner: at ``first`` and every week after it for
    ``weeks`` weeks, ``best_within_risk`` over the jobs submitted in the ``before`` weeks
    before (each run kept fixed there). (time, name) per week."""
    t0 = int(submit.min())
    out = []
    for k in range(weeks):
        at = first + k * SECONDS_PER_WEEK
        mask = (submit >= max(at - before * SECONDS_PER_WEEK, t0)) & (submit < at)
        out.append((at, best_within_risk(submit, runtime, runs, mask, risk, baseline, key)
                    if mask.any() else baseline))
    return out


def switching_starts(workload: Workload, every: int, policies: dict,
                     schedule: list[tuple[int, str]], history: pd.DataFrame | None = None,
                     estimates: Estimates = Estimates(), baseline: Policy | None = None
                     ) -> np.ndarray:
    """Start times with ``baseline`` (default ``baseline_spec``) in effect until the first
    (time, label) of ``schedule``, then the policy of that label in ``policies`` from its
    time on, enacted anew at every decision point (as ``fixed_starts``: a plan orders the
    jobs pending there)."""
    system = ReplaySystem(workload, estimates, baseline or parse_policy(baseline_spec(workload)))
    machine = trace_machine(workload)

    def decide(t, snap, history, current):
        label = next((name for at, name in reversed(schedule) if t >= at), None)
        if label is None:
            return current
        return slurm_candidate(policies[label], Context(
            machine, fixed_base(policies[label], workload, system), snapshot=snap,
            history=history))

    return system.play(system.decision_points(every), decide)


def judged(workload: Workload, runtime: np.ndarray, runs: dict, online: OnlineResult,
           every: int, settings: Settings, mask: np.ndarray | None = None,
           static: list[str] | None = None, pick: str = "",
           schedule: list[tuple[int, str]] = ()) -> AdviceBench:
    """The table of ``runs`` (name: (spec, starts); the baseline first, the online run
    last) over the jobs of ``mask`` (default: all), the best of the ``static`` runs (default:
    all but the first and the last), the references' gaps, the weeks."""
    submit = workload.jobs["submit"].to_numpy(np.int64)
    m = np.ones(len(submit), bool) if mask is None else mask
    submit, runtime = submit[m], runtime[m]
    table = runs_table(submit, runtime, {n: (sp, st[m]) for n, (sp, st) in runs.items()},
                       settings.risk)
    if workload.accounts is not None:
        table = table.assign(**fairness_columns(workload, runtime, runs, m))
    base = table.iloc[0]
    key = RANKED[settings.objective]
    fixed = table[table["name"].isin(static)] if static is not None else table.iloc[1:-1]
    best, best_safe = best_static(fixed, key)
    best = base if best is None else best
    on = table.iloc[-1]
    row = table.set_index("name")
    total = {"jobs": len(submit), "static_runs": len(fixed),
             "online_vs_baseline": _gain(on[key], base[key]),
             "online_vs_best": _gain(on[key], best[key]),
             "online_vs_best_safe": _gain(on[key], best_safe[key])
             if best_safe is not None else None,
             "online_vs_pick": _gain(on[key], row.loc[SITE, key]) if SITE in row.index
             else None,
             "online_vs_rolling": _gain(on[key], row.loc[ROLLING, key])
             if ROLLING in row.index else None,
             "rolling_changes": sum(a != b for a, b in zip(
                 ["baseline", *(n for _, n in schedule)], (n for _, n in schedule))),
             "max_wait_over_baseline": float(on["max_wait"] / max(base["max_wait"], 1.0)),
             **{k: online.total[k] for k in ("decisions", "simulated", "changes")}}
    if workload.accounts is not None:
        total["change_fairness"] = change_fairness(
            workload, runs["baseline"][1], online, m,
            {n: runs[n][1] for n in (SITE, ROLLING) if n in runs})
    named = {"baseline": runs["baseline"][1], BEST: runs[best["name"]][1]}
    if best_safe is not None:
        named[BEST_SAFE] = runs[best_safe["name"]][1]
    named.update({n: runs[n][1] for n in (SITE, ROLLING) if n in runs})
    named[ONLINE] = online.start
    week = (submit - submit.min()) // SECONDS_PER_WEEK
    weeks = pd.DataFrame({"week": week, **{n: s[m] - submit for n, s in named.items()}})
    weeks = weeks.groupby("week").mean().reset_index()
    return AdviceBench(every, settings.objective, settings.risk, table, weeks, online,
                       best["spec"], best_safe["spec"] if best_safe is not None else "", total,
                       runs[pick][0] if pick else "",
                       tuple(runs[n][0] if n in runs else n for _, n in schedule))


def fairness_columns(workload: Workload, runtime: np.ndarray, runs: dict,
                     mask: np.ndarray) -> dict[str, list[float]]:
    """Each run's fairness over the judged jobs (``mask``; ``runtime``: theirs), as the
    advice judges a future's (``advisor.whatif.fairness``): the fair-share deviation of
    the CPU-seconds each account's jobs ran by the last judged submission against the
    accounts' normalized shares, and the account wait against the first run's."""
    submit = workload.jobs["submit"].to_numpy(np.int64)[mask]
    index, shares, _ = numbered_accounts(workload.accounts or Accounting(),
                                         account_names(workload.jobs["group"].to_numpy())[mask])
    cpus = job_arrays(workload).procs[mask]
    starts = np.array([start[mask] for _, start in runs.values()], np.int64)
    began = np.where(starts >= 0, starts, submit.max())
    ran = np.clip(np.minimum(began + runtime, submit.max()) - began, 0, None) * cpus
    waits = np.where(starts >= 0, starts - submit, np.nan)
    return {"share_dev": [share_deviation(r, index, shares) for r in ran],
            "acct_wait": account_wait(waits, index, 0).tolist()}


def change_fairness(workload: Workload, baseline: np.ndarray, online: OnlineResult,
                    mask: np.ndarray, others: dict | None = None) -> list[dict]:
    """Each change the advice made, judged in hindsight as its fairness limit judges a
    future: the account wait of the jobs submitted while it was in effect (judged jobs,
    ``mask``) against the baseline's for the same jobs (time, spec, jobs, account wait),
    and, for the same jobs, that of each of ``others`` (name: start times; a site's
    picks), so that a change is read beside what a site's own change did there."""
    submit = workload.jobs["submit"].to_numpy(np.int64)
    index, _, _ = numbered_accounts(workload.accounts or Accounting(),
                                    account_names(workload.jobs["group"].to_numpy()))
    changes = [d for d in online.decisions if d.changed]
    ends = [d.time for d in changes[1:]] + [int(submit.max()) + 1]
    runs = {"acct_wait": online.start, **(others or {})}
    out = []
    for d, end in zip(changes, ends):
        jobs = mask & (submit >= d.time) & (submit < end)
        starts = np.array([baseline[jobs], *(s[jobs] for s in runs.values())], np.float64)
        waits = np.where(starts >= 0, starts - submit[jobs], np.nan)
        ratios = account_wait(waits, index[jobs], 0)[1:] if jobs.any() else \
            np.ones(len(runs))
        out.append({"time": int(d.time), "spec": d.spec, "jobs": int(jobs.sum()),
                    **{name: float(r) for name, r in zip(runs, ratios)}})
    return out


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

