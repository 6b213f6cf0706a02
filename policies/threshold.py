"""threshold/queue: Lelong et al. §6's queue threshold T.

After the primary queue is sorted, jobs that have waited more than T go to its head, in
submit order: a bound on the starvation that non-FCFS orderings risk. The grid proposes
ramps of 4 h, 12 h and 1 day.

In Slurm (``enact``; docs/slurm-mapping.md, "Starvation thresholds") it is a linear age
slope: a job gains the ordering's whole key range (its ``key_range``: a day of limits or
the longest MaxTime for SPF, every CPU for SQF, ...) per T of waiting, up to
PriorityMaxAge = ``HORIZON`` (two weeks). So a job can be passed only by jobs submitted
less than T after it: its wait is bounded (approximately the textbook step, which also
serves the jobs past T in submit order). PriorityMaxAge=T with one band of age weight would
not be a bound (docs/slurm-mapping.md, "Starvation thresholds").
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.plugins import Context, Enactment, EngineConfig, NoSlurmForm, PluginBase, param

DEFAULT_T, MIN_T = 20 * 3600, 60       # a minute: the priority's resolution
#: the ramps the grid proposes
GRID_T = (4 * 3600, 12 * 3600, 86400)
#: PriorityMaxAge of a threshold: the age up to which the slope holds (see above)
HORIZON = 14 * 86400


@dataclass(frozen=True)
class Params:
    T: int = param(DEFAULT_T, "wait after which a job jumps ahead of the primary order "
                   "(e.g. 20h)", kind="duration", min=MIN_T)


class QueueThreshold(PluginBase):
    family = "threshold"
    name = "queue"
    summary = "jobs waiting longer than T go first, in submit order (Lelong et al.)"
    Params = Params
    rank = 30
    bounds_wait = True

    def candidates(self, context: Context) -> tuple:
        return tuple(Params(T=t) for t in GRID_T)

    def configure(self, config: EngineConfig, params: Params) -> EngineConfig:
        return replace(config, threshold=params.T)

    def enact(self, params: Params, context: Context) -> Enactment:
        ordering = context.chosen("ordering")
        impl = ordering.plugin.impl if ordering else None
        band = impl.key_range(context) if hasattr(impl, "key_range") else 0
        if band <= 0:
            name = ordering.plugin.name.upper() if ordering else "no ordering"
            why = getattr(impl, "no_threshold", "it gives no key range")
            raise NoSlurmForm(f"a threshold on {name} has no Slurm form ({why})")
        span = max(HORIZON, params.T)
        weight = int(round(band * span / max(params.T, 1)))
        return Enactment(
            sets={"priority_weight_age": weight, "priority_max_age": span},
            fidelity="approximate", caveats=(
                f"an age slope: priority grows by {band} per {params.T} s of wait (up to "
                f"{span // 86400} days), so no job submitted more than T later passes a job; "
                "not the textbook step to the queue's head",
                "age counts from eligibility and is recomputed every PriorityCalcPeriod"))


QUEUE = QueueThreshold()
