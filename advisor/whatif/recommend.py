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
``history_floor``: ``reference_tails``); and job by job on the futures (``tail_push``): no
job waits beyond the reference's longest wait unless at most ``risk`` times its own wait
under it. The horizon grows from ``horizon`` to the queue's drain time, up to
``horizon_max`` (``drain_horizon``). The minimum dwell: within ``dwell`` of the last change
only an overwhelming win changes anything (each change is a reconfigure and reorders
users' jobs); hysteresis: the last recommendation stays unless beaten by another
``min_gain``. Lawson and Smirni's trigger (optional): simulate only when the queue's
bounded slowdown now exceeds ``trigger``. docs/recommend.md says why, with the figures.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple

import numpy as np
import pandas as pd

from advisor.engine import make_arrays, run

from advisor.metrics import bounded_slowdown
from advisor.model import SECONDS_PER_WEEK, Snapshot, job_limit
from advisor.plugins.grid import grid
from advisor.plugins.spec import Policy
from advisor.settings import LONG_QUEUE, Settings
from advisor.units import format_duration
from advisor.plugins.contract import Context
from advisor.whatif.candidates import Candidate, candidates_for, context_for, slurm_candidate
from advisor.whatif.past import PastReplay, replay_past
from advisor.whatif.racing import past_gain, past_safe, past_wins, risk_limit, sample_raced
from advisor.whatif.runner import Executor
from advisor.whatif.scenario import HIGHER_IS_BETTER, METRICS
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
    policies, left_out = ((list(settings.policies), "") if settings.policies else
                          grid(context))
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
                                settings.history_weeks)
    memo = {} if past_memo is None else past_memo
    costly = costly_to_replay(context, settings, policies) if settings.past else frozenset()
    past = (replay_past(snapshot, history, candidates, settings.history_weeks, executor,
                        costly, memo) if settings.past else None)
    results = (sample_raced(snapshot, history, candidates, settings, executor, past, ref,
                            previous, settings.risk * floor.max_wait if floor else None,
                            on_progress) if settings.samples
               else np.zeros((len(candidates), 0, len(METRICS))))
    dwell = (max(0, in_effect_since + settings.dwell - snapshot.time)
             if in_effect_since is not None else 0)
    chosen, reason, table = decide(candidates, results, settings, previous, ref, floor, past,
                                   dwell)
    # the winners too costly to replay at every decision are replayed before one is
    # recommended: judged on the futures alone, they may be over a limit on the past
    lazy = {candidates[i].spec for i, row in enumerate(table) if row["eligible"]
            and candidates[i].spec in costly and np.isnan(past.results[i]).all()
            } if past is not None else set()
    if lazy:
        past = replay_past(snapshot, history, candidates, settings.history_weeks, executor,
                           costly - lazy, memo)
        chosen, reason, table = decide(candidates, results, settings, previous, ref, floor,
                                       past, dwell)
    return Recommendation(snapshot.time, settings, candidates, results, chosen, reason, qb,
                          True, len(history), table, left_out, floor, past, missing)


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
                    weeks: int) -> Tails | None:
    """``reference`` on the jobs of the history's last ``weeks`` weeks (submitted then,
    finished by now), replayed from an empty machine of ``cpus`` CPUs by the textbook
    engine: a scale for the risk limits that one day's futures cannot give. None for a
    history of fewer than ``MIN_TAIL_JOBS`` jobs."""
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


#: how a reason names each objective's figure
WORDS = {"avg_wait": "the mean wait", "avg_bsld": "the mean bounded slowdown",
         "p95_wait": "the 95th-percentile wait", "utilization": "the idle CPU time"}
#: a change within the minimum dwell needs this many times ``min_gain`` in both the past
#: replayed and the futures (there in ``min_wins`` of the samples)
OVERWHELMING = 3.0
#: the futures agree with the past when the candidate is better on average and in at
#: least this share of the samples
AGREE = 0.5


def decide(candidates: list[Candidate], results: np.ndarray, settings: Settings,
           previous: str | None = None, ref: int = 0, floor: Tails | None = None,
           past: PastReplay | None = None, dwell: int = 0) -> tuple[int, str, list[dict]]:
    """The candidate to recommend (0: keep the configuration in effect), why, and the
    table. Candidates whose futures were not sampled (NaN) are never chosen."""
    k = METRICS.index(settings.objective)
    sign = -1.0 if settings.objective in HIGHER_IS_BETTER else 1.0
    obj = sign * results[:, :, k]                 # lower is better from here on
    sampled = ~np.isnan(obj).all(axis=1) if obj.shape[1] else np.zeros(len(obj), bool)
    # racing samples some candidates more than others: each is compared with the
    # configuration in effect on its own samples (NaN: not drawn for it)
    drawn = ~np.isnan(obj)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a row never sampled: NaN
        mean = np.nanmean(obj, axis=1)
        base_mean = np.nanmean(np.where(drawn, obj[0], np.nan), axis=1)
        scale = max(abs(float(mean[0])), 1e-9)
        gain = (base_mean - mean) / scale         # relative improvement of the means
        wins = (drawn & (obj < obj[0])).sum(axis=1) / np.maximum(drawn.sum(axis=1), 1)
        max_wait = np.nanmean(results[:, :, METRICS.index("max_wait")], axis=1)
        p95 = np.nanmean(results[:, :, METRICS.index("p95_wait")], axis=1)
        push = np.nanmean(results[:, :, METRICS.index("tail_push")], axis=1)
        figures = np.nanmean(results, axis=1)
        spreads = np.nanstd(results, axis=1)
    counts = drawn.sum(axis=1)
    limit_max = risk_limit(settings.risk, max_wait[ref], floor.max_wait if floor else 0.0)
    limit_p95 = risk_limit(settings.risk, p95[ref], floor.p95_wait if floor else 0.0)
    with np.errstate(invalid="ignore"):
        p_gain = (past_gain(past, settings.objective) if past is not None
                  else np.full(len(candidates), np.nan))
        p_wins = (past_wins(past, settings.objective) if past is not None
                  else np.full(len(candidates), np.nan))
        steady = (p_wins >= settings.min_wins) if settings.steady else True
        replayed = ~np.isnan(p_gain)
        # MaxWait and p95 wait judged on the weeks replayed where there are some (the scale
        # a site judges them on; a day's futures are small and noisy), else on the futures
        breaks = {"max_wait": ~replayed & (max_wait > limit_max),
                  "p95_wait": ~replayed & (p95 > limit_p95),
                  "tail_push": sampled & ~(push <= settings.risk),
                  # (the reference may replace the site's policy: it is judged against,
                  # never recommended, unless the site allows it)
                  "site_policy": np.array([bool(c.overrides) for c in candidates])
                  & (not settings.replace_site_policy)}
        if past is not None:
            breaks["past"] = replayed & ~past_safe(past, ref, settings.risk)
        # no futures at all (--samples 0): the past replayed alone decides
        futures = results.shape[1] > 0
        safe = (sampled if futures else replayed) & ~np.logical_or.reduce(list(
            breaks.values()))
        # a candidate with a replay must have done better on the weeks replayed and not
        # worse on the futures; one without, overwhelmingly better on the futures
        strong = OVERWHELMING * settings.min_gain
        by_past = replayed & (p_gain >= settings.min_gain) & steady & (
            ((gain > 0) & (wins >= AGREE)) if futures else True)
        bar = strong if past is not None else settings.min_gain
        by_futures = ~replayed & (gain >= bar) & (wins >= settings.min_wins)
    ev = Evidence(gain, wins, counts, p_gain, p_wins)
    ok = safe & (by_past | by_futures)
    ok[0] = False
    score = np.where(replayed, p_gain, gain)
    table = []
    for i, c in enumerate(candidates):
        row = {"spec": c.spec, "label": c.label, "fidelity": c.fidelity,
               "gain": _finite(gain[i]), "wins": float(wins[i]), "safe": bool(safe[i]),
               "past_gain": _finite(p_gain[i]), "past_wins": _finite(p_wins[i]),
               "sampled": bool(sampled[i]),
               "over": [name for name, over in breaks.items() if over[i]],
               "eligible": bool(ok[i])}
        row["samples"] = int(drawn[i].sum())
        for m, name in enumerate(METRICS):
            # JSON has no infinity: a job that never starts (tail_push) is null
            row[name] = _finite(figures[i, m]) if sampled[i] else None
            row[name + "_sd"] = _finite(spreads[i, m]) if sampled[i] else None
            if past is not None:
                row["past_" + name] = _finite(past.results[i, m])
        table.append(row)
    # with a replay, the configuration in effect is over a limit when it is so over the
    # weeks replayed: one day's futures would have it bounce in and out
    over_now = bool(breaks["past"][0]) if past is not None and replayed[0] else not safe[0]
    if over_now and safe[1:].any():
        # the configuration in effect breaks a limit set by the reference: the best
        # candidate within the limits replaces it, gain or not, dwell or not
        chosen = 1 + int(np.argmax(np.where(safe[1:], np.nan_to_num(score[1:], nan=-np.inf),
                                            -np.inf)))
        return chosen, (f"the configuration in effect is over a risk limit against "
                        f"{candidates[ref].label}; {candidates[chosen].label} is the best "
                        f"within them ({_evidence(chosen, ev, settings, past)})"), table
    if not ok.any():
        return 0, _no_change(candidates, ev, safe, settings, past), table
    chosen = int(np.argmax(np.where(ok, score, -np.inf)))
    prev = next((i for i, c in enumerate(candidates) if c.spec == previous), None)
    if prev is not None and ok[prev] and prev != chosen:
        if score[chosen] - score[prev] < settings.min_gain:
            return prev, (f"{candidates[prev].label} (recommended last time) still wins "
                          f"({_evidence(prev, ev, settings, past)}); "
                          f"{candidates[chosen].label} is not better by "
                          f"{settings.min_gain:.0%} (hysteresis)"), table
    evidence = _evidence(chosen, ev, settings, past)
    if dwell > 0:
        # (a candidate without a replay, as a plan, waits out the dwell when there is one)
        on_past = p_gain[chosen] >= strong if replayed[chosen] else past is None
        on_futures = not futures or (gain[chosen] >= strong and
                                     wins[chosen] >= settings.min_wins)
        if not (on_futures and on_past):
            return 0, (f"no change yet: {candidates[chosen].label} would win ({evidence}), "
                       f"but the configuration in effect was put in effect less than "
                       f"{format_duration(settings.dwell)} ago (the minimum dwell): it "
                       f"changes in {format_duration(dwell)} at the earliest, unless a "
                       f"candidate wins by {strong:.0%}"
                       + (" on both" if futures else "")), table
    return chosen, f"{candidates[chosen].label}: {evidence}", table


def decision_rules(settings: Settings = Settings()) -> list[str]:
    """The rules ``decide`` applies, in words, with ``settings``' values: the one statement
    of them (docs/recommend.md prints them for the defaults, and a test checks it does)."""
    gain, wins = f"{settings.min_gain:.0%}", f"{settings.min_wins:.0%}"
    strong = f"{OVERWHELMING * settings.min_gain:.0%}"
    return [
        f"A candidate with a replay wins when, on the weeks replayed, it beats the "
        f"configuration in effect by --min-gain ({gain})"
        + (f" and is better in --min-wins ({wins}) of those weeks" if settings.steady
           else "")
        + f", and its sampled futures agree: better on average and in at least "
        f"{AGREE:.0%} of the futures sampled for it.",
        f"A candidate without a replay (its family has none, or it is too costly to replay "
        f"at each decision) wins on its futures alone: better by {OVERWHELMING:g} x --min-gain "
        f"({strong}) in --min-wins ({wins}) of them ({gain} when the past is not "
        f"replayed, --no-past).",
        "Only a candidate within every risk limit wins; of the winners, the best on the "
        "weeks replayed (on the futures, for one without a replay) is recommended. A "
        "configuration in effect over a risk limit on the weeks replayed is replaced at "
        "once by the best candidate within them, whatever its gain and the dwell.",
        f"Within --dwell ({format_duration(settings.dwell)}) of the last change, a "
        f"winner is recommended only by {strong} on both the past and the futures (there "
        f"in --min-wins, {wins}, of them); the last recommendation stays unless another "
        f"winner beats it by --min-gain ({gain}).",
    ]


class Evidence(NamedTuple):
    """Per candidate, against the configuration in effect: on the futures, the gain, the
    share of samples it wins and how many it had; on the past replayed, the gain and the
    share of weeks it wins."""

    gain: np.ndarray
    wins: np.ndarray
    counts: np.ndarray
    p_gain: np.ndarray
    p_wins: np.ndarray


def _evidence(i: int, ev: Evidence, settings: Settings, past: PastReplay | None) -> str:
    """The evidence for candidate ``i`` against the configuration in effect, in words."""
    what = WORDS[settings.objective]
    gain, wins, p_gain = ev.gain, ev.wins, ev.p_gain
    parts = []
    if past is not None and not np.isnan(p_gain[i]):
        weeks = past.weekly.shape[1]
        won = ("" if np.isnan(ev.p_wins[i]) else
               f" (better in {round(ev.p_wins[i] * weeks)} of the {weeks} weeks)")
        parts.append(f"over the last {weeks} weeks replayed ({past.jobs:,} jobs) it would "
                     f"have {_cut(p_gain[i])} {what} by {abs(p_gain[i]):.0%}{won}")
    samples = int(ev.counts[i])
    if not np.isnan(gain[i]):
        span = (format_duration(settings.horizon) if settings.horizon % 3600 == 0
                else f"{settings.horizon / 3600:.0f}h")
        parts.append(f"over {samples} sampled futures of {span} from now, "
                     f"{_cut(gain[i])} it by "
                     f"{abs(gain[i]):.0%} (better in {round(wins[i] * samples)} of {samples})")
    return "; ".join(parts) or "no evidence"


def _cut(gain: float) -> str:
    return "cut" if gain >= 0 else "raised"


def _no_change(candidates, ev: Evidence, safe, settings: Settings,
               past: PastReplay | None) -> str:
    """Why nothing is recommended: the best candidate's evidence and what it lacks."""
    p_gain = ev.p_gain
    score = np.where(np.isnan(p_gain), ev.gain, p_gain)
    score[0] = -np.inf
    if len(candidates) < 2 or not np.isfinite(score).any():
        return "no candidate beats the configuration in effect"
    best = int(np.nanargmax(score))
    lacks = ("it is over a risk limit" if not safe[best] else
             f"it does not win by {settings.min_gain:.0%} on the weeks replayed"
             + (f" in {settings.min_wins:.0%} of them" if settings.steady else "")
             + " with the futures agreeing" if not np.isnan(p_gain[best]) else
             f"it does not win by {settings.min_gain:.0%} in {settings.min_wins:.0%} of "
             f"the futures")
    return (f"no change: the best candidate, {candidates[best].label} "
            f"({_evidence(best, ev, settings, past)}), is not "
            f"enough: {lacks}")


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
