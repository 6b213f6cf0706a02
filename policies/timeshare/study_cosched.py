"""Frachtenberg et al.'s §3 scenarios on the process-level model (``kernel_cosched``).

Each scenario is a few 128-process jobs arriving together on 32 nodes x 4 CPUs. The jobs'
patterns repeat every two nodes (a node's four processes do the same work, and
alternating nodes differ), so the model plays one period, 8 CPUs in a ring: node A (CPUs
0-3) and node B (CPUs 4-7). The ring's wrap-around joins B to A as in the full machine.
Under SB, rings of 32 and 128 CPUs end within 3% of this one (docs/coscheduling.md).

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

from advisor.policies.timeshare.kernel_cosched import Costs, simulate, simulate_jobs

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

#: the overheads fitted once for all four scenarios (Costs' defaults) with the paper's
#: latency, spin and slice
FITTED = Costs()


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


# -- §5: a dynamic workload, offered at rising loads ---------------------------------------

DYNAMIC_CPUS = 32               # Crescendo: 32 Pentium-III processors
DYNAMIC_MPL = 6                 # the first set's multiprogramming level


@dataclass(frozen=True)
class DynamicWorkload:
    """Jobs of a synthetic dynamic workload, their work and arrivals at offered load 1."""
    work: np.ndarray             # (jobs, max size) ms per iteration of each process
    size: np.ndarray
    iterations: np.ndarray
    sync: np.ndarray
    alone: np.ndarray            # run time in isolation (ms): the estimate
    gaps: np.ndarray             # inter-arrival times (ms) at offered load 1

    def arrivals(self, load: float) -> np.ndarray:
        """Arrival times at ``load``: the paper's method, multiplying arrival times."""
        return np.cumsum(self.gaps) / load

    def offered(self, load: float, cpus: int = DYNAMIC_CPUS) -> float:
        """Sum of size x run time alone over processors x last arrival (§5.1)."""
        return float((self.size * self.alone).sum() / (cpus * self.arrivals(load)[-1]))


def dynamic_workload(jobs: int = 400, cpus: int = DYNAMIC_CPUS, seed: int = 0,
                     latency: float = FITTED.latency, longest: float = 600.0
                     ) -> DynamicWorkload:
    """A Lublin-Feitelson-like mix, scaled to minutes: sizes log-uniform in powers of two up
    to the machine (a quarter of them serial), run times alone log-uniform in 1 s ..
    ``longest`` (longer for wider jobs), Poisson arrivals; per job a granularity log-uniform in
    1 .. 100 ms, half of them load-imbalanced (every other process computes up to twice as
    much) and a fifth not communicating. The paper's set drew granularity and pattern at
    random too; its exact distributions are not given."""
    rng = np.random.default_rng(seed)
    top = int(np.log2(cpus))
    size = np.where(rng.random(jobs) < 0.25, 1, 2 ** rng.integers(1, top + 1, jobs))
    grain = np.exp(rng.uniform(np.log(1.0), np.log(100.0), jobs))
    seconds = np.exp(rng.uniform(0.0, np.log(longest), jobs)) * (1 + np.log2(size) / 5)
    imbalance = np.where(rng.random(jobs) < 0.5, rng.uniform(0.0, 1.0, jobs), 0.0)
    sync = rng.random(jobs) >= 0.2
    work = np.zeros((jobs, cpus))
    for j in range(jobs):
        slow = np.arange(size[j]) % 2 == 1
        work[j, :size[j]] = grain[j] * np.where(slow, 1.0 + imbalance[j], 1.0)
    period = work.max(axis=1) + np.where(sync, latency, 0.0)
    iterations = np.maximum(1, np.round(seconds * 1000.0 / period)).astype(np.int64)
    alone = iterations * period
    gaps = rng.exponential(1.0, jobs)
    gaps *= (size * alone).sum() / (cpus * gaps.sum())      # offered load 1
    return DynamicWorkload(work, size.astype(np.int64), iterations, sync, alone, gaps)


def play_dynamic(workload: DynamicWorkload, load: float, scheduler: str,
                 rows: int = DYNAMIC_MPL, costs: Costs = FITTED, seed: int = 0,
                 cpus: int = DYNAMIC_CPUS) -> dict:
    """One run at offered ``load``: mean response (s); the accepted load, the work done by
    the last arrival over processors x that time (a running job's work counted as done in
    proportion of its time from start to end; past saturation jobs pile up in the queue
    and it stays flat: §5.1's "relatively constant accepted load"); and the work over
    processors x the time from the first arrival to the last end (``drained``)."""
    arrival = workload.arrivals(load)
    out = simulate_jobs(workload.work, workload.size, workload.iterations, workload.sync,
                        arrival, workload.alone, cpus, 1 if scheduler == "FCFS" else rows,
                        scheduler, costs, seed=seed)
    work = workload.size * workload.alone
    last = arrival[-1]
    done = np.clip((last - out.start) / np.maximum(out.end - out.start, 1e-9), 0.0, 1.0)
    span = out.end.max() - arrival[0]
    return {"scheduler": scheduler, "load": load, "offered": workload.offered(load, cpus),
            "accepted": float((work * done).sum() / (cpus * last)),
            "drained": float(work.sum() / (cpus * span)),
            "mean_response": float((out.end - arrival).mean() / 1000.0),
            "events": out.events}


def saturation(rows: list[dict]) -> dict[str, float]:
    """Per scheduler, the highest accepted load over a sweep of offered loads: where a sweep
    goes past saturation, the load it saturates at."""
    out: dict[str, float] = {}
    for r in rows:
        out[r["scheduler"]] = max(out.get(r["scheduler"], 0.0), r["accepted"])
    return out
