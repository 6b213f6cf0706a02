"""The policy seam: what a plugin must be (``contract``), what it tells Slurm
(``enactment``), how plugins are found and checked (``registry``), a policy as one choice per
family (``spec``) and the default grid (``grid``).

A plugin's own module needs only this package's names:

    from advisor.plugins import (LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, ROUTE_LUA, Annealing,
                                 Context, EngineConfig, Enactment, JobColumns, LuaFragment,
                                 NoParams, NoSlurmForm, PluginBase, QueueState, SortKey,
                                 asked_names, format_duration, param, parse_duration,
                                 plan_jobs, site_policy)

(``plan_jobs`` and ``Annealing``: the engine's planner, for a choice that orders a live
queue's very jobs.)
"""
from advisor.engine import EngineConfig, SortKey
from advisor.engine.plan import Annealing
from advisor.engine.plan import plan as plan_jobs
from advisor.plugins.contract import (LONG_QUEUE, Context, NoParams, NoSlurmForm, PluginBase,
                                      PolicyPlugin, QueueState, param)
from advisor.plugins.enactment import (LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, ROUTE_LUA,
                                       Enactment, JobColumns, JobRule, LuaFragment,
                                       asked_names, site_policy)
from advisor.units import format_duration, parse_duration

__all__ = ["LIMIT_MINUTES_LUA", "LONG_QUEUE", "NEUTRAL_WEIGHTS", "ROUTE_LUA", "Annealing",
           "Context", "EngineConfig", "Enactment", "JobColumns", "JobRule", "LuaFragment",
           "NoParams", "NoSlurmForm", "PluginBase", "PolicyPlugin", "QueueState", "SortKey",
           "asked_names", "format_duration", "param", "parse_duration", "plan_jobs",
           "site_policy"]
