"""The cap's play in the slurm mode. The advisor's snapshot holds the QOS as they are; the
candidate's cap is not among them until sacctmgr sets it. So this family plays its own
candidates: the snapshot with the cap put in its QOS (MaxTRESPerUser=cpu=N), which the
slurm mode then enforces as slurmctld does every QOS limit."""
from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.model import Accounting, Qos, Snapshot


def with_cap(accounting: Accounting, qos: str, cpus: int) -> Accounting:
    """``accounting`` with ``qos`` capping each user's running CPUs at ``cpus`` (the QOS
    added when the snapshot does not hold it)."""
    known = next((q for q in accounting.qos if q.name == qos), Qos(qos))
    capped = replace(known, max_tres_per_user={**known.max_tres_per_user, "cpu": cpus})
    others = tuple(q for q in accounting.qos if q.name != qos)
    return replace(accounting, qos=(*others, capped))


@dataclass(frozen=True)
class CapPlayer:
    """Plays a candidate with the cap (a ``Player``; its enactment names it)."""

    qos: str
    cpus: int

    def claims(self, machine, config) -> bool:
        return False          # no layout is this family's: its enactment names its player

    def starts(self, inp, cand, snap: Snapshot, runtimes, arrivals, slurm):
        capped = replace(slurm.routed(snap, cand),
                         accounting=with_cap(snap.accounting, self.qos, self.cpus))
        starts = slurm.starts(capped, runtimes, slurm.route(arrivals, snap, cand), cand, snap)
        return slurm.in_order(inp, starts)
