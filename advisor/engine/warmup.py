"""The simulator is compiled by numba on first use and cached on disk (``cache=True``).
``compile_all`` compiles it ahead of use (a few jobs in each mode), so that a caller can say
so before the wait instead of being silent for minutes."""
from __future__ import annotations

import os
import subprocess
import sys

from advisor.engine import EngineConfig, cache, job_arrays, run
from advisor.engine.slurm import run_slurm, workload_input
from advisor.model import SchedulingConfig, workload_from_records


def _workload():
    records = [dict(submit=t, procs=p, runtime=r, estimate=2 * r)
               for t, p, r in ((0, 2, 60), (10, 1, 30), (20, 2, 90), (30, 1, 20))]
    return workload_from_records(records, 2)


def _textbook():
    run(job_arrays(_workload()), EngineConfig())


def _slurm():
    run_slurm(workload_input(_workload(), SchedulingConfig()))


#: each kernel, compiled (or loaded) by simulating four jobs; the slurm mode's takes about
#: two thirds of a cold compilation (docs/performance.md)
KERNELS = {"slurm": _slurm, "textbook": _textbook}


def compile_kernels(names=tuple(KERNELS)) -> None:
    """Compile (or load) the kernels named: both modes of the engine."""
    for name in names:
        KERNELS[name]()


def compile_all(families=(), kernels: tuple[str, ...] = tuple(KERNELS)) -> None:
    """The engine's ``kernels`` (both modes by default) and each of ``families``
    (functions that compile a policy family's own; ``advisor.plugins.warmup`` passes the
    ones a run plays). With a second core and other work to do, the slurm mode's kernel
    (the longest) compiles in a child process meanwhile, then loads from numba's cache. A
    failing child only means this process compiles it after all; an interrupted one is
    not left behind. Then it marks each kernel compiled (``cache.engine_compiled``)."""
    others = tuple(k for k in kernels if k != "slurm")
    if "slurm" in kernels and (others or families) and (os.cpu_count() or 1) > 1:
        child = subprocess.Popen(
            [sys.executable, "-c", "from advisor.engine.warmup import compile_kernels; "
             "compile_kernels(('slurm',))"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            compile_kernels(others)
            for family in families:
                family()
            child.wait()
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        compile_kernels(("slurm",))    # loaded from the child's cache, or compiled here
    else:
        compile_kernels(kernels)
        for family in families:
            family()
    cache.mark_engine_compiled(kernels)
