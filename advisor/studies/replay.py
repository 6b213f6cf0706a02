"""Offline replay: a trace under one or many policies, every job as it really arrived."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from advisor import metrics
from advisor.engine import EngineConfig, Estimates, job_arrays, run
from advisor.errors import SourceUnavailable
from advisor.model import Workload
from advisor.policy import Policy

BUNDLED_TRACES = Path(__file__).parents[1] / "data" / "traces"
DEFAULT_TRACE = BUNDLED_TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
DEFAULT_POLICIES = ("easy:FCFS:FCFS", "easy:SPF:SPF", "easy:SPF:SPF:T=20h",
                    "conservative:FCFS")


def resolve_trace(name: str | None) -> Path:
    """A trace path; a bundled trace by name prefix (KTH-SP2, ...); the default if None."""
    if name is None:
        return DEFAULT_TRACE
    path = Path(name)
    if path.exists():
        return path
    bundled = sorted(BUNDLED_TRACES.glob("*.swf.gz"))
    matches = [p for p in bundled if p.name.lower().startswith(name.lower())]
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(re.sub(r"-\d{4}-.*", "", p.name) for p in bundled)
    raise SourceUnavailable(f"no trace file '{name}' (bundled traces: {names})")


@dataclass(frozen=True)
class ReplayResult:
    policy: Policy
    table: pd.DataFrame          # per job: see metrics.schedule_table
    summary: dict                # see metrics.summary

    def as_dict(self) -> dict:
        return {"policy": self.policy.spec, "label": self.policy.label, **self.summary}


def replay(workload: Workload, policies: list[Policy], estimates: Estimates = Estimates(),
           base: EngineConfig = EngineConfig()) -> list[ReplayResult]:
    """Simulate each policy; ``base`` carries engine settings common to all (event rule)."""
    arrays = job_arrays(workload, estimates)
    results = []
    for policy in policies:
        start, _ = run(arrays, policy.engine_config(base))
        table = metrics.schedule_table(arrays.submit, start, arrays.runtime, arrays.procs,
                                       workload.jobs["job_id"].to_numpy())
        results.append(ReplayResult(policy, table, metrics.summary(table, arrays.machine)))
    return results


def simulated_workload(workload: Workload, result: ReplayResult) -> Workload:
    """The trace with each job's wait replaced by the simulated one (an SWF log of the
    simulated schedule), and a header note naming the policy."""
    jobs = workload.jobs.copy()
    jobs["wait"] = result.table["wait"].to_numpy()
    note = f"; Note: simulated schedule under {result.policy.label} by slurm-policy-advisor"
    header = workload.header
    lines = tuple(header.lines) + (note,) if header.lines else ()
    return replace(workload, jobs=jobs, header=replace(header, lines=lines))
