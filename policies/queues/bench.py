"""Lawson and Smirni's online simulation policy on the four traces the paper used, over
Table 3's grid of thresholds T and look-aheads L: the aggregate slowdown ratio R against
single-queue EASY, ours beside the paper's Table 3, and Table 2's test and change counts at
Table 1's settings. The local traces are not the paper's versions (docs: the bundled
traces' README), so the comparison is of signs and orderings, not values.

With --honest, also the online policy in the honest setting (futures drawn from the
finished jobs only) at Table 1's settings; with --decision, the time of one test (P = 1..4
simulated a week ahead) from the busiest tested state of SDSC-BLUE, in both settings.

    advisor bench --family queues -- [--traces KTH-SP2,...] [--grid]
        [--honest] [--decision] [--json F]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.engine import Estimates, job_arrays
from advisor.metrics import schedule_table, slowdown_ratio
from advisor.model import SECONDS_PER_WEEK
from advisor.policies.queues.kernel import (NQ, NRL, TRIGGERED, MultiQueue, a_priori_classes,
                                            run_queues)
from advisor.policies.queues.study import online_queue_counts, score_parts

TRACES = ("CTC-SP2", "KTH-SP2", "SDSC-SP2", "SDSC-BLUE")
#: the paper's Table 1 (T, L), Table 2 (weeks, tests, changes, changes to P = 1..4) and
#: Table 3 (R at T/L); Blue Horizon is SDSC-BLUE here
TABLE1 = {"CTC-SP2": (2.5, 2), "KTH-SP2": (100, 2), "SDSC-SP2": (25, 1), "SDSC-BLUE": (10, 1)}
TABLE2 = {"CTC-SP2": (48, 44, 27, (7, 8, 8, 4)), "KTH-SP2": (48, 26, 18, (2, 6, 4, 6)),
          "SDSC-SP2": (104, 90, 53, (4, 16, 13, 20)),
          "SDSC-BLUE": (104, 60, 41, (10, 9, 7, 15))}
GRID = [(t, ahead) for t in (2.5, 5, 7.5, 10, 25, 50, 75, 100) for ahead in (1, 2)]
TABLE3 = {
    "CTC-SP2": (0.649, 0.712, -0.676, 0.269, -0.100, 0.443, 0.572, 0.559, 0.552, 0.645,
                0.133, 0.013, 0.157, 0.033, -0.637, 0.466),
    "KTH-SP2": (5.327, 4.520, 5.790, 4.918, 5.117, 4.543, 5.608, 4.577, 5.940, 5.227, 6.275,
                6.135, 2.936, 4.569, 4.002, 6.431),
    "SDSC-SP2": (12.823, 13.331, 13.474, 12.713, 13.211, 11.613, 13.200, 11.573, 13.709,
                 11.675, 11.972, 12.961, 12.433, 12.547, 6.985, 10.831),
    "SDSC-BLUE": (1.092, 1.224, 1.025, 1.21, 0.922, 1.33, 0.897, 1.356, 0.915, 1.323, 1.265,
                  1.201, 1.25, 1.306, 1.297, 1.301)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="advisor bench --family queues --",
                                     description=__doc__.splitlines()[0])
    ap.add_argument("--traces", default=",".join(TRACES))
    ap.add_argument("--grid", action="store_true", help="every T/L of Table 3 (minutes)")
    ap.add_argument("--honest", action="store_true", help="also the honest setting")
    ap.add_argument("--decision", action="store_true", help="time one test on SDSC-BLUE")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    out, doc = Console(), {}
    if args.decision:
        doc["decision"] = decision(out)
        args.traces = "" if not args.grid and not args.honest else args.traces
    for name in filter(None, args.traces.split(",")):
        workload = read_swf(resolve_trace(name))
        request = workload.jobs["req_time"].to_numpy()
        user = job_arrays(workload, Estimates("user"))
        exact = job_arrays(workload, Estimates("exact"))

        def r_of(arrays, start, base):
            tables = [schedule_table(arrays.submit, s, arrays.runtime, arrays.procs)
                      for s in (base, start)]
            return float(slowdown_ratio(*tables, request).mean())

        one_user, _ = run_queues(user, 1)
        one_exact, _ = run_queues(exact, 1)
        fig6a = r_of(exact, run_queues(exact, 4, a_priori_classes(
            exact.submit, exact.runtime, 4))[0], one_exact)
        fig6b = r_of(user, run_queues(user, 4)[0], one_user)
        settings = GRID if args.grid else [TABLE1[name]]
        rows = {}
        for t, ahead in settings:
            clock = time.perf_counter()
            run = online_queue_counts(user, t, ahead)
            rows[f"{t:g}/{ahead}"] = {"r": r_of(user, run.start, one_user),
                                      "paper": TABLE3[name][GRID.index((t, ahead))],
                                      "seconds": time.perf_counter() - clock,
                                      **run.as_dict()}
        t, ahead = TABLE1[name]
        best = rows[f"{t:g}/{ahead}"]
        doc[name] = {"fig6a": fig6a, "fig6b": fig6b, "online": rows}
        if args.honest:
            clock = time.perf_counter()
            users = workload.jobs["user"].astype(str).to_numpy()
            run = online_queue_counts(user, t, ahead, futures="sampled", users=users)
            honest = {"r": r_of(user, run.start, one_user),
                      "seconds": time.perf_counter() - clock, **run.as_dict()}
            doc[name]["honest"] = honest
        table = Table(title=f"{name}: R against single-queue EASY (paper's Table 3 beside)",
                      title_justify="left")
        for col in ("T/L", "R ours", "R paper", "tests", "changes", "to P=1..4", "s"):
            table.add_column(col, justify="right")
        for key, row in rows.items():
            to = "/".join(str(row["to_parts"].get(str(p), 0)) for p in range(1, 5))
            table.add_row(key, f"{row['r']:+.3f}", f"{row['paper']:+.3f}", str(row["tests"]),
                          str(row["changes"]), to, f"{row['seconds']:.1f}")
        out.print(table)
        weeks, tests, changes, to = TABLE2[name]
        out.print(f"Fig. 6 at {t:g}/{ahead}: (a) exact, a priori {fig6a:+.3f}; (b) user, four "
                  f"queues {fig6b:+.3f}; (c) online {best['r']:+.3f} "
                  f"({'(c) > (b)' if best['r'] > fig6b else '(c) <= (b)!'}); Table 2, "
                  f"paper: {weeks} weeks, {tests} tests, {changes} changes "
                  f"({'/'.join(map(str, to))}); ours: {best['weeks']} weeks, "
                  f"{best['tests']} tests, {best['changes']} changes")
        if args.honest:
            h = doc[name]["honest"]
            to = "/".join(str(h["to_parts"].get(str(p), 0)) for p in range(1, 5))
            out.print(f"honest setting at {t:g}/{ahead}: R {h['r']:+.3f}, {h['tests']} "
                      f"tests, {h['changes']} changes ({to}), {h['seconds']:.1f} s")
        out.print()
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n")


def decision(out: Console) -> dict:
    """One test (P = 1..4, L = 1 week) from the tested state of SDSC-BLUE (T = 10) with the
    most jobs queued, timed in both settings (medians of three)."""
    workload = read_swf(resolve_trace("SDSC-BLUE"))
    arrays = job_arrays(workload, Estimates("user"))
    users = workload.jobs["user"].astype(str).to_numpy()
    run, busiest, queued = MultiQueue(arrays, 4), None, -1
    while run.advance(trigger=10) == TRIGGERED:
        waiting = int(run.scalars[NQ])
        if waiting > queued:
            busiest, queued = run.copy(), waiting
    figures = {"queued": queued, "running": int(busiest.scalars[NRL]), "time": busiest.now}
    for setting in ("paper", "honest"):
        times = []
        for _ in range(3):
            clock = time.perf_counter()
            score_parts(busiest, SECONDS_PER_WEEK, 4, setting, users)
            times.append(time.perf_counter() - clock)
        figures[setting] = sorted(times)[1]
    out.print(f"one test on SDSC-BLUE ({queued} queued, {figures['running']} running, "
              f"P = 1..4, a week ahead): paper setting {figures['paper']:.2f} s, honest "
              f"(4 futures each) {figures['honest']:.2f} s (target < 5 s)")
    return figures


if __name__ == "__main__":
    main()
