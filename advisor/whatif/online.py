"""Honest online replay (Lawson and Smirni §3): the advisor runs at every decision point of a
trace, and the simulated system switches to what it recommends.

The "real" system is the engine's slurm mode playing the trace's jobs with their actual
runtimes, one interval at a time. At each decision point it stops, and the advisor gets
what a live cluster would give it: a snapshot (running jobs with their starts, pending jobs;
nothing submitted later) and the history of the jobs finished by then. Its recommendation
(a candidate in Slurm's terms) is put in effect for every pending and later job, and the
system plays on to the next decision point. The baseline is the same trace, cut at the same
points, with the starting configuration kept throughout: the cuts cost both runs alike.

Results follow Lawson and Smirni §2.2: per job, the bounded slowdown s = 1 + wait / max(10,
runtime) and the slowdown ratio R = (s_static - s_online) / min(s_static, s_online) (R > 0:
online is better); per week of submission and overall, the mean R, AvgWait and MaxWait.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Callable

import numpy as np
import pandas as pd

from advisor.engine import Estimates, job_arrays
from advisor.engine.slurm import slurm_input
from advisor.metrics import lawson_slowdown
from advisor.model import (ACCOUNTING_COLUMNS, HISTORY_COLUMNS, SECONDS_PER_WEEK,
                           TRACE_PARTITION, Job, SchedulingConfig, Snapshot, Workload,
                           trace_machine)
from advisor.plugins.contract import Context
from advisor.plugins.spec import Policy, parse_policy
from advisor.settings import Settings
from advisor.whatif.candidates import Candidate, slurm_candidate
from advisor.whatif.recommend import recommend
from advisor.whatif.runner import Executor
from advisor.whatif.scenario import candidate_input, candidate_starts, nice_of, routed
from advisor.whatif.trace_accounts import (account_names, association_rows, baseline_spec,
                                           memory_per_cpu, site_config, usage_at)


@dataclass(frozen=True)
class Decision:
    time: int
    triggered: bool
    spec: str            # the candidate in effect after the decision
    changed: bool
    reason: str


@dataclass(frozen=True)
class OnlineResult:
    baseline: str
    every: int
    start: np.ndarray          # per job of the workload (its row order): start times
    static_start: np.ndarray
    decisions: list[Decision]
    weeks: pd.DataFrame        # per week of submission: see ``compare``
    total: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"baseline": self.baseline, "every": self.every, "total": self.total,
                "decisions": [asdict(d) for d in self.decisions],
                "weeks": self.weeks.to_dict(orient="records")}


def online_replay(workload: Workload, every: int, settings: Settings = Settings(),
                  executor: Executor | None = None, baseline: Policy | None = None,
                  estimates: Estimates = Estimates(),
                  on_progress: Callable[[int, int], None] | None = None,
                  prior: pd.DataFrame | None = None, first: int | None = None
                  ) -> OnlineResult:
    """The trace under the advisor's recommendations, decided every ``every`` seconds, and
    under ``baseline`` (default EASY-FCFS-FCFS; with accounts, the site's own priority:
    ``trace_accounts.baseline_spec``) throughout. ``prior``: the jobs finished
    before the trace's first submission (``history_from_workload``), which every decision's
    history starts with, as sacct's would; ``first``: no decision before this time (the
    baseline runs until then, as a site's configuration before it asks)."""
    baseline = baseline or parse_policy(baseline_spec(workload))
    # risk limits against the baseline, not against whatever is in effect: a chain of
    # changes, each within the limits of the last, could otherwise drift far from it
    settings = replace(settings, reference=settings.reference or baseline)
    system = ReplaySystem(workload, estimates, baseline, prior)
    points = system.decision_points(every)
    static = system.play(points, lambda t, snap, hist, cur: cur)
    decisions: list[Decision] = []
    since = [None]        # when the configuration in effect was put in effect
    memo: dict = {}       # the past replays of the week (``replay_past``)

    def decide(t: int, snap: Snapshot, history: pd.DataFrame, cur: Candidate) -> Candidate:
        if first is not None and t < first:
            return cur
        rec = recommend(snap, history, settings, executor,
                        previous=cur.spec if cur.spec != baseline.spec else None, site=cur.site,
                        route=cur.enactment.route, in_effect_since=since[0],
                        past_memo=memo)
        new = rec.candidates[rec.chosen] if rec.change else cur
        if rec.change:
            since[0] = t
        decisions.append(Decision(t, rec.triggered, new.spec, rec.change, rec.reason))
        if on_progress:
            on_progress(len(decisions), len(points))
        return new

    start = system.play(points, decide)
    weeks, total = compare(workload, system.runtime, static, start)
    total["decisions"] = len(decisions)
    total["simulated"] = sum(d.triggered for d in decisions)
    total["changes"] = sum(d.changed for d in decisions)
    return OnlineResult(baseline.spec, every, start, static, decisions, weeks, total)


class ReplaySystem:
    """The trace as jobs a scheduler sees, and its play from decision point to point."""

    def __init__(self, workload: Workload, estimates: Estimates, baseline: Policy,
                 prior: pd.DataFrame | None = None):
        arrays = job_arrays(workload, estimates)
        jobs = workload.jobs
        self.machine = trace_machine(workload)
        self.submit = arrays.submit
        self.runtime = arrays.runtime
        self.limit = arrays.estimate
        self.procs = arrays.procs
        self.ids = jobs["job_id"].to_numpy(np.int64)
        self.users = jobs["user"].astype(str).to_numpy()
        self.accounts = account_names(jobs["group"].to_numpy())
        self.memory = memory_per_cpu(jobs["req_mem"].to_numpy())
        self.associations = workload.accounts
        self.association_rows = (None if workload.accounts is None else
                                 association_rows(workload.accounts, self.accounts, self.users))
        self.row = {int(i): k for k, i in enumerate(self.ids)}
        self.jobs = [Job(job_id=int(self.ids[k]), user=self.users[k],
                         partition=TRACE_PARTITION, cpus=int(self.procs[k]), state="PENDING",
                         submit_time=int(self.submit[k]), eligible_time=int(self.submit[k]),
                         time_limit=int(self.limit[k]), nodes=int(self.procs[k]),
                         partitions=(TRACE_PARTITION,), account=str(self.accounts[k]),
                         memory_per_cpu=int(self.memory[k])) for k in range(len(self.ids))]
        self.first = slurm_candidate(baseline, Context(self.machine, site_config(workload)))
        # the trace's jobs carry no CPU efficiency here, so the prior's are left out too
        self.prior = trace_history(prior)

    def decision_points(self, every: int) -> list[int]:
        if every <= 0:
            raise ValueError("every must be positive")
        t0, t1 = int(self.submit.min()), int(self.submit.max())
        return list(range(t0 + every, t1 + 1, every))

    def play(self, points: list[int], decide, first: Candidate | None = None) -> np.ndarray:
        """Start times of every job, the candidate in effect chosen by ``decide(t, snapshot,
        history, current)`` at each point; ``first`` in effect before the first (default:
        the baseline)."""
        start = np.full(len(self.jobs), -1, np.int64)
        current = first or self.first
        t = int(self.submit.min()) - 1
        for n, nxt in enumerate([*points, None]):
            snap = self.snapshot(t, start, current.config)
            if current.enactment.partitions is not None:   # the layout in effect
                snap = routed(snap, current)
            if n > 0:
                current = decide(t, snap, self.history(t, start), current)
            arriving = self.submit > t
            if nxt is not None:
                arriving &= self.submit <= nxt
            arrivals = [self.jobs[k] for k in np.flatnonzero(arriving)]
            runtimes = {j.job_id: int(self.runtime[self.row[j.job_id]])
                        for j in (*snap.running, *snap.pending, *arrivals)}
            base = slurm_input(snap, runtimes, arrivals, config=current.config)
            inp = candidate_input(base, current, snap, nice_of(base, snap), runtimes, arrivals)
            began = candidate_starts(inp, current, snap, runtimes, arrivals, nxt)
            rows = np.array([self.row[int(i)] for i in inp.job_ids], np.int64)
            fresh = (start[rows] < 0) & (began >= 0)
            if nxt is not None:
                fresh &= began <= nxt
            start[rows[fresh]] = began[fresh]
            if nxt is None:
                break
            t = nxt
        return start

    def snapshot(self, t: int, start: np.ndarray, config: SchedulingConfig) -> Snapshot:
        """What the scheduler holds at t: a job started at or before t is running until its
        end (one ending exactly at t is gone); submitted by t and not started: pending."""
        known = self.submit <= t
        began = known & (start >= 0) & (start <= t)
        running = np.flatnonzero(began & (start + self.runtime > t))
        pending = np.flatnonzero(known & ((start < 0) | (start > t)))
        run_jobs = tuple(replace(self.jobs[k], state="RUNNING", start_time=int(start[k]),
                                 elapsed=int(t - start[k])) for k in running)
        snap = Snapshot(time=int(t), machine=self.machine, running=run_jobs,
                        pending=tuple(self.jobs[k] for k in pending), config=config,
                        source={"kind": "online replay"})
        if self.associations is None or self.association_rows is None:
            return snap
        usage = usage_at(self.associations, t, config.priority_decay_half_life,
                         self.association_rows, self.procs, start, start + self.runtime,
                         config.priority_usage_reset_period)
        return replace(snap, accounting=usage)

    def history(self, t: int, start: np.ndarray) -> pd.DataFrame:
        """The jobs finished by t (sacct's view then)."""
        done = np.flatnonzero((start >= 0) & (start + self.runtime <= t))
        played = pd.DataFrame({"user": self.users[done], "submit": self.submit[done],
                               "runtime": self.runtime[done], "limit": self.limit[done],
                               "cpus": self.procs[done], "nodes": self.procs[done],
                               "partition": TRACE_PARTITION,
                               "account": self.accounts[done], "qos": "", "mem_per_node": 0,
                               "mem_per_cpu": self.memory[done], "gpus": 0})
        if self.prior is None or not len(self.prior):
            return played
        return pd.concat([self.prior, played], ignore_index=True)


def trace_history(prior: pd.DataFrame | None, weeks: int | None = None
                  ) -> pd.DataFrame | None:
    """A trace's finished jobs (``history_from_workload``) as the online replay's advisor
    reads them: sacct's columns on the trace's partition, no CPU efficiency (none is
    known of the jobs it plays); ``weeks``: only the last ones, as the advisor fetches."""
    if prior is None:
        return None
    history = prior[[*HISTORY_COLUMNS, *ACCOUNTING_COLUMNS]].assign(partition=TRACE_PARTITION)
    if weeks is not None and len(history):
        submit = history["submit"].to_numpy(np.int64)
        history = history[submit > submit.max() - weeks * SECONDS_PER_WEEK]
    return history.reset_index(drop=True)


def compare(workload: Workload, runtime: np.ndarray, static: np.ndarray,
            online: np.ndarray) -> tuple[pd.DataFrame, dict]:
    """Per week of submission and overall: jobs, mean R, AvgWait and MaxWait of both."""
    submit = workload.jobs["submit"].to_numpy(np.int64)
    w_s, w_o = static - submit, online - submit
    s_s, s_o = lawson_slowdown(w_s, runtime), lawson_slowdown(w_o, runtime)
    ratio = (s_s - s_o) / np.minimum(s_s, s_o)
    table = pd.DataFrame({"week": (submit - submit.min()) // SECONDS_PER_WEEK, "r": ratio,
                          "wait_static": w_s, "wait_online": w_o,
                          "bsld_static": s_s, "bsld_online": s_o})
    weeks = table.groupby("week").agg(
        jobs=("r", "size"), r=("r", "mean"), avg_wait_static=("wait_static", "mean"),
        avg_wait_online=("wait_online", "mean"), max_wait_static=("wait_static", "max"),
        max_wait_online=("wait_online", "max"), avg_bsld_static=("bsld_static", "mean"),
        avg_bsld_online=("bsld_online", "mean")).reset_index()
    total = {"jobs": len(table), "r": float(ratio.mean()),
             "avg_wait_static": float(w_s.mean()), "avg_wait_online": float(w_o.mean()),
             "max_wait_static": float(w_s.max()), "max_wait_online": float(w_o.max()),
             "avg_bsld_static": float(s_s.mean()), "avg_bsld_online": float(s_o.mean()),
             "weeks_better": int((weeks["r"] > 0).sum()), "weeks": len(weeks)}
    return weeks, total
