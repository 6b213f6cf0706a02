"""What a backfill cycle costs on the test cluster: queue N pending jobs behind a job that
holds every CPU, let backfill cycle over them, and read sdiag's "Backfilling stats" (the
mean cycle, the mean depth tried, the mean table size). Fits a cycle's time as a fixed
part plus a part per job tested (least squares of the relative error), and prints the
fit's last line as JSON. Needs root (it starts the cluster of tests/integration).

    .venv/bin/python bench/bf_cost.py [--release 22.05|24.11|26.05] [--depths 50,200,800]
                                      [--cycles 20] [--save DIR]
    .venv/bin/python bench/bf_cost.py --pool tests/fixtures/sdiag/fits.jsonl

``--save DIR`` writes each depth's sdiag output there (text, and ``--json`` where the
release has it), as recorded fixtures. ``--pool`` fits every release's rows of those JSON
lines together, without a cluster: the test cluster's figures,
``advisor.model.TEST_CLUSTER_COST`` (docs/slurm-mapping.md F13).
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


def fit(rows: list[dict]) -> tuple[float, float]:
    """(fixed us, us per job tried) minimising the relative error over ``rows`` (the
    cycles' means span 40x: an absolute fit would follow the deepest alone)."""
    tried = np.array([r["depth_try_mean"] for r in rows], float)
    mean = np.array([r["cycle_mean_us"] for r in rows], float)
    a = np.vstack([1 / mean, tried / mean]).T
    fixed, per_job = np.linalg.lstsq(a, np.ones_like(mean), rcond=None)[0]
    return fixed, per_job


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--release", choices=RELEASES, default=RELEASES[0])
    ap.add_argument("--depths", default="50,200,800")
    ap.add_argument("--cycles", type=int, default=20)
    ap.add_argument("--save", help="a folder for the sdiag outputs")
    ap.add_argument("--pool", help="fit the rows of this file's JSON lines together")
    args = ap.parse_args()
    console = Console()
    if args.pool:
        rows = [r for line in Path(args.pool).read_text().splitlines() if line.strip()
                for r in json.loads(line)["rows"]]
        fixed, per_job = fit(rows)
        for r in rows:
            model = fixed + per_job * r["depth_try_mean"]
            console.print(f"{r['pending']:>4} pending: mean {r['cycle_mean_us']:>6} us, "
                          f"fit {model:>6.0f} us ({model / r['cycle_mean_us']:.2f})")
        console.print(f"pooled fit: a cycle = {fixed:.0f} us + {per_job:.1f} us per job tried")
        return
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
    fixed, slope = fit([s for _, s in rows])
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
