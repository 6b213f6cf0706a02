"""Golden results: every engine path's start times on fixed windows of bundled traces, as
hashes, so that a refactor can show it changed no schedule (issue: families as packages).

    .venv/bin/python -m tests.golden            # print the cases and whether they match
    .venv/bin/python -m tests.golden --write    # record them (only for an intended change)

Each case is one policy on one window through one path: the textbook engine (``run``), the
slurm mode over a whole window (``workload_input``), and the slurm mode the online replay
plays (a candidate kept fixed, re-enacted on the queue at each daily cut, the trace's
groups as accounts for the fair-share cases). A case records the SHA-256 of its start times (int64,
the window's job order), the job count and the mean wait, which says how far a changed
case moved.
"""
from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.engine import EngineConfig, Estimates, job_arrays, run
from advisor.engine.slurm import run_slurm, with_backfill, workload_input
from advisor.model import SchedulingConfig
from advisor.plugins.spec import parse_policy
from advisor.plugins.contract import Context
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.online import ReplaySystem
from advisor.whatif.trace_accounts import site_config, with_accounts

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "golden.json"

#: (trace, first job, jobs): the windows, small enough for a test run
WINDOWS = {"KTH-SP2": (0, 3000), "SDSC-SP2": (5000, 3000)}
#: one or more policies of every family the textbook engine plays
TEXTBOOK = ("easy:FCFS:FCFS", "easy:SPF:SPF", "easy:SQF:SQF", "easy:LPF:LPF",
            "easy:LQF:LQF", "easy:LCFS:LCFS", "easy:EXP:EXP", "conservative:FCFS",
            "conservative:SPF", "ordering/fcfs + backfill/depth:k=4", "ordering/fcfs + "
            "backfill/none", "easy:SPF:SPF:T=20h", "easy:FCFS:FCFS:T=4h",
            "easy:FCFS:FCFS:P=3:cuts=1h/12h", "easy:FCFS:FCFS:P=2:cuts=4h")
#: plans (annealing: seconds per window of thousands of jobs) on a shorter window
PLANS = ("plan1", "plan2", "plan3")
PLAN_WINDOW = ("KTH-SP2", 0, 800)
#: the slurm mode over a whole window: (name, configuration)
MF = replace(SchedulingConfig(), priority_type="priority/multifactor",
             priority_weight_age=1000, priority_weight_job_size=1000)
SLURM = {"fcfs bf_interval=30": with_backfill(SchedulingConfig(), bf_interval=30),
         "fcfs bf_interval=0": with_backfill(SchedulingConfig(), bf_interval=0),
         "multifactor age+size": MF}
#: candidates the online replay plays, kept fixed over 1,500 KTH-SP2 jobs (daily cuts);
#: "+fs": with the trace's groups as accounts (fair share in effect)
ONLINE = ("easy:FCFS:FCFS", "easy:SPF:SPF:T=1d", "easy:SQF:SQF:T=12h",
          "conservative:FCFS", "plan1:T=1d", "easy:FCFS:FCFS:P=2:cuts=4h",
          "easy:FCFS:FCFS:scale=1+fs", "easy:SPF:scale=4:T=1d+fs", "depth:SPF:scale=4:k=2:T=1d+fs")


def _window(trace: str, first: int, count: int):
    workload = read_swf(resolve_trace(trace))
    return workload.with_jobs(workload.jobs.iloc[first:first + count].reset_index(drop=True))


def _case(start: np.ndarray, submit: np.ndarray) -> dict:
    start = np.asarray(start, np.int64)
    return {"sha256": hashlib.sha256(start.tobytes()).hexdigest(), "jobs": int(len(start)),
            "mean_wait": round(float((start - submit).mean()), 3)}


def cases() -> dict[str, dict]:
    """Every case's record (see the module docstring)."""
    out = {}
    for trace, (first, count) in WINDOWS.items():
        workload = _window(trace, first, count)
        arrays = job_arrays(workload, Estimates())
        for spec in TEXTBOOK:
            start, _ = run(arrays, parse_policy(spec).engine_config(EngineConfig()))
            out[f"textbook {trace} {spec}"] = _case(start, arrays.submit)
        for name, config in SLURM.items():
            inp = workload_input(workload, config)
            start, _ = run_slurm(inp)
            out[f"slurm {trace} {name}"] = _case(start, inp.jobs[0])
    plan_window = _window(*PLAN_WINDOW)
    arrays = job_arrays(plan_window, Estimates())
    for spec in PLANS:
        start, _ = run(arrays, parse_policy(spec).engine_config(EngineConfig()))
        out[f"textbook {PLAN_WINDOW[0]}[:{PLAN_WINDOW[2]}] {spec}"] = _case(start, arrays.submit)
    kth = _window("KTH-SP2", 0, 1500)
    for spec in ONLINE:
        workload = with_accounts(kth) if spec.endswith("+fs") else kth
        policy = parse_policy(spec.removesuffix("+fs"))
        system = ReplaySystem(workload, Estimates(), policy)
        base = site_config(workload)

        def fixed(t, snap, history, current, policy=policy, base=base, system=system):
            return slurm_candidate(policy, Context(system.machine, base, snapshot=snap))

        start = system.play(system.decision_points(86400), fixed)
        out[f"online KTH-SP2 {spec}"] = _case(start, system.submit)
    return out


def main() -> int:
    now = cases()
    if "--write" in sys.argv:
        FIXTURE.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(now)} cases to {FIXTURE}")
        return 0
    old = json.loads(FIXTURE.read_text())
    bad = [k for k in now if old.get(k, {}).get("sha256") != now[k]["sha256"]]
    for k in bad:
        print(f"changed: {k}: mean wait {old.get(k, {}).get('mean_wait')} -> "
              f"{now[k]['mean_wait']}")
    print(f"{len(now) - len(bad)} of {len(now)} cases match")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
