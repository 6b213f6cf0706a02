"""Recommend at scale: a snapshot with about 2,000 pending jobs on a 10,000-CPU machine,
100 candidates on 8 sampled futures over a 1-day horizon. Prints the wall time of the
whole simulation on each executor asked for. The candidates: FCFS, and SPF, LPF, SQF and
LQF each with six age ramps, under EASY and depth 2, 4 and 8 (``--backfills``).

The machine is CEA-Curie's "large" partition (partition 4 of the log: the 360 fat nodes,
11,520 CPUs). Replayed as logged, its queue never holds more than ~600 jobs, so the load
is raised by compressing the inter-arrival times by ``--load`` (1.6: the same jobs arrive
1.6 times as fast), and the snapshot is taken at the first moment the replay under
EASY-FCFS has ``--pending`` jobs waiting. The trace is not bundled (3.6 MB): give the
Archive's CEA-Curie-2011-2.1-cln.swf.gz with --trace.

    .venv/bin/python bench/recommend_scale.py --trace PATH [--executors ray,serial]
                                              [--samples 8] [--profile] [--json F]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from advisor.adapters.files import atomic_write  # noqa: E402
from advisor.adapters.swf import read_swf  # noqa: E402
from advisor.cleaning import CleaningOptions, clean  # noqa: E402
from advisor.engine import job_arrays, run  # noqa: E402
from advisor.whatif.futures import (ArrivalSampler, RuntimeModel, draw_sample,  # noqa: E402
                             history_from_workload)
from advisor.model import SECONDS_PER_WEEK  # noqa: E402
from advisor.model import TRACE_PARTITION  # noqa: E402
from advisor.plugins.contract import Context  # noqa: E402
from advisor.plugins.grid import default_grid  # noqa: E402
from advisor.plugins.registry import registry  # noqa: E402
from advisor.plugins.spec import BASELINE, parse_policy  # noqa: E402
from advisor.units import parse_duration  # noqa: E402
from advisor.whatif.candidates import candidates_for  # noqa: E402
from advisor.settings import Settings  # noqa: E402
from advisor.whatif.racing import simulate  # noqa: E402
from advisor.whatif.runner import TASKS_PER_WORKER, make_executor  # noqa: E402
from advisor.whatif.scenario import Task, evaluate  # noqa: E402
from advisor.whatif.snapshot import trace_snapshot  # noqa: E402

LARGE_PARTITION, LARGE_CPUS = 4, 11520
REPLAY = BASELINE
#: the default grid's ramps and three more
RAMPS = ("2h", "4h", "8h", "12h", "24h", "48h")
#: the default grid's backfills at this queue size (conservative is left out above
#: --conservative-up-to pending jobs) and depth 8
BACKFILLS = "easy,depth:k=2,depth:k=4,depth:k=8"


def grid_points(backfills: str) -> dict:
    """The grid's points: these backfills (specs as --backfills writes them, in this
    order) and no other, each ordering with a key under each of RAMPS."""
    points: dict[str, list] = {p.key: [] for p in registry().family("backfill").members}
    for spec in backfills.split(","):
        choice = parse_policy(spec).choice("backfill")
        points[choice.plugin.key].append(choice.params)
    queue = registry().plugin("threshold", "queue")
    points[queue.key] = [queue.Params(T=parse_duration(r)) for r in RAMPS]
    return points


def busy_workload(path: Path, load: float):
    """The large partition's jobs, arriving ``load`` times as fast."""
    workload = read_swf(path, procs=LARGE_CPUS)
    jobs = workload.jobs[workload.jobs["partition"] == LARGE_PARTITION].copy()
    t0 = jobs["submit"].min()
    jobs["submit"] = (t0 + (jobs["submit"] - t0) / load).round().astype(np.int64)
    return clean(workload.with_jobs(jobs.reset_index(drop=True)),
                 CleaningOptions(drop_overruns=True, drop_oversize=True))


def first_moment_with(workload, pending: int) -> int:
    """The first time the EASY-FCFS replay has ``pending`` jobs waiting."""
    arrays = job_arrays(workload)
    start, _ = run(arrays, parse_policy(REPLAY).engine_config())
    times = np.concatenate([arrays.submit, start])
    step = np.concatenate([np.ones(len(start)), -np.ones(len(start))])
    order = np.lexsort((-step, times))
    waiting = np.cumsum(step[order])
    hit = np.flatnonzero(waiting >= pending)
    if not len(hit):
        raise SystemExit(f"the replay never has {pending} jobs waiting (most: "
                         f"{int(waiting.max())}); raise --load")
    return int(times[order][hit[0]])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", type=Path, required=True,
                    help="CEA-Curie-2011-2.1-cln.swf.gz (Parallel Workloads Archive)")
    ap.add_argument("--load", type=float, default=1.6)
    ap.add_argument("--pending", type=int, default=2000)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--horizon", type=int, default=86400)
    ap.add_argument("--executors", default="ray,serial")
    ap.add_argument("--backfills", default=BACKFILLS, help="comma-separated backfill specs "
                    f"(default {BACKFILLS}; conservative's simulations take seconds each at "
                    "this size, the others tens of milliseconds)")
    ap.add_argument("--profile", action="store_true",
                    help="time each candidate on one sample, serially, and stop")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = Console(stderr=True)
    if not args.trace.exists():
        raise SystemExit(f"no trace at {args.trace}; give --trace PATH to "
                         "CEA-Curie-2011-2.1-cln.swf.gz (Parallel Workloads Archive)")
    t = time.perf_counter()
    workload = busy_workload(args.trace, args.load)
    moment = first_moment_with(workload, args.pending)
    snap = trace_snapshot(workload, parse_policy(REPLAY), moment)
    ids = {j.job_id for j in (*snap.running, *snap.pending)}
    history = history_from_workload(workload, moment, ids, TRACE_PARTITION)
    history = history[history["submit"] >= moment - 4 * SECONDS_PER_WEEK]
    context = Context(snap.machine, snap.config, len(snap.pending), None)
    policies = default_grid(context, grid_points(args.backfills))[:args.candidates]
    candidates = candidates_for(snap, policies)
    setup = time.perf_counter() - t
    figures = {"trace": args.trace.name, "cpus": snap.machine.cpus, "load": args.load,
               "moment": moment, "running": len(snap.running), "pending": len(snap.pending),
               "history_jobs": len(history), "candidates": len(candidates),
               "samples": args.samples, "horizon": args.horizon, "setup_s": setup}
    out.print(f"snapshot at t={moment}: {len(snap.running)} running, {len(snap.pending)} "
              f"pending on {snap.machine.cpus} CPUs; {len(candidates)} candidates "
              f"(setup {setup:.1f} s)")
    settings = Settings(samples=args.samples, horizon=args.horizon)
    if args.profile:
        sample = draw_sample(snap, history, args.horizon, 1, RuntimeModel(history),
                             ArrivalSampler(history, moment, settings.history_weeks))
        evaluate(Task(snap, tuple(candidates[:1]), sample, args.horizon))
        for c in candidates:
            t = time.perf_counter()
            evaluate(Task(snap, (c,), sample, args.horizon))
            out.print(f"{c.spec:32s} {time.perf_counter() - t:8.3f} s")
        return 0
    table = Table("executor", "workers", "wall (s)", "simulations", "per simulation (ms)",
                  title=f"{len(candidates)} candidates x {args.samples} samples, "
                        f"{args.horizon} s horizon")
    for kind in args.executors.split(","):
        executor = make_executor(None, kind)
        try:
            # warm-up tasks for every worker, so that the wall time excludes loading the
            # compiled engine
            simulate(snap, history, candidates[:1],
                     Settings(samples=TASKS_PER_WORKER * executor.workers), executor)
            t = time.perf_counter()
            simulate(snap, history, candidates, settings, executor)
            wall = time.perf_counter() - t
        finally:
            executor.close()
        n = len(candidates) * args.samples
        workers = 1 if kind == "serial" else os.cpu_count()
        figures[f"{kind}_s"] = wall
        table.add_row(kind, str(workers), f"{wall:.1f}", str(n), f"{1000 * wall / n:.1f}")
    Console().print(table)
    if args.json:
        atomic_write(args.json, json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
