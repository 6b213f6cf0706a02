"""The policy seam: what a plugin must be (``contract``), what it tells Slurm
(``enactment``), how plugins are found and checked (``registry``), a policy as one choice per
family (``spec``) and the default grid (``grid``).

A plugin's own module needs only this package's names:

    from advisor.plugins import (JOB_CPUS_LUA, LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, ROUTE_LUA,
                                 Context, EngineConfig, Enactment, JobColumns, LuaFragment,
                                 Mechanic, NoParams, NoSlurmForm, Player, PluginBase,
                                 SortKey, asked_names, format_duration, param,
                                 parse_duration, site_policy)

A plugin that changes keys of the configuration in effect and nothing else subclasses
``Knob`` (``advisor.plugins.knob``; the native families are knobs).

A family that brings its own scheduler to the engine (``Mechanic``) keeps it in its folder
with the family's other modules.
"""
from advisor.engine import EngineConfig, Mechanic, SortKey
from advisor.plugins.contract import (LONG_QUEUE, Context, NoParams, NoSlurmForm, Player,
                                      PluginBase, PolicyPlugin, param)
from advisor.plugins.enactment import (JOB_CPUS_LUA, LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS,
                                       ROUTE_LUA, Enactment, JobColumns, JobRule, LuaFragment,
                                       asked_names, site_policy)
from advisor.plugins.knob import Knob
from advisor.units import format_duration, parse_duration

__all__ = ["JOB_CPUS_LUA", "LIMIT_MINUTES_LUA", "LONG_QUEUE", "NEUTRAL_WEIGHTS", "ROUTE_LUA",
           "Context", "EngineConfig", "Enactment", "JobColumns", "JobRule", "Knob", "LuaFragment",
           "Mechanic", "NoParams", "NoSlurmForm", "Player", "PluginBase", "PolicyPlugin",
           "SortKey", "asked_names", "format_duration", "param", "parse_duration",
           "site_policy"]
