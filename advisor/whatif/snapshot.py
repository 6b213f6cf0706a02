"""Snapshots from traces, and the engine input that plays any snapshot forward.

``trace_snapshot`` replays a trace under a policy up to a moment and returns the state the
scheduler held then, as a ``Snapshot`` exactly like one from a live cluster: running jobs
with their start times, pending jobs with their submit times; jobs submitted later do not
exist in it (``trace_history`` gives what a live cluster's sacct would). ``resume_arrays``
turns a snapshot (plus the runtimes to assume and any later arrivals) into the engine's
input, so that simulation continues from that exact state.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial

import numpy as np
import pandas as pd

from advisor.engine import (EngineConfig, Estimates, JobArrays, job_arrays, make_arrays,
                            queue_rank, run)
from advisor.errors import BadInput
from advisor.model import (SECONDS_PER_WEEK, TRACE_PARTITION, UNLIMITED_MINUTES, Accounting,
                           Job, Snapshot, Workload, trace_machine)
from advisor.plugins.contract import Context
from advisor.plugins.spec import Policy
from advisor.units import format_moment
from advisor.whatif.futures import history_from_workload
from advisor.whatif.trace_accounts import (account_names, association_rows, memory_per_cpu,
                                           site_config, usage_at)

#: What the engine assumes for a job with no time limit (Slurm's UNLIMITED): one year.
UNLIMITED_ESTIMATE = UNLIMITED_MINUTES * 60


def check_moment(workload: Workload, time: int) -> None:
    """BadInput unless ``time`` falls within the trace's submissions; the moments are
    dates when the trace has a start time (as a date given on the line is)."""
    submit = workload.jobs["submit"]
    first, last = int(submit.min()), int(submit.max())
    if first <= time <= last:
        return
    where = "before the trace's first job" if time < first else "after its last job"
    when = partial(trace_moment, workload.header)
    raise BadInput(f"the moment {when(time)} is {where}: its jobs arrive from {when(first)} "
                   f"to {when(last)}; give a moment in between (e.g. "
                   f"@{(first + last) // 172800}d)")


def trace_moment(header, time: int) -> str:
    """A moment of a trace in words: its date in the trace's zone, when the trace has a
    start time, else the days since its start."""
    if header.unix_start_time is None:
        return f"{time / 86400:.1f}d"
    return f"{format_moment(header.unix_start_time + time, header.time_zone_string or 'UTC')}" \
        f" ({time / 86400:.1f}d)"


def trace_snapshot(workload: Workload, policy: Policy, time: int,
                   estimates: Estimates = Estimates(),
                   base: EngineConfig = EngineConfig()) -> Snapshot:
    """The state at ``time`` of the trace replayed under ``policy``.

    The replay sees only the jobs submitted at or before ``time`` (nothing later can change
    what happened until then). A job ending exactly at ``time`` is gone; the pass the
    scheduler made at ``time`` is included. A pending job's ``priority`` is its rank in the
    policy's queue order then (highest first): a trace has no Slurm priorities.
    """
    check_moment(workload, time)
    jobs = workload.jobs
    known = jobs["submit"].to_numpy() <= time
    past = workload.with_jobs(jobs[known])
    arrays = job_arrays(past, estimates)
    engine = policy.engine_config(base)
    start, _ = run(arrays, engine)
    end = start + arrays.runtime
    running = np.flatnonzero((start <= time) & (end > time))
    pending = np.flatnonzero(start > time)
    rank = queue_rank(arrays, pending, time, engine)
    ids, users = past.jobs["job_id"].to_numpy(), past.jobs["user"].astype(str).to_numpy()
    accounts = account_names(past.jobs["group"].to_numpy())
    memory = memory_per_cpu(past.jobs["req_mem"].to_numpy())

    def job(i: int, state: str, **extra) -> Job:
        return Job(job_id=int(ids[i]), user=str(users[i]), partition=TRACE_PARTITION,
                   cpus=int(arrays.procs[i]), state=state,
                   submit_time=int(arrays.submit[i]), eligible_time=int(arrays.submit[i]),
                   time_limit=int(arrays.estimate[i]), nodes=int(arrays.procs[i]),
                   partitions=(TRACE_PARTITION,), account=str(accounts[i]),
                   memory_per_cpu=int(memory[i]), **extra)

    # The textbook engine counts processors, not nodes: give each running job the next free
    # one-processor nodes, in start order, so that the nodes' states add up.
    machine, used, placed = trace_machine(workload), 0, {}
    for i in sorted(running, key=lambda i: (start[i], i)):
        placed[i] = tuple(n.name for n in machine.nodes[used:used + arrays.procs[i]])
        used += int(arrays.procs[i])
    busy = {name for names in placed.values() for name in names}
    machine = replace(machine, nodes=tuple(
        replace(n, state="ALLOCATED", alloc_cpus=1) if n.name in busy else n
        for n in machine.nodes))
    run_jobs = tuple(job(i, "RUNNING", start_time=int(start[i]),
                         elapsed=int(time - start[i]), node_list=placed[i]) for i in running)
    wait_jobs = tuple(job(i, "PENDING", priority=int(len(pending) - rank[k]),
                          state_reason="Priority" if rank[k] else "Resources")
                      for k, i in enumerate(pending))
    source = {"kind": "swf", "trace": workload.source, "policy": policy.spec,
              "engine": "textbook", "estimates": estimates.label}
    config = site_config(workload)
    try:  # the Slurm configuration that stands for the policy, when Slurm can express it
        config = policy.enact(Context(machine, config)).apply(config)
    except BadInput:
        source["config"] = "the site's configuration (the policy has no Slurm form)"
    if workload.header.unix_start_time is not None:
        source["unix_start_time"] = str(workload.header.unix_start_time)
        source["time_zone"] = workload.header.time_zone_string or "UTC"
    accounting = Accounting()
    if workload.accounts is not None:  # fair share: what the replay used until then
        rows = association_rows(workload.accounts, accounts, users)
        accounting = usage_at(workload.accounts, time, config.priority_decay_half_life,
                              rows, arrays.procs, start, end,
                              config.priority_usage_reset_period)
        source["accounts"] = "groups, as accounts"
    return Snapshot(time=int(time), machine=machine, running=run_jobs,
                    pending=tuple(sorted(wait_jobs, key=lambda j: -j.priority)),
                    config=config, source=source, accounting=accounting)


def resume_arrays(snapshot: Snapshot, runtimes: Mapping[int, int],
                  arrivals: pd.DataFrame | None = None,
                  first_pass: bool = False) -> tuple[JobArrays, np.ndarray]:
    """The engine's input that continues from ``snapshot``.

    ``runtimes`` gives the actual runtime to assume for every running and pending job (by
    job id; a running job's must exceed its elapsed time). ``arrivals`` are jobs submitted
    after the snapshot, as a Workload table (``submit``, ``runtime``, ``estimate``,
    ``procs``, ``job_id``). Time limits are the estimates; an unlimited one counts as
    ``UNLIMITED_ESTIMATE``. Jobs are put in (submit, job id) order, the engine's tie-break;
    the job ids in that order come back with the arrays.
    """
    rows = []
    for job in (*snapshot.running, *snapshot.pending):
        if job.job_id not in runtimes:
            raise BadInput(f"no runtime given for job {job.job_id} of the snapshot")
        limit = UNLIMITED_ESTIMATE if job.time_limit is None else job.time_limit
        rows.append((job.submit_time, job.job_id, int(runtimes[job.job_id]), limit, job.cpus,
                     job.start_time if job.state == "RUNNING" else -1))
    table = pd.DataFrame(rows, columns=["submit", "job_id", "runtime", "estimate", "procs",
                                        "fixed"])
    if arrivals is not None and len(arrivals):
        later = arrivals[arrivals["submit"] > snapshot.time]
        extra = later[["submit", "job_id", "runtime", "estimate", "procs"]].assign(fixed=-1)
        table = pd.concat([table, extra], ignore_index=True)
    table = table.sort_values(["submit", "job_id"], kind="mergesort")
    arrays = make_arrays(table["submit"], table["runtime"], table["estimate"], table["procs"],
                         snapshot.machine.cpus, t0=snapshot.time, fixed=table["fixed"],
                         first_pass=first_pass)
    return arrays, table["job_id"].to_numpy(np.int64)


def trace_history(workload: Workload, snap: Snapshot, weeks: int = 4) -> pd.DataFrame:
    """What sacct would give at a trace's snapshot: the jobs finished by then over the
    ``weeks`` before it (not the snapshot's own running and pending jobs)."""
    ids = {j.job_id for j in (*snap.running, *snap.pending)}
    history = history_from_workload(workload, snap.time, ids, TRACE_PARTITION)
    since = snap.time - weeks * SECONDS_PER_WEEK
    return history[history["submit"] >= since].reset_index(drop=True)
