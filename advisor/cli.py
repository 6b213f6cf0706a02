"""``advisor``: the command line. The only module that prints or exits.

Exit codes:
  0  success
  1  internal error (a bug: please report it with the command line)
  2  bad input: a malformed trace, an unknown policy or option value
  3  a source is unavailable: a file that cannot be read or written
  4  an optional extra is missing (the message names the pip command)
  130 interrupted
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from advisor.errors import AdvisorError, BadInput, MissingExtra

EXIT_OK, EXIT_BUG, EXIT_INTERRUPTED = 0, 1, 130


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="advisor", description=(
        "Which Slurm scheduling configuration serves your cluster best, proven by "
        "simulation."))
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("replay", help="simulate a trace under one or many policies")
    _trace_options(p)
    p.add_argument("--policy", action="append", metavar="SPEC",
                   help="BACKFILL[:PRIMARY[:SECONDARY]][:key=value], e.g. easy:SPF:SPF, "
                        "easy:FCFS:FCFS:T=20h, conservative:FCFS (repeatable; see "
                        "'advisor policies')")
    p.add_argument("--jobs-out", metavar="FILE",
                   help="per-job results, CSV or .parquet (one file per policy: the "
                        "policy's label is added to the name when there are several)")
    p.add_argument("--swf-out", metavar="FILE", help="the simulated schedule as an SWF log")
    p.add_argument("--pass-per-event", action="store_true",
                   help="one scheduling pass after every event, instead of one after all "
                        "completions and arrivals of the same second")

    p = sub.add_parser("tune", help="seed 002's train/test study over resampled weeks")
    _trace_options(p)
    p.add_argument("--weeks", type=int, default=250, help="weeks resampled per half")
    p.add_argument("--threshold", action="append", default=[], metavar="T",
                   help="also evaluate the 49 policies with this queue threshold (e.g. 20h)")
    p.add_argument("--workers", type=int, help="local worker processes (default: all cores)")
    p.add_argument("--plot", metavar="PNG", help="write seed 002 Fig. 8-style plot")

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
    from adapters.swf import read_swf
    from advisor.cleaning import CleaningOptions
    from advisor.replay import resolve_trace
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
    from advisor.policy import parse_policy
    from advisor.replay import DEFAULT_POLICIES, replay, simulated_workload
    from advisor.report import replay_dict, replay_table
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


def cmd_tune(args, out: Console) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from advisor.plugins import parse_duration
    from advisor.report import tune_table
    from advisor.runner import make_executor
    from advisor.tune import tune
    thresholds = tuple(parse_duration(t) for t in args.threshold)
    estimates = replace(_estimates(args.estimates), seed=args.seed)
    workload = _load(args)
    if args.plot:
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:
            raise MissingExtra("matplotlib", "plot")
    err = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                  transient=True, disable=not err.is_terminal) as progress:
        task = progress.add_task("simulating weeks", total=None)
        result = tune(workload, weeks=args.weeks, seed=args.seed, thresholds=thresholds,
                      estimates=estimates, executor=make_executor(args.workers),
                      on_progress=lambda d, t: progress.update(task, completed=d, total=t))
    if args.plot:
        from adapters.files import atomic_write
        from advisor.plots import tune_png
        atomic_write(args.plot, tune_png(result, title=Path(workload.source).name))
    if args.json:
        from advisor.report import workload_dict
        _emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(tune_table(workload, result))
    return EXIT_OK


def cmd_policies(args, out: Console) -> int:
    from advisor.report import policies_dict, policies_table
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


COMMANDS = {"replay": cmd_replay, "tune": cmd_tune, "policies": cmd_policies,
            "bench": cmd_bench}


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    out = Console()
    if not out.is_terminal:  # a pipe or a file: do not squeeze tables into 80 columns
        out = Console(width=140)
    try:
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
