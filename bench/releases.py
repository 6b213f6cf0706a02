"""What a release's behaviours cost the slurm mode: each bundled trace played under the
default configuration as two Slurm releases (default 24.11.5 and 26.05.5, which adds
25.05.1's planned start), the best of ``--repeat`` runs of each, their ratio, and how many
starts differ, in one run.

    .venv/bin/python bench/releases.py [--traces KTH-SP2,CTC-SP2,SDSC-BLUE]
                                       [--releases 24.11.5,26.05.5] [--repeat 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from advisor.adapters.swf import read_swf, resolve_trace  # noqa: E402
from advisor.engine.slurm import run_slurm, workload_input  # noqa: E402
from advisor.model import SchedulingConfig  # noqa: E402


def best_of(inp, repeat: int):
    """The fastest of ``repeat`` runs (after one that loads the kernel), and its starts."""
    run_slurm(inp)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        start, _ = run_slurm(inp)
        times.append(time.perf_counter() - t)
    return min(times), start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="KTH-SP2,CTC-SP2,SDSC-BLUE")
    ap.add_argument("--releases", default="24.11.5,26.05.5")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    old, new = args.releases.split(",")
    table = Table(title=f"The slurm mode as Slurm {old} and as {new}, default configuration")
    for col in ("trace", "jobs", old, new, "ratio", "starts that differ"):
        table.add_column(col, justify="left" if col == "trace" else "right")
    for name in args.traces.split(","):
        workload = read_swf(resolve_trace(name))
        (t_old, s_old), (t_new, s_new) = (
            best_of(workload_input(workload, replace(SchedulingConfig(), slurm_version=v)),
                    args.repeat) for v in (old, new))
        table.add_row(name, f"{len(workload.jobs):,}", f"{t_old:.2f} s", f"{t_new:.2f} s",
                      f"{t_new / t_old:.2f}", f"{int((s_old != s_new).sum()):,}")
    Console().print(table)


if __name__ == "__main__":
    main()
