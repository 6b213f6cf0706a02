"""The simulator is compiled by numba on first use and cached on disk (``cache=True``).
``compiled`` says whether that cache already holds the engine for this source, and
``compile_all`` compiles it ahead of use (a few jobs in each mode), so that a caller can say
so before the wait instead of being silent for minutes."""
from __future__ import annotations

import numpy as np

from advisor.engine import EngineConfig, core, job_arrays, run
from advisor.engine import cosched, gang, plan, slurm_core
from advisor.engine.plan import Annealing
from advisor.engine.slurm import run_slurm, workload_input
from advisor.model import SchedulingConfig, workload_from_records

#: the compiled entry points; what they call is compiled (and cached) with them
ENTRY_POINTS = (core.simulate, slurm_core.simulate_slurm, plan.simulate_plans,
                cosched._simulate, gang.simulate_gang)


def compiled() -> bool:
    """True when numba's on-disk index holds a compiled version of every entry point for
    their current source (an index from older source counts as empty). Reads numba's own
    cache index; if that internal interface ever changes, the answer is True (no notice),
    never an error."""
    try:
        return all(fn._cache._cache_file._load_index() for fn in ENTRY_POINTS)
    except Exception:         # numba internals moved: say nothing rather than fail
        return True


def compile_all() -> None:
    """Compile (or load) every kernel by simulating four jobs in each: both modes of the
    engine, the planner, the coscheduling model and the gang partition."""
    records = [dict(submit=t, procs=p, runtime=r, estimate=2 * r)
               for t, p, r in ((0, 2, 60), (10, 1, 30), (20, 2, 90), (30, 1, 20))]
    workload = workload_from_records(records, 2)
    arrays = job_arrays(workload)
    run(arrays, EngineConfig())
    run_slurm(workload_input(workload, SchedulingConfig()))
    run(arrays, EngineConfig(plan="wait", annealing=Annealing(moves=1)))
    cosched.simulate(np.ones((2, 2)), [3, 3], [True, True], "FCS")
    gang.run_gang(arrays.submit, arrays.runtime, arrays.estimate, arrays.procs, 2, 2)
