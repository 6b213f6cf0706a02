"""threshold/queue: seed 002 §6's queue threshold T.

After the primary queue is sorted, jobs that have waited more than T go to its head, in
submit order: a bound on the starvation that non-FCFS orderings risk.

In Slurm (``to_slurm``; ../shared/slurm/MAPPING.md §3) it is an age ramp: PriorityMaxAge=T
with an age weight worth one ``band`` of the ordering's key (a day of limits for SPF, ...),
so a job that has waited T gains that much over a new one. A ramp, not a step: approximate.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.engine import EngineConfig
from advisor.model import SchedulingConfig


@dataclass(frozen=True)
class Params:
    T: int = field(default=20 * 3600, metadata={
        "kind": "duration", "min": 0,
        "help": "wait after which a job jumps ahead of the primary order (e.g. 20h)"})


@dataclass(frozen=True)
class QueueThreshold:
    name: str = "queue"
    summary: str = "jobs waiting longer than T go first, in submit order (seed 002 §6)"
    family: str = "threshold"
    Params: type = Params

    def configure(self, config: EngineConfig, params: Params) -> EngineConfig:
        return replace(config, threshold=params.T)

    def to_slurm(self, config: SchedulingConfig, params: Params,
                 band: int) -> tuple[SchedulingConfig, str, tuple[str, ...]]:
        config = replace(config, priority_weight_age=int(band), priority_max_age=params.T)
        return config, "approximate", (
            f"an age ramp: priority grows by {band} over the first {params.T} s of wait, "
            "then stays (not the textbook step to the queue's head)",
            "age counts from eligibility and is recomputed every PriorityCalcPeriod")


QUEUE = QueueThreshold()
