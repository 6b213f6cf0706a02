"""Small helpers shared by the tests."""
from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from pathlib import Path

import numpy as np

from advisor.engine import job_arrays, run
from advisor.model import workload_from_records
from advisor.plugins.spec import parse_policy


def starts(jobs: list[tuple], machine: int, spec: str, **config) -> list[int]:
    """Start times of jobs given as (submit, procs, runtime[, estimate]) under a policy."""
    records = [dict(submit=j[0], procs=j[1], runtime=j[2],
                    estimate=j[3] if len(j) > 3 else j[2]) for j in jobs]
    workload = workload_from_records(records, machine)
    start, _ = run(job_arrays(workload), replace(parse_policy(spec).engine_config(), **config))
    # back to the caller's order (records are sorted by submit, then id = position)
    out = np.empty(len(jobs), np.int64)
    out[workload.jobs["job_id"].to_numpy() - 1] = start
    return out.tolist()


def peak_usage(start, runtime, procs) -> int:
    """Most processors in use at once; a job ending at t frees before one starting at t."""
    events = []
    for s, r, p in zip(start, runtime, procs):
        if r > 0:
            events.append((s, 1, p))
            events.append((s + r, 0, -p))
    used = peak = 0
    for _, _, delta in sorted(events):
        used += delta
        peak = max(peak, used)
    return peak


def one_line_error(done, code: int, *texts: str) -> str:
    """A CLI run that failed as it should: exit ``code``, one line on stderr starting
    'advisor: ' and holding each of ``texts``, no traceback, nothing on stdout."""
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: "), done.stderr
    assert all(t in lines[0] for t in texts), lines[0]
    assert "Traceback" not in done.stderr and not done.stdout
    return lines[0]


#: the repository, and its recorded fixtures
ROOT_DIR = Path(__file__).resolve().parents[1]
FIXTURES = ROOT_DIR / "tests" / "fixtures"


def flipped_pairs(first: list[float], then: list[float],
                  apart: float) -> set[tuple[int, int]]:
    """Pairs (i, j) of jobs, by submission order, that started at least ``apart`` seconds
    apart in ``first`` and in ``then``, in opposite orders."""
    return {(i, j) for i, j in combinations(range(len(first)), 2)
            if abs(first[i] - first[j]) >= apart and abs(then[i] - then[j]) >= apart
            and (first[i] < first[j]) != (then[i] < then[j])}
