"""A knob: a plugin that changes keys of the configuration in effect, and nothing else.

The native families (``prio``, ``bf``; docs/native.md) are knobs, and a site adds its own
by subclassing ``Knob``. A knob's ``Params`` fields are spelt as slurm.conf spells the keys
they set (``PriorityWeightAge``, ``bf_window``), so that its label reads as the change
itself ("PriorityWeightAge=5000 PriorityMaxAge=1w", "bf_window=2880"); ``SETS`` maps each
field to the ``SchedulingConfig`` field it sets (``backfill.bf_...`` for
SchedulerParameters). Every field is written out, none means "as in effect": a spec names
whole settings, and a candidate fills the fields it does not change with the values in
effect.

Its policy is the configuration in effect with these keys changed: the site's
job_submit.lua and its jobs' site factors stay (``Enactment.keeps_job_rules``), and a
family of knobs names in ``replaces`` the families whose choices would change more. It
stands alone in the grid (one key changed at a time: the product of every knob's values
would be hundreds of candidates, and a change an admin can read is one key). It bounds
waits as the configuration in effect does, which the advice runs beside it as its
reference, and its longest waits are judged by the same risk limits (``bounds_wait``).
"""
from __future__ import annotations

from collections.abc import Mapping

from advisor.engine import EngineConfig
from advisor.plugins.contract import Context, NoSlurmForm, PluginBase
from advisor.plugins.enactment import Enactment


class Knob(PluginBase):
    """A plugin setting ``SETS`` (Params field: configuration field); ``propose(context)``
    gives the values worth simulating for a snapshot, as {Params field: value}, the fields
    it does not change left out (they take the values in effect)."""

    family: str
    name: str
    Params: type
    bounds_wait = True
    SETS: Mapping[str, str] = {}
    #: what the simulation of these keys leaves out, said with every candidate holding it
    CAVEATS: tuple[str, ...] = ()

    def in_grid(self, params, policy) -> bool:
        return len(policy.choices) == 1

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        raise NoSlurmForm(f"{self.family}/{self.name} sets a Slurm key, which only the "
                          "slurm mode plays (advisor recommend, replay --online)")

    def enact(self, params, context: Context) -> Enactment:
        return Enactment(sets={field: self.config_value(name, getattr(params, name))
                               for name, field in self.SETS.items()},
                         keeps_job_rules=True, fidelity="exact", caveats=self.CAVEATS)

    def config_value(self, name: str, value):
        """The configuration's value for the parameter ``name`` set to ``value`` (the same,
        unless the key is written otherwise than the configuration holds it)."""
        return value

    def param_value(self, name: str, value):
        """The parameter ``name``'s value for the configuration's ``value``."""
        return value

    def candidates(self, context: Context) -> tuple:
        if context.snapshot is None:
            return ()
        out = []
        for change in self.propose(context):
            params = self.Params(**{name: change.get(name, self.current(context, name))
                                    for name in self.SETS})
            if params not in out and not self.unchanged(params, context):
                out.append(params)
        return tuple(out)

    def propose(self, context: Context) -> list[dict]:
        """The changes worth simulating on ``context.snapshot`` (none by default: a spec
        may still name the knob)."""
        return []

    def current(self, context: Context, name: str = ""):
        """The value in effect of the key parameter ``name`` sets (default: the first), as
        the parameter writes it."""
        name = name or next(iter(self.SETS))
        return self.param_value(name, in_effect(context, self.SETS[name]))

    def unchanged(self, params, context: Context) -> bool:
        """Whether ``params`` set every key to what is in effect (no candidate), compared as
        the configuration holds them (``cpu=1000`` is ``CPU=1000``)."""
        return all(self.config_value(name, getattr(params, name)) == in_effect(context, field)
                   for name, field in self.SETS.items())


def is_knob(policy) -> bool:
    """Whether ``policy`` is a knob's (a knob stands alone in its policy)."""
    return any(isinstance(getattr(c.plugin, "impl", c.plugin), Knob) for c in policy.choices)


def in_effect(context: Context, field: str):
    """The configuration in effect's value of ``field`` (``group.setting`` nested)."""
    value = context.config
    for part in field.split("."):
        value = getattr(value, part)
    return value
