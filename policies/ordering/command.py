"""``advisor tune``: Lelong et al.'s tuning study over a trace (``study.tune``)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from advisor.cli_plugins import (EXIT_OK, Command, atomic_write, check_output, check_param,
                                 compile_notice, count, duration, emit_json, estimates,
                                 progress, trace_input, trace_options)


def _arguments(p) -> None:
    trace_options(p)
    p.add_argument("--weeks", type=count(1), default=250, help="weeks resampled per half "
                   "(default 250)")
    p.add_argument("--threshold", action="append", default=[], metavar="T",
                   type=duration(60), help="also evaluate the 49 policies with this queue "
                   "threshold, at least a minute, as threshold/queue's T (e.g. 20h; "
                   "repeatable)")
    p.add_argument("--workers", type=count(1), help="local worker processes (default: all "
                   "cores)")
    p.add_argument("--plot", metavar="PNG", help="write a plot of every policy's train and "
                   "test results, the best named")


def _run(args, out) -> int:
    from advisor.policies.ordering.study import tune
    from advisor.policies.ordering.view import tune_table
    from advisor.units import format_duration
    from advisor.whatif.runner import make_executor
    for t in args.threshold:
        check_param(f"easy:FCFS:FCFS:T={format_duration(t)}",
                    f"--threshold {format_duration(t)}")
    model = replace(estimates(args.estimates), seed=args.seed)
    if args.plot:
        check_output(args.plot, extra=("matplotlib", "plot"))
    workload, _ = trace_input(args)
    compile_notice()
    with make_executor(args.workers, "process") as executor, \
            progress("simulating weeks") as on_progress:
        result = tune(workload, weeks=args.weeks, seed=args.seed,
                      thresholds=tuple(args.threshold), estimates=model, executor=executor,
                      on_progress=on_progress)
    if args.plot:
        from advisor.policies.ordering.view import tune_png
        atomic_write(args.plot, tune_png(result, title=Path(workload.source).name))
    if args.json:
        from advisor.views.report import workload_dict
        emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(tune_table(workload, result, estimates=args.estimates))
    return EXIT_OK


TUNE = Command(
    "tune", "choose an ordering on resampled weeks of one half of a trace and test it on the "
    "other (Lelong et al.'s tuning study)",
    "advisor tune KTH-SP2 --weeks 50 --threshold 20h --plot tune.png",
    _arguments, _run, uses_plugins=True)
