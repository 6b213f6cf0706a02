"""The study commands alike: each takes --since, --until, --load and --estimates with the same
meaning; a count never exceeds the one it is a share of; the header says how many jobs
requested no time when the requested times are the estimates; long work shows progress."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from advisor.adapters.swf import read_swf
from advisor.policies.plan.study import plan_study
from advisor.policies.queues.study import queue_count_study

TRACE_COMMANDS = ("replay", "tune", "queues", "plans", "classes", "timeshare")
WEEK = 7 * 86400


def advisor(*args):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True)


def swf(path, jobs, procs=10, header=()):
    """An SWF file of (submit, runtime, procs, requested time, CPU time) jobs."""
    lines = ["; Version: 2.2", f"; MaxProcs: {procs}", "; UnixStartTime: 946684800",
             "; TimeZoneString: UTC", *header]
    for i, (submit, run, cpus, req, cpu) in enumerate(jobs, start=1):
        lines.append(f"{i} {submit} 0 {run} {cpus} {cpu} -1 {cpus} {req} -1 1 {i % 5 + 1} "
                     "1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("command", TRACE_COMMANDS)
def test_every_trace_command_takes_the_same_window_and_estimate_options(command):
    text = " ".join(advisor(command, "--help").stdout.split())
    for option in ("--since MOMENT", "--until MOMENT", "--load F", "--estimates"):
        assert option in text, (command, option)
    assert "a date in the trace's time zone" in text


def test_queues_plays_the_window_it_is_given():
    whole = json.loads(advisor("queues", "KTH-SP2", "--trigger", "100", "--json").stdout)
    part = json.loads(advisor("queues", "KTH-SP2", "--trigger", "100", "--since", "10w",
                              "--until", "20w", "--json").stdout)
    assert len(part["weeks"]) <= 10 < len(whole["weeks"])
    dense = json.loads(advisor("queues", "KTH-SP2", "--trigger", "100", "--since", "10w",
                               "--until", "20w", "--load", "2", "--json").stdout)
    assert len(dense["weeks"]) < len(part["weeks"])       # the same jobs in half the time


def test_tests_never_outnumber_the_weeks_while_the_queue_drains(tmp_path):
    """Two weeks of submissions that keep the machine full for six: the online policy tests
    in the weeks after the last submission too, and those weeks count."""
    jobs = [(i * 3600, 86400, 10, 86400, -1) for i in range(40)]         # 40 days of work
    workload = read_swf(swf(tmp_path / "drain.swf", jobs))
    study = queue_count_study(workload, trigger=1.0, weeks_ahead=1)
    t2 = study.table2()
    assert t2["tests"] > 2                          # tests while the queue drains
    assert t2["tests"] <= t2["weeks"] and t2["pct_weeks_with_test"] <= 100
    assert t2["weeks"] >= 40 * 86400 // WEEK


def test_the_header_says_how_many_jobs_requested_no_time(tmp_path):
    jobs = [(i * 600, 3000, 2, -1 if i % 2 else 3600, -1) for i in range(40)]
    trace = swf(tmp_path / "half.swf", jobs)
    for args in (["replay", str(trace), "--policy", "easy:SPF"],
                 ["queues", str(trace), "--trigger", "1"],
                 ["plans", str(trace), "--policy", "plan1:N=5"]):
        text = " ".join(advisor(*args).stdout.split())
        assert "20 jobs (50%) requested no time" in text, (args, text)
    exact = " ".join(advisor("replay", str(trace), "--estimates", "exact").stdout.split())
    assert "requested no time" not in exact        # no estimate stands in for a request
    doc = json.loads(advisor("replay", str(trace), "--json").stdout)
    assert doc["jobs_without_request"] == 20


def test_plans_tell_their_progress(tmp_path):
    jobs = [(i * 600, 3000, 2, 3600, -1) for i in range(30)]
    workload = read_swf(swf(tmp_path / "p.swf", jobs))
    seen = []
    study = plan_study(workload, ["plan1:N=5", "plan2:N=5"],
                       on_progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 3), (1, 3), (2, 3), (3, 3)] and len(study.runs) == 3
