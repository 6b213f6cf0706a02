"""Sim-to-real: how closely the simulator predicts what a real slurmctld did.

A window of a real trace is scaled down to a few minutes of ``sleep`` jobs that fit the
test cluster (``scaled_jobs``), submitted to a real Slurm, and the real start times are
recorded from sacct. The same jobs, with their real submit times and real runtimes, are then
simulated from the snapshot taken before the first submission, in the slurm mode and in the
textbook mode (``simulate_both``), and the predicted starts are compared with the real ones
(``agreement``). The runtimes are given: what is tested is the scheduler model, not runtime
prediction.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from advisor.engine import EngineConfig, run
from advisor.engine.slurm import run_slurm, slurm_input
from advisor.engine.slurm_timing import LIVE, Timing
from advisor.model import Job, ScaledJob, Snapshot, Workload
from advisor.whatif.snapshot import resume_arrays


def scaled_jobs(workload: Workload, count: int, span: int, cpus: int, max_runtime: int,
                partitions: tuple[str, ...] = ("batch",), load: float = 1.5) -> list[ScaledJob]:
    """``count`` consecutive jobs of the trace, times scaled so that their submissions span
    ``span`` seconds and sizes scaled from the trace's machine to ``cpus``.

    The window is the one whose scaled work (CPU-seconds over ``cpus`` x ``span``) is closest
    to ``load``, so that a queue forms. Runtimes are clipped to [1, ``max_runtime``] seconds;
    limits are the scaled requests rounded up to whole minutes (Slurm's unit) and at least
    the runtime plus 5 s, so that no job is killed. Partitions are dealt out in turn.
    """
    jobs = workload.jobs
    if len(jobs) < count:
        raise ValueError(f"the trace has {len(jobs)} jobs, fewer than {count}")
    submit = jobs["submit"].to_numpy(np.int64)
    best, best_gap = 0, math.inf
    for first in range(0, len(jobs) - count, max(count // 4, 1)):
        window = jobs.iloc[first:first + count]
        length = max(int(submit[first + count - 1] - submit[first]), 1)
        factor = span / length
        runtime = np.clip(window["runtime"].to_numpy() * factor, 1, max_runtime)
        size = np.clip(np.ceil(window["procs"].to_numpy() * cpus / workload.machine.procs),
                       1, cpus)
        gap = abs((runtime * size).sum() / (cpus * span) - load)
        if gap < best_gap:
            best, best_gap = first, gap
    window = jobs.iloc[best:best + count]
    length = max(int(submit[best + count - 1] - submit[best]), 1)
    factor = span / length
    out = []
    for k, row in enumerate(window.itertuples()):
        runtime = int(np.clip(round(row.runtime * factor), 1, max_runtime))
        request = max(row.estimate * factor, runtime + 5)
        out.append(ScaledJob(
            key=int(row.job_id), offset=int(round((row.submit - submit[best]) * factor)),
            runtime=runtime, limit=max(1, math.ceil(request / 60)),
            cpus=int(np.clip(math.ceil(row.procs * cpus / workload.machine.procs), 1, cpus)),
            partition=partitions[k % len(partitions)]))
    return out


def queued(jobs: list[ScaledJob], cpus: int, gap: int = 1) -> list[ScaledJob]:
    """The same jobs queued behind a blocker: a job of all ``cpus`` CPUs (key 0) submitted
    first, holding them until the others are submitted, ``gap`` seconds apart in the
    window's order, and 10 s more. The queue then starts in the order the scheduler gives
    it, which arrivals close to a job's end cannot change by their sub-second phases."""
    ordered = sorted(jobs, key=lambda j: (j.offset, j.key))
    blocker = _blocker(0, 0, gap * len(ordered) + 10, cpus, ordered)
    return [blocker] + [replace(j, offset=gap * (k + 1)) for k, j in enumerate(ordered)]


def _blocker(key: int, offset: int, hold: int, cpus: int, jobs: list[ScaledJob],
             account: str = "") -> ScaledJob:
    """A job of all ``cpus`` CPUs holding them ``hold`` seconds (its limit 5 s more, in
    whole minutes), in the first job's partition."""
    return ScaledJob(key=key, offset=offset, runtime=hold, limit=math.ceil((hold + 5) / 60),
                     cpus=cpus, partition=jobs[0].partition if jobs else "batch",
                     account=account)


def behind_usage(jobs: list[ScaledJob], cpus: int, heavy: str, light: str,
                 heavy_s: int = 300, light_s: int = 100, gap: int = 1) -> list[ScaledJob]:
    """The same jobs queued behind two blockers of all ``cpus`` CPUs that give two accounts
    a usage history: ``heavy`` holds them for ``heavy_s`` seconds, then ``light`` for
    ``light_s``; the jobs are submitted ``gap`` seconds apart meanwhile. Whichever of the
    two accounts' jobs start first then depends on the half-life: under days the heavy
    account's larger usage counts, under minutes it has decayed by the time the queue
    starts and the light account's recent usage counts more. The holds are long enough
    that, with ``heavy`` the account of more shares, the two orders differ at any phase of
    the decay thread's minute (PriorityCalcPeriod) the jobs arrive at
    (tests/unit/studies/test_behind_usage.py; docs/simulation.md "Knob plays")."""
    ordered = sorted(jobs, key=lambda j: (j.offset, j.key))
    blockers = [_blocker(-k, k, hold, cpus, ordered, account)
                for k, (account, hold) in enumerate(((heavy, heavy_s), (light, light_s)))]
    return blockers + [replace(j, offset=2 + gap * k) for k, j in enumerate(ordered)]


def with_resources(jobs: list[ScaledJob], gpu_every: int, memory_every: int, memory: int,
                   max_cpus: int, accounts: tuple[str, ...] = (), qos_every: int = 0,
                   qos: str = "") -> list[ScaledJob]:
    """The jobs with every ``gpu_every``-th asking for one GPU and every ``memory_every``-th
    (the others) for ``memory`` MB; both kinds at most ``max_cpus`` CPUs (a node's), so
    that each fits one node; ``accounts`` dealt out in turn, and every ``qos_every``-th
    job in ``qos``, also at most ``max_cpus`` CPUs (a per-user cap of a node's CPUs must
    not hold a job back forever). 0 or empty: none of that kind."""
    out = []
    for k, job in enumerate(jobs):
        if accounts:
            job = replace(job, account=accounts[k % len(accounts)])
        if qos_every and k % qos_every == qos_every - 1:
            job = replace(job, qos=qos, cpus=min(job.cpus, max_cpus))  # (within its cap)
        if gpu_every and k % gpu_every == gpu_every - 1:
            job = replace(job, gpus=1, cpus=min(job.cpus, max_cpus))
        elif memory_every and k % memory_every == memory_every - 1:
            job = replace(job, memory=memory, cpus=min(job.cpus, max_cpus))
        out.append(job)
    return out


def simulate_both(snapshot: Snapshot, arrivals: list[Job], runtimes: dict[int, int],
                  textbook: EngineConfig, timing: Timing | None = LIVE) -> pd.DataFrame:
    """Predicted starts of ``arrivals`` from ``snapshot`` in both modes: a table indexed by
    job id with ``slurm`` and ``textbook`` columns. The slurm mode reads whole seconds by
    ``timing`` (``slurm_timing``); the textbook engine sees one machine of all the
    snapshot's CPUs and the jobs' limits as estimates."""
    inp = slurm_input(snapshot, runtimes, arrivals, first_pass=True, timing=timing)
    start, _ = run_slurm(inp)
    table = pd.DataFrame({"slurm": start}, index=inp.job_ids)
    rows = pd.DataFrame([{"job_id": j.job_id, "submit": j.submit_time,
                          "runtime": runtimes[j.job_id], "estimate": j.time_limit,
                          "procs": j.cpus} for j in arrivals])
    empty = replace(snapshot, pending=(), running=())
    arrays, ids = resume_arrays(empty, runtimes, rows, first_pass=True)
    tb, _ = run(arrays, textbook)
    table["textbook"] = pd.Series(tb, index=ids)
    return table


def agreement(real: pd.Series, predicted: pd.Series, tolerance: int) -> dict:
    """Share of jobs whose predicted start is within ``tolerance`` seconds of the real one,
    Spearman rank correlation of the start orders, and mean absolute error (seconds)."""
    both = pd.concat([real.rename("real"), predicted.rename("sim")], axis=1).dropna()
    err = (both["sim"] - both["real"]).abs()
    ranks = both.rank(method="average")
    rho = float(np.corrcoef(ranks["real"], ranks["sim"])[0, 1]) if len(both) > 1 else 1.0
    return {"jobs": int(len(both)), "within": float((err <= tolerance).mean()),
            "spearman": rho, "mae_s": float(err.mean()), "tolerance_s": int(tolerance)}


def evaluate(snapshot: Snapshot, records: list[dict], textbook: EngineConfig,
             timing: Timing | None = LIVE) -> dict:
    """Compare the real starts in sacct ``records`` with both modes' predictions from
    ``snapshot`` (taken before the first submission), the slurm mode reading whole seconds
    by ``timing``. Returns the per-mode agreement (the tolerance is max(2 s, bf_interval))
    and the per-job table."""
    arrivals, runtimes = [], {}
    for r in records:
        nodes = r.get("req_nodes", 1)
        arrivals.append(Job(job_id=r["job_id"], user=r["user"] or "root",
                            partition=r["partition"], cpus=r["req_cpus"] or r["alloc_cpus"],
                            state="PENDING", submit_time=r["submit"], time_limit=r["limit"],
                            eligible_time=r["eligible"] or r["submit"],
                            partitions=(r["partition"],), account=r.get("account", ""),
                            qos=r.get("qos", ""),
                            memory_per_node=r.get("mem_per_node", 0),
                            memory_per_cpu=r.get("mem_per_cpu", 0),
                            gres_per_node={g: -(-c // nodes)
                                           for g, c in r.get("req_gres", {}).items()}))
        runtimes[r["job_id"]] = r["end"] - r["start"]
    first = min(j.submit_time for j in arrivals)
    table = simulate_both(replace(snapshot, time=first - 1), arrivals, runtimes, textbook,
                          timing)
    table["real"] = pd.Series({r["job_id"]: r["start"] for r in records})
    table["submit"] = pd.Series({r["job_id"]: r["submit"] for r in records})
    tolerance = max(2, snapshot.config.backfill.bf_interval)
    return {"slurm": agreement(table["real"], table["slurm"], tolerance),
            "textbook": agreement(table["real"], table["textbook"], tolerance),
            "table": table}


# The three configurations of the sim-to-real study (issue 4), as slurm.conf settings for the
# test cluster (tests/integration/slurm_cluster.py: batch and high span all 4 nodes, high has
# PriorityJobFactor 10), the partitions the jobs are dealt to, and the textbook policy beside.
_FCFS = {"PriorityType": "priority/multifactor", "PriorityCalcPeriod": "1",
         "PriorityWeightAge": "0", "PriorityWeightJobSize": "0",
         "PriorityWeightPartition": "0", "PriorityMaxAge": "1-0"}
CONFIGURATIONS = {
    "fcfs-easy": (dict(_FCFS, SchedulerParameters="bf_interval=1,bf_continue,"
                                                  "bf_job_part_count_reserve=1"),
                  ("batch",), EngineConfig(backfill="easy")),
    "fcfs-default": (dict(_FCFS, SchedulerParameters="bf_interval=1,bf_continue"),
                     ("batch",), EngineConfig(backfill="conservative")),
    "multifactor-2part": (dict(_FCFS, PriorityWeightAge="1000", PriorityMaxAge="10",
                               PriorityWeightJobSize="1000", PriorityWeightPartition="1000",
                               SchedulerParameters="bf_interval=1,bf_continue"),
                          ("batch", "batch", "high"), EngineConfig(backfill="easy")),
    # fair share alone decides the order (the jobs dealt to two accounts of different
    # shares: ``with_resources(accounts=...)``)
    "fairshare-easy": (dict(_FCFS, PriorityWeightFairshare="10000",
                            SchedulerParameters="bf_interval=1,bf_continue,"
                                                "bf_job_part_count_reserve=1"),
                       ("batch",), EngineConfig(backfill="easy")),
}

# The knob plays (issue 58, item 5): for each kind of knob a native family proposes
# (policies/prio, policies/bf), a base configuration and the same with that one key changed,
# played on the same jobs (``queued``; the half-life's ``behind_usage``), dealt to the
# accounts research and physics. The change must alter which jobs start first, and the
# slurm mode must predict both plays (docs/simulation.md, "Knob plays").
# bf_window and bf_max_job_test are played under conservative backfill (every job
# reserved), where they decide the most: a job whose planned start is past bf_window gets
# no reservation, and only the first bf_max_job_test pending jobs are tried.
_CONSERVATIVE = "bf_interval=1,bf_continue"
_YIELDING = "bf_max_time=120,bf_yield_interval=300,bf_yield_sleep=3000000"
_KNOB_CONFIGURATIONS = {
    "jobsize-easy": (dict(CONFIGURATIONS["fcfs-easy"][0], PriorityWeightJobSize="1000"),
                     ("batch",), EngineConfig(backfill="easy")),
    "fairshare-halflife-2min": (dict(CONFIGURATIONS["fairshare-easy"][0],
                                     PriorityDecayHalfLife="00:02:00"),
                                ("batch",), EngineConfig(backfill="easy")),
    "bf-window-1min": (dict(_FCFS, SchedulerParameters=f"{_CONSERVATIVE},bf_window=1"),
                       ("batch",), EngineConfig(backfill="conservative")),
    "bf-window-10min": (dict(_FCFS, SchedulerParameters=f"{_CONSERVATIVE},bf_window=10"),
                        ("batch",), EngineConfig(backfill="conservative")),
    "bf-max-job-test-2": (dict(_FCFS, SchedulerParameters=f"{_CONSERVATIVE},"
                                                          "bf_max_job_test=2"),
                          ("batch",), EngineConfig(backfill="conservative")),
    "bf-max-job-test-100": (dict(_FCFS, SchedulerParameters=f"{_CONSERVATIVE},"
                                                            "bf_max_job_test=100"),
                            ("batch",), EngineConfig(backfill="conservative")),
    # a cycle's cost made to show on the test cluster's small queue (docs/slurm-mapping.md
    # F13): the locks yielded every 300 us (about a dozen jobs tested) for 3 s, so that a
    # cycle over 40 jobs lasts some 10 s, long enough for jobs to end during its yields;
    # bf_max_time past any such cycle
    "bf-yield": (dict(_FCFS, SchedulerParameters=f"bf_interval=1,{_YIELDING}"),
                 ("batch",), EngineConfig(backfill="conservative")),
    "bf-yield-continue": (dict(_FCFS, SchedulerParameters=f"{_CONSERVATIVE},{_YIELDING}"),
                          ("batch",), EngineConfig(backfill="conservative")),
}
CONFIGURATIONS.update(_KNOB_CONFIGURATIONS)
#: knob kind: (base configuration, the same with the knob's key changed)
KNOB_PLAYS = {"prio/jobsize": ("fcfs-easy", "jobsize-easy"),
              "prio/decay": ("fairshare-easy", "fairshare-halflife-2min"),
              "bf/window": ("bf-window-1min", "bf-window-10min"),
              "bf/max_job_test": ("bf-max-job-test-2", "bf-max-job-test-100"),
              "bf/continue": ("bf-yield", "bf-yield-continue")}
