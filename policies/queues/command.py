"""``advisor queues``: Lawson and Smirni's study over a trace (``study.queue_count_study``)."""
from __future__ import annotations

from advisor.cli_plugins import (Command, check_param, count, number, one_of, trace_options,
                                 trace_study)


def _arguments(p) -> None:
    trace_options(p)
    p.add_argument("--trigger", type=number(0), default=10.0, metavar="T",
                   help="the queue's bounded slowdown above which a test is run (default 10)")
    p.add_argument("--weeks-ahead", type=count(1), default=1, metavar="L",
                   help="weeks each test simulates (default 1)")
    p.add_argument("--parts", type=count(1, 8), default=4, help="the fixed number of "
                   "queues compared, 1 to 8, as queues/runtime's P (default 4)")
    p.add_argument("--futures", type=one_of("hindsight", "sampled"), default="hindsight",
                   help="hindsight: each test replays the trace's own next weeks (as the "
                   "study did); sampled: futures drawn from the finished jobs only, as a "
                   "live cluster would have them (default hindsight)")
    p.add_argument("--samples", type=count(1), default=4, help="sampled futures per test "
                   "(default 4)")
    p.add_argument("--plot", metavar="PNG", help="write the gain per week as a plot")


def _run(args, out) -> int:
    from advisor.policies.queues.study import queue_count_study
    from advisor.policies.queues.view import queue_count_png, queue_count_view
    from advisor.views.report import workload_caption
    check_param(f"easy:FCFS:P={args.parts}", f"--parts {args.parts}")
    return trace_study(
        args, out, lambda w, before, on_progress: queue_count_study(
            w, args.trigger, args.weeks_ahead, args.estimates, args.futures, args.parts,
            args.samples, args.seed, on_progress),
        progress_of="weeks replayed", png=lambda w, study: queue_count_png(study),
        as_dict=lambda w, study: study.as_dict(),
        view=lambda w, study: queue_count_view(
            study, caption=workload_caption(w, args.estimates)))


QUEUES = Command(
    "queues", "runtime-class queues, fixed and chosen online, against one queue, week by "
    "week (Lawson and Smirni's study)",
    "advisor queues KTH-SP2 --trigger 100 --weeks-ahead 2 --plot queues.png",
    _arguments, _run)
