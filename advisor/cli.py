"""``advisor``: the command line. The only module that prints or exits.

Exit codes:
  0  success
  1  internal error (a bug: please report it with the command line)
  2  bad input: a malformed trace, an unknown policy or option value, a Slurm document
     in an unknown schema or malformed
  3  a source is unavailable: a file that cannot be read or written, a Slurm command
     that fails, times out or is missing (slurmctld or slurmdbd down)
  4  an optional extra is missing (the message names the pip command)
  5  another run holds the lock (recommend)
  6  recommend --apply failed and everything it changed was put back
  7  recommend --apply failed and so did the rollback (the message says what to restore)
  10 recommend: a change is recommended (0: keep the configuration in effect)
  130 interrupted
"""
from __future__ import annotations

import argparse
import json
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from advisor.errors import AdvisorError, BadInput, MissingExtra

EXIT_OK, EXIT_BUG, EXIT_CHANGE, EXIT_INTERRUPTED = 0, 1, 10, 130


def _trace_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", nargs="?", help="an SWF trace (.swf or .swf.gz), or the name of a "
                   "bundled one (KTH-SP2, CTC-SP2, SDSC-SP2, SDSC-BLUE); default: KTH-SP2")
    p.add_argument("--procs", type=int, help="machine size (default: the header's MaxProcs)")
    p.add_argument("--drop-overruns", action="store_true",
                   help="drop jobs that ran longer than they requested (seed 002's filter)")
    p.add_argument("--drop-oversize", action="store_true",
                   help="drop jobs wider than the machine (seed 002's filter)")
    p.add_argument("--keep-invalid", action="store_true",
                   help="keep jobs with no processors or a negative runtime (they fail)")
    p.add_argument("--estimates", default="user",
                   help="runtime estimates: user (the request), exact, or f=N (seed 001's "
                        "badness factor: uniform in [r, N*r])")
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _slurm_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--slurm-bin", metavar="DIR", help="directory of Slurm's commands "
                   "(default: PATH)")
    p.add_argument("--slurm-timeout", type=float, default=30.0, metavar="S",
                   help="seconds each Slurm command may take")


def _source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--from", dest="source", default="slurm", metavar="SOURCE",
                   help="slurm (pyslurm when installed, else the commands), slurm:cli, "
                        "slurm:pyslurm, or swf:TRACE@TIME with TIME in seconds since the "
                        "trace's start (10d, 36h) or a date (1996-10-01T12:00)")
    p.add_argument("--policy", metavar="SPEC", help="swf sources: the policy the trace is "
                   "replayed under, in effect at the moment (default EASY-FCFS-FCFS)")
    _slurm_options(p)


def _commands(args):
    from adapters.slurm_cli import SlurmCommands
    if args.slurm_timeout <= 0:
        raise BadInput("--slurm-timeout must be a positive number of seconds")
    return SlurmCommands(bin_dir=args.slurm_bin, timeout=args.slurm_timeout)


def _recommend_options(p: argparse.ArgumentParser) -> None:
    """How candidates are simulated and judged: recommend, and replay --online."""
    p.add_argument("--candidate", action="append", metavar="SPEC", help="simulate this "
                   "policy (repeatable; default: the grid of 'advisor policies')")
    p.add_argument("--objective", default="avg_bsld",
                   help="avg_bsld (default), avg_wait, p95_wait or utilization")
    p.add_argument("--samples", type=int, default=8, help="sampled futures (default 8)")
    p.add_argument("--horizon", default="1d", help="simulated future (default 1d)")
    p.add_argument("--risk", type=float, default=1.5, help="MaxWait and p95 wait may grow "
                   "to this factor of the configuration in effect's (or --reference's), and "
                   "no job's wait past its longest wait by more (default 1.5)")
    p.add_argument("--min-gain", type=float, default=0.05, help="relative gain needed "
                   "(default 0.05)")
    p.add_argument("--min-wins", type=float, default=0.75, help="share of samples the gain "
                   "must hold in (default 0.75)")
    p.add_argument("--trigger", type=float, metavar="T", help="seed 000: simulate only when "
                   "the queue's bounded slowdown exceeds T")
    p.add_argument("--history-weeks", type=int, default=4, help="weeks of finished jobs "
                   "that futures are drawn from (default 4)")
    from advisor.plugins.contract import LONG_QUEUE
    p.add_argument("--conservative-up-to", type=int, default=LONG_QUEUE, metavar="N",
                   help="the default grid simulates conservative backfilling only while at "
                   f"most N jobs are pending (default {LONG_QUEUE}: beyond, seconds "
                   "per simulation)")
    p.add_argument("--executor", default="auto", choices=["auto", "serial", "process",
                                                          "ray"],
                   help="where simulations run (auto: Ray if installed, else processes)")
    p.add_argument("--workers", type=int, help="local workers (default: all cores)")
    p.add_argument("--ray-address", metavar="ADDR", help="an existing Ray cluster "
                   "(default: an embedded local one)")


def _settings(args, **changes):
    from advisor.plugins.spec import parse_policy
    from advisor.units import parse_duration
    from advisor.whatif.recommend import Settings
    policies = tuple(parse_policy(s) for s in args.candidate) if args.candidate else None
    settings = Settings(objective=args.objective, samples=args.samples,
                        horizon=parse_duration(args.horizon), seed=args.seed, risk=args.risk,
                        min_gain=args.min_gain, min_wins=args.min_wins, trigger=args.trigger,
                        history_weeks=args.history_weeks,
                        conservative_up_to=args.conservative_up_to, policies=policies,
                        **changes)
    settings.check()
    return settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advisor", description=(
        "Which Slurm scheduling configuration serves your cluster best, proven by "
        "simulation."))
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("replay", help="simulate a trace under one or many policies")
    _trace_options(p)
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="BACKFILL[:PRIMARY[:SECONDARY]][:key=value], e.g. easy:SPF:SPF, "
                        "easy:FCFS:FCFS:T=20h, conservative:FCFS, or family/name[:key=value] "
                        "parts joined by + (repeatable; see 'advisor policies')")
    p.add_argument("--jobs-out", metavar="FILE",
                   help="per-job results, CSV or .parquet (one file per policy: the "
                        "policy's label is added to the name when there are several)")
    p.add_argument("--swf-out", metavar="FILE", help="the simulated schedule as an SWF log")
    p.add_argument("--pass-per-event", action="store_true",
                   help="one scheduling pass after every event, instead of one after all "
                        "completions and arrivals of the same second")
    p.add_argument("--online", metavar="EVERY", help="seed 000's online replay: run the "
                   "advisor every EVERY (1d, 1w) on what the simulated system knows then, "
                   "follow its recommendations, and compare with --policy kept throughout "
                   "(default EASY-FCFS-FCFS) in the engine's slurm mode")
    p.add_argument("--reference", metavar="SPEC", help="--online: risk limits against this "
                   "policy (default: the --policy baseline)")
    _recommend_options(p)

    p = sub.add_parser("tune", help="seed 002's train/test study over resampled weeks")
    _trace_options(p)
    p.add_argument("--weeks", type=int, default=250, help="weeks resampled per half")
    p.add_argument("--threshold", action="append", default=[], metavar="T",
                   help="also evaluate the 49 policies with this queue threshold (e.g. 20h)")
    p.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    p.add_argument("--plot", metavar="PNG", help="write seed 002 Fig. 8-style plot")

    p = sub.add_parser("snapshot", help="the state the advisor sees: a live Slurm cluster, "
                       "or a trace replayed up to a moment")
    _source_options(p)
    p.add_argument("--top", type=int, default=10, help="pending jobs shown")
    p.add_argument("--out", metavar="FILE", help="also write the snapshot as JSON")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")

    p = sub.add_parser("recommend", help="simulate candidate configurations from a snapshot "
                       "and recommend the change that wins (exit 10) or none (exit 0)")
    _source_options(p)
    p.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    _recommend_options(p)
    p.add_argument("--store", metavar="DB", help="SQLite history (default: "
                   "$XDG_STATE_HOME/slurm-policy-advisor/advisor.sqlite)")
    p.add_argument("--no-store", action="store_true", help="do not record this run")
    p.add_argument("--lock", metavar="FILE", help="lock file that keeps two runs from "
                   "overlapping (default: the store's path with .lock)")
    p.add_argument("--write", metavar="DIR", help="write advisor.conf, job_submit.lua and "
                   "commands.sh of the recommended change into DIR (atomically)")
    p.add_argument("--apply", action="store_true", help="live sources: enact the change "
                   "(include fragment and job_submit.lua written atomically with a .bak, "
                   "scontrol reconfigure, checked with scontrol show config, rolled back on "
                   "failure)")
    p.add_argument("--include", metavar="FILE", help="--apply: the fragment that slurm.conf "
                   "includes last (default: advisor.conf beside slurm.conf)")
    p.add_argument("--json", action="store_true", help="print one JSON document")

    p = sub.add_parser("report", help="the admin's view: the latest recommendation in full "
                       "(cluster, candidates, decision, change) and the past ones")
    p.add_argument("--store", metavar="DB", help="SQLite history (default as recommend)")
    p.add_argument("--last", type=int, default=20, help="runs listed")
    p.add_argument("--plot", metavar="PNG", help="also write a PNG: the latest candidates "
                   "(objective against max wait) and the queue's slowdown over past runs")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("history", help="finished jobs from slurmdbd (sacct) as an SWF trace")
    p.add_argument("--from", dest="source", default="slurm", choices=["slurm"],
                   help="where the history comes from")
    p.add_argument("--since", default="30d", help="how far back: 30d, 12h, or a date "
                   "(2026-11-01)")
    p.add_argument("--until", help="end of the window (a date; default: now)")
    p.add_argument("--out", required=True, metavar="FILE", help="the SWF file (.swf or "
                   ".swf.gz)")
    p.add_argument("--procs", type=int, help="the machine's CPUs for the SWF header "
                   "(default: the widest job; sacct does not know the machine)")
    _slurm_options(p)
    p.add_argument("--json", action="store_true", help="print a summary as JSON")

    p = sub.add_parser("policies", help="list installed policy plugins and their parameters")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("bench", help="print performance figures")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    p.add_argument("--skip-tune", action="store_true", help="skip the tune figure (~10 s)")
    p.add_argument("--json", action="store_true")
    return parser


def _emit_json(doc: dict) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, default=list) + "\n")


def _estimates(text: str):
    from advisor.engine import Estimates
    if text in ("user", "exact"):
        return Estimates(text)
    if text.startswith("f="):
        try:
            return Estimates("badness", float(text[2:]))
        except ValueError:
            pass
    raise BadInput(f"--estimates {text}: use user, exact or f=N (N >= 1)")


def _load(args):
    from adapters.swf import read_swf, resolve_trace
    from advisor.cleaning import CleaningOptions
    cleaning = CleaningOptions(drop_invalid=not args.keep_invalid,
                               drop_oversize=args.drop_oversize,
                               drop_overruns=args.drop_overruns)
    if args.procs is not None and args.procs <= 0:
        raise BadInput("--procs must be a positive number of processors")
    return read_swf(resolve_trace(args.trace), procs=args.procs, cleaning=cleaning)


def _per_policy_path(path: str, label: str, several: bool) -> Path:
    path = Path(path)
    if not several:
        return path
    slug = label.replace(" ", "_").replace("=", "")
    suffixes = "".join(path.suffixes)
    return path.with_name(path.name[: len(path.name) - len(suffixes)] + f".{slug}{suffixes}")


def cmd_replay(args, out: Console) -> int:
    from adapters.files import write_table
    from adapters.swf import write_swf
    from advisor.engine import EngineConfig
    from advisor.plugins.spec import parse_policy
    from advisor.studies.replay import DEFAULT_POLICIES, replay, simulated_workload
    from advisor.views.report import replay_dict, replay_table
    if args.online:
        return _online(args, out)
    policies = [parse_policy(s) for s in (args.policy or DEFAULT_POLICIES)]
    estimates = _estimates(args.estimates)
    workload = _load(args)
    results = replay(workload, policies, replace(estimates, seed=args.seed),
                     EngineConfig(batch=not args.pass_per_event))
    several = len(results) > 1
    for r in results:
        if args.jobs_out:
            write_table(r.table, _per_policy_path(args.jobs_out, r.policy.label, several))
        if args.swf_out:
            write_swf(simulated_workload(workload, r),
                      _per_policy_path(args.swf_out, r.policy.label, several))
    if args.json:
        _emit_json(replay_dict(workload, results, estimates.label))
    else:
        out.print(replay_table(workload, results))
    return EXIT_OK


def _online(args, out: Console) -> int:
    from advisor.plugins.spec import BASELINE, parse_policy
    from advisor.units import parse_duration
    from advisor.views.report import online_table
    from advisor.whatif.online import online_replay
    from advisor.whatif.runner import make_executor
    if args.policy and len(args.policy) > 1:
        raise BadInput("--online compares with one baseline: give --policy once")
    baseline = parse_policy(args.policy[0] if args.policy else BASELINE)
    every = parse_duration(args.online)
    if every < 60:
        raise BadInput("--online EVERY must be at least 60 s")
    settings = _settings(args, reference=parse_policy(args.reference) if args.reference
                         else baseline)
    workload = _load(args)
    executor = make_executor(args.workers, args.executor, args.ray_address)
    try:
        with _progress("decision points") as on_progress:
            result = online_replay(workload, every, settings, executor, baseline,
                                   replace(_estimates(args.estimates), seed=args.seed),
                                   on_progress)
    finally:
        executor.close()
    if args.json:
        from advisor.views.report import workload_dict
        _emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(online_table(workload, result))
    return EXIT_OK


def cmd_tune(args, out: Console) -> int:
    from advisor.units import parse_duration
    from advisor.views.report import tune_table
    from advisor.whatif.runner import make_executor
    from advisor.studies.tune import tune
    thresholds = tuple(parse_duration(t) for t in args.threshold)
    estimates = replace(_estimates(args.estimates), seed=args.seed)
    workload = _load(args)
    if args.plot:
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:
            raise MissingExtra("matplotlib", "plot")
    with _progress("simulating weeks") as on_progress:
        result = tune(workload, weeks=args.weeks, seed=args.seed, thresholds=thresholds,
                      estimates=estimates, executor=make_executor(args.workers, "process"),
                      on_progress=on_progress)
    if args.plot:
        from adapters.files import atomic_write
        from advisor.views.plots import tune_png
        atomic_write(args.plot, tune_png(result, title=Path(workload.source).name))
    if args.json:
        from advisor.views.report import workload_dict
        _emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(tune_table(workload, result))
    return EXIT_OK


def _snapshot(args):
    """The snapshot ``--from`` names, and its source: a live cluster read, or a trace
    replayed to the moment under ``--policy`` (parsed first, before any reading)."""
    from adapters.sources import LiveCluster, SourceOptions, open_source
    from advisor.plugins.spec import BASELINE, parse_policy
    from advisor.whatif.snapshot import parse_moment, trace_snapshot
    policy = parse_policy(args.policy or BASELINE)
    source = open_source(args.source, SourceOptions(commands=_commands(args)))
    if isinstance(source, LiveCluster):
        return source.snapshot, source
    moment = parse_moment(source.moment, source.workload.header)
    return trace_snapshot(source.workload, policy, moment), source


def _history(snap, source, weeks: int):
    """The jobs finished over the ``weeks`` before the snapshot: sacct's, or the trace's."""
    from adapters.sources import LiveCluster
    from advisor.model import SECONDS_PER_WEEK
    from advisor.whatif.snapshot import trace_history
    if isinstance(source, LiveCluster):
        return source.history(snap.time - weeks * SECONDS_PER_WEEK)
    return trace_history(source.workload, snap, weeks)


def cmd_snapshot(args, out: Console) -> int:
    from advisor.views.report import snapshot_view
    snap, _ = _snapshot(args)
    doc = snap.to_dict()
    if args.out:
        from adapters.files import atomic_write
        atomic_write(args.out, json.dumps(doc, indent=1) + "\n")
    if args.json:
        _emit_json(doc)
    else:
        out.print(snapshot_view(snap, top=args.top))
    return EXIT_OK


def cmd_history(args, out: Console) -> int:
    import time

    from adapters.slurm_cli import history
    from adapters.swf import write_swf
    from advisor.views.report import workload_caption, workload_dict
    now = int(time.time())
    since = _moment(args.since, now, ago=True)
    until = _moment(args.until, now) if args.until else None
    workload = history(since, until, _commands(args), args.procs)
    write_swf(workload, args.out)
    if args.json:
        _emit_json({**workload_dict(workload), "out": args.out, "since": since,
                    "until": until})
    else:
        out.print(workload_caption(workload))
        out.print(f"written to {args.out}")
    return EXIT_OK


def _moment(text: str, now: int, ago: bool = False) -> int:
    """An epoch from a date (2026-11-01[T12:00]) or, with ``ago``, a duration back (30d)."""
    from datetime import datetime

    from advisor.units import parse_duration
    try:
        return int(datetime.fromisoformat(text).timestamp())
    except ValueError:
        if ago:
            return now - parse_duration(text)
        raise BadInput(f"'{text}' is not a date; write e.g. 2026-11-01T12:00") from None


def cmd_recommend(args, out: Console) -> int:
    from adapters.store import Store, default_path, run_lock
    from advisor.views.advice import cluster_dict, recommendation_view
    from advisor.whatif.recommend import recommend
    from advisor.whatif.runner import make_executor
    from advisor.whatif.slurmconf import change_for
    settings = _settings(args)
    if args.apply and not args.source.startswith("slurm"):
        raise BadInput("--apply needs a live cluster (--from slurm); a trace has no "
                       "slurmctld to reconfigure")
    store = None if args.no_store else Store(args.store)
    lock = Path(args.lock) if args.lock else (store.path if store else
                                              default_path()).with_suffix(".lock")
    with run_lock(lock):
        snap, source = _snapshot(args)
        history = _history(snap, source, settings.history_weeks)
        previous = store.last_recommended(args.source) if store else None
        executor = make_executor(args.workers, args.executor, args.ray_address)
        try:
            with _progress("simulating") as on_progress:
                rec = recommend(snap, history, settings, executor, previous, on_progress)
        finally:
            executor.close()
        chosen = rec.candidates[rec.chosen]
        change = change_for(chosen, snap) if rec.change else None
        code = EXIT_CHANGE if rec.change else EXIT_OK
        doc = {**rec.as_dict(), "source": args.source, "cluster": cluster_dict(snap),
               "change_detail": change.as_dict() if change else None}
        if args.write and change is not None:
            _write_change(Path(args.write), change)
        try:
            if args.apply and change is not None:
                from adapters.slurm_apply import apply_change
                doc["applied"] = apply_change(change, snap, _commands(args), Path(
                    args.include) if args.include else None).as_dict()
        except AdvisorError as e:
            doc["applied"] = {"error": str(e)}
            raise
        finally:
            if store:
                store.record(doc, args.source, code)
                store.close()
    if args.json:
        _emit_json(doc)
    else:
        out.print(recommendation_view(doc))
    return code


def _write_change(directory: Path, change) -> None:
    from adapters.files import atomic_write
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write(directory / "advisor.conf", change.fragment)
    if change.script:
        atomic_write(directory / "job_submit.lua", change.script)
    atomic_write(directory / "commands.sh", "#!/bin/sh\nset -e\n"
                 + "".join(c + "\n" for c in change.commands))


@contextmanager
def _progress(what: str):
    """A progress bar on stderr (when it is a terminal); yields on_progress(done, total)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    err = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as progress:
        task = progress.add_task(what, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


def cmd_report(args, out: Console) -> int:
    from advisor.views.advice import report_view
    from adapters.store import Store
    store = Store(args.store)
    runs, last = store.runs(args.last), store.last_doc()
    docs = store.docs() if args.plot else []
    store.close()
    if args.plot:
        from adapters.files import atomic_write
        from advisor.views.plots import report_png
        if last is None:
            raise BadInput(f"{store.path} holds no run to plot: run advisor recommend first")
        atomic_write(args.plot, report_png(last, docs))
    if args.json:
        _emit_json({"store": str(store.path), "latest": last, "runs": runs})
    else:
        out.print(report_view(last, runs))
    return EXIT_OK


def cmd_policies(args, out: Console) -> int:
    from advisor.views.report import policies_dict, policies_table
    if args.json:
        _emit_json(policies_dict())
    else:
        out.print(policies_table())
    return EXIT_OK


def cmd_bench(args, out: Console) -> int:
    from advisor.bench import bench, bench_table
    figures = bench(repeat=args.repeat, tune=not args.skip_tune)
    if args.json:
        _emit_json(figures)
    else:
        out.print(bench_table(figures))
    return EXIT_OK


COMMANDS = {"replay": cmd_replay, "tune": cmd_tune, "snapshot": cmd_snapshot,
            "recommend": cmd_recommend, "report": cmd_report,
            "history": cmd_history, "policies": cmd_policies, "bench": cmd_bench}


#: the commands that use policy plugins: they load (and check) every plugin before any work
USES_PLUGINS = ("replay", "tune", "snapshot", "recommend", "policies")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Console()
    if not out.is_terminal:  # a pipe or a file: do not squeeze tables into 80 columns
        out = Console(width=140)
    try:
        if args.command in USES_PLUGINS:
            from advisor.plugins.registry import registry
            registry()
        return COMMANDS[args.command](args, out)
    except AdvisorError as e:
        message = " ".join(str(e).split())  # one line, whatever the message holds
        sys.stderr.write(f"advisor: error: {message}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("advisor: interrupted\n")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
