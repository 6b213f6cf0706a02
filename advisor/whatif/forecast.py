"""When each pending job will start: sampled futures from the exact state, played under the
configuration in effect.

Slurm's own answer, ``squeue --start``, is its backfill scheduler's last plan: every
running job to its time limit, no job arriving meanwhile, and none for a job it did not
plan. A forecast starts from the same state (the snapshot: running jobs on their nodes,
pending jobs with their priorities) and draws, sample by sample, what cannot be known:
each running job's remaining runtime and each pending job's runtime from the site's
finished jobs (``futures.RuntimeModel``: the same user's actual/requested ratios, a
running job's conditioned on the time it has run), and the jobs that arrive meanwhile
(``futures.ArrivalSampler``); the slurm mode plays each sample under the configuration
in effect. A job's starts over the samples give its median and an 80% interval (10th to
90th percentile); a sample in which it has not started by the horizon counts as later
than any, and the share of samples in which it started is said beside.
"""
from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.engine.slurm import slurm_input, start_times
from advisor.model import Snapshot
from advisor.whatif.futures import ArrivalSampler, RuntimeModel, draw_sample

#: sampled futures of a forecast where none is asked
SAMPLES = 20
#: how far ahead a forecast plays where none is asked (a job not started by then is
#: "later")
HORIZON = 3 * 86400
#: the interval's quantiles: 80% of the samples fall within
LOW, HIGH = 0.1, 0.9
#: a forecast's columns (times epoch, or the snapshot's clock; -1: none, or later than
#: the horizon)
FORECAST_COLUMNS = ("job_id", "user", "account", "partition", "cpus", "submit", "median",
                    "low", "high", "started", "slurm")


@dataclass(frozen=True)
class Forecast:
    """Each pending job's start over the samples (``FORECAST_COLUMNS``): its median and 80%
    interval (-1: later than the horizon), the share of samples it started in, and
    Slurm's own estimate (``squeue --start``; -1: none)."""

    time: int
    horizon: int
    samples: int
    table: pd.DataFrame

    def as_dict(self) -> dict:
        return {"time": self.time, "horizon_s": self.horizon, "samples": self.samples,
                "jobs": self.table.to_dict("records")}


def forecast(snapshot: Snapshot, history: pd.DataFrame, samples: int = SAMPLES,
             horizon: int = HORIZON, seed: int = 0, jobs: Collection[int] | None = None,
             on_progress: Callable[[int, int], None] | None = None) -> Forecast:
    """The forecast of ``snapshot``'s pending jobs (``jobs``: those alone) over
    ``samples`` futures drawn from ``history`` (finished jobs, ``HISTORY_COLUMNS``)."""
    pending = [j for j in snapshot.pending if jobs is None or j.job_id in jobs]
    ids = np.array([j.job_id for j in pending], np.int64)
    runtimes, arrivals = RuntimeModel(history), ArrivalSampler(history, snapshot.time)
    starts = np.full((samples, len(ids)), -1, np.int64)
    until = snapshot.time + horizon
    for k in range(samples):
        sample = draw_sample(snapshot, history, horizon, seed + k, runtimes, arrivals)
        inp = slurm_input(snapshot, sample.runtimes, sample.arrivals, keep_nodes=True)
        start = pd.Series(start_times(inp, until), index=inp.job_ids)
        starts[k] = start.reindex(ids).fillna(-1).to_numpy(np.int64)
        if on_progress:
            on_progress(k + 1, samples)
    later = np.where(starts >= 0, starts, np.iinfo(np.int64).max)
    q = np.quantile(later, [LOW, 0.5, HIGH], axis=0, method="inverted_cdf") \
        if samples else np.full((3, len(ids)), -1)
    q = np.where(q == np.iinfo(np.int64).max, -1, q).astype(np.int64)
    table = pd.DataFrame({
        "job_id": ids, "user": [j.user for j in pending],
        "account": [j.account for j in pending], "partition": [j.partition for j in pending],
        "cpus": [j.cpus for j in pending], "submit": [j.submit_time for j in pending],
        "median": q[1], "low": q[0], "high": q[2],
        "started": (starts >= 0).mean(axis=0) if samples else np.zeros(len(ids)),
        "slurm": [j.expected_start if j.expected_start else -1 for j in pending]},
        columns=list(FORECAST_COLUMNS))
    return Forecast(snapshot.time, horizon, samples, table)
