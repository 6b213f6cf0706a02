"""``advisor tune``: Lelong et al.'s tuning study over a trace (``study.tune``)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from advisor.cli_plugins import (Command, check_param, count, duration, estimates,
                                 trace_options, trace_study)


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
    from advisor.policies.ordering.view import tune_png, tune_table
    from advisor.units import format_duration
    from advisor.views.report import workload_dict
    from advisor.whatif.runner import make_executor
    for t in args.threshold:
        check_param(f"easy:FCFS:FCFS:T={format_duration(t)}",
                    f"--threshold {format_duration(t)}")
    model = replace(estimates(args.estimates), seed=args.seed)

    def play(workload, before, on_progress):
        with make_executor(args.workers, "process") as executor:
            return tune(workload, weeks=args.weeks, seed=args.seed,
                        thresholds=tuple(args.threshold), estimates=model,
                        executor=executor, on_progress=on_progress)

    return trace_study(
        args, out, play, progress_of="simulating weeks",
        png=lambda w, r: tune_png(r, title=Path(w.source).name),
        as_dict=lambda w, r: {**workload_dict(w), **r.as_dict()},
        view=lambda w, r: tune_table(w, r, estimates=args.estimates))


TUNE = Command(
    "tune", "choose an ordering on resampled weeks of one half of a trace and test it on the "
    "other (Lelong et al.'s tuning study)",
    "advisor tune KTH-SP2 --weeks 50 --threshold 20h --plot tune.png",
    _arguments, _run, uses_plugins=True)
