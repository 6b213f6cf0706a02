"""ordering/saf: smallest area first, a site's own ordering for slurm-policy-advisor.

A job's area is its CPUs times its time limit: the most work it can hold the machine for.
Ordering by area starts small jobs early, as SPF and SQF each do along one side of the area.

* Textbook engine: a static key per job (CPUs x requested time), which the engine sorts by
  (``SortKey``): no engine code is needed for a new ordering.
* Slurm: priority/multifactor with every weight 0 and a site factor that job_submit.lua sets
  at submission, BASE minus the area in CPU-minutes (``scontrol update SiteFactor=`` for the
  jobs already pending). Areas of CAP CPU-minutes or more (about 18 million CPU-hours)
  share the lowest factor.

It has no starvation-threshold form (an age slope across an area's range would need weights
above Slurm's 32 bits), so it does not bound waiting and stays out of the default grid: name
it (``--candidate easy:SAF``, ``--policy easy:SAF``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from advisor.plugins import (JOB_CPUS_LUA, LIMIT_MINUTES_LUA, NEUTRAL_WEIGHTS, Context,
                             Enactment, EngineConfig, JobColumns, LuaFragment, NoParams,
                             PluginBase, SortKey)

#: the site factor of a job of no area; a larger area ranks lower
BASE = 1 << 30
#: areas (CPU-minutes) from here on share the lowest site factor, BASE - CAP = 1
CAP = BASE - 1



def area(arrays) -> np.ndarray:
    """The textbook key: processors x requested seconds."""
    return arrays.procs.astype(np.float64) * arrays.estimate


def area_factor(jobs: JobColumns, now: int) -> np.ndarray:
    """The site factor job_submit.lua gives: BASE minus the area in CPU-minutes."""
    return BASE - np.minimum(jobs.cpus * (jobs.limit // 60), CAP)


@dataclass(frozen=True)
class AreaFactor:
    """What job_submit.lua does to each job (the advisor's ``JobRule``)."""

    name: str = "saf"
    lua: LuaFragment = field(default_factory=lambda: LuaFragment(
        "site factor for SAF ordering", LIMIT_MINUTES_LUA + JOB_CPUS_LUA,
        f"   job_desc.site_factor = {BASE} - math.min(job_cpus(job_desc) * "
        f"limit_minutes(job_desc, part_list), {CAP})\n"))

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        return area_factor(jobs, now)


class SmallestAreaFirst(PluginBase):
    family = "ordering"
    name = "saf"
    summary = "smallest area (CPUs x time limit) first"
    Params = NoParams
    rank = 50

    def candidates(self, context: Context) -> tuple:
        return (NoParams(),)

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        return replace(config, primary=SortKey("SAF", area))

    def enact(self, params, context: Context) -> Enactment:
        return Enactment(
            sets={"priority_type": "priority/multifactor"}, clears=NEUTRAL_WEIGHTS,
            site_factor=AreaFactor(), fidelity="exact", caveats=(
                "by CPUs x limit in whole minutes; equal areas run FCFS",
                "a limit changed after submission keeps the area set at submission",
                "replaces the site's priority weights (fair share, QOS, age, ...) with this "
                "order"))


SAF = SmallestAreaFirst()
