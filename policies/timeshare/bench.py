"""Frachtenberg et al. on the process-level model: the §3 scenarios against the paper's tables
(and the time they take), then §5's dynamic workload offered at rising loads under FCFS with
EASY backfilling (batch) and the time-sharing schedulers with MPL 6 on 32 CPUs: accepted
load (the work done by the last arrival over processors x that time), the same over the
time to the last end (drained) and mean response, side by side, with each run's time; then
each scheduler's highest accepted load over the sweep (its saturation point when the sweep
goes past it).

    advisor bench --family timeshare -- [--jobs 200] [--longest 600]
        [--loads 0.7,0.85,1.0] [--schedulers FCFS,GS,FCS] [--seed 0] [--json F]
        [--skip-tables]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from advisor.policies.timeshare.study_cosched import (compare, dynamic_workload, orders,
                                                      play_dynamic, saturation)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="advisor bench --family timeshare --",
                                     description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--loads", default="0.7,0.85,1.0")
    ap.add_argument("--schedulers", default="FCFS,GS,FCS")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--longest", type=float, default=600.0,
                    help="longest run time alone of a serial job, seconds")
    ap.add_argument("--json", metavar="F")
    ap.add_argument("--skip-tables", action="store_true", help="§5 only")
    args = ap.parse_args(argv)
    out = Console()
    table = None
    if not args.skip_tables:
        t = time.perf_counter()
        table = compare(seed=args.seed)
        took = time.perf_counter() - t
        within = int((table.error.abs() <= 0.10).sum())
        same = orders(table)
        out.print(f"§3: {within} of {len(table)} values within 10% of the paper's tables; "
                  f"orders as the paper's in {int((same.model == same.paper).sum())} of "
                  f"{len(same)} (scenario, metric); 16 plays in {took:.1f} s (first call "
                  "includes compiling)")
    workload = dynamic_workload(args.jobs, seed=args.seed, longest=args.longest)
    rows = []
    grid = Table(title=f"§5: {args.jobs} jobs on 32 CPUs, MPL 6 (FCFS: batch), "
                       f"longest {args.longest:g} s")
    for col in ("offered", "scheduler", "accepted", "drained", "mean response", "run time"):
        grid.add_column(col, justify="right")
    for load in (float(x) for x in args.loads.split(",")):
        for scheduler in args.schedulers.split(","):
            t = time.perf_counter()
            r = play_dynamic(workload, load, scheduler, seed=args.seed)
            r["seconds"] = time.perf_counter() - t
            rows.append(r)
            grid.add_row(f"{r['offered']:.2f}", scheduler, f"{r['accepted']:.3f}",
                         f"{r['drained']:.3f}", f"{r['mean_response']:.0f} s",
                         f"{r['seconds']:.0f} s")
    out.print(grid)
    peaks = saturation(rows)
    out.print("highest accepted load: " + ", ".join(f"{k} {v:.3f}" for k, v in peaks.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({
            "section3": None if table is None else table.to_dict(orient="records"),
            "section5": rows, "highest_accepted": peaks}, indent=1))


if __name__ == "__main__":
    main()
