"""The queues family's scheduler in the textbook engine: multiple-queue backfilling
(``kernel.run_queues``), each queue FCFS with EASY's one reservation, its pivot."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.engine import EngineConfig, JobArrays
from advisor.errors import BadInput
from advisor.policies.queues.kernel import classes_of, run_queues


@dataclass(frozen=True)
class RuntimeClasses:
    """``parts`` runtime classes, classed by ``cuts`` (ascending estimates, in seconds) or,
    when empty, by each week's boundaries from the previous week's completions."""

    parts: int = 1
    cuts: tuple[int, ...] = ()

    def run(self, arrays: JobArrays, config: EngineConfig) -> tuple[np.ndarray, np.ndarray]:
        """As the paper's policy, or refused: any other setting is not approximated."""
        if config != EngineConfig(mechanic=self):
            raise BadInput("multiple runtime-class queues run EASY backfilling and FCFS in "
                           "each queue (Lawson and Smirni's policy) in the textbook engine: "
                           "give them with easy:FCFS:FCFS and no threshold")
        if arrays.t0 is not None:
            raise BadInput("multiple runtime-class queues cannot resume from a snapshot in "
                           "the textbook engine: the slurm mode simulates their partitions")
        cuts = np.asarray(self.cuts, np.int64)
        if len(cuts) and (len(cuts) != self.parts - 1 or (np.diff(cuts) <= 0).any()):
            raise BadInput(f"{self.parts} runtime classes need {self.parts - 1} ascending "
                           f"boundaries, not {len(cuts)}")
        classes = classes_of(arrays.estimate, cuts) if len(cuts) else None
        return run_queues(arrays, self.parts, classes)


def compile_kernels() -> None:
    """Compile (or load) the queues' kernels: four jobs in two classes."""
    from advisor.engine import make_arrays, run
    arrays = make_arrays([0, 10, 20, 30], [60, 30, 90, 20], [120, 60, 180, 40], [2, 1, 2, 1],
                         2)
    run(arrays, EngineConfig(mechanic=RuntimeClasses(2)))
