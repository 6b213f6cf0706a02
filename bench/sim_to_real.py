"""Sim-to-real benchmark: play scaled windows of a real trace on a real Slurm (the test
cluster of tests/integration, started here) under each configuration of
``advisor.studies.validate.CONFIGURATIONS``, and print how well the slurm and textbook modes
predict the real start times. Needs root (it starts munge, mariadb, slurmdbd, slurmctld, slurmd).

    .venv/bin/python bench/sim_to_real.py [--jobs 80] [--span 300] [--trace KTH-SP2]
                                          [--load 1.5] [--gpu-every K] [--memory-every K]
                                          [--json F] [--save RECORDINGS.json]
                                          [--release 22.05|24.11|26.05] [--knobs] [--queued]
                                          [--usage-history HEAVY,LIGHT]

``--gpu-every 4`` makes every 4th job ask for a GPU (the cluster's n3 and n4 have two
each), ``--memory-every 5`` every 5th other job for three quarters of a node's memory,
``--capped-every 3`` every 3rd job in the QOS capped (2 running jobs and 16 CPUs per user),
``--accounts research,physics`` the jobs to those accounts in turn (1 and 3 shares).
``--knobs`` plays, instead of the study's configurations, each kind of knob's base and
changed configuration (``advisor.studies.validate.KNOB_PLAYS``; the half-life's pair is
played with ``--config fairshare-easy --config fairshare-halflife-2min --usage-history
physics,research``: the jobs behind blockers that give the accounts a usage history,
``validate.behind_usage``); a play starts from the
cluster's own slurm.conf with its configuration's keys set, and ``--save`` writes when and
on what the plays were recorded beside them.
``--log-backfill`` has slurmctld log each backfill decision (the job tested, the nodes
tried, the reservation made; ``DebugFlags=Backfill,BackfillMap,Priority`` at
``SlurmctldDebug=verbose``) and keeps the cluster's folder, logs included, after the run;
``--save`` then holds each play's sub-second times from that log (its jobs' submissions,
starts and ends, and the backfill cycles' beginnings, in milliseconds:
``advisor.studies.slurmctld_log``).
``--forecast-at S`` takes, S seconds into each play, what ``advisor forecast`` reads, and
prints after it each job pending then: its real start, the forecast's median and ``squeue
--start``'s estimate taken at the same moment.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from advisor.adapters.files import atomic_write
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.adapters.slurm_submit import play
from advisor.adapters.swf import read_swf
from advisor.adapters.swf import resolve_trace
from advisor.studies.slurmctld_log import play_times
from advisor.studies.validate import (CONFIGURATIONS, KNOB_PLAYS, behind_usage, evaluate,
                                      queued, scaled_jobs, with_resources)
from tests.integration.site_play import Capture, closer, forecast_against_slurm
from tests.integration.slurm_cluster import NODE_CPUS, NODE_MEMORY, NODES, SlurmCluster
from tests.integration.slurm_release import RELEASES, release


def main() -> None:
    # a SIGTERM stops the cluster as Ctrl-C does (the finally below), leaving no daemon
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=80)
    ap.add_argument("--span", type=int, default=300, help="seconds of submissions")
    ap.add_argument("--max-runtime", type=int, default=90)
    ap.add_argument("--trace", default="KTH-SP2")
    ap.add_argument("--load", type=float, default=1.5)
    ap.add_argument("--gpu-every", type=int, default=0)
    ap.add_argument("--memory-every", type=int, default=0)
    ap.add_argument("--capped-every", type=int, default=0,
                    help="every K-th job in the QOS capped")
    ap.add_argument("--accounts", default="",
                    help="deal the jobs to these accounts in turn (research,physics)")
    ap.add_argument("--reset-usage", action="store_true",
                    help="before each play, set the fair-share usage of --accounts to 0")
    ap.add_argument("--repeat", type=int, default=1, help="plays of each configuration")
    ap.add_argument("--config", action="append", choices=list(CONFIGURATIONS))
    design = ap.add_mutually_exclusive_group()
    design.add_argument("--queued", action="store_true",
                    help="the jobs queued behind a blocker of all CPUs, a second apart "
                         "(advisor.studies.validate.queued)")
    design.add_argument("--usage-history", metavar="HEAVY,LIGHT",
                    help="the jobs queued behind a blocker of all CPUs in account HEAVY for "
                         "5 minutes, then one in LIGHT for 100 s (the half-life's play: "
                         "advisor.studies.validate.behind_usage)")
    ap.add_argument("--knobs", action="store_true",
                    help="play each knob kind's base and changed configuration (KNOB_PLAYS) "
                         "instead of the study's")
    ap.add_argument("--release", choices=RELEASES, default=RELEASES[0],
                    help="the Slurm release the cluster runs (tests/integration)")
    ap.add_argument("--log-backfill", action="store_true",
                    help="log slurmctld's backfill decisions and keep the cluster's folder")
    ap.add_argument("--forecast-at", type=float, metavar="S",
                    help="S seconds into each play, take what advisor forecast reads (the "
                         "snapshot with squeue --start's estimates, the finished jobs) and, "
                         "after it, print each job pending then: its real start, the "
                         "forecast's median and squeue's estimate")
    ap.add_argument("--json", help="write the figures and per-job tables here")
    ap.add_argument("--save", help="write the recordings here (per configuration: the "
                                   "slurm.conf settings, the snapshot, the sacct records) as "
                                   "JSON, to evaluate a changed model offline (see "
                                   "tests/fixtures/sim-to-real)")
    args = ap.parse_args()
    workload = read_swf(resolve_trace(args.trace))
    console = Console()
    logging = {}
    if args.log_backfill:
        os.environ["ADVISOR_KEEP_SLURM"] = "1"
        logging = {"DebugFlags": "Backfill,BackfillMap,Priority", "SlurmctldDebug": "verbose"}
    cluster = SlurmCluster(release=release(args.release)).start()
    if args.log_backfill:
        console.print(f"slurmctld's log: {cluster.root}/log/slurmctld.log")
    results, raw, forecasts = {}, {}, {}
    try:
        knobs = [c for pair in KNOB_PLAYS.values() for c in pair]
        names = args.config or (knobs if args.knobs else
                                [c for c in CONFIGURATIONS if c not in knobs])
        for name in [c for c in names for _ in range(args.repeat)]:
            settings, partitions, textbook = CONFIGURATIONS[name]
            name = f"{name}#{sum(1 for k in results if k.split('#')[0] == name) + 1}" \
                if args.repeat > 1 else name
            jobs = with_resources(
                scaled_jobs(workload, args.jobs, args.span, NODES * NODE_CPUS,
                            args.max_runtime, partitions, load=args.load),
                args.gpu_every, args.memory_every, NODE_MEMORY * 3 // 4, NODE_CPUS,
                accounts=tuple(a for a in args.accounts.split(",") if a),
                qos_every=args.capped_every, qos="capped")
            if args.queued:
                jobs = queued(jobs, NODES * NODE_CPUS)
            elif args.usage_history:
                jobs = behind_usage(jobs, NODES * NODE_CPUS, *args.usage_history.split(","))
            cluster.cancel_all()
            t = time.monotonic()
            # each play from the cluster's own slurm.conf: no key left from the one before
            with cluster.reconfigured(**settings, **logging):
                if args.reset_usage and args.accounts:
                    cluster.reset_usage(*args.accounts.split(","))
                capture = Capture(args.forecast_at).start() if args.forecast_at else None
                snapshot, records = play(jobs, SlurmCommands(), timeout=3600)
            if capture is not None:
                forecasts[name] = forecast_against_slurm(*capture.taken(), records)
                console.print(forecast_table(name, args.forecast_at, forecasts[name]))
            raw[name] = {"settings": settings, "snapshot": snapshot.to_dict(),
                         "records": records}
            if args.log_backfill:  # the play's sub-second times (docs/simulation.md)
                with open(cluster.root / "log" / "slurmctld.log", errors="replace") as log:
                    raw[name]["log"] = play_times(log, [r["job_id"] for r in records])
            out = evaluate(snapshot, records, textbook)
            out["wall_s"] = time.monotonic() - t
            results[name] = out
            console.print(f"{name}: {len(records)} jobs played in {out['wall_s']:.0f} s")
    finally:
        cluster.stop()
    table = Table(title=f"sim-to-real on Slurm {args.release}, {args.jobs} jobs over "
                        f"{args.span} s from {args.trace}")
    for col in ("configuration", "mode", "within tol", "Spearman", "MAE (s)"):
        table.add_column(col)
    for name, out in results.items():
        for mode in ("slurm", "textbook"):
            a = out[mode]
            table.add_row(name, mode, f"{a['within']:.1%} (±{a['tolerance_s']} s)",
                          f"{a['spearman']:.3f}", f"{a['mae_s']:.1f}")
    console.print(table)
    if args.save:
        version = next((r["snapshot"]["config"]["slurm_version"] for r in raw.values()), "")
        about = {"recorded": f"{time.strftime('%Y-%m-%d')}, slurmctld {version}, "
                             f"tests/integration/slurm_cluster.py ({NODES} nodes x "
                             f"{NODE_CPUS} CPUs)",
                 "workload": f"{args.trace} window via advisor.studies.validate.scaled_jobs: "
                             f"{args.jobs} jobs over {args.span} s, max runtime "
                             f"{args.max_runtime} s, load {args.load}"
                             + (f", accounts {args.accounts}" if args.accounts else "")
                             + (", queued behind a blocker (validate.queued)" if args.queued
                                else "")
                             + (f", queued behind blockers of {args.usage_history} "
                                "(validate.behind_usage)" if args.usage_history else "")}
        atomic_write(args.save, json.dumps({**about, **raw}, indent=1, default=int))
    if args.json:
        atomic_write(args.json, json.dumps(
            {k: {"slurm": v["slurm"], "textbook": v["textbook"], "wall_s": v["wall_s"],
                 "table": v["table"].reset_index().to_dict("records"),
                 "forecasts": forecasts.get(k)}
             for k, v in results.items()}, indent=1, default=int))


def forecast_table(name: str, at: float, rows: list[dict]) -> Table:
    """Each job pending ``at`` s into the play: when it really started, the forecast's
    median and squeue --start's estimate (s from then), and which was closer."""
    table = Table(title=f"{name}: the jobs pending {at:g} s into the play (s from then)")
    for col in ("job", "CPUs", "real", "forecast", "squeue --start", "closer"):
        table.add_column(col, justify="right")
    for r in rows:
        f, q = r["forecast"], r["squeue"]
        table.add_row(str(r["job"]), str(r["cpus"]), str(r["real"]),
                      "later" if f is None else str(f), "none" if q is None else str(q),
                      closer(r))
    return table


if __name__ == "__main__":
    main()
