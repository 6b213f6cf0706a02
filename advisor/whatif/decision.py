"""The decision, as its rules: which candidate is recommended from the evidence, and why.

``decide`` composes the rules, each a function of its own with its own test
(``tests/unit/whatif/test_decision.py``):

* ``weigh``: the evidence, per candidate against the configuration in effect: on the
  sampled futures, the gain of the means and the share of samples won; on the weeks
  replayed, the gain and the share of weeks won;
* ``RISK_LIMITS``: each limit a candidate may break (``risk_breaks`` applies them all);
* ``wins_on_past``: a candidate with a replay wins on the weeks replayed, its futures
  agreeing; ``wins_on_futures``: one without a replay (a plan, a costly candidate) wins
  on its futures alone, overwhelmingly when the past is replayed for the others;
* then, in order: ``replaces_over_limit`` (the configuration in effect over a limit is
  replaced by the best within them), ``no_winner``, ``kept_by_hysteresis`` (the last
  recommendation stays unless beaten by ``min_gain``), ``held_by_dwell`` (within the
  minimum dwell only an overwhelming win changes anything), else the best winner.

The rules return what they found (a ``Decision``); ``reason`` puts it in words and
``table`` makes the JSON rows, from those results alone.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from advisor.settings import Settings
from advisor.units import format_duration
from advisor.whatif.candidates import Candidate
from advisor.whatif.past import PAST_OBJECTIVES, PastReplay
from advisor.whatif.racing import (PAST_RISK_FIGURES, past_gain, past_safe, past_within,
                                   past_wins, risk_limit)
from advisor.whatif.scenario import HIGHER_IS_BETTER, METRICS

#: how a reason names each objective's figure
WORDS = {"avg_wait": "the mean wait", "avg_bsld": "the mean bounded slowdown",
         "p95_wait": "the 95th-percentile wait", "utilization": "the idle CPU time"}
#: a change within the minimum dwell needs this many times ``min_gain`` in both the past
#: replayed and the futures (there in ``min_wins`` of the samples)
OVERWHELMING = 3.0
#: the futures agree with the past when the candidate is better on average and in at
#: least this share of the samples
AGREE = 0.5
#: a source of evidence is silent about a candidate that ties the configuration in effect
#: in every one of its futures (none built a queue for them to order differently) or of
#: its weeks replayed: it counts neither for nor against it. Ties only: futures within
#: their noise, taken as silent too, did worse on the tuning set (docs/advice.md)
TIE = 1e-9


class Evidence(NamedTuple):
    """Per candidate, against the configuration in effect: on the futures, the gain (of
    the objective's means, > 0 better), the share of samples it wins and how many it had,
    and the means and spreads of every metric; on the past replayed, the gain and the share
    of weeks it wins (NaN: not replayed)."""

    gain: np.ndarray
    wins: np.ndarray
    counts: np.ndarray
    p_gain: np.ndarray
    p_wins: np.ndarray
    figures: np.ndarray          # (candidates, metrics): means over its samples
    spreads: np.ndarray          # their standard deviations
    futures: bool                # any future was sampled (--samples 0: none)
    told: np.ndarray | None = None     # the futures tell it apart (None: all do)
    p_told: np.ndarray | None = None   # some week replayed does (None: all replayed do)

    @property
    def sampled(self) -> np.ndarray:
        return self.counts > 0

    @property
    def replayed(self) -> np.ndarray:
        return ~np.isnan(self.p_gain)

    @property
    def futures_told(self) -> np.ndarray:
        return np.ones(len(self.gain), bool) if self.told is None else self.told

    @property
    def on_past(self) -> np.ndarray:
        """Judged on the weeks replayed: replayed, and not tied in every week (a silent
        replay: the futures judge it, as one without)."""
        return self.replayed if self.p_told is None else self.replayed & self.p_told

    def metric(self, name: str) -> np.ndarray:
        return self.figures[:, METRICS.index(name)]


def weigh(results: np.ndarray, settings: Settings, past: PastReplay | None) -> Evidence:
    """The evidence from the futures' ``results`` (candidates, samples, metrics; NaN: not
    drawn, racing samples some more than others: each is compared with the configuration
    in effect on its own samples) and the weeks replayed."""
    k = METRICS.index(settings.objective)
    sign = -1.0 if settings.objective in HIGHER_IS_BETTER else 1.0
    obj = sign * results[:, :, k]                 # lower is better from here on
    drawn = ~np.isnan(obj)
    n = len(results)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)      # a row never sampled: NaN
        mean = np.nanmean(obj, axis=1)
        base_mean = np.nanmean(np.where(drawn, obj[0], np.nan), axis=1)
        scale = max(abs(float(mean[0])), 1e-9)
        gain = (base_mean - mean) / scale         # relative improvement of the means
        wins = (drawn & (obj < obj[0])).sum(axis=1) / np.maximum(drawn.sum(axis=1), 1)
        figures = np.nanmean(results, axis=1)
        spreads = np.nanstd(results, axis=1)
        p_gain = past_gain(past, settings.objective) if past is not None else \
            np.full(n, np.nan)
        p_wins = past_wins(past, settings.objective) if past is not None else \
            np.full(n, np.nan)
        paired = drawn & drawn[0]
        told = tells_apart(np.where(paired, obj[0] - obj, np.nan) / scale)
        p_told = (tells_apart(_weekly_gains(past, settings.objective)) if past is not None
                  else np.zeros(n, bool))
    return Evidence(gain, wins, drawn.sum(axis=1), p_gain, p_wins, figures, spreads,
                    results.shape[1] > 0, told, p_told)


def tells_apart(diffs: np.ndarray) -> np.ndarray:
    """Per row of relative differences from the configuration in effect (NaN: none): some
    pair differs by more than ``TIE``."""
    return (np.nan_to_num(np.abs(diffs)) > TIE).any(axis=1)


def _weekly_gains(past: PastReplay, objective: str) -> np.ndarray:
    """(candidates, weeks): each week's objective against the configuration in effect's
    (NaN where either has none, or the replay cannot judge ``objective``)."""
    if objective not in PAST_OBJECTIVES:
        return np.full((len(past.results), 1), np.nan)
    weekly = past.by_week(objective)
    return (weekly[0] - weekly) / max(abs(float(past.figure(objective)[0])), 1e-9)


@dataclass(frozen=True)
class Limits:
    """What the risk limits are set from: the reference's index, its tails on the history
    (the floor), the weeks replayed."""

    ref: int = 0
    floor: object | None = None          # ``recommend.Tails``: max_wait, p95_wait
    past: PastReplay | None = None


def _over_max_wait(ev: Evidence, candidates, settings: Settings, lim: Limits) -> np.ndarray:
    """MaxWait on the futures over --risk times the reference's, for every candidate they
    tell apart: the weeks replayed start from an idle machine and hold only the jobs
    finished by now, the futures start from the queue as it is, the jobs waiting longest
    included (a candidate without a replay is judged there even when they are silent)."""
    max_wait = ev.metric("max_wait")
    limit = risk_limit(settings.risk, max_wait[lim.ref],
                       lim.floor.max_wait if lim.floor else 0.0)
    with np.errstate(invalid="ignore"):
        return (~ev.on_past | ev.futures_told) & (max_wait > limit)


def _over_p95_wait(ev: Evidence, candidates, settings: Settings, lim: Limits) -> np.ndarray:
    """The same for the 95th-percentile wait."""
    p95 = ev.metric("p95_wait")
    limit = risk_limit(settings.risk, p95[lim.ref], lim.floor.p95_wait if lim.floor else 0.0)
    with np.errstate(invalid="ignore"):
        return ~ev.on_past & (p95 > limit)


def _over_push(ev: Evidence, candidates, settings: Settings, lim: Limits) -> np.ndarray:
    """A job pushed past the reference's longest wait by over --risk times its own wait."""
    with np.errstate(invalid="ignore"):
        return ev.sampled & ~(ev.metric("tail_push") <= settings.risk)


def _over_site(ev: Evidence, candidates, settings: Settings, lim: Limits) -> np.ndarray:
    """It would replace the site's priority policy, which the site has not allowed (the
    reference may: it is judged against, never recommended)."""
    return np.array([bool(c.overrides) for c in candidates]) & \
        (not settings.replace_site_policy)


def _over_fairness(ev: Evidence, candidates, settings: Settings, lim: Limits
                   ) -> np.ndarray:
    """On the futures, an account's mean wait over --risk times its own under the
    reference, or the fair-share deviation over the reference's by more than
    --share-slack (``advisor.whatif.fairness``)."""
    deviation = ev.metric("share_dev")
    with np.errstate(invalid="ignore"):
        return ev.sampled & ((ev.metric("account_wait") > settings.risk)
                             | (deviation > deviation[lim.ref] + settings.share_slack))


def _over_past(ev: Evidence, candidates, settings: Settings, lim: Limits) -> np.ndarray:
    """MaxWait or p95 wait over the limit on the weeks replayed."""
    if lim.past is None:
        return np.zeros(len(candidates), bool)
    return ev.replayed & ~past_safe(lim.past, lim.ref, settings.risk)


#: each risk limit by the name the table gives it ("over")
RISK_LIMITS: dict[str, Callable[..., np.ndarray]] = {
    "max_wait": _over_max_wait, "p95_wait": _over_p95_wait, "tail_push": _over_push,
    "fairness": _over_fairness, "site_policy": _over_site, "past": _over_past}


#: how a reason names each risk limit
LIMIT_WORDS = {"max_wait": "MaxWait on the futures", "p95_wait": "p95 wait on the futures",
               "tail_push": "a job pushed past the longest wait on the futures",
               "fairness": "an account's mean wait or the fair-share deviation on the "
                           "futures",
               "site_policy": "replacing the site's priority policy",
               "past": "MaxWait or p95 wait on the weeks replayed"}
if LIMIT_WORDS.keys() != RISK_LIMITS.keys():   # a limit without words fails here, not mid-run
    raise ImportError("decision.LIMIT_WORDS must name every limit of RISK_LIMITS")


def risk_breaks(ev: Evidence, candidates, settings: Settings, lim: Limits
                ) -> dict[str, np.ndarray]:
    """Each risk limit, and which candidates break it (the past's only when replayed)."""
    names = [n for n in RISK_LIMITS if n != "past" or lim.past is not None]
    return {n: RISK_LIMITS[n](ev, candidates, settings, lim) for n in names}


def within_limits(ev: Evidence, breaks: dict[str, np.ndarray]) -> np.ndarray:
    """The candidates with evidence (futures sampled, or with --samples 0 the past
    replayed) that break no limit."""
    evidence = ev.sampled if ev.futures else ev.replayed
    return evidence & ~np.logical_or.reduce(list(breaks.values()))


def wins_on_past(ev: Evidence, settings: Settings) -> np.ndarray:
    """A candidate judged on the weeks replayed beats the configuration in effect there
    by min_gain (in min_wins of them when ``steady``), and its futures do not disagree:
    they are silent about it (it ties in every one: ``tells_apart``), or it is better on
    average and in ``AGREE`` of its samples."""
    with np.errstate(invalid="ignore"):
        steady = (ev.p_wins >= settings.min_wins) if settings.steady else True
        agree = ((ev.gain > 0) & (ev.wins >= AGREE)) | ~ev.futures_told if ev.futures \
            else True
        return ev.on_past & (ev.p_gain >= settings.min_gain) & steady & agree


def wins_on_futures(ev: Evidence, settings: Settings, past_replayed: bool) -> np.ndarray:
    """A candidate not judged on the weeks replayed (none, or silent) wins on its futures
    alone: better by OVERWHELMING times min_gain (min_gain when no past is replayed) in
    min_wins of its samples."""
    bar = OVERWHELMING * settings.min_gain if past_replayed else settings.min_gain
    with np.errstate(invalid="ignore"):
        return ~ev.on_past & (ev.gain >= bar) & (ev.wins >= settings.min_wins)


def score(ev: Evidence) -> np.ndarray:
    """What ranks the winners: the gain on the weeks replayed, else on the futures."""
    return np.where(ev.on_past, ev.p_gain, ev.gain)


@dataclass(frozen=True)
class Decision:
    """What the rules found: the candidate ``chosen`` (0: keep the configuration in
    effect), the ``rule`` that chose it, and the candidate that rule weighed (``best``:
    the best winner the hysteresis or the dwell held back)."""

    chosen: int
    rule: str              # over_limit, no_winner, hysteresis, dwell, wins
    best: int = 0


def picked_by_rolling(ev: Evidence, safe: np.ndarray) -> np.ndarray:
    """``--decision rolling``'s winners, the hand rule a site applies to its log: judged on
    the weeks replayed, within every risk limit, better there than the configuration in
    effect, and not told apart as worse by the futures (a check: silent futures, or
    better ones, let it pass)."""
    with np.errstate(invalid="ignore"):
        against = ev.futures_told & (ev.gain < 0) if ev.futures else False
        return ev.on_past & safe & (ev.p_gain > 0) & ~against


def replaces_over_limit(ev: Evidence, breaks, safe: np.ndarray, past_replayed: bool
                        ) -> Decision | None:
    """The configuration in effect over a risk limit (on the weeks replayed, when it has
    a replay: one day's futures would have it bounce in and out) is replaced by the best
    candidate within them, gain or not, dwell or not: the best on the weeks replayed
    when some candidate within them is judged there, else on futures that tell it apart,
    else on its futures (a gain on the futures and one on the past are not one scale)."""
    over_now = bool(breaks["past"][0]) if past_replayed and ev.replayed[0] else not safe[0]
    if not over_now or not safe[1:].any():
        return None
    pool = next(p for p in (safe & ev.on_past, safe & ev.futures_told, safe) if p[1:].any())
    ranked = np.where(pool[1:], np.nan_to_num(score(ev)[1:], nan=-np.inf), -np.inf)
    return Decision(1 + int(np.argmax(ranked)), "over_limit")


def kept_by_hysteresis(ev: Evidence, ok: np.ndarray, best: int, prev: int | None,
                       settings: Settings) -> Decision | None:
    """The candidate recommended last time stays while it wins, unless ``best`` beats it
    by min_gain."""
    if prev is None or not ok[prev] or prev == best:
        return None
    ranks = score(ev)
    return Decision(prev, "hysteresis", best) if ranks[best] - ranks[prev] < \
        settings.min_gain else None


def held_by_dwell(ev: Evidence, best: int, dwell: int, settings: Settings,
                  past_replayed: bool) -> Decision | None:
    """Within the minimum dwell of the last change only an overwhelming win (OVERWHELMING
    times min_gain on the past and on the futures) changes anything; a candidate without
    a replay waits it out when the past is replayed."""
    if dwell <= 0:
        return None
    strong = OVERWHELMING * settings.min_gain
    on_past = ev.p_gain[best] >= strong if ev.on_past[best] else not past_replayed
    on_futures = not ev.futures or (ev.gain[best] >= strong
                                    and ev.wins[best] >= settings.min_wins)
    return None if on_futures and on_past else Decision(0, "dwell", best)


def needs_lua(candidate) -> bool:
    """Whether Slurm runs the candidate through a job_submit.lua of the advisor's own (a
    job rule that acts at submission), rather than slurm.conf and commands alone."""
    e = candidate.enactment
    return not e.keeps_job_rules and any(r.lua.submit or r.lua.modify for r in e.rules)


def best_knob(ev: Evidence, candidates, among: np.ndarray) -> int | None:
    """The best-scoring knob (a change of slurm.conf keys alone) of ``among``, or None."""
    knobs = among & np.array([c.enactment.keeps_job_rules for c in candidates])
    knobs[0] = False
    if not knobs.any():
        return None
    return int(np.argmax(np.where(knobs, np.nan_to_num(score(ev), nan=-np.inf), -np.inf)))


def prefers_knob(ev: Evidence, candidates, ok: np.ndarray, best: int,
                 settings: Settings) -> int:
    """On a priority/multifactor site, the best winning knob instead of a job_submit.lua
    winner that beats it by less than --lua-margin (a slurm.conf key is what a site tunes
    and undoes; a script of the advisor's own in its submit path is not); else ``best``."""
    if candidates[0].config.priority_type != "priority/multifactor" or \
            not needs_lua(candidates[best]):
        return best
    knob = best_knob(ev, candidates, ok)
    if knob is None or score(ev)[best] - score(ev)[knob] >= settings.lua_margin:
        return best
    return knob


def decide(candidates: list[Candidate], results: np.ndarray, settings: Settings,
           previous: str | None = None, ref: int = 0, floor=None,
           past: PastReplay | None = None, dwell: int = 0) -> tuple[int, str, list[dict]]:
    """The candidate to recommend (0: keep the configuration in effect), why, and the
    table. Candidates whose futures were not sampled (NaN) are never chosen."""
    ev = weigh(results, settings, past)
    breaks = risk_breaks(ev, candidates, settings, Limits(ref, floor, past))
    safe = within_limits(ev, breaks)
    replayed = past is not None
    rolling = settings.decision == "rolling"
    ok = picked_by_rolling(ev, safe) if rolling else \
        safe & (wins_on_past(ev, settings) | wins_on_futures(ev, settings, replayed))
    ok[0] = False
    decision = replaces_over_limit(ev, breaks, safe, replayed)
    if decision is None and not ok.any():
        decision = Decision(0, "no_winner")
    if decision is None:
        best = prefers_knob(ev, candidates, ok,
                            int(np.argmax(np.where(ok, score(ev), -np.inf))), settings)
        if rolling:     # the best, re-picked at most once per dwell
            decision = Decision(0, "dwell", best) if dwell > 0 else Decision(best, "wins")
        else:
            prev = next((i for i, c in enumerate(candidates) if c.spec == previous), None)
            decision = (kept_by_hysteresis(ev, ok, best, prev, settings)
                        or held_by_dwell(ev, best, dwell, settings, replayed)
                        or Decision(best, "wins"))
    words = reason(decision, candidates, ev, safe, settings, past, ref, dwell, breaks)
    return decision.chosen, words, table(candidates, ev, safe, breaks, ok, past)


def reason(decision: Decision, candidates, ev: Evidence, safe: np.ndarray,
           settings: Settings, past: PastReplay | None, ref: int, dwell: int,
           breaks: dict[str, np.ndarray] | None = None) -> str:
    """The decision in words, with the evidence for the candidate it weighed (and the
    risk limits it breaks, from ``breaks``)."""
    chosen, best = decision.chosen, decision.best
    if decision.rule == "over_limit":
        over = [_limit_words(n, past, ref, 0, settings.risk, candidates[ref].label)
                for n, hit in (breaks or {}).items() if hit[0]]
        why = f" ({'; '.join(over)})" if over else ""
        return (f"the configuration in effect is over a risk limit against "
                f"{candidates[ref].label}{why}; {candidates[chosen].label} is the best within "
                f"them ({_evidence(chosen, ev, settings, past)})")
    if decision.rule == "no_winner":
        return _no_change(candidates, ev, safe, settings, past, breaks or {}, ref)
    if decision.rule == "hysteresis":
        return (f"{candidates[chosen].label} (recommended last time) still wins "
                f"({_evidence(chosen, ev, settings, past)}); {candidates[best].label} is "
                f"not better by {settings.min_gain:.0%} (hysteresis)")
    if decision.rule == "dwell" and settings.decision == "rolling":
        return (f"no change yet: {candidates[best].label} is the best within the risk "
                f"limits ({_evidence(best, ev, settings, past)}), but the configuration "
                f"in effect was put in effect less than {format_duration(settings.dwell)} "
                f"ago: the rolling pick changes in {format_duration(dwell)} at the earliest")
    if decision.rule == "dwell":
        return (f"no change yet: {candidates[best].label} would win "
                f"({_evidence(best, ev, settings, past)}), but the configuration in effect "
                f"was put in effect less than {format_duration(settings.dwell)} ago (the "
                f"minimum dwell): it changes in {format_duration(dwell)} at the earliest, "
                f"unless a candidate wins by {OVERWHELMING * settings.min_gain:.0%}"
                + (" on both" if ev.futures else ""))
    if settings.decision == "rolling":
        return (f"{candidates[chosen].label}, the best within the risk limits on the weeks "
                f"replayed: {_evidence(chosen, ev, settings, past)}" + _knob_words(
                    chosen, candidates, ev, safe, settings, past))
    return (f"{candidates[chosen].label}: {_evidence(chosen, ev, settings, past)}"
            + _knob_words(chosen, candidates, ev, safe, settings, past))


def _knob_words(chosen: int, candidates, ev: Evidence, safe: np.ndarray,
                settings: Settings, past: PastReplay | None) -> str:
    """For a job_submit.lua recommendation, what the best knob within the risk limits
    would have given ("" when none was simulated)."""
    if not needs_lua(candidates[chosen]):
        return ""
    knob = best_knob(ev, candidates, safe)
    if knob is None:
        return ""
    return (f"; the best change of slurm.conf alone, {candidates[knob].label}, "
            f"{_evidence(knob, ev, settings, past)}")


def table(candidates, ev: Evidence, safe: np.ndarray, breaks: dict[str, np.ndarray],
          ok: np.ndarray, past: PastReplay | None) -> list[dict]:
    """One JSON row per candidate: its evidence, the limits it breaks, whether it won."""
    rows = []
    for i, c in enumerate(candidates):
        sampled = bool(ev.sampled[i])
        row = {"spec": c.spec, "label": c.label, "fidelity": c.fidelity,
               "gain": _finite(ev.gain[i]), "wins": float(ev.wins[i]), "safe": bool(safe[i]),
               "past_gain": _finite(ev.p_gain[i]), "past_wins": _finite(ev.p_wins[i]),
               "sampled": sampled, "over": [n for n, over in breaks.items() if over[i]],
               "eligible": bool(ok[i]), "samples": int(ev.counts[i]),
               "futures_silent": sampled and not ev.futures_told[i],
               "past_silent": bool(ev.replayed[i] and not ev.on_past[i])}
        for m, name in enumerate(METRICS):
            # JSON has no infinity: a job that never starts (tail_push) is null
            row[name] = _finite(ev.figures[i, m]) if sampled else None
            row[name + "_sd"] = _finite(ev.spreads[i, m]) if sampled else None
            if past is not None:
                row["past_" + name] = _finite(past.results[i, m])
        rows.append(row)
    return rows


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
        + f", and its sampled futures do not disagree: better on average and in at "
        f"least {AGREE:.0%} of the futures sampled for it, or silent about it (it ties "
        f"the configuration in effect in every one, as when no future builds a queue).",
        f"A candidate without a replay (its family has none, or it is too costly to replay "
        f"at each decision), or whose replay ties the configuration in effect in every "
        f"week, wins on its futures alone: better by {OVERWHELMING:g} x --min-gain "
        f"({strong}) in --min-wins ({wins}) of them ({gain} when the past is not "
        f"replayed, --no-past).",
        "Only a candidate within every risk limit wins; of the winners, the best on the "
        "weeks replayed (on the futures, for one without a replay) is recommended, but on "
        f"a priority/multifactor site one enacted through job_submit.lua is recommended "
        f"over the best winning change of slurm.conf alone only when it beats it by "
        f"--lua-margin ({settings.lua_margin:.0%}). A "
        "configuration in effect over a risk limit on the weeks replayed is replaced at "
        "once by the best candidate within them, whatever its gain and the dwell: the best "
        "on the weeks replayed, one judged on its futures alone only when none within them "
        "is judged there. A candidate too costly to replay at each decision is replayed "
        "before it is recommended, either way.",
        f"Within --dwell ({format_duration(settings.dwell)}) of the last change, a "
        f"winner is recommended only by {strong} on both the past and the futures (there "
        f"in --min-wins, {wins}, of them); the last recommendation stays unless another "
        f"winner beats it by --min-gain ({gain}).",
        f"With --decision rolling, the hand rule a site applies to its log instead: of the "
        f"candidates within every risk limit, the best on the weeks replayed (each "
        f"candidate replayed, the costly ones too) is recommended when it beats the "
        f"configuration in effect there, by any margin, at most once per --dwell "
        f"({format_duration(settings.dwell)}); the futures only check it: a pick they "
        f"tell apart as worse than the configuration in effect is not made.",
    ]


def _evidence(i: int, ev: Evidence, settings: Settings, past: PastReplay | None) -> str:
    """The evidence for candidate ``i`` against the configuration in effect, in words."""
    what = WORDS[settings.objective]
    gain, wins, p_gain = ev.gain, ev.wins, ev.p_gain
    parts = []
    if past is not None and not np.isnan(p_gain[i]):
        weeks = past.weekly.shape[1]
        won = ("" if np.isnan(ev.p_wins[i]) else
               f" (better in {round(ev.p_wins[i] * weeks)} of the {weeks} weeks)")
        silent = "" if ev.on_past[i] else ": tied in every week, silent"
        parts.append(f"over the last {weeks} weeks replayed ({past.jobs:,} jobs) it would "
                     f"have {_cut(p_gain[i])} {what} by {abs(p_gain[i]):.0%}{won}{silent}")
    samples = int(ev.counts[i])
    if not np.isnan(gain[i]):
        span = (format_duration(settings.horizon) if settings.horizon % 3600 == 0
                else f"{settings.horizon / 3600:.0f}h")
        silent = "" if ev.futures_told[i] else ": tied in every one, silent"
        parts.append(f"over {samples} sampled futures of {span} from now, "
                     f"{_cut(gain[i])} it by {abs(gain[i]):.0%} (better in "
                     f"{round(wins[i] * samples)} of {samples}){silent}")
    return "; ".join(parts) or "no evidence"


def _cut(gain: float) -> str:
    return "cut" if gain >= 0 else "raised"


def _no_change(candidates, ev: Evidence, safe, settings: Settings,
               past: PastReplay | None, breaks: dict[str, np.ndarray], ref: int = 0) -> str:
    """Why nothing is recommended: the best candidate's evidence and what it lacks."""
    ranks = np.array(score(ev), float)
    ranks[0] = -np.inf
    if len(candidates) < 2 or not np.isfinite(ranks).any():
        return "no candidate beats the configuration in effect"
    best = int(np.nanargmax(ranks))
    over = [_limit_words(n, past, ref, best, settings.risk, candidates[ref].label)
            for n, hit in breaks.items() if hit[best]]
    # not within the limits: over one, or without the evidence they are judged on
    limit = (f"it is over a risk limit ({'; '.join(over)})" if over else
             "its futures were not sampled (the race left it out)")
    if settings.decision == "rolling":
        lacks = (limit if not safe[best] else
                 "it has no replay that tells it apart, and the rolling pick reads the "
                 "weeks replayed" if not ev.on_past[best] else
                 "it did no better on the weeks replayed" if ev.p_gain[best] <= 0 else
                 "the futures tell it apart as worse")
        return (f"no change: the best candidate, {candidates[best].label} "
                f"({_evidence(best, ev, settings, past)}), is not picked: {lacks}")
    lacks = (limit if not safe[best] else
             f"it does not win by {settings.min_gain:.0%} on the weeks replayed"
             + (f" in {settings.min_wins:.0%} of them" if settings.steady else "")
             + " with the futures not against it" if ev.on_past[best] else
             f"it does not win by {settings.min_gain:.0%} in {settings.min_wins:.0%} of "
             f"the futures")
    return (f"no change: the best candidate, {candidates[best].label} "
            f"({_evidence(best, ev, settings, past)}), is not "
            f"enough: {lacks}" + _idle_knobs(candidates, ev))


def _idle_knobs(candidates, ev: Evidence) -> str:
    """The knobs proposed from the state now that change nothing here: tied with the
    configuration in effect in every future sampled and every week replayed ("" when
    none)."""
    idle = [c.label for i, c in enumerate(candidates) if i and c.enactment.keeps_job_rules
            and ev.sampled[i] and not ev.futures_told[i]
            and not (ev.replayed[i] and ev.on_past[i])]
    if not idle:
        return ""
    return (f"; {', '.join(idle)} would change nothing here (tied with the "
            f"configuration in effect in every future sampled"
            + (" and every week replayed)" if ev.replayed[1:].any() else ")"))


def _limit_words(limit: str, past: PastReplay | None, ref: int, i: int, risk: float,
                 reference: str) -> str:
    """Risk limit ``limit`` broken by candidate ``i``, in words; on the weeks replayed,
    which figure is over it, as a factor of the ``reference``'s."""
    if limit != "past" or past is None:
        return LIMIT_WORDS[limit]
    within, over = past_within(past, ref, risk), []
    for name, words in PAST_RISK_FIGURES.items():
        fig = past.figure(name)
        if not within[name][i]:
            over.append(f"{words} {fig[i] / max(fig[ref], 1.0):.2f} x {reference}'s")
    return (f"on the weeks replayed, {' and '.join(over)}, over {risk:g} x" if over
            else LIMIT_WORDS["past"])


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None
