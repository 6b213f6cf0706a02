"""Offline replay: a trace under one or many policies, every job as it really arrived."""
from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from advisor import metrics
from advisor.engine import EngineConfig, Estimates, job_arrays, run
from advisor.model import Workload
from advisor.plugins.spec import Policy


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
    simulated schedule). Its header says what is now true: the job and record counts of
    what is written, the policy simulated in place of the log's own scheduler note, and no
    EndTime (the simulated schedule ends elsewhere)."""
    jobs = workload.jobs.copy()
    jobs["wait"] = result.table["wait"].to_numpy()
    note = f"; Note: simulated schedule under {result.policy.label} by slurm-policy-advisor"
    header = workload.header
    lines = []
    for line in header.lines:
        key = line[1:].split(":", 1)[0].strip().lower()
        if key in ("maxjobs", "maxrecords"):
            lines.append(f"; {line[1:].split(':', 1)[0].strip()}: {len(jobs)}")
        elif key == "endtime" or (key == "note" and "scheduler" in line.lower()):
            continue
        else:
            lines.append(line)
    lines = tuple(lines) + (note,) if header.lines else ()
    return replace(workload, jobs=jobs, header=replace(header, lines=lines))
