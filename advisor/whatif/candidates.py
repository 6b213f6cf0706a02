"""Candidates in Slurm's terms: each candidate policy *is* what enacts it.

A ``Candidate`` holds the full ``SchedulingConfig`` it would put in effect and the rest of
its policy's composed ``Enactment``: a partition layout, the rules job_submit.lua applies to
each job (a route, a site factor), its fidelity and caveats. The simulator plays exactly
that (the engine's slurm mode, ``advisor.whatif.scenario``) and ``advisor.whatif.slurmconf``
renders exactly that. The configuration in effect is candidate 0, ``current``: simulated
as it is.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from advisor.engine.slurm import job_limit
from advisor.errors import BadInput
from advisor.model import EFFICIENCY, SECONDS_PER_WEEK, Cluster, SchedulingConfig, Snapshot
from advisor.plugins.contract import Context, QueueState
from advisor.plugins.enactment import Enactment
from advisor.plugins.grid import default_grid
from advisor.plugins.spec import Policy
from advisor.studies.share_classes import ClassRule, median_classes
from advisor.whatif.site_policy import overridden
from advisor.whatif.timeshared import gang_partition

CURRENT = "current"
#: the weeks of history a user's class is taken from
CLASS_WEEKS = 4


@dataclass(frozen=True)
class Candidate:
    spec: str                     # the policy's spec, or "current"
    label: str
    config: SchedulingConfig      # the whole configuration it puts in effect
    enactment: Enactment = Enactment()
    #: the site's priority-policy weights it changes (slurm.conf keys;
    #: ``advisor.whatif.site_policy``)
    overrides: tuple[str, ...] = ()
    #: what the snapshot holds that its simulation does not play (``whatif.unplayed``)
    unplayed: str = ""

    @property
    def is_current(self) -> bool:
        return self.spec == CURRENT

    @property
    def site(self):
        """The site-factor rule, or None (current: pending jobs keep theirs; any other
        candidate: every job's site factor is 0)."""
        return self.enactment.site_factor

    @property
    def fidelity(self) -> str:
        """The enactment's; an exact one is approximate when the simulation leaves out
        something the snapshot holds."""
        exact = self.enactment.fidelity == "exact"
        return "approximate" if exact and self.unplayed else self.enactment.fidelity

    @property
    def caveats(self) -> tuple[str, ...]:
        return self.enactment.caveats + ((self.unplayed,) if self.unplayed else ())

    @property
    def enacts(self) -> tuple:
        """What Slurm would run (two candidates with equal ``enacts`` are one; configs hold
        dicts, so compare, do not hash)."""
        return (self.config, *self.enactment.runs)

    def as_dict(self) -> dict:
        return {"spec": self.spec, "label": self.label, "fidelity": self.fidelity,
                "caveats": list(self.caveats),
                "site_factor": self.site.name if self.site else None,
                "route": self.enactment.route.name if self.enactment.route else None,
                "partitions": [p.name for p in self.enactment.partitions or ()],
                "overrides_site_policy": list(self.overrides), "unplayed": self.unplayed}


def current_candidate(config: SchedulingConfig, site=None, route=None) -> Candidate:
    """The configuration in effect; ``site`` and ``route``: the site-factor rule and the
    route its job_submit.lua applies, when known (an online replay's), else pending jobs keep
    their site factors and partitions, and new jobs get none and the default partition."""
    note = ("the configuration in effect; pending jobs keep their site factors and new jobs "
            "get none") if site is None else "the configuration in effect"
    return Candidate(CURRENT, "in effect", config,
                     Enactment(site_factor=site, route=route, caveats=(note,)))


def slurm_candidate(policy: Policy, base: SchedulingConfig, cluster: Cluster,
                    limits: tuple[int, ...] = (), queue: QueueState | None = None,
                    classes: tuple[tuple[str, str], ...] = ()) -> Candidate:
    """The Slurm form of ``policy`` over ``base`` (the configuration in effect: settings a
    candidate does not name stay as they are); ``limits``: the history's last week's time
    limits (``history_limits``); ``queue``: the snapshot's queue (``queue_state``), for a
    choice that orders its jobs; ``classes``: its users' classes (``history_classes``).
    BadInput if Slurm cannot express it or the slurm mode cannot simulate it."""
    enactment = policy.enact(Context(cluster, base, limits=limits, queue=queue,
                                     user_classes=classes))
    config = enactment.apply(base)
    try:
        gang_partition(cluster.with_layout(enactment.partitions), config)
    except BadInput as e:
        raise BadInput(f"{policy.label}: {e}") from None
    return Candidate(policy.spec, policy.label, config, enactment,
                     overridden(base, config, cluster))


def history_limits(history: pd.DataFrame) -> tuple[int, ...]:
    """The time limits (s) of the history's jobs submitted in its last week: what a family
    proposes boundaries from (runtime-class queues, as the paper's previous week)."""
    if history is None or not len(history):
        return ()
    submit = history["submit"].to_numpy(np.int64)
    limit = history["limit"].to_numpy(np.int64)
    recent = (submit > submit.max() - SECONDS_PER_WEEK) & (limit > 0)
    return tuple(int(v) for v in limit[recent])


def history_classes(history: pd.DataFrame, rule: ClassRule = ClassRule()
                    ) -> tuple[tuple[str, str], ...]:
    """(user, class) by the median CPU efficiency of each user's jobs in the history's last
    ``CLASS_WEEKS`` weeks (``advisor.studies.share_classes``); () when the history gives no
    efficiency."""
    if history is None or not len(history) or EFFICIENCY not in history:
        return ()
    submit = history["submit"].to_numpy(np.int64)
    recent = history[submit > submit.max() - CLASS_WEEKS * SECONDS_PER_WEEK]
    classes = median_classes(recent["user"].astype(str), recent[EFFICIENCY].astype(float),
                             rule)
    return tuple((str(u), str(c)) for u, c in classes.items() if c)


def queue_state(snap: Snapshot) -> QueueState:
    """The snapshot's queue, for a choice that orders its jobs (``QueueState``)."""
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


def candidates_for(snapshot: Snapshot, policies: list[Policy] | None = None,
                   site=None, limits: tuple[int, ...] = (), route=None,
                   classes: tuple[tuple[str, str], ...] = ()) -> list[Candidate]:
    """The configuration in effect (with its site-factor rule ``site`` and its ``route``,
    when known), then each policy's Slurm form (default: the whole default grid; ``limits``
    and ``classes`` as for ``slurm_candidate``). Candidates identical to an earlier one are
    left out."""
    queue = queue_state(snapshot)
    if policies is None:
        context = Context(snapshot.machine, snapshot.config, len(snapshot.pending), None,
                          limits=limits, queue=queue, user_classes=classes)
        policies = default_grid(context)
    try:
        gang_partition(snapshot.machine, snapshot.config)
    except BadInput as e:
        raise BadInput(f"the configuration in effect: {e}") from None
    out = [current_candidate(snapshot.config, site, route)]
    for policy in policies:
        c = slurm_candidate(policy, snapshot.config, snapshot.machine, limits, queue, classes)
        if all(c.enacts != o.enacts for o in out):
            out.append(c)
    return out
