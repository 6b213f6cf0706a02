"""threshold/queue: seed 002 §6's queue threshold T.

After the primary queue is sorted, jobs that have waited more than T go to its head, in
submit order: a bound on the starvation that non-FCFS orderings risk.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.engine import EngineConfig


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


QUEUE = QueueThreshold()
