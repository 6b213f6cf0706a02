"""What the prio family reads of a snapshot: how long its oldest job has waited, whether
fair share moves in it, which TRES its pending jobs ask for in different amounts (and,
from the model, PriorityWeightTRES between slurm.conf's text and the configuration's
weights)."""
from __future__ import annotations

from advisor.engine.priority import tracked_tres
from advisor.engine.slurm_fairshare import played
from advisor.model import RESET_PERIODS, Snapshot, tres_text, tres_weights

__all__ = ["RESET_PERIODS", "asked_tres", "fair_share_played", "oldest_wait",
           "partition_factors", "qos_levels", "tres_text", "tres_weights"]


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


def asked_tres(snapshot: Snapshot) -> list[str]:
    """The TRES the slurm mode weighs (cpu, and each GRES AccountingStorageTRES tracks)
    that the pending jobs ask for in different amounts (per job, in all)."""
    pending = snapshot.pending
    out = ["cpu"] if len({j.cpus for j in pending}) > 1 else []
    names = sorted({g for j in pending for g in j.gres_per_node})
    for g in names:
        if f"gres/{g}" in tracked_tres(snapshot.config) and \
                len({j.gres_per_node.get(g, 0) * max(j.nodes, 1) for j in pending}) > 1:
            out.append(f"gres/{g}")
    return out
