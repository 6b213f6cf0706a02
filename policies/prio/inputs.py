"""What the prio family reads of a snapshot: how long its oldest job has waited, whether
fair share moves in it."""
from __future__ import annotations

from advisor.engine.slurm_fairshare import played
from advisor.model import Snapshot


def oldest_wait(snapshot: Snapshot) -> int:
    """The longest a pending job has been eligible, in seconds (0: none pending)."""
    return max((snapshot.time - (j.eligible_time if j.eligible_time is not None
                                 else j.submit_time) for j in snapshot.pending), default=0)


def fair_share_played(snapshot: Snapshot) -> bool:
    """Whether fair share moves in the slurm mode's play of ``snapshot``."""
    return played(snapshot.config, snapshot.accounting)


def qos_levels(snapshot: Snapshot) -> set[int]:
    """The QOS priorities of the pending jobs' QOS (``normal`` where none is named)."""
    levels = {q.name: q.priority for q in snapshot.accounting.qos}
    return {levels.get(j.qos or "normal", 0) for j in snapshot.pending}


def partition_factors(snapshot: Snapshot) -> set[int]:
    """The PriorityJobFactor of the partitions the pending jobs ask for first."""
    factors = {p.name: p.priority_job_factor for p in snapshot.machine.partitions}
    return {factors[j.partition] for j in snapshot.pending if j.partition in factors}
