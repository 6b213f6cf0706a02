"""The site's own commands: ``advisor check``, how faithfully the simulation reproduces
this site from its own past, and ``advisor forecast``, when each pending job will start.

A check's window comes from slurmdbd (sacct, sacctmgr) and plays on the machine,
configuration and accounting in effect now (or a slurm.conf file's); a trace of a
Slurm-run site plays on the slurm.conf file given. A forecast reads any source
(``--from``) and its history. The work is the library's (``advisor.whatif.sitecheck``,
``advisor.whatif.forecast``); this module reads, calls and prints.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

from advisor.cli_args import _slurm_options, _source_options
from advisor.cli_plugins import (EXIT_OK, Command, check_output, compile_notice, duration,
                                 emit_json, progress)
from advisor.cli_types import count, since_moment
from advisor.errors import BadInput


def check_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", nargs="?", help="an SWF trace of a Slurm-run site (.swf or "
                   ".swf.gz) checked against its logged starts, with --conf; default: the "
                   "live cluster's accounting (sacct)")
    p.add_argument("--conf", metavar="FILE", help="a slurm.conf: the nodes, partitions "
                   "and scheduling keys to play (a trace needs one; a live cluster plays "
                   "the configuration in effect unless given one)")
    p.add_argument("--since", type=since_moment, metavar="WHEN", help="where the window "
                   "begins: live, how far back (1d, 12h) or a local date (2026-11-01T08:00; "
                   "default 1d); a trace, a time since its start (40d) or a date in its "
                   "zone (default: its first submission)")
    p.add_argument("--until", type=since_moment, metavar="WHEN", help="where it ends, "
                   "read as --since (default: now; a trace, a day after --since)")
    p.add_argument("--span", type=duration(60), default=6 * 3600, metavar="DURATION",
                   help="each replay's window: the state is rebuilt at its start (default "
                   "6h)")
    p.add_argument("--top", type=count(1), default=10, help="the jobs furthest off shown "
                   "(default 10)")
    p.add_argument("--jobs-out", metavar="FILE", help="every judged job, its real and "
                   "simulated start (.csv, or .parquet with pyarrow)")
    p.add_argument("--store", metavar="DB", help="the store advisor recommend records to: "
                   "a configuration its runs saw that is not today's is named (default: "
                   "its default store, where there is one)")
    _slurm_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run_check(args, out) -> int:
    from advisor.adapters.files import write_table
    from advisor.views.sitecheck import sitecheck_view
    from advisor.whatif.sitecheck import check_site
    if args.jobs_out:
        check_output(args.jobs_out)
    if args.trace and not args.conf:
        raise BadInput("a trace is checked against the configuration that ran it: give "
                       "its slurm.conf with --conf FILE (its NodeName and PartitionName "
                       "lines and scheduling keys)")
    inputs = _trace_inputs(args) if args.trace else _live_inputs(args)
    compile_notice(("slurm",), [])
    with progress("replaying") as on_progress:
        check = check_site(**inputs, span=args.span, on_progress=on_progress)
    if args.jobs_out:
        write_table(check.table, args.jobs_out)
    doc = check.as_dict(args.top)
    if args.json:
        emit_json(doc)
    else:
        out.print(sitecheck_view(doc))
    return EXIT_OK


def _trace_inputs(args) -> dict:
    from advisor.adapters.slurm_conf import read_slurm_conf
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.model import Accounting
    from advisor.units import parse_duration, parse_moment
    from advisor.whatif.past_state import trace_job_log
    from advisor.whatif.trace_accounts import with_accounts
    cluster, config = read_slurm_conf(args.conf)
    workload = read_swf(resolve_trace(args.trace))
    log = trace_job_log(workload)
    t0 = workload.header.unix_start_time or 0
    first = int(log.jobs["submit"].min())
    since = t0 + parse_moment(args.since, workload.header) if args.since else first
    until = t0 + parse_moment(args.until, workload.header) if args.until else \
        since + parse_duration("1d")
    if until <= since:
        raise BadInput("--until must come after --since")
    accounting = Accounting()
    if config.priority_weight_fairshare > 0:
        accounting = with_accounts(workload).accounts or Accounting()
        log = replace(log, notes=log.notes + (
            "fair share between the trace's groups, each an account of equal shares",))
    return dict(log=log, cluster=cluster, config=config, accounting=accounting,
                since=since, until=until)


def _live_inputs(args) -> dict:
    from advisor import cli_common
    from advisor.adapters.slurm_conf import read_slurm_conf
    from advisor.adapters.sources import SourceOptions, read_source
    from advisor.cli_common import _moment
    now = int(time.time())
    since = _moment(args.since or "1d", now, ago=True)
    until = _moment(args.until, now, ago=True) if args.until else now
    if until <= since:
        raise BadInput("--until must come after --since")
    cluster = read_source("slurm", SourceOptions(commands=cli_common._commands(args)))
    snap = cluster.snapshot()
    # (read to now: the jobs submitted after the window that met its jobs arrive too)
    log = _recorded_configurations(cluster.job_log(since, now), snap, args.store)
    machine, config = snap.machine, snap.config
    if args.conf:
        machine, config = read_slurm_conf(args.conf, name=machine.name)
        config = config.measured_as(snap.config)
    return dict(log=log, cluster=machine, config=config, accounting=snap.accounting,
                since=since, until=until, decay_ran=snap.accounting.decay_ran,
                usage_known_at=snap.time)


CHECK = Command(
    "check", "how faithfully the simulation reproduces this site: its own past replayed "
    "from the state rebuilt at a moment, each job's simulated start against its real one",
    "advisor check --since 1d --span 6h", check_arguments, run_check)


def _recorded_configurations(log, snap, path: str | None):
    """``log`` with the configurations recommend's runs saw, where a store is
    (``whatif.advise.with_configurations``); a store named must exist."""
    from advisor.adapters.store import Store, default_path
    from advisor.whatif.advise import with_configurations
    if path is None and not default_path().is_file():
        return log
    store = Store(path, create=False)
    try:
        return with_configurations(log, snap, store.configurations, "slurm")
    finally:
        store.close()


def forecast_arguments(p: argparse.ArgumentParser) -> None:
    _source_options(p)
    p.add_argument("--job", type=count(1), action="append", metavar="ID",
                   help="this pending job alone (repeatable)")
    p.add_argument("--user", action="append", metavar="NAME",
                   help="this user's pending jobs alone (repeatable)")
    p.add_argument("--samples", type=count(1), default=20, help="sampled futures "
                   "(default 20)")
    p.add_argument("--horizon", type=duration(60, 30 * 86400), default=3 * 86400,
                   metavar="DURATION", help="how far ahead (default 3d; a job not started "
                   "by then is 'later')")
    p.add_argument("--history-weeks", type=count(1, 104), default=4, metavar="W",
                   help="weeks of finished jobs the runtimes and arrivals are drawn from "
                   "(default 4)")
    p.add_argument("--seed", type=count(0), default=0, help="seed of every random draw")
    p.add_argument("--top", type=count(0), default=20, help="jobs shown, soonest first "
                   "(default 20; --json: all)")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def run_forecast(args, out) -> int:
    from advisor.cli_common import _source
    from advisor.views.forecast import forecast_view
    from advisor.views.report import snapshot_clock
    from advisor.whatif.advise import TraceMoment
    from advisor.whatif.forecast import forecast
    source = _source(args)
    compile_notice(("slurm", "textbook") if isinstance(source, TraceMoment) else ("slurm",),
                   [source.policy] if isinstance(source, TraceMoment) else [])
    snap = source.snapshot()
    wanted = _wanted(snap, args.job, args.user)
    history = source.history(snap, args.history_weeks)
    with progress("sampling futures") as on_progress:
        done = forecast(snap, history, args.samples, args.horizon, args.seed, wanted,
                        on_progress)
    epoch, zone = snapshot_clock(snap)
    doc = {**done.as_dict(), "source": args.source, "zone": zone, "clock_epoch": epoch}
    if args.json:
        emit_json(doc)
    else:
        out.print(forecast_view(doc, args.top))
    return EXIT_OK


def _wanted(snap, jobs: list[int] | None, users: list[str] | None) -> set[int] | None:
    """The pending jobs asked for (None: all); BadInput naming one that is not pending."""
    if not jobs and not users:
        return None
    pending = {j.job_id: j for j in snap.pending}
    missing = [i for i in jobs or () if i not in pending]
    if missing:
        raise BadInput(f"job {missing[0]} is not pending now (squeue shows it otherwise, "
                       "or not at all): a forecast is of pending jobs")
    chosen = set(jobs or ()) | {i for i, j in pending.items() if users and j.user in users}
    if not chosen:
        raise BadInput(f"user {users[0]} has no pending job now" if users else
                       "no pending job asked for")
    return chosen


FORECAST = Command(
    "forecast", "when each pending job will start: a median and the interval of 8 in 10 "
    "sampled futures from the exact state, beside Slurm's own estimate (squeue --start)",
    "advisor forecast --user alice", forecast_arguments, run_forecast, uses_plugins=True)
