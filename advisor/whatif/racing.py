"""Which candidates' futures are sampled, and how many times: sequential sampling.

Simulating every candidate on every sample spends most of a decision on candidates that are
clearly behind. So the futures are sampled in stages (a race):
1. the recent past replayed (``advisor.whatif.past``) drops the candidates clearly behind
   on weeks of real jobs: only the ``race`` best there within the risk limit go on, with
   the configuration in effect, the reference, the last recommendation, and every candidate
   without a replay (its futures are its only evidence);
2. a first few samples (``FIRST_SAMPLES``) of all of them drop those worse than the
   configuration in effect by more than ``min_gain`` on those samples;
3. the rest of ``samples`` for those left;
4. when the candidate the past favours is level with the configuration in effect on its
   futures (within two standard errors), as many samples again for the two: the close
   call more evidence should settle.
``race`` 0: no race, every candidate on every sample (as before the past was replayed).
Every candidate meets the same samples (the same seeds) for as long as it runs; the
results hold NaN where a sample was not drawn for a candidate.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from advisor.model import Snapshot
from advisor.settings import Settings
from advisor.whatif.candidates import Candidate
from advisor.whatif.futures import ArrivalSampler, RuntimeModel, draw_sample
from advisor.whatif.past import PAST_OBJECTIVES, PastReplay
from advisor.whatif.runner import Executor, SerialExecutor, batch_bounds
from advisor.whatif.fairness import AccountTally, account_wait
from advisor.whatif.scenario import HIGHER_IS_BETTER, METRICS, Task, evaluate, tail_push

RISK_SLACK = 60.0
#: the samples every raced candidate gets before the clearly losing ones are dropped
FIRST_SAMPLES = 2


def sample_raced(snapshot: Snapshot, history: pd.DataFrame, candidates: list[Candidate],
                 settings: Settings, executor: Executor | None = None,
                 past: PastReplay | None = None, ref: int = 0, previous: str | None = None,
                 allow: float | None = None,
                 on_progress: Callable[[int, int], None] | None = None,
                 tally: AccountTally | None = None) -> np.ndarray:
    """(candidates, samples drawn, metrics) by the stages above; NaN: not drawn. Each
    account's figures under each candidate into ``tally``, when given."""
    n = len(candidates)
    models = (RuntimeModel(history),       # what every stage draws its samples from
              ArrivalSampler(history, snapshot.time, settings.history_weeks))
    if not settings.race:       # no race: every candidate on every sample
        return simulate(snapshot, history, candidates, settings, executor, on_progress, ref,
                        allow, models=models, tally=tally)
    field = race_field(candidates, past, settings, ref, previous)
    keep = {0, ref, *(i for i, c in enumerate(candidates) if c.spec == previous)}
    first = min(FIRST_SAMPLES, settings.samples) if len(field) > len(keep) else \
        settings.samples
    results = np.full((n, 2 * settings.samples, len(METRICS)), np.nan)

    done = [0]          # tasks of the stages run so far: progress counts on across them

    def run(rows: list[int], begin: int, count: int) -> None:
        if count <= 0 or not rows:
            return

        def progress(d: int, n: int) -> None:
            if on_progress:
                on_progress(done[0] + d, done[0] + n)
                if d == n:
                    done[0] += n

        out = simulate(snapshot, history, [candidates[i] for i in rows],
                       _with_samples(settings, count), executor, progress,
                       rows.index(ref), allow, begin, models, tally, rows)
        results[rows, begin:begin + count] = out

    run(field, 0, first)
    if first < settings.samples:
        k = METRICS.index(settings.objective)
        sign = -1.0 if settings.objective in HIGHER_IS_BETTER else 1.0
        obj = sign * results[:, :first, k]
        scale = max(abs(float(obj[0].mean())), 1e-9)
        gain = (obj[0] - obj).mean(axis=1) / scale
        left = sorted(i for i in field if i in keep or gain[i] >= -settings.min_gain)
        run(left, first, settings.samples - first)
    close = close_call(results[:, :settings.samples], settings, past, ref)
    if close is not None:
        run(sorted({0, ref, close}), settings.samples, settings.samples)
    drawn = ~np.isnan(results[:, :, 0]).all(axis=0)
    return results[:, drawn]


def _with_samples(settings: Settings, samples: int) -> Settings:
    return replace(settings, samples=samples)


def simulate(snapshot: Snapshot, history: pd.DataFrame, candidates: list[Candidate],
             settings: Settings, executor: Executor | None = None,
             on_progress: Callable[[int, int], None] | None = None,
             ref: int = 0, allow: float | None = None, first: int = 0,
             models: tuple[RuntimeModel, ArrivalSampler] | None = None,
             tally: AccountTally | None = None, rows: list[int] | None = None
             ) -> np.ndarray:
    """Every candidate on every sample: (candidates, samples, metrics); ``tail_push``
    against candidate ``ref``, a job counted as pushed only past a wait of ``allow``
    seconds from its submission, when given; the samples numbered from ``first``;
    ``models``: the history's runtime model and arrival sampler, when made already;
    each account's figures into ``tally`` (candidate k as ``rows[k]`` there)."""
    runtimes, arrivals = models or (RuntimeModel(history), ArrivalSampler(
        history, snapshot.time, settings.history_weeks))
    executor = executor or SerialExecutor()
    batches = batch_bounds(len(candidates), settings.samples, executor.workers)
    tasks, where = [], []
    for s in range(settings.samples):
        sample = draw_sample(snapshot, history, settings.horizon,
                             _seed(settings.seed, first + s), runtimes, arrivals)
        for c0, c1 in batches:
            tasks.append(Task(snapshot, tuple(candidates[c0:c1]), sample, settings.horizon))
            where.append((s, c0))
    results = np.zeros((len(candidates), settings.samples, len(METRICS)))
    waits: list[list] = [[None] * len(candidates) for _ in range(settings.samples)]
    ages: list[np.ndarray] = [np.zeros(0)] * settings.samples
    accounts: list[np.ndarray] = [np.zeros(0, np.int64)] * settings.samples
    for done, (i, outcome) in enumerate(executor.map_unordered(evaluate, tasks), 1):
        s, c0 = where[i]
        out = outcome.metrics
        results[c0:c0 + out.shape[0], s] = out
        waits[s][c0:c0 + out.shape[0]] = list(outcome.waits)
        ages[s], accounts[s] = outcome.ages, outcome.accounts
        if tally is not None:
            for k in range(out.shape[0]):
                tally.add(rows[c0 + k] if rows else c0 + k, outcome.names, outcome.accounts,
                          outcome.waits[k] + outcome.ages, outcome.received[k],
                          outcome.shares)
        if on_progress:
            on_progress(done, len(tasks))
    push, slower = METRICS.index("tail_push"), METRICS.index("account_wait")
    for s in range(settings.samples):
        results[:, s, push] = tail_push(np.array(waits[s]), ref,
                                        None if allow is None else allow - ages[s])
        results[:, s, slower] = account_wait(np.array(waits[s]) + ages[s], accounts[s],
                                             ref)
    return results


def _seed(seed: int, sample: int) -> int:
    """Sample k's own seed: independent streams, the same for every candidate."""
    return int(np.random.SeedSequence([seed, sample]).generate_state(1)[0])


def risk_limit(risk: float, reference: float, floor: float = 0.0) -> float:
    """A wait limit: ``risk`` times the reference's (plus ``RISK_SLACK``), or times its
    ``floor`` from the history when that is larger."""
    return max(risk * float(reference) + RISK_SLACK, risk * float(floor))


#: the tail figures the risk limit holds on the replayed weeks, and their names in Slurm's words
PAST_RISK_FIGURES = {"max_wait": "MaxWait", "p95_wait": "p95 wait"}


def past_within(past: PastReplay, ref: int, risk: float) -> dict[str, np.ndarray]:
    """Per risk figure (``PAST_RISK_FIGURES``), per candidate: its figure over the replayed
    weeks within ``risk`` times the reference's (False where it has no replay)."""
    within: dict[str, np.ndarray] = {}
    for name in PAST_RISK_FIGURES:
        fig = past.figure(name)
        with np.errstate(invalid="ignore"):
            within[name] = fig <= risk_limit(risk, fig[ref])
    return within


def past_safe(past: PastReplay, ref: int, risk: float) -> np.ndarray:
    """Per candidate: every risk figure over the replayed weeks within ``risk`` times the
    reference's (False where it has no replay)."""
    return np.logical_and.reduce(list(past_within(past, ref, risk).values()))


def past_gain(past: PastReplay, objective: str) -> np.ndarray:
    """Per candidate: how much better than the configuration in effect (candidate 0) it did
    on the replayed weeks (NaN: no replay, or an objective the replay cannot judge)."""
    if objective not in PAST_OBJECTIVES:
        return np.full(len(past.results), np.nan)
    fig = past.figure(objective)
    return (fig[0] - fig) / max(abs(float(fig[0])), 1e-9)


def past_wins(past: PastReplay, objective: str) -> np.ndarray:
    """Per candidate: the share of the weeks replayed in which it did better than the
    configuration in effect (NaN: no replay, or an objective the replay cannot judge)."""
    if objective not in PAST_OBJECTIVES:
        return np.full(len(past.results), np.nan)
    weekly = past.by_week(objective)
    both = ~np.isnan(weekly) & ~np.isnan(weekly[0])
    with np.errstate(invalid="ignore"):
        won = (both & (weekly < weekly[0])).sum(axis=1) / both.sum(axis=1)
    return np.where(np.isnan(past.results[:, 0]), np.nan, won)


def race_field(candidates: list[Candidate], past: PastReplay | None, settings: Settings,
               ref: int = 0, previous: str | None = None) -> list[int]:
    """The candidates whose futures are sampled: all, or with a past replay and ``race``,
    the configuration in effect, the reference, the last recommendation, every candidate
    without a replay (unless ``--decision rolling``, which cannot pick one), every change
    of settings alone (a knob proposed from the state now: a queue deeper than
    bf_max_job_test shows on its futures, not on weeks replayed from an idle machine), and
    the ``race`` best on the replayed weeks within the risk limit there (sequential
    elimination: the others lost clearly on weeks of real jobs)."""
    everyone = list(range(len(candidates)))
    if past is None or not settings.race or settings.objective not in PAST_OBJECTIVES:
        return everyone
    gain, safe = past_gain(past, settings.objective), past_safe(past, ref, settings.risk)
    ranked = [i for i in np.argsort(-np.where(safe, gain, -np.inf), kind="stable")
              if safe[i]][:settings.race]
    keep = {0, ref, *(int(i) for i in ranked)}
    # --decision rolling picks on the past: a candidate without a replay cannot win
    sample_unreplayed = settings.decision != "rolling"
    keep |= {i for i, c in enumerate(candidates)
             if (sample_unreplayed and np.isnan(gain[i])) or c.spec == previous
             or c.enactment.keeps_job_rules}
    return sorted(keep)


def close_call(results: np.ndarray, settings: Settings, past: PastReplay | None,
               ref: int = 0) -> int | None:
    """The candidate the past replayed favours (within its risk limit, winning by
    ``min_gain``) when its futures, sample by sample against the configuration in effect,
    are within two standard errors of no gain: the call more samples should settle."""
    if past is None or settings.objective not in PAST_OBJECTIVES or results.shape[1] < 2:
        return None
    gain = past_gain(past, settings.objective)
    fit = past_safe(past, ref, settings.risk) & (gain >= settings.min_gain)
    fit[0] = False
    if not fit.any():
        return None
    best = int(np.argmax(np.where(fit, gain, -np.inf)))
    k = METRICS.index(settings.objective)
    diff = (results[0, :, k] - results[best, :, k]) / max(abs(results[0, :, k].mean()), 1e-9)
    if np.isnan(diff).any():
        return None             # the favourite was dropped on its first samples: not close
    se = diff.std(ddof=1) / np.sqrt(len(diff))
    return best if abs(diff.mean()) < 2 * se else None


