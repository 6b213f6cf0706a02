"""ordering/*: the seven queue orderings of seed 002 §3.2.

Each one orders either queue: the primary queue (start and reserve) or the backfill queue.
Ties are broken by submit time, then by job id.

In Slurm (``to_slurm``; ../shared/slurm/MAPPING.md §1.2) an ordering is the priority that
priority/multifactor computes, with every other weight at 0: FCFS is all weights 0 (ties
fall back to submit time, F1); LCFS, SPF and LPF are a site factor that job_submit.lua sets
at submission (``SiteRule``; pending jobs get theirs by ``scontrol update``); SQF and LQF are
a CPU TRES weight of -1 or +1 with NO_NORMAL_TRES. EXP changes with time and has no Slurm
form (it would need a site-factor plugin). Slurm has one order for both queues (§2).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.engine import EngineConfig
from advisor.model import Cluster, SchedulingConfig

#: LCFS: the site factor counts seconds from this epoch (2020-09-13), so that it stays within
#: Slurm's signed 31-bit range for decades; a trace's own clock starts at 0 instead
LCFS_EPOCH = 1_600_000_000
#: SPF: the site factor is this minus the limit in minutes (positive for limits under ~2000
#: years); LPF is the limit itself
SPF_BASE = 1 << 30
#: SQF: a base above any job's CPU count, so that base - CPUs stays above 1 (priorities below
#: 1 are raised to 1 and would tie)
SQF_BASE = 1 << 22
#: a job without a limit gets its partition's DefaultTime, else MaxTime, else a year
YEAR_MINUTES = 525600

_LIMIT_LUA = """local function limit_minutes(job_desc, part_list)
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


@dataclass(frozen=True)
class SiteRule:
    """A site factor set by job_submit.lua at submission (and on a limit change), and by
    ``scontrol update JobId=.. SiteFactor=..`` for jobs already pending."""

    name: str
    lua: str               # a Lua expression of job_desc (and limit_minutes)
    uses_limit: bool = False

    def values(self, submit: np.ndarray, limit_minutes: np.ndarray, epoch: int) -> np.ndarray:
        """The site factor of each job (submit time in the snapshot's clock)."""
        if self.name == "lcfs":
            return submit - epoch
        if self.name == "spf":
            return SPF_BASE - limit_minutes
        return limit_minutes.copy()

    def script(self) -> str:
        """The job_submit.lua that sets it."""
        head = _LIMIT_LUA if self.uses_limit else ""
        return (f"-- slurm-policy-advisor: site factor for {self.name.upper()} ordering\n{head}"
                "function slurm_job_submit(job_desc, part_list, submit_uid)\n"
                f"   job_desc.site_factor = {self.lua}\n"
                "   return slurm.SUCCESS\nend\n\n"
                "function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)\n"
                + ("   if job_desc.time_limit ~= nil and job_desc.time_limit ~= slurm.NO_VAL "
                   "then\n"
                   f"      job_desc.site_factor = {self.lua}\n   end\n" if self.uses_limit
                   else "") +
                "   return slurm.SUCCESS\nend\n")


LCFS_RULE = SiteRule("lcfs", f"os.time() - {LCFS_EPOCH}")
SPF_RULE = SiteRule("spf", f"{SPF_BASE} - limit_minutes(job_desc, part_list)", True)
LPF_RULE = SiteRule("lpf", "limit_minutes(job_desc, part_list)", True)


@dataclass(frozen=True)
class Params:
    """Orderings take no parameters."""


@dataclass(frozen=True)
class SlurmOrdering:
    """An ordering's Slurm form: weights to set, a site rule, its fidelity and caveats."""

    weights: tuple[tuple[str, object], ...] = ()
    site: SiteRule | None = None
    fidelity: str = "exact"
    caveats: tuple[str, ...] = ()
    #: the key's whole range, which a threshold's age slope gains per T ("cpus": the
    #: machine's CPUs; "limit": the longest partition MaxTime in minutes, at least a day);
    #: 0: no threshold form, ``no_threshold`` says why
    band: int | str = 0
    no_threshold: str = "all priorities are equal: age alone would order"

    def age_band(self, cluster: Cluster) -> int:
        if self.band == "cpus":
            return max(cluster.cpus, 1)
        if self.band == "limit":
            limits = [p.max_time for p in cluster.partitions]
            longest = max(limits) // 60 if limits and None not in limits else 0
            return max(1440, longest)
        return int(self.band)


@dataclass(frozen=True)
class Ordering:
    name: str
    summary: str
    family: str = "ordering"
    Params: type = Params
    slurm: SlurmOrdering | None = None

    @property
    def code(self) -> str:
        return self.name.upper()

    def configure(self, config: EngineConfig, params: Params, role: str) -> EngineConfig:
        """Set this ordering as the ``primary`` or the ``secondary`` (backfill) queue's."""
        return replace(config, **{role: self.code})

    def to_slurm(self, config: SchedulingConfig,
                 cluster: Cluster) -> tuple[SchedulingConfig, SlurmOrdering]:
        """``config`` with priority/multifactor ordering jobs this way (every other weight
        0), and what job_submit.lua must do. None: Slurm cannot express it."""
        if self.slurm is None:
            return None
        settings = dict(priority_type="priority/multifactor", priority_weight_age=0,
                        priority_weight_assoc=0, priority_weight_fairshare=0,
                        priority_weight_job_size=0, priority_weight_partition=0,
                        priority_weight_qos=0, priority_weight_tres={}, priority_flags=(),
                        priority_favor_small=False)
        config = replace(config, **{**settings, **dict(self.slurm.weights)})
        return config, self.slurm


_REPLACES = "replaces the site's priority weights (fair share, QOS, age, ...) with this order"

FCFS = Ordering("fcfs", "first come, first served: earliest submit first",
                slurm=SlurmOrdering(caveats=(
                    "all priorities are 1: submit time, then job id, decide (F1)", _REPLACES)))
LCFS = Ordering("lcfs", "last come, first served: latest submit first",
                slurm=SlurmOrdering(site=LCFS_RULE, no_threshold=(
                    "an age ramp is bounded and LCFS's site factor grows with the clock, so a "
                    "waiting job falls behind every later one whatever the weight"), caveats=(
                    "1-second granularity: jobs of the same second run FCFS", _REPLACES)))
SPF = Ordering("spf", "smallest estimated processing time (requested time) first",
               slurm=SlurmOrdering(site=SPF_RULE, band="limit", caveats=(
                   "by the limit in whole minutes; equal limits run FCFS",
                   "a job whose limit an administrator changes is re-ranked by "
                   "slurm_job_modify", _REPLACES)))
LPF = Ordering("lpf", "largest estimated processing time first",
               slurm=SlurmOrdering(site=LPF_RULE, band="limit", caveats=(
                   "by the limit in whole minutes; equal limits run FCFS", _REPLACES)))
SQF = Ordering("sqf", "smallest resource requirement (processors) first",
               slurm=SlurmOrdering(band="cpus", weights=(
                   ("priority_weight_tres", {"CPU": -1.0}),
                   ("priority_flags", ("NO_NORMAL_TRES",)),
                   ("priority_weight_partition", SQF_BASE)), caveats=(
                   "a PriorityWeightPartition base keeps priorities positive: partitions "
                   "must share one PriorityJobFactor", _REPLACES)))
LQF = Ordering("lqf", "largest resource requirement first",
               slurm=SlurmOrdering(band="cpus", weights=(
                   ("priority_weight_tres", {"CPU": 1.0}),
                   ("priority_flags", ("NO_NORMAL_TRES",))), caveats=(_REPLACES,)))
EXP = Ordering("exp", "largest expansion factor (wait + estimate) / estimate first")
