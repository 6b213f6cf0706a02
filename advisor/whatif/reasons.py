"""A decision in words, and as JSON rows: ``reason`` says why the rules of
``advisor.whatif.decision`` chose what they chose, from their result (a ``Decision``) and
the evidence alone; ``table`` gives one row per candidate; ``decision_rules`` states the
rules themselves (docs/recommend.md prints them).
"""
from __future__ import annotations

import numpy as np

from advisor.settings import Settings
from advisor.units import format_duration
from advisor.whatif.evidence import (AGREE, OVERWHELMING, RISK_LIMITS, Decision, Evidence,
                                     best_knob, needs_lua, score)
from advisor.whatif.past import PastReplay
from advisor.whatif.racing import PAST_RISK_FIGURES, past_within
from advisor.whatif.scenario import METRICS

#: how a reason names each objective's figure
WORDS = {"avg_wait": "the mean wait", "avg_bsld": "the mean bounded slowdown",
         "p95_wait": "the 95th-percentile wait", "utilization": "the idle CPU time"}
#: how a reason names each risk limit
LIMIT_WORDS = {"max_wait": "MaxWait on the futures", "p95_wait": "p95 wait on the futures",
               "tail_push": "a job pushed past the longest wait on the futures",
               "fairness": "an account's mean wait or the fair-share deviation on the "
                           "futures",
               "site_policy": "replacing the site's priority policy",
               "past": "MaxWait or p95 wait on the weeks replayed"}
if LIMIT_WORDS.keys() != RISK_LIMITS.keys():   # a limit without words fails here, not mid-run
    raise ImportError("decision.LIMIT_WORDS must name every limit of RISK_LIMITS")


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
        f"Over all of these, on a live cluster: when the check of its own past (--site-"
        f"check, {format_duration(settings.site_check)} before the day of the decision, "
        f"replayed from its accounting as advisor check does) started fewer than "
        f"--fidelity-floor ({settings.fidelity_floor:.0%}) of its jobs within max(2 s, "
        f"bf_interval) of their real start, no change is recommended: the reason says "
        f"what the simulation alone would recommend.",
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
