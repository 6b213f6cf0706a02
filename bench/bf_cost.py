"""What a backfill cycle costs on the test cluster: queue N pending jobs behind a job that
holds every CPU, let backfill cycle over them, and read sdiag's "Backfilling stats" (the
mean cycle, the mean depth tried, the mean table size). Fits a cycle's time as a fixed
part plus a part per job tested, the defaults of ``advisor.model.BackfillCost``
(docs/slurm-mapping.md). Needs root (it starts the cluster of tests/integration).

    .venv/bin/python bench/bf_cost.py [--release 22.05|24.11|26.05] [--depths 50,200,800]
                                      [--cycles 20] [--save DIR]

``--save DIR`` writes each depth's sdiag output there (text, and ``--json`` where the
release has it), as recorded fixtures.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from rich.console import Console
from rich.table import Table

from advisor.adapters.files import atomic_write
from advisor.adapters.slurm_text import backfill_stats
from advisor.model import release_of
from tests.integration.slurm_cluster import NODE_CPUS, NODES, SlurmCluster
from tests.integration.slurm_release import RELEASES, release

#: the pending jobs' CPUs and limits (minutes), in turn: each gets a will-run test and,
#: under conservative backfill, a reservation
SIZES = (1, 3, 8, 16, 5, 12, 2, 32)
LIMITS = (5, 30, 10, 60, 20, 15, 45, 90)


def measure(cluster: SlurmCluster, depth: int, cycles: int, json_too: bool) -> tuple[str, str]:
    """sdiag's text and, with ``json_too``, its JSON (else "") after ``cycles`` backfill
    cycles over ``depth`` pending jobs."""
    cluster.cancel_all()
    cluster.run("sbatch", "-o", "/dev/null", "-n", str(NODES * NODE_CPUS), "-t", "120",
                "--wrap", "sleep 7000")
    for i in range(depth):
        cluster.run("sbatch", "-o", "/dev/null", "-n", str(SIZES[i % len(SIZES)]), "-t",
                    str(LIMITS[i % len(LIMITS)]), "--wrap", "sleep 60")
    time.sleep(3)
    cluster.run("sdiag", "--reset")
    deadline = time.monotonic() + 30 + cycles * 20
    while time.monotonic() < deadline:
        time.sleep(2)
        stats = backfill_stats(cluster.run("sdiag"))
        if stats["cycles"] >= cycles:
            break
    text = cluster.run("sdiag")
    return text, cluster.run("sdiag", "--json") if json_too else ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", choices=RELEASES, default=RELEASES[0])
    ap.add_argument("--depths", default="50,200,800")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--save", help="a folder for the sdiag outputs")
    args = ap.parse_args()
    console = Console()
    cluster = SlurmCluster(release=release(args.release)).start()
    rows = []
    try:
        cluster.reconfigure(SchedulerParameters="bf_interval=1,bf_continue,"
                                                "bf_max_job_test=5000")
        for depth in (int(d) for d in args.depths.split(",")):
            text, js = measure(cluster, depth, args.cycles,
                               release_of(args.release).release.sdiag_json)
            stats = backfill_stats(text)
            rows.append((depth, stats))
            if args.save:
                out = Path(args.save)
                out.mkdir(parents=True, exist_ok=True)
                atomic_write(out / f"sdiag-{args.release}-depth{depth}.txt", text)
                if js:
                    atomic_write(out / f"sdiag-{args.release}-depth{depth}.json", js)
            console.print(f"depth {depth}: {stats}")
    finally:
        cluster.cancel_all()
        cluster.stop()
    tried = np.array([s["depth_try_mean"] for _, s in rows], float)
    mean = np.array([s["cycle_mean_us"] for _, s in rows], float)
    slope, fixed = np.polyfit(tried, mean, 1) if len(rows) > 1 else (mean[0] / tried[0], 0)
    table = Table(title=f"backfill cycles on Slurm {args.release}, {NODES} nodes")
    for col in ("pending", "cycles", "mean cycle (us)", "tried (mean)", "table (mean)",
                "us per job tried"):
        table.add_column(col, justify="right")
    for depth, s in rows:
        table.add_row(str(depth), str(s["cycles"]), f"{s['cycle_mean_us']:.0f}",
                      f"{s['depth_try_mean']:.0f}", f"{s['table_mean']:.0f}",
                      f"{s['cycle_mean_us'] / max(s['depth_try_mean'], 1):.1f}")
    console.print(table)
    console.print(f"fit: a cycle = {fixed:.0f} us + {slope:.1f} us per job tried")
    print(json.dumps({"release": args.release, "fixed_us": fixed, "per_job_us": slope,
                      "rows": [{"pending": d, **s} for d, s in rows]}))


if __name__ == "__main__":
    main()
