"""From a snapshot to a recommendation: weigh every candidate on two kinds of evidence
against the configuration in effect, keep what is within the risk limits, and recommend a
change only when it clearly wins, and not too often.

* The recent past replayed (``advisor.whatif.past``): the last weeks of finished jobs
  played again under each candidate, what a site tuning by hand reads off its log.
* Sampled futures from the exact state (``advisor.whatif.futures``), raced
  (``advisor.whatif.racing``): only the candidates best on the past, and those without a
  replay, are sampled; the clearly losing are dropped after a few samples; a close call
  gets more.

A candidate with a replay wins when it did better than the configuration in effect on the
weeks replayed by ``min_gain`` and its futures agree (better on average and in ``AGREE`` of
the samples); one without a replay (a plan,
a candidate too costly to replay) when its futures are better by ``OVERWHELMING`` times
``min_gain`` in ``min_wins`` of the samples. Risk limits: MaxWait and p95 wait at most
``risk`` times the reference's (the configuration in effect, or a site's own baseline so
that a run of changes cannot ratchet the limits up), judged on the weeks replayed where
there are some (the scale a site judges its longest waits on) else on the futures (plus
``RISK_SLACK`` seconds, floored by the reference's tails on the recent past with
``history_floor``: ``reference_tails``); MaxWait on the futures too wherever they tell a
candidate apart (they start from the queue as it is, the jobs waiting longest included: a
change either shows over the limit is not made); and job by job on the futures
(``tail_push``): no job waits beyond the reference's longest wait unless at most ``risk``
times its own wait under it. The horizon grows from ``horizon`` to the queue's drain time,
up to ``horizon_max`` (``drain_horizon``). The minimum dwell: within ``dwell`` of the
last change only an overwhelming win changes anything (each change is a reconfigure and
reorders users' jobs); hysteresis: the last recommendation stays unless beaten by another
``min_gain``. Lawson and Smirni's trigger (optional): simulate only when the queue's
bounded slowdown now exceeds ``trigger``. docs/recommend.md says why, with the figures.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple

import numpy as np
import pandas as pd

from advisor.bounds import LONG_QUEUE
from advisor.engine import make_arrays, run
from advisor.metrics import bounded_slowdown
from advisor.model import SECONDS_PER_WEEK, Snapshot, job_limit
from advisor.plugins.contract import Context
from advisor.plugins.grid import grid
from advisor.plugins.knob import is_knob
from advisor.plugins.spec import Policy
from advisor.settings import Settings
from advisor.whatif.candidates import Candidate, candidates_for, context_for, slurm_candidate
from advisor.whatif.decision import decide
from advisor.whatif.fairness import AccountTally
from advisor.whatif.past import PastReplay, replay_past
from advisor.whatif.racing import sample_raced
from advisor.whatif.runner import Executor
from advisor.whatif.scenario import METRICS
from advisor.whatif.site_policy import keep_site_policy
from advisor.whatif.unplayed import describe, unplayed

#: a history with fewer recent jobs gives the risk limits no floor
MIN_TAIL_JOBS = 20


@dataclass(frozen=True)
class Recommendation:
    snapshot_time: int
    settings: Settings
    candidates: list[Candidate]
    results: np.ndarray          # (candidates, samples, metrics)
    chosen: int                  # index into candidates; 0 = keep the configuration
    reason: str
    queue_bsld: float
    triggered: bool = True
    history_jobs: int = 0
    table: list[dict] = field(default_factory=list)
    left_out: str = ""           # what the default grid left out, and why
    floor: "Tails | None" = None  # the reference's tails on the history (limits' floor)
    past: PastReplay | None = None  # the candidates on the last weeks replayed
    unplayed: dict[str, int] = field(default_factory=dict)  # ``whatif.unplayed``

    @property
    def change(self) -> bool:
        return self.chosen != 0

    def as_dict(self) -> dict:
        return {"snapshot_time": self.snapshot_time, "change": self.change,
                "chosen": self.candidates[self.chosen].as_dict(), "reason": self.reason,
                "queue_bsld": self.queue_bsld, "triggered": self.triggered,
                "history_jobs": self.history_jobs, "left_out": self.left_out,
                "settings": self.settings.as_dict(),
                "reference_tails": self.floor._asdict() if self.floor else None,
                "unplayed": self.unplayed, "unplayed_note": describe(self.unplayed),
                "candidates": self.table}


def queue_slowdown(snapshot: Snapshot) -> float:
    """Lawson and Smirni's trigger measure, from what is known now: the mean bounded slowdown
    the pending jobs would have if they started now and ran to their limits."""
    if not snapshot.pending:
        return 1.0
    wait = np.array([snapshot.time - j.submit_time for j in snapshot.pending], float)
    limit = np.array([job_limit(j, snapshot.machine) for j in snapshot.pending], float)
    return float(bounded_slowdown(np.maximum(wait, 0), limit).mean())


def grid_for(context: Context, settings: Settings) -> tuple[list[Policy], str]:
    """The policies a recommendation simulates: ``settings.policies``, else the default
    grid (without the knobs under ``--no-knobs``), and what a long queue left out of it."""
    if settings.policies:
        return list(settings.policies), ""
    policies, left_out = grid(context)
    return [p for p in policies if settings.knobs or not is_knob(p)], left_out


def recommend(snapshot: Snapshot, history: pd.DataFrame, settings: Settings = Settings(),
              executor: Executor | None = None, previous: str | None = None,
              on_progress: Callable[[int, int], None] | None = None,
              site: object | None = None, route: object | None = None,
              in_effect_since: int | None = None, past_memo: dict | None = None
              ) -> Recommendation:
    """Simulate, compare, decide. ``history``: finished jobs (``advisor.whatif.futures``);
    ``previous``: the spec recommended last time (hysteresis); ``site`` and ``route``: the
    site-factor rule and the route in effect, when known; ``in_effect_since``: when the
    configuration in effect was put in effect (the minimum dwell), when known;
    ``past_memo``: the past replays made already this week (``replay_past``)."""
    context = context_for(snapshot, history, settings.conservative_up_to)
    policies, left_out = grid_for(context, settings)
    candidates = candidates_for(snapshot, policies, site, route, context=context)
    missing = unplayed(snapshot)
    if missing:
        candidates = [replace(c, unplayed=describe(missing)) for c in candidates]
    if not settings.replace_site_policy:
        candidates, kept_out = keep_site_policy(candidates, bool(settings.policies),
                                                snapshot.config, snapshot.machine)
        left_out = "; ".join(t for t in (left_out, kept_out) if t)
    ref = reference_index(candidates, settings.reference, context)
    qb = queue_slowdown(snapshot)
    empty = np.zeros((len(candidates), 0, len(METRICS)))
    if settings.trigger is not None and qb <= settings.trigger:
        return Recommendation(snapshot.time, settings, candidates, empty, 0,
                              f"queue bounded slowdown {qb:.2f} is within the trigger "
                              f"{settings.trigger:g}: nothing simulated", qb, False,
                              len(history), left_out=left_out, unplayed=missing)
    if settings.horizon_max > settings.horizon:
        settings = replace(settings, horizon=drain_horizon(snapshot, settings))
    floor = None
    if settings.history_floor and settings.reference is not None:
        floor = reference_tails(history, snapshot.machine.cpus, settings.reference,
                                settings.history_weeks,
                                60 * snapshot.config.over_time_limit)
    memo = {} if past_memo is None else past_memo
    # (the rolling pick reads every candidate's replay: the costly ones too, once a week)
    costly = (costly_to_replay(context, settings, policies)
              if settings.past and settings.decision != "rolling" else frozenset())
    past = (replay_past(snapshot, history, candidates, settings.history_weeks, executor,
                        costly, memo) if settings.past else None)
    tally = AccountTally(len(candidates))
    results = (sample_raced(snapshot, history, candidates, settings, executor, past, ref,
                            previous, settings.risk * floor.max_wait if floor else None,
                            on_progress, tally) if settings.samples
               else np.zeros((len(candidates), 0, len(METRICS))))
    dwell = (max(0, in_effect_since + settings.dwell - snapshot.time)
             if in_effect_since is not None else 0)
    chosen, reason, table = decide(candidates, results, settings, previous, ref, floor, past,
                                   dwell)
    # a candidate too costly to replay at every decision is replayed before it is
    # recommended, as a winner or as the best within the limits replacing one over them:
    # judged on its futures alone, it may be over a limit on the past (each round
    # replays some of ``costly``, so the rounds end)
    while lazy := _unreplayed(candidates, table, chosen, costly, past):
        costly = costly - lazy
        past = replay_past(snapshot, history, candidates, settings.history_weeks, executor,
                           costly, memo)
        chosen, reason, table = decide(candidates, results, settings, previous, ref, floor,
                                       past, dwell)
    for i, row in enumerate(table):
        row["accounts"] = tally.figures(i)
    return Recommendation(snapshot.time, settings, candidates, results, chosen, reason, qb,
                          True, len(history), table, left_out, floor, past, missing)


def _unreplayed(candidates: list[Candidate], table: list[dict], chosen: int,
                costly: frozenset[str], past: PastReplay | None) -> frozenset[str]:
    """The specs in ``costly`` of the winners (``eligible``) and of the candidate
    ``chosen`` that have no replay yet (none without a past: nothing to replay)."""
    if past is None:
        return frozenset()
    return frozenset(c.spec for i, c in enumerate(candidates)
                     if (table[i]["eligible"] or i == chosen) and c.spec in costly
                     and c.enactment.replayable and np.isnan(past.results[i]).all())


def costly_to_replay(context: Context, settings: Settings,
                     policies: list[Policy]) -> frozenset[str]:
    """Of the default grid's ``policies``, those a long queue leaves out
    (``advisor.whatif.past``): none when the candidates are named."""
    if settings.policies:
        return frozenset()
    long = replace(context, pending=LONG_QUEUE + 1, long_queue=LONG_QUEUE)
    points: dict[str, tuple[tuple, tuple]] = {}   # each plugin's candidates: now, long queue

    def left_out(choice) -> bool:
        plugin = choice.plugin
        if plugin.key not in points:
            points[plugin.key] = (plugin.candidates(context), plugin.candidates(long))
        now, on_long = points[plugin.key]
        return choice.params in now and choice.params not in on_long

    # (what the grid of a long queue would leave out, without enacting it again)
    return frozenset(p.spec for p in policies if any(left_out(c) for c in p.choices))


class Tails(NamedTuple):
    """A policy's MaxWait and p95 wait (s, from submission) over a stretch of history."""

    max_wait: float
    p95_wait: float
    jobs: int


def reference_tails(history: pd.DataFrame, cpus: int, reference: Policy,
                    weeks: int, over_time: int = 0) -> Tails | None:
    """``reference`` on the jobs of the history's last ``weeks`` weeks (submitted then,
    finished by now), replayed from an empty machine of ``cpus`` CPUs by the textbook
    engine: a scale for the risk limits that one day's futures cannot give. A job that
    overran its limit runs to the limit plus ``over_time`` (s), as Slurm kills it. None
    for a history of fewer than ``MIN_TAIL_JOBS`` jobs."""
    if history is None or not len(history):
        return None
    submit = history["submit"].to_numpy(np.int64)
    recent = history[(submit > submit.max() - weeks * SECONDS_PER_WEEK)
                     & (history["runtime"].to_numpy() >= 0)]
    if len(recent) < MIN_TAIL_JOBS:
        return None
    recent = recent.sort_values("submit", kind="mergesort")
    runtime = recent["runtime"].to_numpy(np.int64)
    limit = recent["limit"].to_numpy(np.int64)
    sub = recent["submit"].to_numpy(np.int64)
    runtime = np.where(limit > 0, np.minimum(runtime, limit + over_time), runtime)
    estimate = np.where(limit > 0, np.maximum(limit, runtime), runtime)
    arrays = make_arrays(sub, runtime, estimate,
                         np.clip(recent["cpus"].to_numpy(np.int64), 1, cpus), cpus)
    start, _ = run(arrays, reference.engine_config())
    wait = (start - sub).astype(np.float64)
    return Tails(float(wait.max()), float(np.percentile(wait, 95)), len(wait))


def drain_horizon(snapshot: Snapshot, settings: Settings) -> int:
    """The time the machine needs to run the pending jobs' limits (their CPU-seconds over
    its CPUs), between ``settings.horizon`` and ``settings.horizon_max`` (when larger)."""
    work = sum(j.cpus * job_limit(j, snapshot.machine) for j in snapshot.pending)
    drain = work // max(snapshot.machine.cpus, 1)
    return int(max(min(drain, settings.horizon_max), settings.horizon))


def reference_index(candidates: list[Candidate], policy: Policy | None,
                    context: Context) -> int:
    """Where the risk limits' reference is among ``candidates`` (appended when the grid
    lacks it); 0, the configuration in effect, when none is given."""
    if policy is None:
        return 0
    ref = slurm_candidate(policy, context)
    for i, c in enumerate(candidates):
        if c.enacts == ref.enacts:
            return i
    candidates.append(ref)
    return len(candidates) - 1
