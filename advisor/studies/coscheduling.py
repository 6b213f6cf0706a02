"""Seed 003's §3 scenarios on the process-level model (advisor.engine.cosched).

Each scenario is a few 128-process jobs arriving together on 32 nodes x 4 CPUs. The jobs'
patterns repeat every two nodes (a node's four processes do the same work, and
alternating nodes differ), so the model plays one period, 8 CPUs in a ring: node A (CPUs
0-3) and node B (CPUs 4-7). The ring's wrap-around joins B to A as in the full machine.
A ring of 32 or 128 CPUs gives the same ends within 1 s (docs/coscheduling.md).

The basic job computes 1 ms per iteration and takes 60 s alone, so it has
60 s / (1 ms + latency) iterations. The paper's readings where its text leaves room:

- Load-imbalanced (§3.2): the slow processes compute 2 ms + latency, so that an iteration
  takes twice the basic one and the job 120 s ("slightly over 2:1", footnote 4).
- Complementing (§3.3): job 3 computes 1 ms on A and 3 ms on B (180 s alone, its A
  processes the "faster" ones FCS classes F); jobs 1 and 2 compute 60 s each on A only and
  do not communicate. Every CPU then carries 180 s of work, the paper's "total of 180 s per
  processor", and an optimal packing ends at 180 s.
- Mixed (§3.4): jobs 1 and 2 of §3.2 and the basic job.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.engine.cosched import Costs, simulate

CPUS = 8                        # one period of the pattern: node A, node B
SCHEDULERS = ("FCFS", "GS", "SB", "FCS")

#: the paper's §3 tables: per scheduler, each job's end (s) then turnaround and mean response
PAPER = {
    "balanced": {"FCFS": (60, 120, 120, 90), "GS": (124, 124, 124, 124),
                 "SB": (126, 134, 134, 130), "FCS": (125, 126, 126, 126)},
    "imbalanced": {"FCFS": (120, 240, 240, 180), "GS": (244, 245, 245, 245),
                   "SB": (193, 194, 194, 194), "FCS": (197, 197, 197, 197)},
    "complementing": {"FCFS": (60, 121, 301, 301, 161), "GS": (185, 186, 308, 308, 226),
                      "SB": (144, 142, 244, 244, 177), "FCS": (192, 193, 197, 197, 194)},
    "mixed": {"FCFS": (120, 241, 302, 302, 221), "GS": (185, 185, 305, 305, 225),
              "SB": (213, 214, 276, 276, 234), "FCS": (252, 253, 155, 253, 220)},
}

#: the overheads fitted once for all four scenarios (the paper's latency, spin and slice)
FITTED = Costs(quantum=0.5, global_switch=3.0, local_switch=0.005, monitor=0.015)


@dataclass(frozen=True)
class Scenario:
    name: str
    work: np.ndarray             # (jobs, CPUS) ms per iteration
    iterations: np.ndarray
    sync: np.ndarray


def scenarios(latency: float = FITTED.latency) -> dict[str, Scenario]:
    """The four §3 workloads on one period of CPUS CPUs."""
    node_a = np.arange(CPUS) % 8 < 4
    basic = np.ones(CPUS)
    slow_a = np.where(node_a, 2.0 + latency, 1.0)       # §3.2's job 1
    slow_b = np.where(node_a, 1.0, 2.0 + latency)       # and job 2
    n60 = round(60_000 / (1.0 + latency))
    long3 = np.where(node_a, 1.0, 3.0)
    n180 = round(180_000 / (3.0 + latency))
    loose = np.where(node_a, 60_000.0, 0.0)             # one 60 s "iteration", no exchange

    def make(name, rows, iterations, sync):
        return Scenario(name, np.array(rows), np.array(iterations, np.int64),
                        np.array(sync, np.bool_))
    return {s.name: s for s in (
        make("balanced", [basic, basic], [n60, n60], [True, True]),
        make("imbalanced", [slow_a, slow_b], [n60, n60], [True, True]),
        make("complementing", [loose, loose, long3], [1, 1, n180], [False, False, True]),
        make("mixed", [slow_a, slow_b, basic], [n60, n60, n60], [True, True, True]),
    )}


def play(scenario: Scenario, scheduler: str, costs: Costs = FITTED, seed: int = 0) -> tuple:
    """Each job's end in s, then turnaround and mean response (the paper's columns)."""
    out = simulate(scenario.work, scenario.iterations, scenario.sync, scheduler, costs,
                   seed=seed)
    ends = out.end / 1000.0
    return (*ends, ends.max(), ends.mean())


def compare(costs: Costs = FITTED, seed: int = 0) -> pd.DataFrame:
    """Model beside paper: one row per scenario, scheduler and column."""
    rows = []
    for name, scenario in scenarios(costs.latency).items():
        jobs = len(scenario.iterations)
        columns = [f"job {k + 1}" for k in range(jobs)] + ["turnaround", "mean response"]
        for scheduler in SCHEDULERS:
            model = play(scenario, scheduler, costs, seed)
            for column, m, p in zip(columns, model, PAPER[name][scheduler]):
                rows.append({"scenario": name, "scheduler": scheduler, "column": column,
                             "model": round(float(m), 1), "paper": p,
                             "error": float(m) / p - 1.0})
    return pd.DataFrame(rows)


def orders(table: pd.DataFrame) -> pd.DataFrame:
    """Per scenario and metric, the schedulers from best to worst, model and paper."""
    rows = []
    for (name, column), part in table.groupby(["scenario", "column"], sort=False):
        if column not in ("turnaround", "mean response"):
            continue
        rows.append({"scenario": name, "column": column,
                     "model": " < ".join(part.sort_values("model")["scheduler"]),
                     "paper": " < ".join(part.sort_values("paper", kind="stable")
                                         ["scheduler"])})
    return pd.DataFrame(rows)
