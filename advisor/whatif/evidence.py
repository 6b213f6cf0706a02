"""The evidence a recommendation weighs, and the risk limits it holds candidates to.

``weigh`` puts each candidate against the configuration in effect: on the sampled
futures, the gain of the means and the share of samples won; on the weeks replayed, the
gain and the share of weeks won (``Evidence``). ``RISK_LIMITS`` are the limits a candidate
may break (``risk_breaks`` applies them all). ``advisor.whatif.decision`` applies its rules
to this evidence, and ``advisor.whatif.reasons`` puts their result in words.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from advisor.settings import Settings
from advisor.whatif.past import PAST_OBJECTIVES, PastReplay
from advisor.whatif.racing import past_gain, past_safe, past_wins, risk_limit
from advisor.whatif.scenario import HIGHER_IS_BETTER, METRICS

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
