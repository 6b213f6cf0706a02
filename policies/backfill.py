"""backfill/*: how jobs may start ahead of the primary order.

* none: strict order, no backfilling (start in order until one does not fit);
* easy: seed 001 Fig. 2 / seed 002 Algorithm 1, one reservation for the first blocked job;
* depth: the first k blocked jobs (primary order) hold reservations, the rest backfill;
* conservative: seed 001 §2.1, every queued job holds a reservation, with compression.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.engine import EngineConfig


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


NONE = Backfill("none", "no backfilling: start in primary order until a job does not fit",
                NoParams)
EASY = Backfill("easy", "EASY: backfill without delaying the first blocked job's reservation",
                EasyParams)
DEPTH = Backfill("depth", "reservations for the first k blocked jobs, backfill the others",
                 DepthParams)
CONSERVATIVE = Backfill("conservative",
                        "conservative: every job keeps a reservation; compressed on early ends",
                        NoParams)
