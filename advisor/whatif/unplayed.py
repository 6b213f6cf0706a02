"""What a snapshot holds that the slurm mode does not play, counted and named.

The simulation is only as faithful as what it plays: a job that asks for node features,
licences or an advanced reservation starts in the simulation where Slurm would not start
it; a job waiting on a dependency is left out; preemption is not played. Each is counted
in the snapshot, named in the report and the JSON, and lowers every candidate's fidelity
(``Candidate.fidelity``), the configuration in effect included: its simulation is as
approximate as any other.
"""
from __future__ import annotations

import re

from advisor.engine.slurm_fairshare import played as fairshare_played
from advisor.model import Snapshot

#: pending reasons a QOS or association limit gives (squeue(1) JOB REASON CODES)
LIMIT_REASONS = ("QOSMax", "QOSGrp", "AssocMax", "AssocGrp", "QOSMin", "MaxJobs",
                 "MaxCpu", "MaxNode", "MaxSubmit")
#: those of them the slurm mode plays where limits are enforced (advisor.engine.slurm_limits)
PLAYED_LIMIT = re.compile(r"^(QOS|Assoc)(Grp(Jobs|Cpu|GRES|Mem(ory)?|Node)|MaxJobs(PerUser)?|"
                          r"Max(Cpu|GRES|Mem(ory)?|Node)PerUser)(Limit)?$")


def unplayed(snapshot: Snapshot) -> dict[str, int]:
    """What is not played, by what it is (``"jobs asking for node features"``...), with how
    many of the snapshot's jobs (or settings) it concerns; empty when everything is."""
    pending = snapshot.pending
    config = snapshot.config
    limits = config.limits_enforced and bool(snapshot.accounting)
    counts = {
        "jobs asking for node features": sum(bool(j.features) for j in pending),
        "jobs asking for licences": sum(bool(j.licenses) for j in pending),
        "jobs in an advanced reservation": sum(bool(j.reservation) for j in pending),
        "jobs waiting on a dependency (left out)": sum(bool(j.dependency) for j in pending),
        "jobs held back by a QOS or association limit": sum(
            j.state_reason.startswith(LIMIT_REASONS) and not (
                limits and PLAYED_LIMIT.match(j.state_reason)) for j in pending),
        "preemption (PreemptType)": int(config.preempt_type not in ("", "preempt/none")),
        "jobs whose fair-share factor is held at its value now": len(pending) if (
            config.priority_type == "priority/multifactor"
            and config.priority_weight_fairshare > 0
            and not fairshare_played(config, snapshot.accounting)) else 0,
    }
    return {what: n for what, n in counts.items() if n}


def describe(counts: dict[str, int]) -> str:
    """One line: ``not played: 3 jobs asking for node features, preemption (PreemptType)``."""
    if not counts:
        return ""
    return "not played: " + ", ".join(what if what.startswith("preemption") else
                                      f"{n} {what}" for what, n in counts.items())
