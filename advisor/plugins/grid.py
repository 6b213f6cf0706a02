"""The default grid: the product of every installed family's candidates, filtered.

For each family, in rank order (the outermost first), the options are its members'
``candidates(context)``, and for a family without a default member also its absence. A
combination is kept when
* it bounds every job's wait: one of its choices does by itself (``bounds_wait``: FCFS, a
  starvation threshold). Comparing futures of a finite horizon, one decision cannot see that
  a policy leaves a job behind every later one for good, and a run of such decisions can
  (docs/online.md);
* Slurm can express it: its enactment composes (no ``NoSlurmForm``);
* every choice takes part (``in_grid``: runtime-class queues only with FCFS).
A choice that replaces families (a plan) stands without theirs.
A family whose simulations cost seconds on a long queue proposes nothing there; ``grid``
says what that left out.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import product

from advisor.model import Cluster, Node, Partition
from advisor.plugins.contract import Context, NoSlurmForm, describe_params
from advisor.plugins.registry import Plugin, registry
from advisor.plugins.spec import Choice, Policy

#: a cluster for describing plugins apart from any snapshot: eight nodes, one partition
ANY_CLUSTER = Cluster("any", tuple(Node(f"n{i}", 1, partitions=("batch",)) for i in range(1, 9)),
                      (Partition("batch", tuple(f"n{i}" for i in range(1, 9)), default=True),))


def default_grid(context: Context, points: Mapping[str, Sequence] | None = None
                 ) -> list[Policy]:
    """The grid for ``context`` (see the module docstring). ``points`` replaces the
    candidates of the plugins it names (``{"threshold/queue": [Params(T=7200)]}``)."""
    options = []
    for family in registry().families:
        opts: list[Choice | None] = [
            Choice(p, params) for p in family.members
            for params in (points[p.key] if points and p.key in points
                           else p.candidates(context))]
        if family.default is None:
            opts.append(None)
        options.append(opts)
    grid = []
    first = {opts[0].plugin.family: opts[0] for opts in options if opts and opts[0]}
    for combo in product(*options):
        choices = [c for c in combo if c is not None]
        replaced = {f for c in choices for f in c.plugin.replaces}
        if any(c.plugin.family in replaced and c is not first[c.plugin.family]
               for c in choices):
            continue                # a replaced family's choices would only repeat it
        choices = [c for c in choices if c.plugin.family not in replaced]
        if not any(c.plugin.bounds_wait for c in choices):
            continue
        policy = Policy.of(choices)
        if not all(c.plugin.in_grid(c.params, policy) for c in choices):
            continue
        try:
            policy.enact(context)
        except NoSlurmForm:
            continue
        grid.append(policy)
    return grid


def grid(context: Context, points: Mapping[str, Sequence] | None = None
         ) -> tuple[list[Policy], str]:
    """The default grid, and what a long queue left out of it and why ("" when nothing)."""
    kept = default_grid(context, points)
    if not context.queue_is_long:
        return kept, ""
    unlimited = replace(context, long_queue=None)
    left = [p for p in default_grid(unlimited, points) if p not in kept]
    if not left:
        return kept, ""
    names = [p.key for f in registry().families for p in f.members
             if p.candidates(unlimited) != p.candidates(context)]
    return kept, (f"{len(left)} {' and '.join(names)} candidates not simulated: "
                  f"{context.pending} jobs pending, more than --conservative-up-to "
                  f"{context.long_queue} (on a long queue each of their simulations or "
                  f"plans takes seconds); name one with --candidate, e.g. {left[0].spec}, "
                  "to simulate it")


def catalogue() -> list[dict]:
    """Every family and its members: summary, parameters (defaults, bounds), its points in
    the default grid (on an empty queue) and the fidelity of its Slurm form."""
    context = Context(ANY_CLUSTER)
    policies = default_grid(context)
    out = []
    for family in registry().families:
        members = []
        for p in family.members:
            members.append({
                "plugin": p.key, "summary": p.summary, "package": p.package,
                "default": p.default, "bounds_wait": p.bounds_wait,
                "params": describe_params(p.Params),
                "candidates": _points(p, policies),
                "fidelity": _fidelity(p, policies, context)})
        out.append({"family": family.name,
                    "default": family.default.name if family.default else None,
                    "members": members})
    return out


def _points(p: Plugin, policies: list[Policy]) -> list[str]:
    """The points of ``p`` in the grid, as a spec writes its parameters."""
    seen = []
    for pol in policies:
        c = pol.choice(p.family)
        if c is not None and c.plugin == p:
            skip = (p.short_extra,) if p.short_extra else ()
            text = " ".join(c.aliased() if c.alias else
                            c.written(c.is_default, skip=skip)) or p.name
            if text not in seen:
                seen.append(text)
    return seen


def _fidelity(p: Plugin, policies: list[Policy], context: Context) -> str:
    """How faithfully Slurm runs ``p``: over the grid's policies that hold it, else in the
    default policy; "none" when it has no Slurm form."""
    holding = [(pol, c) for pol in policies
               if (c := pol.choice(p.family)) is not None and c.plugin == p]
    if not holding:
        pol = Policy.of([Choice(p, p.Params())])
        holding = [(pol, pol.choice(p.family))]
    seen = []
    for pol, c in holding:
        try:
            fidelity = p.enact(c.params, replace(context, policy=pol)).fidelity
        except NoSlurmForm:
            fidelity = "none"
        if fidelity not in seen:
            seen.append(fidelity)
    return ", ".join(seen)
