"""What a cluster's accounting recorded of its past (``advisor.model`` exports every name
here): each job's request and its times, and the events kept beside them (a node down or
drained). A live cluster's comes from slurmdbd (sacct, sacctmgr show event), a trace's from
its SWF lines; ``advisor.whatif.sitecheck`` replays it from a moment and compares."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

#: a job log's columns: epoch seconds (-1: not yet, or never), limit in seconds (-1:
#: none), CPUs and nodes as asked, the nodes it ran on (comma-separated names, "" none
#: or not known), MB per node and per CPU
#: asked (0: none), GPUs per node, the billable TRES it was charged (CPUs without
#: TRESBillingWeights), node features and reservation asked ("" none), whether the backfill
#: scheduler started it (sacct's STARTED_ON_BACKFILL; False where unknown), how many
#: times it was requeued (its earlier runs are not in the log), and the last reason it was
#: pending for that sacct kept (JobHeldUser: held until its eligible time)
JOB_LOG_COLUMNS = ("job_id", "user", "account", "qos", "partition", "submit", "eligible",
                   "start", "end", "state", "cpus", "nodes", "node_list", "limit",
                   "mem_per_node", "mem_per_cpu", "gpus", "billing", "features",
                   "reservation", "backfilled", "requeued", "reason")
#: which of slurmctld's schedulers started a job, by its ``backfilled``
STARTED_BY = {True: "the backfill scheduler", False: "the main scheduler"}
_TEXT = ("user", "account", "qos", "partition", "state", "node_list", "features",
         "reservation", "reason")


@dataclass(frozen=True)
class NodeEvent:
    """A node out of service for a while (sacctmgr show event): DOWN, DRAIN, FAIL...;
    ``end`` -1 while it lasts."""

    node: str
    start: int
    end: int
    state: str
    reason: str = ""


@dataclass(frozen=True)
class JobLog:
    """The jobs of a cluster's past (``JOB_LOG_COLUMNS``), one row each in submit order,
    as they stood at ``read_at`` (a job with no end was still running then; with no start,
    still pending), with the node events of the same time; ``zone``: the IANA time zone
    its clock is read in (None: this machine's); ``notes``: what its reader left out, in
    words; ``changes``: when slurmdbd's own rules changed meanwhile, and what changed
    (sacctmgr's transactions on associations and QOS)."""

    jobs: pd.DataFrame
    read_at: int
    events: tuple[NodeEvent, ...] = ()
    source: str = ""
    zone: str | None = None
    notes: tuple[str, ...] = ()
    changes: tuple[tuple[int, str], ...] = ()

    def __len__(self) -> int:
        return len(self.jobs)


def job_log_table(rows: list[dict] | dict) -> pd.DataFrame:
    """Rows (dicts with ``JOB_LOG_COLUMNS``), or columns by name, as a typed table in
    (submit, job id) order."""
    table = pd.DataFrame(rows, columns=list(JOB_LOG_COLUMNS))
    for column in JOB_LOG_COLUMNS:
        if column in _TEXT:
            table[column] = table[column].fillna("").astype(str)
        elif column == "backfilled":
            table[column] = table[column].fillna(False).astype(bool)
        else:
            table[column] = table[column].fillna(-1).astype(np.int64)
    return table.sort_values(["submit", "job_id"], kind="mergesort").reset_index(drop=True)
