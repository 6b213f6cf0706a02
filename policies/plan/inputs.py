"""What the plan family derives from a snapshot: the queue it plans (``QueueState``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.model import Snapshot, job_limit


@dataclass(frozen=True)
class QueueState:
    """The queue of a snapshot, for a choice that orders its very jobs (a plan): the
    running jobs' expected ends (start + limit, s) and CPUs, the pending jobs that may
    start (not held, no dependency) in the queue's order (priority, then submit time)
    with their limits as Slurm plans them, and the machine's CPUs."""

    now: int
    cpus: int
    run_end: np.ndarray
    run_cpus: np.ndarray
    job_id: np.ndarray
    submit: np.ndarray
    limit: np.ndarray
    job_cpus: np.ndarray


def queue_state(snap: Snapshot) -> QueueState:
    """The snapshot's queue (``QueueState``)."""
    machine = snap.machine
    ready = sorted((j for j in snap.pending if not j.held and not j.dependency),
                   key=lambda j: (-(j.priority or 0), j.submit_time, j.job_id))

    def column(values):
        return np.array(list(values), np.int64)

    return QueueState(
        snap.time, machine.cpus,
        column((j.start_time if j.start_time is not None else snap.time)
               + job_limit(j, machine) for j in snap.running),
        column(j.cpus for j in snap.running), column(j.job_id for j in ready),
        column(j.submit_time for j in ready), column(job_limit(j, machine) for j in ready),
        column(j.cpus for j in ready))
