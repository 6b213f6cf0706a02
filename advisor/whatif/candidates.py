"""Candidates in Slurm's terms: each candidate policy *is* what enacts it.

A ``Candidate`` holds the full ``SchedulingConfig`` it would put in effect and the rest of
its policy's composed ``Enactment``: a partition layout, the rules job_submit.lua applies to
each job (a route, a site factor), its fidelity and caveats. The simulator plays exactly
that (the engine's slurm mode, ``advisor.whatif.scenario``) and ``advisor.whatif.slurmconf``
renders exactly that. The configuration in effect is candidate 0, ``current``: simulated
as it is.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from advisor.errors import BadInput
from advisor.model import Cluster, SchedulingConfig, Snapshot
from advisor.plugins.contract import Context, Player
from advisor.plugins.enactment import Enactment
from advisor.plugins.grid import default_grid
from advisor.plugins.registry import registry
from advisor.plugins.spec import Policy
from advisor.whatif.site_policy import overridden

CURRENT = "current"


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
    #: the family's player of a partition its layout holds that the slurm mode does not
    #: play itself (``player_for``), or None
    player: Player | None = field(default=None, compare=False)

    @property
    def is_current(self) -> bool:
        return self.spec == CURRENT

    @property
    def site(self):
        """The site-factor rule, or None (current, or a change of settings alone:
        pending jobs keep theirs; any other candidate: every job's site factor is 0)."""
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


def player_for(machine: Cluster, config: SchedulingConfig) -> Player | None:
    """The installed family's player that claims a partition of this layout, or None when
    the slurm mode plays it all. BadInput for a partition sharing CPUs that no family
    plays (the slurm mode would give each job CPUs of its own)."""
    claimed = [p for p in registry().players if p.claims(machine, config)]
    if len(claimed) > 1:
        raise BadInput("two policy families claim this partition layout: the slurm mode "
                       "plays one family's partitions beside its own")
    if claimed:
        return claimed[0]
    up = [p for p in machine.partitions if p.state == "UP"] or list(machine.partitions)
    shared = next((p for p in up if p.sharing > 1), None)
    if shared is not None:
        raise BadInput(f"partition {shared.name} shares CPUs (OverSubscribe="
                       f"{shared.oversubscribe}), which no installed policy family plays")
    return None


def current_candidate(config: SchedulingConfig, site=None, route=None,
                      machine: Cluster | None = None) -> Candidate:
    """The configuration in effect (on ``machine``, when given: its layout is checked for
    a player); ``site`` and ``route``: the site-factor rule and the route its
    job_submit.lua applies, when known (an online replay's), else pending jobs keep their
    site factors and partitions, and new jobs get none and the default partition."""
    note = ("the configuration in effect; pending jobs keep their site factors and new jobs "
            "get none") if site is None else "the configuration in effect"
    try:
        player = None if machine is None else player_for(machine, config)
    except BadInput as e:
        raise BadInput(f"the configuration in effect: {e}") from None
    return Candidate(CURRENT, "in effect", config,
                     Enactment(site_factor=site, route=route, caveats=(note,)),
                     player=player)


def slurm_candidate(policy: Policy, context: Context) -> Candidate:
    """The Slurm form of ``policy`` over ``context.config`` (the configuration in effect:
    settings a candidate does not name stay as they are) on ``context.cluster``; the
    context's snapshot and history are what its families derive their inputs from.
    BadInput if Slurm cannot express it or the slurm mode cannot simulate it."""
    enactment = policy.enact(context.with_policy(policy))
    base, cluster = context.config, context.cluster
    config = enactment.apply(base)
    try:
        player = player_for(cluster.with_layout(enactment.partitions), config)
    except BadInput as e:
        raise BadInput(f"{policy.label}: {e}") from None
    if enactment.player is not None:
        if not isinstance(enactment.player, Player):
            raise BadInput(f"{policy.label}: its enactment's player has no 'claims' and "
                           "'starts' methods (advisor.plugins.contract.Player)")
        if player is not None:
            raise BadInput(f"{policy.label}: its enactment and its layout each need a "
                           "family's own play; the slurm mode plays one")
        player = enactment.player
    return Candidate(policy.spec, policy.label, config, enactment,
                     overridden(base, config, cluster), player=player)


def with_rules_in_effect(candidate: Candidate, site=None, route=None) -> Candidate:
    """A candidate that changes settings alone (``Enactment.keeps_job_rules``) with the
    site-factor rule and the route of the configuration in effect, when known (else its
    jobs keep what they have, as the current candidate's do); any other as it is."""
    e = candidate.enactment
    if not e.keeps_job_rules or (site is None and route is None):
        return candidate
    return replace(candidate, enactment=replace(e, site_factor=site, route=route))


def context_for(snapshot: Snapshot, history: pd.DataFrame | None = None,
                long_queue: int | None = None) -> Context:
    """What every family sees of ``snapshot`` and its ``history`` when it proposes and
    enacts candidates (one context per decision: its derived inputs are computed once)."""
    return Context(snapshot.machine, snapshot.config, len(snapshot.pending), long_queue,
                   snapshot=snapshot, history=history)


def candidates_for(snapshot: Snapshot, policies: list[Policy] | None = None,
                   site=None, route=None, history: pd.DataFrame | None = None,
                   context: Context | None = None) -> list[Candidate]:
    """The configuration in effect (with its site-factor rule ``site`` and its ``route``,
    when known), then each policy's Slurm form (default: the whole default grid), from
    ``snapshot`` and its ``history`` (or ``context``, the decision's ``context_for``).
    Candidates identical to an earlier one are left out."""
    context = context or context_for(snapshot, history)
    if policies is None:
        policies = default_grid(context)
    out = [current_candidate(snapshot.config, site, route, snapshot.machine)]
    for policy in policies:
        c = with_rules_in_effect(slurm_candidate(policy, context), site, route)
        if all(c.enacts != o.enacts for o in out):
            out.append(c)
    return out
