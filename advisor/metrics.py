"""Scheduling metrics over a simulated schedule.

Definitions (times in seconds):
* wait = start - submit; response = wait + runtime;
* bounded slowdown, tau = 10 s: max(1, (wait + runtime) / max(runtime, 10)) (Mu'alem and
  Feitelson §3.1, with the customary floor at 1);
* utilisation = sum(procs * runtime) / (machine * (last end - first submit));
* makespan = last end - first submit;
* weeks are counted from the first submit (week 0 holds its first 7 days).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from advisor.model import SECONDS_PER_WEEK

#: seconds: the bounded-slowdown threshold of Mu'alem and Feitelson, and of Lawson and Smirni
TAU = 10


def schedule_table(submit, start, runtime, procs, job_id=None) -> pd.DataFrame:
    """Per-job result: id, submit, start, end, wait, processors, bounded slowdown."""
    submit = np.asarray(submit, np.int64)
    start = np.asarray(start, np.int64)
    runtime = np.asarray(runtime, np.int64)
    wait = start - submit
    return pd.DataFrame({
        "job_id": np.arange(1, len(submit) + 1) if job_id is None else np.asarray(job_id),
        "submit": submit, "start": start, "end": start + runtime, "wait": wait,
        "runtime": runtime, "procs": np.asarray(procs, np.int64),
        "bsld": bounded_slowdown(wait, runtime),
    })


def bounded_slowdown(wait, runtime, tau: float = TAU) -> np.ndarray:
    wait = np.asarray(wait, np.float64)
    runtime = np.asarray(runtime, np.float64)
    return np.maximum(1.0, (wait + runtime) / np.maximum(runtime, tau))


def summary(table: pd.DataFrame, machine: int) -> dict:
    """The headline figures of one schedule (seconds and fractions)."""
    if len(table) == 0:
        return {"jobs": 0}
    wait = table["wait"].to_numpy(np.float64)
    first, last = int(table["submit"].min()), int(table["end"].max())
    span = max(last - first, 1)
    work = float((table["procs"] * table["runtime"]).sum())
    p50, p90, p99 = np.percentile(wait, [50, 90, 99])
    return {
        "jobs": int(len(table)),
        "avg_wait": float(wait.mean()),
        "max_wait": int(wait.max()),
        "p50_wait": float(p50), "p90_wait": float(p90), "p99_wait": float(p99),
        "avg_bsld": float(table["bsld"].mean()),
        "median_bsld": float(table["bsld"].median()),
        "avg_response": float((table["wait"] + table["runtime"]).mean()),
        "utilization": work / (machine * span),
        "makespan": int(last - first),
    }


def weekly(table: pd.DataFrame) -> pd.DataFrame:
    """Per-week series (by submit week): jobs, average and maximum wait, average bsld."""
    week = (table["submit"] - table["submit"].min()) // SECONDS_PER_WEEK
    grouped = table.assign(week=week).groupby("week")
    return pd.DataFrame({"jobs": grouped.size(), "avg_wait": grouped["wait"].mean(),
                         "max_wait": grouped["wait"].max(), "avg_bsld": grouped["bsld"].mean()})


def lawson_slowdown(wait, runtime) -> np.ndarray:
    """Lawson and Smirni §2.2's bounded slowdown s = 1 + d / max(10, v) (d: queueing delay)."""
    return 1.0 + np.asarray(wait, np.float64) / np.maximum(np.asarray(runtime, np.float64), TAU)


def crashed(runtime, request) -> np.ndarray:
    """Lawson and Smirni's footnote 4: jobs that ran under 10 s but requested more than a minute
    'appear to have crashed' and are left out of the slowdown ratio."""
    return (np.asarray(runtime) < 10) & (np.asarray(request) > 60)


def slowdown_ratio(base: pd.DataFrame, other: pd.DataFrame, request) -> pd.Series:
    """Per-job R = (s1 - s2) / min(s1, s2) of Lawson and Smirni §2.2, `base` giving s1 and
    `other` s2; R > 0 means `other` served the job better. Both tables hold the same jobs in
    the same order; crashed jobs (footnote 4) are dropped from the result."""
    if len(base) != len(other) or not np.array_equal(base["job_id"], other["job_id"]):
        raise ValueError("slowdown ratio needs the same jobs in both schedules")
    s1 = lawson_slowdown(base["wait"], base["runtime"])
    s2 = lawson_slowdown(other["wait"], other["runtime"])
    r = (s1 - s2) / np.minimum(s1, s2)
    keep = ~crashed(base["runtime"], request)
    return pd.Series(r[keep], index=base.index[keep], name="R")


def slowdown_ratio_weekly(base: pd.DataFrame, other: pd.DataFrame, request) -> pd.Series:
    """Lawson and Smirni's transient measure: the mean R of the jobs submitted in each week."""
    r = slowdown_ratio(base, other, request)
    week = (base.loc[r.index, "submit"] - base["submit"].min()) // SECONDS_PER_WEEK
    return r.groupby(week.to_numpy()).mean().rename_axis("week")
