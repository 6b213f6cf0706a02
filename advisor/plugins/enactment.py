"""What Slurm is told to run a policy: one ``Enactment`` per family choice, composed.

An enactment says, in the model's own terms:
* ``sets``: the ``SchedulingConfig`` fields the choice needs (``backfill.bf_...`` for
  SchedulerParameters), and ``clears``: fields it resets so that nothing else disturbs it
  (an ordering zeroes the site's other priority weights). What one family sets wins over
  what another clears; two families setting one field differently conflict;
* ``partitions``: a partition layout replacing the machine's (nodes, MaxTime, tiers,
  OverSubscribe, PreemptMode), and ``route``: the partitions each job is sent to;
* ``site_factor``: each job's site factor. Both rules are ``JobRule``s: job_submit.lua applies
  them to new jobs, ``scontrol update`` to jobs already pending, the slurm mode to all;
* ``keeps_job_rules``: a change of settings alone (a native knob), under which the jobs
  keep what the configuration in effect gives them (its job_submit.lua stays);
* ``fidelity`` (exact, approximate, none) and ``caveats``.

``compose`` folds a policy's enactments into one and refuses conflicts, naming both
families; ``apply`` puts the settings on a configuration. ``advisor.whatif.slurmconf``
renders the result and ``advisor.whatif.scenario`` simulates the same result.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from advisor.errors import BadInput
from advisor.model import UNLIMITED_MINUTES, Cluster, Partition, SchedulingConfig
from advisor.plugins.contract import FIDELITIES, NoSlurmForm

#: the configuration's settings, and those of its nested groups (SchedulerParameters):
#: {name: None, or the nested group's setting names}
_CONFIG_FIELDS = {f.name: ({g.name for g in dataclasses.fields(f.default)}
                           if dataclasses.is_dataclass(f.default) else None)
                  for f in dataclasses.fields(SchedulingConfig)}
#: the parts a whole policy has at most one of (two families giving one conflict)
SINGLE_PARTS = ("partitions", "route", "site_factor", "player")
#: the Slurm commands an enactment's ``commands`` may run (``--apply`` runs them)
ADMIN_COMMANDS = ("sacctmgr", "scontrol")
#: the priority weights an ordering zeroes, so that it alone orders (what it sets wins)
NEUTRAL_WEIGHTS = {"priority_weight_age": 0, "priority_weight_assoc": 0,
                   "priority_weight_fairshare": 0, "priority_weight_job_size": 0,
                   "priority_weight_partition": 0, "priority_weight_qos": 0,
                   "priority_weight_tres": {}, "priority_flags": (),
                   "priority_favor_small": False}
#: the weights that carry a site's own policy: configuration field, slurm.conf key
SITE_POLICY_WEIGHTS = {"priority_weight_fairshare": "PriorityWeightFairshare",
                       "priority_weight_qos": "PriorityWeightQOS",
                       "priority_weight_assoc": "PriorityWeightAssoc",
                       "priority_weight_partition": "PriorityWeightPartition"}


def site_policy(config: SchedulingConfig, cluster: Cluster) -> dict[str, int]:
    """The policy weights ``config`` sets under priority/multifactor (field: weight). The
    partition weight counts only when the partitions' PriorityJobFactor differ: otherwise
    it adds one constant to every job and orders nothing."""
    if config.priority_type != "priority/multifactor":
        return {}
    factors = {p.priority_job_factor for p in cluster.partitions}
    return {f: getattr(config, f) for f in SITE_POLICY_WEIGHTS
            if getattr(config, f) > 0
            and (f != "priority_weight_partition" or len(factors) > 1)}


#: a job without a limit gets its partition's DefaultTime, else MaxTime, else a year
YEAR_MINUTES = UNLIMITED_MINUTES
#: a Lua helper for fragments: the limit (minutes) Slurm will give a job at submission
LIMIT_MINUTES_LUA = """local function limit_minutes(job_desc, part_list)
   -- the limit Slurm will give the job: its own, else its partition's DefaultTime or MaxTime
   local tl = job_desc.time_limit
   if tl ~= nil and tl ~= slurm.NO_VAL then return tl end
   for name, part in pairs(part_list) do
      local wanted = job_desc.partition
      if (wanted ~= nil and name == wanted) or (wanted == nil and part.flag_default == 1) then
         if part.default_time ~= nil and part.default_time ~= slurm.NO_VAL then
            return part.default_time
         end
         if part.max_time ~= nil and part.max_time < slurm.INFINITE then
            return part.max_time
         end
      end
   end
   return %d
end
""" % YEAR_MINUTES


#: Lua: the CPUs a job asks for at submission, the one rule every job_submit.lua fragment
#: uses (squeue's CPUs are read by ``advisor.adapters.slurm_json.job_cpus``): min_cpus,
#: or tasks x CPUs per task when larger, else 1
JOB_CPUS_LUA = """local function job_cpus(job_desc)
   local cpus = job_desc.min_cpus
   if cpus == nil or cpus == slurm.NO_VAL or cpus < 1 then cpus = 1 end
   local tasks, per = job_desc.num_tasks, job_desc.cpus_per_task
   if tasks == nil or tasks == slurm.NO_VAL or tasks < 1 then tasks = 1 end
   if per == nil or per == slurm.NO_VAL16 or per < 1 then per = 1 end
   if tasks * per > cpus then cpus = tasks * per end
   return cpus
end
"""


#: Lua helpers for a route: the CPUs a job asks for, and whether it asks for no partition
#: or only for some of ``own`` (a set: name -> true), the jobs a route may move
ROUTE_LUA = JOB_CPUS_LUA + """local function asks_only(job_desc, own)
   local wanted = job_desc.partition
   if wanted == nil then return true end
   for name in string.gmatch(wanted, "[^,]+") do
      if not own[name] then return false end
   end
   return true
end
"""


def asked_names(jobs: JobColumns) -> list[list[str]]:
    """The partitions each job asks for (empty: none named, or unknown)."""
    asked = jobs.partition if jobs.partition is not None else [""] * len(jobs.limit)
    return [[n for n in str(w or "").split(",") if n] for w in asked]


@dataclass(frozen=True)
class LuaFragment:
    """A part of job_submit.lua: helper functions, and statements (indented by three
    spaces) that run for each job in ``slurm_job_submit`` and ``slurm_job_modify``."""

    title: str               # what it does, for the script's first line
    helpers: str = ""
    submit: str = ""
    modify: str = ""


@dataclass(frozen=True)
class JobColumns:
    """The jobs a rule applies to: submit time (the snapshot's clock), time limit (seconds,
    the partition's default applied), CPUs and, when known, the partitions asked for, the
    job ids, users and QOS, one entry per job."""

    submit: np.ndarray
    limit: np.ndarray
    cpus: np.ndarray
    partition: np.ndarray | None = None   # the partitions each asks for ("a,b"); None: unknown
    job_id: np.ndarray | None = None
    user: np.ndarray | None = None
    qos: np.ndarray | None = None


class JobRule(Protocol):
    """Something job_submit.lua does to each job (``lua``); ``values`` gives what it gives
    each job (a site factor; for a route, the comma-separated partitions), for the slurm mode
    and for ``scontrol update`` on jobs already pending. ``now``: the snapshot's time."""

    name: str
    lua: LuaFragment

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        ...


@dataclass(frozen=True)
class Enactment:
    sets: Mapping[str, object] = field(default_factory=dict)
    clears: Mapping[str, object] = field(default_factory=dict)
    partitions: tuple[Partition, ...] | None = None
    route: JobRule | None = None
    site_factor: JobRule | None = None
    fidelity: str = "exact"
    caveats: tuple[str, ...] = ()
    by: tuple[str, ...] = ()          # the plugins it comes from (filled by compose)
    #: enacted once, it keeps its effect over weeks of jobs (False: it orders only the jobs
    #: pending when it is made, as a plan): the recent past can be replayed under it
    replayable: bool = True
    #: what it changes outside slurm.conf, as Slurm commands run in order once the
    #: configuration is in effect (``sacctmgr -i modify qos ...``), and those that put it
    #: back (a failed --apply runs them)
    commands: tuple[str, ...] = ()
    undo: tuple[str, ...] = ()
    #: how the slurm mode plays it when it cannot by itself (``contract.Player``): a
    #: family's mechanic, e.g. a limit the snapshot does not hold
    player: object = None
    #: a change of settings alone (a native knob): jobs keep the site factors and
    #: partitions the configuration in effect gives them, and its job_submit.lua stays
    #: (False: every job's site factor is the enactment's own, 0 without one)
    keeps_job_rules: bool = False

    def apply(self, config: SchedulingConfig) -> SchedulingConfig:
        """``config`` with what this enactment clears, then what it sets."""
        return _put(_put(config, self.clears), self.sets)

    @property
    def rules(self) -> tuple[JobRule, ...]:
        """The job rules, in the order job_submit.lua applies them."""
        return tuple(r for r in (self.route, self.site_factor) if r is not None)

    @property
    def runs(self) -> tuple:
        """What Slurm would run, apart from the configuration: two candidates that differ
        only in fidelity or caveats run the same."""
        return (*(getattr(self, part) for part in SINGLE_PARTS), self.commands)


def _put(config: SchedulingConfig, settings: Mapping[str, Any]) -> SchedulingConfig:
    top: dict[str, Any] = {k: v for k, v in settings.items() if "." not in k}
    for key, value in settings.items():    # "group.setting": a nested group's setting
        if "." in key:
            group, name = key.split(".", 1)
            top[group] = replace(top.get(group, getattr(config, group)), **{name: value})
    return replace(config, **top) if top else config


def _check_keys(key: str, settings: Mapping[str, object]) -> None:
    for name in settings:
        head, _, rest = name.partition(".")
        nested = _CONFIG_FIELDS.get(head, ())
        known = head in _CONFIG_FIELDS and (rest in nested if rest else nested is None)
        if not known:
            raise BadInput(f"policy plugin {key} sets '{name}', which is not a field of "
                           "SchedulingConfig (or group.setting of a nested group)")


class Conflict(NoSlurmForm):
    """Two families need different values of one setting."""


def compose(parts: list[tuple[str, Enactment]]) -> Enactment:
    """One enactment from each family's (``plugin key``, enactment), in family order."""
    sets: dict[str, object] = {}
    clears: dict[str, object] = {}
    owner: dict[tuple[str, str], str] = {}
    single: dict[str, tuple[str, object]] = {}
    worst = 0
    caveats: list[str] = []
    admin: list[str] = []
    undo: list[str] = []
    for key, e in parts:
        bad = [c for c in e.commands + e.undo if (c.split() or [""])[0] not in ADMIN_COMMANDS]
        if bad:
            raise BadInput(f"policy plugin {key} runs '{bad[0]}'; an enactment's commands "
                           f"are Slurm's ({', '.join(ADMIN_COMMANDS)})")
        admin += e.commands
        undo = list(e.undo) + undo          # put back in the reverse order
        if e.fidelity not in FIDELITIES:
            raise BadInput(f"policy plugin {key} gives fidelity '{e.fidelity}'; use one of "
                           f"{', '.join(FIDELITIES)}")
        for kind, mine, merged in (("sets", e.sets, sets), ("clears", e.clears, clears)):
            _check_keys(key, mine)
            for name, value in mine.items():
                if name in merged and merged[name] != value:
                    raise Conflict(f"{owner[kind, name]} and {key} both {kind[:-1]} {name} "
                                   f"({merged[name]!r} and {value!r}): no one Slurm "
                                   "configuration runs both")
                merged[name] = value
                owner[kind, name] = key
        for part in SINGLE_PARTS:
            value = getattr(e, part)
            if value is None:
                continue
            if part in single and single[part][1] != value:
                raise Conflict(f"{single[part][0]} and {key} both give the jobs a "
                               f"{part.replace('_', ' ')}: Slurm has room for one")
            single[part] = (key, value)
        worst = max(worst, FIDELITIES.index(e.fidelity))
        caveats += e.caveats
    return Enactment(sets=sets, clears=clears,
                     **{part: value for part, (_, value) in single.items()},
                     fidelity=FIDELITIES[worst], caveats=tuple(caveats),
                     by=tuple(key for key, _ in parts),
                     replayable=all(e.replayable for _, e in parts),
                     commands=tuple(admin), undo=tuple(undo),
                     keeps_job_rules=bool(parts) and all(e.keeps_job_rules for _, e in parts))
