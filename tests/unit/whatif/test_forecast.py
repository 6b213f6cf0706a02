"""Start forecasts (``advisor forecast``): from the exact state, each pending job's start
over sampled futures, worked by hand on a small cluster, and the command as a user runs it
on a bundled trace's moment."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from advisor.model import (Cluster, Job, Node, Partition, SchedulingConfig, Snapshot,
                           empty_history)
from advisor.whatif.forecast import forecast
from tests.helpers import one_line_error

T = 100_000
CLUSTER = Cluster("lab", (Node("n1", 4),), (Partition("batch", ("n1",), default=True),))
CONFIG = SchedulingConfig(priority_type="priority/basic")


def job(job_id, state, cpus=4, limit=600, **extra):
    return Job(job_id=job_id, user="u", partition="batch", cpus=cpus, state=state,
               submit_time=T - 50, time_limit=limit, partitions=("batch",), **extra)


def snapshot(*pending):
    running = job(1, "RUNNING", limit=1000, start_time=T - 100, elapsed=100)
    return Snapshot(T, CLUSTER, (running,), tuple(pending), CONFIG,
                    source={"kind": "slurm"})


def history(ratio: float, n: int = 10) -> pd.DataFrame:
    """Finished jobs of user u, each ending at ``ratio`` of its limit (no arrivals drawn:
    they were submitted over a month before)."""
    return pd.DataFrame({"user": ["u"] * n, "submit": [T - 40 * 86400] * n,
                         "runtime": [int(1000 * ratio)] * n, "limit": [1000] * n,
                         "cpus": [4] * n, "nodes": [1] * n, "partition": ["batch"] * n})


def test_a_running_job_s_remaining_runtime_is_drawn_as_its_user_s_jobs_ran():
    """Job 1 has run 100 s of its 1,000: u's jobs end at half their limit, so it ends at
    T + 400 and job 2 starts then, where Slurm's plan (every job to its limit) says
    T + 900."""
    done = forecast(snapshot(job(2, "PENDING", expected_start=T + 900)), history(0.5),
                    samples=5, horizon=3600)
    row = done.table.iloc[0]
    assert (row["job_id"], row["median"], row["low"], row["high"]) == (2, T + 400, T + 400,
                                                                        T + 400)
    assert row["started"] == 1.0 and row["slurm"] == T + 900
    # without any history, every job runs to its limit: Slurm's own plan
    plain = forecast(snapshot(job(2, "PENDING")), empty_history(), samples=3, horizon=3600)
    assert plain.table.iloc[0]["median"] == T + 900 and plain.table.iloc[0]["slurm"] == -1


def test_the_interval_spans_the_draws_and_later_than_the_horizon_is_said():
    """u's jobs end at 20% or 90% of their limit, half and half: job 2 starts at T + 100 or
    T + 800 (the 80% interval holds both); job 3 behind it, of a 900-s limit, after the
    horizon of 1,200 s in the samples where job 2 starts late."""
    mixed = pd.concat([history(0.2, 10), history(0.9, 10)], ignore_index=True)
    done = forecast(snapshot(job(2, "PENDING"), job(3, "PENDING", limit=900)), mixed,
                    samples=40, horizon=1200, seed=3)
    two, three = done.table.iloc[0], done.table.iloc[1]
    assert (two["low"], two["high"]) == (T + 100, T + 800)
    assert two["median"] in (T + 100, T + 800)
    assert 0.2 < three["started"] < 1.0 and three["high"] == -1
    assert done.as_dict()["jobs"][1]["high"] == -1


def test_a_held_job_is_never_started_and_asking_for_some_jobs_keeps_those():
    done = forecast(snapshot(job(2, "PENDING", held=True), job(3, "PENDING")),
                    history(0.5), samples=2, horizon=3600, jobs={2})
    assert list(done.table["job_id"]) == [2]
    assert done.table.iloc[0]["median"] == -1 and done.table.iloc[0]["started"] == 0.0


def advisor(*args):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, env={**os.environ, "COLUMNS": "80"})


def test_the_command_on_a_trace_moment():
    done = advisor("forecast", "--from", "swf:KTH-SP2@150d", "--samples", "4", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["zone"] == "Europe/Stockholm" and doc["samples"] == 4 and doc["jobs"]
    first = doc["jobs"][0]
    user = first["user"]
    assert all(j["low"] <= j["median"] <= j["high"] or j["high"] == -1
               for j in doc["jobs"] if j["median"] >= 0)
    mine = advisor("forecast", "--from", "swf:KTH-SP2@150d", "--samples", "4", "--user",
                   user)
    assert mine.returncode == 0, mine.stderr
    lines = mine.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and lines[0].startswith("Start forecast at 1997-02-20")
    shown = [line.split()[0] for line in lines if line.split() and line.split()[0].isdigit()]
    assert str(first["job_id"]) in shown
    assert all(j["user"] == user for j in doc["jobs"] if str(j["job_id"]) in shown)


@pytest.mark.parametrize("args, words", [
    (["--job", "1"], ("job 1 is not pending now",)),
    (["--user", "nobody"], ("user nobody has no pending job now",)),
    (["--samples", "0"], ("--samples",)),
])
def test_asking_for_what_is_not_pending_is_one_line(args, words):
    one_line_error(advisor("forecast", "--from", "swf:KTH-SP2@150d", *args), 2, *words)
