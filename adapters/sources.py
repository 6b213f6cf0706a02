"""Where a snapshot comes from: ``slurm[:cli|:pyslurm]``, ``swf:TRACE@TIME`` or
``snapshot:FILE``, as ``--from`` writes them.

A spec string and options in; out, what was read: a live cluster, which meets the advice's
``Source`` protocol (``advisor.whatif.advise``: its snapshot, and the history of the weeks
before it from slurmdbd); a trace read from its file with the moment asked for
(``advisor.whatif.advise.TraceMoment`` replays it there); or a snapshot written by
``advisor snapshot --out``. ``advisor.sources.open_source`` makes each a ``Source``. Errors
name the problem and its fix.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace

import pandas as pd

from advisor.adapters import slurm_cli, slurm_pyslurm
from advisor.adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.errors import BadInput, SourceUnavailable
from advisor.model import SECONDS_PER_WEEK, JobLog, Snapshot, Workload
from advisor.adapters.swf import resolve_trace

SPECS = "slurm, slurm:cli, slurm:pyslurm, swf:TRACE@TIME or snapshot:FILE"


@dataclass(frozen=True)
class SourceOptions:
    """What a source may need besides its spec."""

    commands: slurm_cli.SlurmCommands = slurm_cli.SlurmCommands()
    cleaning: CleaningOptions | None = None
    procs: int | None = None


@dataclass(frozen=True)
class LiveCluster:
    """A live cluster, read when it was opened (``read``)."""

    name: str
    read: Snapshot
    commands: slurm_cli.SlurmCommands
    live = True

    def snapshot(self) -> Snapshot:
        return self.read

    def job_log(self, since: int, until: int) -> JobLog:
        """What slurmdbd holds of the jobs between two epochs (``slurm_cli.job_log``)."""
        return replace(slurm_cli.job_log(since, until, self.commands),
                       source=f"cluster {self.read.machine.name or '(unnamed)'} (sacct)")

    def history(self, snapshot: Snapshot, weeks: int) -> pd.DataFrame:
        """The jobs that finished in the ``weeks`` before ``snapshot`` (sacct)."""
        since = snapshot.time - weeks * SECONDS_PER_WEEK
        history = slurm_cli.finished_jobs(since, self.commands)
        return history[history["submit"] >= since].reset_index(drop=True)


@dataclass(frozen=True)
class TraceAt:
    workload: Workload
    moment: str          # as written: seconds since the trace's start, 10d, or a date
    name: str = ""       # the spec it was opened from (swf:KTH-SP2@150d)


def read_source(spec: str, options: SourceOptions = SourceOptions()
                ) -> LiveCluster | TraceAt | Snapshot:
    """What ``spec`` names, read."""
    kind, _, rest = spec.partition(":")
    if kind == "slurm":
        adapter = rest or ("pyslurm" if slurm_pyslurm.available() else "cli")
        if adapter == "cli":
            return LiveCluster(spec, slurm_cli.snapshot(options.commands), options.commands)
        if adapter == "pyslurm":
            return LiveCluster(spec, slurm_pyslurm.snapshot(options.commands),
                               options.commands)
        raise BadInput(f"unknown Slurm adapter '{adapter}' in --from {spec}; use {SPECS}")
    if kind == "swf":
        trace, at, moment = rest.rpartition("@")
        if not at or not trace:
            raise BadInput(f"--from {spec} names no moment; write swf:TRACE@TIME, e.g. "
                           "swf:KTH-SP2@10d or swf:KTH-SP2@1996-10-01T12:00")
        return TraceAt(read_swf(resolve_trace(trace), procs=options.procs,
                                cleaning=options.cleaning), moment, spec)
    if kind == "snapshot" and rest:
        return read_snapshot(rest)
    raise BadInput(f"unknown source '{spec}'; use {SPECS}")


def read_snapshot(path: str) -> Snapshot:
    """A snapshot written by ``advisor snapshot --out`` (``Snapshot.to_dict`` as JSON)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise SourceUnavailable(f"cannot read the snapshot {path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise BadInput(f"{path} is not a snapshot's JSON ({e}): write one with advisor "
                       "snapshot --out FILE") from None
    try:
        return Snapshot.from_dict(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise BadInput(f"{path} is not a snapshot advisor snapshot --out wrote: "
                       f"{type(e).__name__} {e}") from None
