"""How long ``advisor forecast`` takes on a queue of thousands: a snapshot of CEA-Curie's
"large" partition (360 fat nodes, 11,520 CPUs; the bundled excerpt, or the Archive's
whole log with --trace) at the first moment the EASY-FCFS replay holds each --pending
count, its arrivals compressed by --load so that such a queue forms (bench/
recommend_scale.py's state); then the forecast of every pending job over --samples
futures of --horizon, timed --repeat times (the median printed), serially on one core.

    .venv/bin/python bench/forecast.py [--pending 1000 2000 3000] [--samples 20]
                                       [--horizon 3d] [--load 5] [--repeat 3] [--json F]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from recommend_scale import busy_workload, first_moment_with, REPLAY  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from advisor.adapters.files import atomic_write  # noqa: E402
from advisor.adapters.swf import resolve_trace  # noqa: E402
from advisor.model import SECONDS_PER_WEEK, TRACE_PARTITION  # noqa: E402
from advisor.plugins.spec import parse_policy  # noqa: E402
from advisor.units import parse_duration  # noqa: E402
from advisor.whatif.forecast import forecast  # noqa: E402
from advisor.whatif.futures import history_from_workload  # noqa: E402
from advisor.whatif.snapshot import trace_snapshot  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="CEA-Curie")
    ap.add_argument("--pending", type=int, nargs="+", default=[1000, 2000, 3000])
    ap.add_argument("--samples", type=int, default=20)
    ap.add_argument("--horizon", default="3d")
    ap.add_argument("--load", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    console = Console()
    workload = busy_workload(resolve_trace(args.trace), args.load)
    horizon = parse_duration(args.horizon)
    forecast(*_state(workload, args.pending[0])[:2], samples=1, horizon=60)  # (compiled)
    rows = []
    for pending in args.pending:
        snap, history, setup = _state(workload, pending)
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            done = forecast(snap, history, args.samples, horizon)
            times.append(time.perf_counter() - t)
        started = float(done.table["started"].mean())
        rows.append({"pending": len(snap.pending), "running": len(snap.running),
                     "cpus": snap.machine.cpus, "history_jobs": len(history),
                     "samples": args.samples, "horizon_s": horizon,
                     "seconds": statistics.median(times), "setup_s": setup,
                     "started_share": started})
    table = Table(title=f"advisor forecast on {Path(str(resolve_trace(args.trace))).name} "
                        f"(large partition, load x{args.load:g}), {args.samples} futures of "
                        f"{args.horizon}, median of {args.repeat}")
    for col in ("pending", "running", "CPUs", "history", "seconds", "per future",
                "started by the horizon"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(f"{r['pending']:,}", str(r["running"]), f"{r['cpus']:,}",
                      f"{r['history_jobs']:,}", f"{r['seconds']:.2f}",
                      f"{r['seconds'] / r['samples'] * 1000:.0f} ms",
                      f"{r['started_share']:.0%}")
    console.print(table)
    if args.json:
        atomic_write(args.json, json.dumps(rows, indent=1) + "\n")


def _state(workload, pending: int):
    t = time.perf_counter()
    moment = first_moment_with(workload, pending)
    snap = trace_snapshot(workload, parse_policy(REPLAY), moment)
    ids = {j.job_id for j in (*snap.running, *snap.pending)}
    history = history_from_workload(workload, moment, ids, TRACE_PARTITION)
    history = history[history["submit"] >= moment - 4 * SECONDS_PER_WEEK]
    return snap, history, time.perf_counter() - t


if __name__ == "__main__":
    main()
