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
  minimum dwell only an overwhelming win changes anything), else the best winner;
* ``distrusted``, over all of them: no change on a site whose own past the simulation
  did not reproduce (its check below ``fidelity_floor``).

The evidence and the limits are ``advisor.whatif.evidence``'s; the rules return what they
found (a ``Decision``), which ``advisor.whatif.reasons`` puts in words and JSON rows.
"""
from __future__ import annotations

import numpy as np

from advisor.settings import Settings
from advisor.whatif.candidates import Candidate
from advisor.whatif.evidence import (AGREE, OVERWHELMING, RISK_LIMITS, Decision, Evidence,
                                     Limits, best_knob, needs_lua, risk_breaks, score,
                                     tells_apart, weigh, within_limits)
from advisor.whatif.past import PastReplay
from advisor.whatif.reasons import decision_rules, reason, table

__all__ = ["AGREE", "OVERWHELMING", "RISK_LIMITS", "Decision", "Evidence", "Limits",
           "decide", "decision_rules", "distrusted", "held_by_dwell", "kept_by_hysteresis",
           "picked_by_rolling", "reason", "replaces_over_limit", "risk_breaks",
           "tells_apart", "weigh", "wins_on_futures", "wins_on_past"]


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


def prefers_knob(ev: Evidence, candidates, ok: np.ndarray, best: int,
                 settings: Settings) -> int:
    """On a priority/multifactor site, the best winning knob instead of a job_submit.lua
    winner that beats it by less than --lua-margin (a slurm.conf key is what a site tunes
    and undoes; a script of the advisor's own in its submit path is not); else ``best``."""
    if candidates[0].config.priority_type != "priority/multifactor" or \
            not needs_lua(candidates[best]):
        return best
    knob = best_knob(ev, candidates, ok)
    if knob is None:
        return best
    ranks = score(ev)
    return best if ranks[best] - ranks[knob] >= settings.lua_margin else knob


def distrusted(site: dict | None, floor: float) -> str | None:
    """Why no change can be recommended on a site the simulation does not reproduce: its
    check (``advisor.whatif.sitecheck``, the day before) started fewer than ``floor`` of
    its jobs within the tolerance; None when it did, or when there is no check (a trace,
    a snapshot) or no job to judge."""
    if site is None or not site["jobs"] or site["within"] >= floor:
        return None
    return (f"the simulation started only {site['within']:.0%} of this site's "
            f"{site['jobs']} jobs of the day before within {site['tolerance_s']} s of their "
            f"real start (advisor check; the floor is {floor:.0%}): the advisor does not "
            "trust its simulation of this site enough to recommend a change")


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
