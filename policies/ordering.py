"""ordering/*: the seven queue orderings of seed 002 §3.2.

Each one orders either queue: the primary queue (start and reserve) or the backfill queue.
Ties are broken by submit time, then by job id.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.engine import EngineConfig


@dataclass(frozen=True)
class Params:
    """Orderings take no parameters."""


@dataclass(frozen=True)
class Ordering:
    name: str
    summary: str
    family: str = "ordering"
    Params: type = Params

    @property
    def code(self) -> str:
        return self.name.upper()

    def configure(self, config: EngineConfig, params: Params, role: str) -> EngineConfig:
        """Set this ordering as the ``primary`` or the ``secondary`` (backfill) queue's."""
        return replace(config, **{role: self.code})


FCFS = Ordering("fcfs", "first come, first served: earliest submit first")
LCFS = Ordering("lcfs", "last come, first served: latest submit first")
SPF = Ordering("spf", "smallest estimated processing time (requested time) first")
LPF = Ordering("lpf", "largest estimated processing time first")
SQF = Ordering("sqf", "smallest resource requirement (processors) first")
LQF = Ordering("lqf", "largest resource requirement first")
EXP = Ordering("exp", "largest expansion factor (wait + estimate) / estimate first")
