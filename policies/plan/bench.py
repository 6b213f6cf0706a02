"""Zheng et al.'s plans (Zheng et al.) against EASY-FCFS-FCFS over whole traces: utilisation
beside the paper's Table II, mean wait and response per month (Figs. 4-5), how many months
each plan waits less than FCFS, and the time each replay took. The local traces are not
the paper's versions (job counts differ), so the comparison is of directions.

SDSC-BLUE is replayed over the paper's window (May 2000 to December 2001) unless --all;
LLNL-Atlas's whole log is the paper's window. With --single, also the time of one plan of
100 and of 500 waiting jobs with 200 running, the paper's parameters, on LLNL-Atlas's sizes
and limits (the issue's target: under 0.1 s for 100 jobs; the paper's: under 1 s). With
--fidelity, how closely Slurm (the slurm mode) runs PLAN 2's order on SDSC-BLUE snapshots,
under EASY's one reservation and with every job reserving.

    advisor bench --family plan --
        [--traces SDSC-BLUE,LLNL-Atlas] [--all] [--policies FCFS,PLAN1,...] [--single]
        [--fidelity] [--json F]
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.cleaning import trace_window
from advisor.policies.plan.kernel import plan
from advisor.policies.plan.study import PAPER_POLICIES, plan_study
from advisor.units import parse_moment

#: the paper's names of its policies (FCFS is EASY-FCFS-FCFS) and the study's labels
NAMES = dict(zip(("FCFS", "PLAN1", "PLAN2", "PLAN3"), PAPER_POLICIES))

#: the paper's Table II (utilisation under FCFS, PLAN 1, 2, 3) and its windows
TABLE2 = {"SDSC-BLUE": (0.780, 0.785, 0.782, 0.793), "LLNL-Atlas": (0.744, 0.750, 0.751, 0.758)}
WINDOWS = {"SDSC-BLUE": ("2000-05-01", "2002-01-01"), "LLNL-Atlas": (None, None)}


def trace_seconds(day: str | None, header) -> int | None:
    """A date on the trace's clock and in its time zone (as ``advisor plans --since``)."""
    return None if day is None else parse_moment(day, header)


def one_trace(name: str, whole: bool, policies: list[str], out: Console) -> dict:
    workload = read_swf(resolve_trace(name))
    since, until = (None, None) if whole else WINDOWS.get(name, (None, None))
    timings = {}
    clock = [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        clock.append(time.perf_counter())
        if done < total:
            out.print(f"  {name}: policy {done + 1} of {total} ...", highlight=False)

    chosen = {k: v for k, v in NAMES.items() if k in policies}
    t0 = time.perf_counter()
    window = trace_window(workload, trace_seconds(since, workload.header),
                          trace_seconds(until, workload.header))
    study = plan_study(window, [v for k, v in chosen.items() if k != "FCFS"],
                       on_progress=progress)
    clock.append(time.perf_counter())
    for run, (a, b) in zip(study.runs, zip(clock[1:], clock[2:])):
        timings[run.name] = b - a
    months = study.months()
    table = Table(title=f"{name}: mean wait per month (s), {study.window[0]} to "
                  f"{study.window[1]}", title_justify="left")
    table.add_column("month")
    table.add_column("jobs", justify="right")
    for run in study.runs:
        table.add_column(run.name, justify="right")
    for month, row in months.iterrows():
        table.add_row(str(month), f"{int(row['jobs'])}",
                      *[f"{row[r.name]:.0f}" for r in study.runs])
    out.print(table)
    paper = TABLE2.get(name)
    summary = Table(title=f"{name}: whole window", title_justify="left")
    for col in ("policy", "utilisation", "paper's", "mean wait", "vs FCFS", "mean response",
                "months <,=,> FCFS", "replay (s)"):
        summary.add_column(col, justify="left" if col == "policy" else "right")
    base = study.baseline
    names = [study.run_named(v).name if k in chosen else None for k, v in NAMES.items()]
    for run in study.runs:
        diff = (months[run.name] - months[base.name]).round(0)
        better = f"{int((diff < 0).sum())},{int((diff == 0).sum())},{int((diff > 0).sum())}"
        i = names.index(run.name) if run.name in names else None
        summary.add_row(run.name, f"{run.summary['utilization']:.3f}",
                        f"{paper[i]:.3f}" if paper and i is not None else "-",
                        f"{run.summary['avg_wait']:.0f}",
                        f"{run.summary['avg_wait'] / base.summary['avg_wait'] - 1:+.1%}"
                        if base.summary["avg_wait"] else "-",
                        f"{run.summary['avg_response']:.0f}",
                        better, f"{timings[run.name]:.1f}")
    out.print(summary)
    return {**study.as_dict(), "seconds": timings, "total_seconds": time.perf_counter() - t0}


def single_plans(out: Console) -> dict:
    """One plan of 100 and of 500 waiting jobs with 200 running on Atlas's 9,216
    processors, jobs drawn from LLNL-Atlas's own sizes and limits (the running ones from
    its jobs of at most 46 processors, so that 200 fit: on Blue Horizon 200 jobs of at
    least 8 processors cannot run at once), each running job a uniform part of its limit
    from its end."""
    workload = read_swf(resolve_trace("LLNL-Atlas"))
    procs_all = workload.jobs["procs"].to_numpy()
    limit_all = np.maximum(workload.jobs["estimate"].to_numpy(), 60)
    machine = workload.machine.procs
    rng = np.random.default_rng(0)
    small = np.flatnonzero(procs_all <= machine // 200)
    rows = {}
    for n in (100, 500):
        run = rng.choice(small, 200, replace=False)
        run_procs = procs_all[run]
        run_end = rng.integers(1, limit_all[run] + 1)
        wait = rng.choice(len(procs_all), n, replace=False)
        submit = -np.sort(rng.integers(0, 86400, n))[::-1]
        args = (0, run_end, run_procs, machine, submit, limit_all[wait], procs_all[wait])
        for cost in ("wait", "squared", "makespan"):
            plan(*args, cost)                   # compiled and warm
            best = np.inf
            for _ in range(3):
                t = time.perf_counter()
                _, _, initial, cost_best, evaluated = plan(*args, cost)
                best = min(best, time.perf_counter() - t)
            rows[f"{n} {cost}"] = {"seconds": best, "evaluations": evaluated, "running": 200,
                                   "cost_vs_initial": cost_best / initial}
            out.print(f"one plan, {n} waiting, 200 running ({run_procs.sum()} CPUs), {cost}: "
                      f"{best:.3f} s ({evaluated} evaluations; cost {cost_best / initial:.3f} "
                      "of the queue order's)", highlight=False)
    return rows


def fidelity(out: Console, snapshots: int = 12) -> dict:
    """PLAN 2 on SDSC-BLUE at noon every 7 days from day 30, on the first ``snapshots``
    days with at least 15 jobs pending: realised against planned starts per setting."""
    from advisor.plugins.spec import parse_policy
    from advisor.policies.plan.study import realised_vs_planned
    from advisor.whatif.snapshot import trace_snapshot
    workload = read_swf(resolve_trace("SDSC-BLUE"))
    rows: dict[str, list] = {}
    days = []
    for day in range(30, 900, 7):
        snap = trace_snapshot(workload, parse_policy("easy:FCFS:FCFS"), day * 86400 + 43200)
        if len(snap.pending) < 15:
            continue
        days.append(day)
        for r in realised_vs_planned(snap, "plan2").rows:
            rows.setdefault(r[0], []).append(r[1:])
        if len(days) == snapshots:
            break
    table = Table(title=f"PLAN 2's order in Slurm (slurm mode), SDSC-BLUE, {len(days)} "
                  "snapshots, every job running to its limit", title_justify="left")
    for col in ("setting", "jobs", "mean |realised - planned|", "within 60 s", "earlier",
                "later"):
        table.add_column(col, justify="left" if col == "setting" else "right")
    result = {"days": days}
    for name, values in rows.items():
        v = np.array(values, float)
        jobs = v[:, 0]
        mean = lambda col: float((v[:, col] * jobs).sum() / jobs.sum())  # noqa: E731
        result[name] = {"jobs": int(jobs.sum()), "mean_abs_s": mean(1), "within": mean(2),
                        "earlier": mean(3), "later": mean(4)}
        table.add_row(name, f"{int(jobs.sum())}", f"{mean(1):.0f} s", f"{mean(2):.0%}",
                      f"{mean(3):.0%}", f"{mean(4):.0%}")
    out.print(table)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="advisor bench --family plan --",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--traces", default="SDSC-BLUE,LLNL-Atlas")
    parser.add_argument("--all", action="store_true", help="whole traces")
    parser.add_argument("--policies", default=",".join(NAMES))
    parser.add_argument("--single", action="store_true")
    parser.add_argument("--fidelity", action="store_true")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args(argv)
    out = Console(width=100)
    result = {}
    if args.single:
        result["single"] = single_plans(out)
    if args.fidelity:
        result["fidelity"] = fidelity(out)
    policies = [p.strip() for p in args.policies.split(",")]
    for name in args.traces.split(","):
        if name:
            result[name] = one_trace(name, args.all, policies, out)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
