"""``advisor``: the command line. The only module that prints or exits.

Exit codes:
  0  success
  1  internal error (a bug: please report it with the command line)
  2  bad input: a malformed or empty trace, an unknown policy or option value, a bad
     configuration file, a Slurm document in an unknown schema or malformed
  3  a source is unavailable: a file that cannot be read or written, a Slurm command
     that fails, times out or is missing (slurmctld or slurmdbd down)
  4  an optional extra is missing (the message names the pip command)
  5  another run holds the lock (recommend)
  6  recommend --apply failed and everything it changed was put back
  7  recommend --apply failed and so did the rollback (the message says what to restore)
  10 recommend: a change is recommended (0: keep the configuration in effect)
  130 interrupted (SIGINT, Ctrl-C); 143 terminated (SIGTERM)
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import sys
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from advisor import cli_args, interrupts
from advisor import cli_common
from advisor.cli_common import (EXIT_OK, _check_output, _compile_notice, _emit_json, _fd2_muted,
                                _estimates, _exit_at_once, _moment, _progress, _source,
                                _trace_input)
from advisor.cli_plugins import Command, commands
from advisor.errors import AdvisorError, BadInput

if TYPE_CHECKING:
    from rich.console import Console

EXIT_BUG, EXIT_CHANGE = 1, 10


def _settings(args, **changes):
    """The Settings the options give (``cli_args._recommend_options`` made one option per
    setting): specs parsed, then ``changes``."""
    from dataclasses import fields

    from advisor.plugins.spec import parse_policy
    from advisor.settings import Settings
    given = {}
    for f in fields(Settings):
        if not f.metadata or not hasattr(args, f.name):
            continue
        value = getattr(args, f.name)
        if f.metadata["kind"] == "spec" and value:
            value = parse_policy(value)
        elif f.metadata["kind"] == "specs":
            value = tuple(parse_policy(s) for s in value) if value else None
        given[f.name] = value
    settings = Settings(**{**given, **changes})
    if hasattr(args, "workers"):
        from advisor.whatif.runner import check_workers
        check_workers(args.workers, args.ray_address)
    return settings


def _per_policy_path(path: str, label: str, several: bool) -> Path:
    path = Path(path)
    if not several:
        return path
    slug = label.replace(" ", "_").replace("=", "")
    suffixes = "".join(path.suffixes)
    return path.with_name(path.name[: len(path.name) - len(suffixes)] + f".{slug}{suffixes}")


def cmd_replay(args, out: Console) -> int:
    from advisor.adapters.files import write_table
    from advisor.adapters.swf import write_swf
    from advisor.cli_args import DEFAULT_REPLAY
    from advisor.engine import EngineConfig
    from advisor.plugins.spec import parse_policy
    from advisor.studies.replay import replay, simulated_workload
    from advisor.views.report import replay_dict, replay_table
    if args.online:
        return _online(args, out)
    if args.fair_share:
        raise BadInput("--fair-share is played by the slurm mode of --online: add --online "
                       "EVERY")
    if args.against_static or args.plot:
        raise BadInput("--against-static and --plot belong to --online EVERY")
    policies = [parse_policy(s) for s in (args.policy or DEFAULT_REPLAY)]
    estimates = _estimates(args.estimates)
    several = len(policies) > 1
    _check_suffix(args.jobs_out, "--jobs-out", (".csv", ".parquet"))
    _check_suffix(args.swf_out, "--swf-out", (".swf", ".swf.gz"))
    for p in policies:
        for path in (args.jobs_out, args.swf_out):
            if path:
                _check_output(_per_policy_path(path, p.label, several))
    workload, _ = _trace_input(args)
    _compile_notice(("textbook",), policies)    # the textbook engine and their families
    results = replay(workload, policies, replace(estimates, seed=args.seed),
                     EngineConfig(batch=not args.pass_per_event))
    for r in results:
        if args.jobs_out:
            write_table(r.table, _per_policy_path(args.jobs_out, r.policy.label, several))
        if args.swf_out:
            write_swf(simulated_workload(workload, r),
                      _per_policy_path(args.swf_out, r.policy.label, several))
    if args.json:
        _emit_json(replay_dict(workload, results, estimates.label))
    else:
        out.print(replay_table(workload, results, defaulted=not args.policy,
                               estimates=args.estimates))
    return EXIT_OK


def _check_suffix(path: str | None, option: str, suffixes: tuple[str, ...]) -> None:
    if path and not path.lower().endswith(suffixes):
        raise BadInput(f"{option} {path}: the file's name must end in "
                       f"{' or '.join(suffixes)}, which says its format")


def _online(args, out: Console) -> int:
    from advisor.plugins.spec import parse_policy
    from advisor.whatif.trace_accounts import baseline_spec
    from advisor.views.report import online_table
    from advisor.whatif.online import online_replay
    if args.policy and len(args.policy) > 1:
        raise BadInput("--online compares with one baseline: give --policy once")
    named = parse_policy(args.policy[0]) if args.policy else None
    every = args.online
    if args.plot:
        if not args.against_static:
            raise BadInput("--plot draws the --against-static benchmark: add --against-static")
        _check_output(args.plot, extra=("matplotlib", "plot"))
    estimates = replace(_estimates(args.estimates), seed=args.seed)
    workload, prior, *first = _trace_input(args, history=True, warm=args.against_static)
    # the default baseline: EASY-FCFS-FCFS, or with --fair-share the site's own priority
    baseline = named or parse_policy(baseline_spec(workload))
    # the risk limits against the baseline unless --reference names another policy
    settings = _settings(args, **({} if args.reference else {"reference": baseline}))
    if args.against_static:
        first = first[0]
        _compile_notice()
        return _against_static(args, out, workload, every, settings, baseline, estimates,
                               prior, first)
    _compile_notice()
    with _executing(args) as executor, _progress("decision points") as on_progress:
        result = online_replay(workload, every, settings, executor, baseline, estimates,
                               on_progress, prior)
    if args.json:
        from advisor.views.report import workload_dict
        _emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(online_table(workload, result))
    return EXIT_OK


def _against_static(args, out: Console, workload, every, settings, baseline, estimates,
                    prior, first) -> int:
    from advisor.views.hindsight import advice_bench_table
    from advisor.whatif.hindsight import advice_bench
    with _executing(args) as executor, _progress("runs") as on_progress:
        bench = advice_bench(workload, every, settings, executor, baseline, estimates,
                             lambda what, done, n: on_progress(done, n), prior=prior,
                             first=first)
    if args.plot:
        from advisor.adapters.files import atomic_write
        from advisor.views.hindsight import advice_bench_png
        atomic_write(args.plot, advice_bench_png(bench, Path(workload.source).name))
    if args.json:
        from advisor.views.report import workload_dict
        _emit_json({**workload_dict(workload), **bench.as_dict()})
    else:
        out.print(advice_bench_table(workload, bench))
    return EXIT_OK


def cmd_snapshot(args, out: Console) -> int:
    from advisor.views.report import snapshot_view
    from advisor.whatif.advise import TraceMoment
    if args.out:
        _check_output(args.out)
    source = _source(args)
    if isinstance(source, TraceMoment):     # replayed to the moment by the textbook engine
        _compile_notice(("textbook",), [source.policy])
    snap = source.snapshot()
    doc = snap.to_dict()
    if args.out:
        from advisor.adapters.files import atomic_write
        atomic_write(args.out, json.dumps(doc, indent=1) + "\n")
    if args.json:
        _emit_json(doc)
    else:
        out.print(snapshot_view(snap, top=args.top))
    return EXIT_OK


def cmd_history(args, out: Console) -> int:
    import time

    from advisor.adapters.slurm_cli import history
    from advisor.adapters.swf import write_swf
    from advisor.views.report import workload_caption, workload_dict
    _check_output(args.out)
    now = int(time.time())
    since = _moment(args.since, now, ago=True)
    until = _moment(args.until, now) if args.until else None
    workload = history(since, until, cli_common._commands(args), args.procs)
    write_swf(workload, args.out)
    if args.json:
        _emit_json({**workload_dict(workload), "out": args.out, "since": since,
                    "until": until})
    else:
        out.print(workload_caption(workload))
        out.print(f"written to {args.out}")
    return EXIT_OK


def cmd_recommend(args, out: Console) -> int:
    from advisor.adapters.store import Store, default_path, run_lock
    from advisor.views.advice import cluster_dict, recommendation_view
    from advisor.whatif.advise import advise
    from advisor.whatif.slurmconf import WRITTEN
    settings = _settings(args)
    if args.apply and not args.source.startswith("slurm"):
        raise BadInput("--apply needs a live cluster (--from slurm); a trace has no "
                       "slurmctld to reconfigure")
    if args.write:      # before any simulation: a destination that cannot take the set
        from advisor.adapters.files import check_folder_owned, check_writable
        check_writable(args.write, directory=True)
        check_folder_owned(args.write, WRITTEN)
    store = None if args.no_store else Store(args.store)
    lock = Path(args.lock) if args.lock else (store.path if store else
                                              default_path()).with_suffix(".lock")
    failure = None
    with run_lock(lock):
        source = _source(args)
        _compile_notice()
        source.snapshot()   # read (a trace: replayed) first: a bad moment fails before Ray
        with _executing(args) as executor, _progress("simulating") as on_progress:
            advice = advise(source, settings, executor, store, on_progress)
        change, snap = advice.change, advice.snapshot
        code = EXIT_CHANGE if change is not None else EXIT_OK
        doc = {**advice.as_dict(), "source": args.source, "cluster": cluster_dict(snap)}
        step = "written"
        try:
            if args.write and change is not None:
                from advisor.adapters.files import replace_folder
                replace_folder(args.write, change.files(), WRITTEN)
                doc["written"] = {"folder": str(Path(args.write).absolute()),
                                  "files": sorted(change.files())}
            step = "applied"
            if args.apply and change is not None:
                from advisor.adapters.slurm_apply import apply_change
                doc["applied"] = apply_change(
                    change, snap, cli_common._commands(args),
                    Path(args.include) if args.include else None).as_dict()
        except AdvisorError as e:   # the recommendation is still shown and recorded
            doc[step] = {"error": str(e)}
            failure = e
        finally:
            if store:
                with interrupts.deferred():   # the run is recorded whole, or not at all
                    store.record(doc, args.source, code)
                    store.close()
    if args.json:
        _emit_json(doc)
    else:
        out.print(recommendation_view(doc))
    if failure is not None:
        raise failure
    return code


@contextmanager
def _executing(args):
    """Where simulations run, for the block; stopped after it whatever signal comes
    meanwhile (a shutdown cut short would leave Ray's processes running; the signal is
    raised once they are gone). An embedded Ray keeps its files under the state folder."""
    from advisor.adapters.store import default_path
    from advisor.whatif.runner import make_executor
    executor = make_executor(args.workers, args.executor, args.ray_address,
                             ray_temp=default_path().parent / "ray",
                             ray_dashboard=args.ray_dashboard)
    # ours again, whatever Ray's start put in place (``interrupts.kept`` keeps them through
    # ray.init): SIGTERM unwinds and shuts Ray down
    interrupts.install()
    try:
        yield executor
    finally:
        # interrupted, Ray's core logs each task its shutdown cuts short to fd 2 from C++
        # ("Failed to push error to driver"): the run says one line, as on every executor
        with interrupts.deferred(), _fd2_muted(interrupts.received() is not None):
            executor.close()


def cmd_report(args, out: Console) -> int:
    from advisor.views.advice import report_view
    from advisor.adapters.store import Store
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    # a store named on the line must exist; the default one may not yet
    store = Store(args.store, create=not args.store)
    runs, last = store.runs(args.last), store.last_doc()
    docs = store.docs() if args.plot else []
    store.close()
    if args.plot:
        from advisor.adapters.files import atomic_write
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


def cmd_compile(args, out: Console) -> int:
    """Compile every kernel into the cache this user's runs will read (a no-op when it is
    compiled already)."""
    import time

    from advisor.engine.cache import cache_folder, require_cache
    from advisor.plugins.warmup import compiled
    require_cache()
    start = time.monotonic()
    was = compiled()
    if not was:
        from advisor.plugins.warmup import compile_all
        with _exit_at_once():
            compile_all()
    doc = {"cache": str(cache_folder()), "compiled_now": not was,
           "seconds": round(time.monotonic() - start, 1)}
    if args.json:
        _emit_json(doc)
    elif was:
        out.print(f"the simulator is compiled already, in {doc['cache']}", soft_wrap=True)
    else:
        out.print(f"compiled the simulator in {doc['seconds']:.0f} s, into {doc['cache']}",
                  soft_wrap=True)
    return EXIT_OK


def cmd_bench(args, out: Console) -> int:
    from advisor.bench import bench, bench_table
    options = args.options[1:] if args.options[:1] == ["--"] else args.options
    if args.family:
        return _family_bench(args.family, options)
    if options:
        raise BadInput(f"advisor bench takes no {' '.join(options)}: a family's benchmark "
                       "options follow --family FAMILY --")
    figures = bench(repeat=args.repeat, tune=not args.skip_tune, online=not args.skip_online,
                    compile=not args.skip_compile)
    if args.json:
        _emit_json(figures)
    else:
        out.print(bench_table(figures))
    return EXIT_OK


def _family_bench(family: str, options: list[str]) -> int:
    """A family's own benchmark, found through its plugins (``bench``)."""
    import importlib

    from advisor.plugins.registry import registry
    benches = {p.family: p.bench for p in registry().plugins.values() if p.bench is not None}
    if family not in benches:
        raise BadInput(f"no benchmark for family '{family}'; families with one: "
                       f"{', '.join(sorted(benches))}")
    module, _, function = benches[family].partition(":")
    getattr(importlib.import_module(module), function)(options)
    return EXIT_OK


# the built-in commands, registered as entry points (advisor.commands) as a family's are
REPLAY = Command(
    "replay", "simulate a trace under one or many policies",
    "advisor replay CTC-SP2 --policy easy:FCFS:FCFS --policy easy:SPF:SPF:T=20h",
    cli_args.replay_arguments, cmd_replay, uses_plugins=True)
SNAPSHOT = Command(
    "snapshot", "the state the advisor sees: a live Slurm cluster, or a trace replayed up "
    "to a moment", "advisor snapshot --from swf:KTH-SP2@1996-12-09T13:00",
    cli_args.snapshot_arguments, cmd_snapshot, uses_plugins=True)
RECOMMEND = Command(
    "recommend", "simulate candidate configurations from a snapshot and recommend the "
    "change that wins (exit 10) or none (exit 0)",
    "advisor recommend --from swf:KTH-SP2@150d --write change/",
    cli_args.recommend_arguments, cmd_recommend, uses_plugins=True)
REPORT = Command(
    "report", "the admin's view: the latest recommendation in full (cluster, candidates, "
    "decision, change) and the past ones", "advisor report --last 10 --plot report.png",
    cli_args.report_arguments, cmd_report)
HISTORY = Command(
    "history", "finished jobs from slurmdbd (sacct) as an SWF trace",
    "advisor history --since 30d --out site.swf.gz", cli_args.history_arguments,
    cmd_history)
POLICIES = Command(
    "policies", "list installed policy plugins and their parameters",
    "advisor policies --json", cli_args.policies_arguments, cmd_policies,
    uses_plugins=True)
COMPILE = Command(
    "compile", "compile the simulator for this machine and user now (a package install or "
    "a service's ExecStartPre runs it, so that the first recommendation does not wait for "
    "it)", "advisor compile", cli_args.compile_arguments, cmd_compile)
BENCH = Command(
    "bench", "print performance figures", "advisor bench --skip-tune",
    cli_args.bench_arguments, cmd_bench)


def main(argv: list[str] | None = None) -> int:
    """The command line's exit code; SIGINT and SIGTERM at any moment end it with 130 or
    143 and one line, after every ``finally`` (Ray's shutdown, the store, the lock) ran."""
    interrupts.reset()
    previous = interrupts.install()
    try:
        return _run(argv)
    except AdvisorError as e:
        return _fail(e)
    except KeyboardInterrupt:       # Ctrl-C at any point, the first imports included
        return _interrupted()
    except SystemExit as e:
        if e.code == signal.SIGTERM:
            # ray.init's own SIGTERM handler (sys.exit(15)), while Ray was starting
            interrupts.note(signal.SIGTERM)
        if interrupts.received() is None:
            raise
        return _interrupted()
    except BaseException:
        # the signal's exception raised inside a library's C code comes out as another
        # (numba's dispatcher: "SystemError: ... returned a result with an exception set")
        if interrupts.received() is None:
            raise
        return _interrupted()
    finally:
        interrupts.hold_all()        # the run is over: a signal from now on is only noted
        interrupts.restore(previous)


def _interrupted() -> int:
    signum = interrupts.received() or signal.SIGINT
    sys.stderr.write(f"advisor: {interrupts.WORDS[signum]}\n")
    return interrupts.EXIT_CODES[signum]


def entry() -> None:
    """The ``advisor`` program: ``main``, then an exit that no late signal and no library
    thread can turn into a crash. A signal that arrives after the work is done still ends
    the run as that signal's (the caller asked it to stop); the exit skips the
    interpreter's teardown, where Ray's core threads, still winding down after its
    shutdown, crashed it (a segmentation fault after "terminated"). Every file, the store
    and the lock are closed by then: the work's own ``finally`` blocks ran."""
    interrupts.install()
    try:
        code = main()
    except KeyboardInterrupt:       # before main's own handling began
        code = _interrupted()
    atexit._run_exitfuncs()         # what a normal exit runs first (logging's flush...)
    _flush()
    # read last, a few instructions before the exit: a signal after it comes to a process
    # that is ending
    if interrupts.received() is not None and code not in interrupts.EXIT_CODES.values():
        code = _interrupted()
        _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass                     # a closed pipe: nothing more to say


def _run(argv: list[str] | None) -> int:
    """Parse the line (argparse exits 0 for --help, 2 for a bad option), take the
    configuration files' defaults, run the command."""
    from rich.console import Console

    from advisor.adapters.config import load_defaults
    from advisor.cli_args import apply_config, build_parser
    every = commands()
    parser = build_parser(every)
    args = parser.parse_args(argv)
    apply_config(parser, argv, args, load_defaults(), every)
    # off a terminal (a file, a pipe, cron's mail) rich takes COLUMNS, else 80: the views
    # lay their tables out for the width they get and never cut a figure
    out = Console()
    command = next(c for c in every if c.name == args.command)
    if command.uses_plugins:
        from advisor.plugins.registry import registry
        registry()
    return command.run(args, out)


def _fail(e: AdvisorError) -> int:
    message = " ".join(str(e).split())  # one line, whatever the message holds
    sys.stderr.write(f"advisor: error: {message}\n")
    return e.exit_code


if __name__ == "__main__":
    entry()
