"""backfill/*: how jobs may start ahead of the primary order.

* none: strict order, no backfilling (start in order until one does not fit);
* easy: seed 001 Fig. 2 / seed 002 Algorithm 1, one reservation for the first blocked job;
* depth: the first k blocked jobs (primary order) hold reservations, the rest backfill;
* conservative: seed 001 §2.1, every queued job holds a reservation, with compression.

In Slurm (``to_slurm``; ../shared/slurm/MAPPING.md §2.2) the depth is
``bf_job_part_count_reserve`` (EASY 1, depth k, conservative 0 = every job) and no
backfilling is ``SchedulerType=sched/builtin``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.engine import EngineConfig
from advisor.model import SchedulingConfig


@dataclass(frozen=True)
class NoParams:
    """No parameters."""


@dataclass(frozen=True)
class EasyParams:
    shadow: str = field(default="all", metadata={
        "choices": ("all", "first"),
        "help": "running jobs ending exactly at the shadow time: 'all' count toward the "
                "extra processors (textbook), or only those up to the first that frees "
                "enough for the head job ('first')"})


@dataclass(frozen=True)
class DepthParams:
    k: int = field(default=2, metadata={"min": 1, "help": "reservations held (k=1 is EASY)"})


@dataclass(frozen=True)
class Backfill:
    name: str
    summary: str
    Params: type
    family: str = "backfill"

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        config = replace(config, backfill=self.name)
        if isinstance(params, EasyParams):
            config = replace(config, shadow=params.shadow)
        if isinstance(params, DepthParams):
            config = replace(config, depth=params.k)
        return config

    def to_slurm(self, config: SchedulingConfig,
                 params) -> tuple[SchedulingConfig, str, tuple[str, ...]]:
        """``config`` with this backfilling; its fidelity and caveats."""
        if self.name == "none":
            return replace(config, scheduler_type="sched/builtin"), "exact", (
                "the main scheduler alone: per partition, no job starts past a blocked one",)
        reserve = params.k if isinstance(params, DepthParams) else int(self.name == "easy")
        config = replace(config, scheduler_type="sched/backfill",
                         backfill=replace(config.backfill, bf_job_part_count_reserve=reserve))
        caveats = ["backfill reserves whole nodes, plans every bf_interval in bf_resolution "
                   "steps, and gives no reservation beyond bf_window (simulated)"]
        if reserve:
            caveats.append(f"{reserve} reservation(s) per partition, not per machine")
        else:
            caveats.append("re-planned every cycle (conservative with compression); jobs "
                           "past bf_max_job_test get no reservation")
        return config, "approximate", tuple(caveats)


NONE = Backfill("none", "no backfilling: start in primary order until a job does not fit",
                NoParams)
EASY = Backfill("easy", "EASY: backfill without delaying the first blocked job's reservation",
                EasyParams)
DEPTH = Backfill("depth", "reservations for the first k blocked jobs, backfill the others",
                 DepthParams)
CONSERVATIVE = Backfill("conservative",
                        "conservative: every job keeps a reservation; compressed on early ends",
                        NoParams)
