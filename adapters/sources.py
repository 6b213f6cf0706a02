"""Where a snapshot comes from: ``--from slurm[:cli|:pyslurm]`` or ``--from swf:TRACE@TIME``.

The one small protocol every source meets: a spec string and options in, a whole
``Snapshot`` out (or an error naming the problem and its fix).
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from adapters import slurm_cli, slurm_pyslurm
from adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.engine import Estimates
from advisor.errors import BadInput
from advisor.whatif.futures import history_from_workload
from advisor.model import SECONDS_PER_WEEK, Snapshot
from advisor.policy import parse_policy
from advisor.studies.replay import resolve_trace
from advisor.whatif.snapshot import TRACE_PARTITION, parse_moment, trace_snapshot

SPECS = "slurm, slurm:cli, slurm:pyslurm or swf:TRACE@TIME"


@dataclass(frozen=True)
class SourceOptions:
    """What a source may need besides its spec."""

    commands: slurm_cli.SlurmCommands = slurm_cli.SlurmCommands()
    policy: str = "easy:FCFS:FCFS"      # the policy a trace is replayed under
    estimates: Estimates = Estimates()
    cleaning: CleaningOptions | None = None
    procs: int | None = None


def take_snapshot(spec: str, options: SourceOptions = SourceOptions()) -> Snapshot:
    return _take(spec, options)[0]


def snapshot_and_history(spec: str, options: SourceOptions = SourceOptions(),
                         weeks: int = 4) -> tuple[Snapshot, pd.DataFrame]:
    """The snapshot, and the jobs that had finished by its time over the ``weeks`` before
    it (``advisor.whatif.futures``): from slurmdbd (sacct) for a live cluster, from the trace
    replayed up to the moment for a trace."""
    snap, workload = _take(spec, options)
    since = snap.time - weeks * SECONDS_PER_WEEK
    if workload is None:
        history = slurm_cli.finished_jobs(since, options.commands)
    else:
        ids = {j.job_id for j in (*snap.running, *snap.pending)}
        history = history_from_workload(workload, snap.time, ids, TRACE_PARTITION)
    return snap, history[history["submit"] >= since].reset_index(drop=True)


def _take(spec: str, options: SourceOptions):
    kind, _, rest = spec.partition(":")
    if kind == "slurm":
        adapter = rest or ("pyslurm" if slurm_pyslurm.available() else "cli")
        if adapter == "cli":
            return slurm_cli.snapshot(options.commands), None
        if adapter == "pyslurm":
            return slurm_pyslurm.snapshot(options.commands), None
        raise BadInput(f"unknown Slurm adapter '{adapter}' in --from {spec}; use {SPECS}")
    if kind == "swf":
        trace, at, moment = rest.rpartition("@")
        if not at or not trace:
            raise BadInput(f"--from {spec} names no moment; write swf:TRACE@TIME, e.g. "
                           "swf:KTH-SP2@10d or swf:KTH-SP2@1996-10-01T12:00")
        workload = read_swf(resolve_trace(trace), procs=options.procs,
                            cleaning=options.cleaning)
        snap = trace_snapshot(workload, parse_policy(options.policy),
                              parse_moment(moment, workload.header), options.estimates)
        return snap, workload
    raise BadInput(f"unknown source '{spec}'; use {SPECS}")
