"""The policy seam: what a plugin must be (``contract``), what it tells Slurm
(``enactment``), how plugins are found and checked (``registry``), a policy as one choice per
family (``spec``) and the default grid (``grid``).

A plugin's own module needs only this package's names:

    from advisor.plugins import (LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, Context, EngineConfig,
                                 Enactment, JobColumns, LuaFragment, NoParams, NoSlurmForm,
                                 PluginBase, SortKey, format_duration, param, parse_duration)
"""
from advisor.engine import EngineConfig, SortKey
from advisor.plugins.contract import (LONG_QUEUE, Context, NoParams, NoSlurmForm, PluginBase,
                                      PolicyPlugin, param)
from advisor.plugins.enactment import (LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, Enactment,
                                       JobColumns, JobRule, LuaFragment)
from advisor.units import format_duration, parse_duration

__all__ = ["LIMIT_MINUTES_LUA", "LONG_QUEUE", "NEUTRAL_WEIGHTS", "Context", "EngineConfig",
           "Enactment", "JobColumns", "JobRule", "LuaFragment", "NoParams", "NoSlurmForm",
           "PluginBase", "PolicyPlugin", "SortKey", "format_duration", "param",
           "parse_duration"]
