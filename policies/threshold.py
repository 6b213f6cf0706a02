"""threshold/queue: seed 002 §6's queue threshold T.

After the primary queue is sorted, jobs that have waited more than T go to its head, in
submit order: a bound on the starvation that non-FCFS orderings risk.

In Slurm (``to_slurm``; ../shared/slurm/MAPPING.md §3) it is a linear age slope: a job gains
the ordering's whole key range (``band``: a day of limits or the longest MaxTime for SPF,
every CPU for SQF, ...) per T of waiting, up to PriorityMaxAge = ``HORIZON`` (two weeks).
So a job can be passed only by jobs submitted less than T after it: its wait is bounded
(approximately the textbook step, which also serves the jobs past T in submit order).

The first mapping, PriorityMaxAge=T with an age weight of one band, was not a bound: every
job past T gains the same, so among them the ordering's key still decides, and a long, wide
job stays behind each short one that reaches T after it. In an online replay of SDSC-SP2
under EASY-SPF with that 4 h ramp, a 64-CPU, 18 h job waited 76 days (2.2 static).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.engine import EngineConfig
from advisor.model import SchedulingConfig


#: PriorityMaxAge of a threshold: the age up to which the slope holds (see above)
HORIZON = 14 * 86400


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
        span = max(HORIZON, params.T)
        weight = int(round(band * span / max(params.T, 1)))
        config = replace(config, priority_weight_age=weight, priority_max_age=span)
        return config, "approximate", (
            f"an age slope: priority grows by {band} per {params.T} s of wait (up to "
            f"{span // 86400} days), so no job submitted more than T later passes a job; "
            "not the textbook step to the queue's head",
            "age counts from eligibility and is recomputed every PriorityCalcPeriod")


QUEUE = QueueThreshold()
