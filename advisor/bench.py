"""Performance figures (``advisor bench``). Measured, never asserted by tests.

Each trace is measured in a fresh process so that its peak memory is its own:
* parse: reading and cleaning the SWF file (seed 002's filter);
* first call: the first simulation of the process, which loads the compiled engine from the
  on-disk cache (or compiles it, the first time ever);
* sim: the median over ``repeat`` runs of one simulation, parse and JIT excluded;
* compile: a cold JIT compilation, in a process given an empty numba cache directory.
Whole-command figures time ``advisor replay`` and ``advisor tune`` as processes.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from rich.console import Group
from rich.table import Table

from advisor.plugins.spec import BASELINE

TRACES = ("KTH-SP2", "CTC-SP2", "SDSC-BLUE")
POLICIES = (BASELINE, "easy:SPF:SPF")


def trace_figures(name: str, repeat: int) -> dict:
    from adapters.swf import read_swf
    from advisor.cleaning import CleaningOptions
    from advisor.engine import job_arrays, run
    from advisor.plugins.spec import parse_policy
    from adapters.swf import resolve_trace

    t0 = time.perf_counter()
    workload = read_swf(resolve_trace(name),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    arrays = job_arrays(workload)
    parse = time.perf_counter() - t0
    configs = {spec: parse_policy(spec).engine_config() for spec in POLICIES}
    t0 = time.perf_counter()
    run(arrays, configs[POLICIES[0]])
    first = time.perf_counter() - t0
    sims = {spec: _median_times(repeat, lambda c=config: run(arrays, c))[0]
            for spec, config in configs.items() if spec != POLICIES[0]}
    # the slurm mode on the trace's machine (1-CPU nodes), EASY-like Slurm defaults, timed
    # in turn with the textbook EASY so that both see the same machine load
    from advisor.engine.slurm import run_slurm, with_backfill, workload_input
    from advisor.model import SchedulingConfig
    inp = workload_input(workload, with_backfill(SchedulingConfig(),
                                                 bf_job_part_count_reserve=1))
    run_slurm(inp)
    sims[POLICIES[0]], slurm_s = _median_times(repeat, lambda: run(arrays, configs[POLICIES[0]]),
                                               lambda: run_slurm(inp))
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"trace": name, "jobs": len(arrays), "parse_s": parse, "first_call_s": first,
            "sim_s": sims, "jobs_per_s": {k: len(arrays) / v for k, v in sims.items()},
            "slurm_easy_s": slurm_s, "peak_rss_mib": peak_mib}


def _median_times(repeat: int, *calls) -> list[float]:
    """The median wall time of ``repeat`` calls of each, the calls taken in turn, in
    seconds."""
    times: list[list[float]] = [[] for _ in calls]
    for _ in range(repeat):
        for call, out in zip(calls, times):
            t0 = time.perf_counter()
            call()
            out.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def _python(code: str, env: dict | None = None) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=True)
    return done.stdout


def _timed(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "advisor.cli", *argv], check=True,
                       capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cold_compile() -> float:
    code = ("import time, numpy as np\n"
            "from advisor.engine import make_arrays, run, EngineConfig\n"
            "a = make_arrays([0, 1], [5, 5], [5, 5], [1, 1], 1)\n"
            "t = time.perf_counter(); run(a, EngineConfig()); print(time.perf_counter() - t)\n")
    with tempfile.TemporaryDirectory() as cache:
        return float(_python(code, {"NUMBA_CACHE_DIR": cache}).strip())


def bench(repeat: int = 5, tune: bool = True) -> dict:
    figures = {"cpus": os.cpu_count(), "compile_s": cold_compile(), "traces": []}
    for name in TRACES:
        out = _python(f"import json; from advisor.bench import trace_figures; "
                      f"print(json.dumps(trace_figures({name!r}, {repeat})))")
        figures["traces"].append(json.loads(out))
    figures["replay_process_s"] = {
        "command": f"advisor replay KTH-SP2 --policy {BASELINE} --json",
        "seconds": _timed(["replay", "KTH-SP2", "--policy", BASELINE, "--json"], 5)}
    if tune:
        figures["tune_process_s"] = {
            "command": "advisor tune KTH-SP2 --weeks 250 --json",
            "seconds": _timed(["tune", "KTH-SP2", "--weeks", "250", "--json"], 1)}
    return figures


def bench_table(f: dict) -> Group:
    table = Table(title=f"Engine, Lelong et al.'s filter, {f['cpus']} CPUs (median of runs)",
                  title_justify="left")
    for col in ("trace", "jobs", "parse", "first call", *(f"{p} sim" for p in POLICIES),
                *(f"{p} jobs/s" for p in POLICIES), "slurm mode (EASY-like)",
                f"slurm ÷ {POLICIES[0]}", "peak RSS"):
        table.add_column(col, justify="left" if col == "trace" else "right")
    for t in f["traces"]:
        table.add_row(t["trace"], str(t["jobs"]), f"{t['parse_s'] * 1000:.0f} ms",
                      f"{t['first_call_s'] * 1000:.0f} ms",
                      *(f"{t['sim_s'][p] * 1000:.1f} ms" for p in POLICIES),
                      *(f"{t['jobs_per_s'][p] / 1e6:.2f} M" for p in POLICIES),
                      f"{t['slurm_easy_s'] * 1000:.0f} ms",
                      f"{t['slurm_easy_s'] / t['sim_s'][POLICIES[0]]:.1f}x",
                      f"{t['peak_rss_mib']:.0f} MiB")
    lines = [f"cold JIT compile (empty cache): {f['compile_s']:.1f} s"]
    for key in ("replay_process_s", "tune_process_s"):
        if key in f:
            lines.append(f"{f[key]['command']}: {f[key]['seconds']:.2f} s (whole process)")
    return Group(table, *lines)
