"""The plan family's scheduler in the textbook engine: re-plan the whole queue by simulated
annealing at every arrival, start and end, and start each job when its planned start
arrives (Zheng et al. §III; the kernel is ``kernel.simulate_plans``)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.engine import EngineConfig, JobArrays
from advisor.errors import BadInput
from advisor.policies.plan.kernel import COSTS, Annealing, simulate_plans


@dataclass(frozen=True)
class Plans:
    """The objective the annealing minimises ("wait", "squared", "makespan"), Algorithm
    1's parameters, and the seed of its moves."""

    cost: str = "squared"
    annealing: Annealing = Annealing()
    seed: int = 0

    def run(self, arrays: JobArrays, config: EngineConfig) -> tuple[np.ndarray, np.ndarray]:
        """(start times, each job's start in the first plan that held it). A plan replaces
        the queue policy, so any queue setting but a starvation threshold (which leads
        each plan with the jobs past it) is refused."""
        if self.cost not in COSTS:
            raise BadInput(f"unknown plan objective '{self.cost}'; use {', '.join(COSTS)}")
        if config != EngineConfig(mechanic=self, batch=config.batch,
                                  threshold=config.threshold):
            raise BadInput("a plan orders the whole queue itself: give it without a "
                           "backfilling, an ordering or runtime classes")
        if arrays.t0 is not None:
            raise BadInput("plans cannot resume from a snapshot in the textbook engine: the "
                           "slurm mode simulates a plan's site factors")
        sa = self.annealing
        if not (sa.t0 > sa.t_end > 0 and 0 < sa.cooling < 1 and sa.moves >= 1):
            raise BadInput("simulated annealing needs T0 > Tth > 0, 0 < r < 1 and N >= 1")
        start, promised, _, _ = simulate_plans(
            arrays.submit, arrays.runtime, arrays.estimate, arrays.procs, arrays.machine,
            COSTS[self.cost], float(sa.t0), float(sa.t_end), int(sa.moves),
            float(sa.cooling), int(self.seed),
            -1 if config.threshold is None else int(config.threshold))
        return start, promised


def compile_kernels() -> None:
    """Compile (or load) the annealing's kernels: four jobs planned with one move a
    temperature."""
    from advisor.engine import make_arrays, run
    arrays = make_arrays([0, 10, 20, 30], [60, 30, 90, 20], [120, 60, 180, 40], [2, 1, 2, 1],
                         2)
    run(arrays, EngineConfig(mechanic=Plans("wait", Annealing(moves=1))))
