"""Which stated configuration reproduces a Slurm-run site's log best: ``advisor check`` on
days of the log under each slurm.conf, the days of the tuning set and of the validation
set apart (the configuration is chosen on the first and reported on the second).

    .venv/bin/python bench/site_check.py TRACE --conf A.conf --conf B.conf ...
        --tuning 2012-02-10 --validation 2012-04-01 [--days 8] [--every 4 21] [--span 6h]
        [--json F]

Each set is ``--days`` days of the log, the first at its date and the next ``--every``
days apart (one figure for each set); a day is checked in replays of ``--span``. Prints,
per configuration and set, the jobs judged and the pooled share within max(2 s,
bf_interval) and within a minute, the mean and 95th percentile error, and the median of
the days' shares; then the configuration chosen on the tuning set.
"""
from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pandas as pd
from rich.console import Console
from rich.table import Table

from advisor.adapters.files import atomic_write
from advisor.adapters.slurm_conf import read_slurm_conf
from advisor.adapters.swf import read_swf, resolve_trace
from advisor.model import Accounting
from advisor.units import parse_date, parse_duration, trace_zone
from advisor.whatif.past_state import trace_job_log
from advisor.whatif.sitecheck import check_site, figures
from advisor.whatif.trace_accounts import with_accounts


def days(first: str, count: int, every: int, zone) -> list[int]:
    start = parse_date(first).replace(tzinfo=zone)
    return [int((start + timedelta(days=k * every)).timestamp()) for k in range(count)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--conf", action="append", required=True)
    ap.add_argument("--tuning", required=True, help="the tuning set's first day")
    ap.add_argument("--validation", required=True, help="the validation set's first day")
    ap.add_argument("--days", type=int, default=8)
    ap.add_argument("--every", type=int, nargs=2, default=(4, 21),
                    help="days between the tuning set's days, and the validation set's")
    ap.add_argument("--span", default="6h")
    ap.add_argument("--json")
    args = ap.parse_args()
    workload = read_swf(resolve_trace(args.trace))
    log = trace_job_log(workload)
    zone = trace_zone(workload.header)
    sets = {"tuning": days(args.tuning, args.days, args.every[0], zone),
            "validation": days(args.validation, args.days, args.every[1], zone)}
    span = parse_duration(args.span)
    console = Console()
    rows = []
    for path in args.conf:
        cluster, config = read_slurm_conf(path)
        accounting = (with_accounts(workload).accounts or Accounting()) \
            if config.priority_weight_fairshare > 0 else Accounting()
        for name, starts in sets.items():
            tables, shares = [], []
            for day in starts:
                check = check_site(log, cluster, config, accounting, since=day,
                                   until=day + 86400, span=span)
                tables.append(check.table)
                shares.append(check.figures["within"])
                console.print(f"{Path(path).stem} {name} {day}: {check.figures['jobs']} "
                              f"jobs, {check.figures['within']:.1%}", style="dim")
            pooled = figures(pd.concat(tables, ignore_index=True), check.tolerance)
            rows.append({"conf": Path(path).stem, "set": name, **pooled,
                         "median_day": float(pd.Series(shares).median()),
                         "days": starts})
    table = Table(title=f"advisor check on {Path(args.trace).name}, days of "
                        f"{args.span} replays")
    for col in ("configuration", "set", "jobs", "within tol", "within 1 min", "mean err",
                "p95 err", "median day"):
        table.add_column(col, justify="left" if col in ("configuration", "set") else "right")
    for r in rows:
        table.add_row(r["conf"], r["set"], str(r["jobs"]), f"{r['within']:.1%}",
                      f"{r['within_minute']:.1%}", f"{r['mean_error_s'] / 3600:.2f} h",
                      f"{r['p95_error_s'] / 3600:.1f} h", f"{r['median_day']:.1%}")
    console.print(table)
    tuned = max((r for r in rows if r["set"] == "tuning"), key=lambda r: r["within"])
    console.print(f"chosen on the tuning set: {tuned['conf']} ({tuned['within']:.1%}); on "
                  "the validation set: " + next(
                      f"{r['within']:.1%}" for r in rows
                      if r["set"] == "validation" and r["conf"] == tuned["conf"]))
    if args.json:
        atomic_write(args.json, json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
