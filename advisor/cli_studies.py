"""The study commands of ``advisor``: tune, queues, plans, classes, coscheduling and
timeshare (each a published study over a trace, or a model). ``advisor.cli`` dispatches to
them and maps their errors to exit codes. Every trace command reads its trace the same way
(``_trace_input``: --since, --until, --load, --estimates and the filters)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from advisor.cli_common import (EXIT_OK, _check_output, _compile_notice, _emit_json,
                                _estimates, _progress, _trace_input)

if TYPE_CHECKING:
    from rich.console import Console


def _check_param(spec: str, option: str) -> None:
    """An option that is a policy's parameter takes the values the policy takes: checked
    by parsing the policy it stands for."""
    from advisor.errors import BadInput
    from advisor.plugins.spec import parse_policy
    try:
        parse_policy(spec)
    except BadInput as e:
        raise BadInput(f"{option}: {e}") from None


def cmd_tune(args, out: Console) -> int:
    from advisor.studies.tune import tune
    from advisor.units import format_duration
    from advisor.views.report import tune_table
    from advisor.whatif.runner import make_executor
    for t in args.threshold:
        _check_param(f"easy:FCFS:FCFS:T={format_duration(t)}", f"--threshold "
                     f"{format_duration(t)}")
    estimates = replace(_estimates(args.estimates), seed=args.seed)
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload, _ = _trace_input(args)
    _compile_notice()
    with _progress("simulating weeks") as on_progress:
        result = tune(workload, weeks=args.weeks, seed=args.seed,
                      thresholds=tuple(args.threshold), estimates=estimates,
                      executor=make_executor(args.workers, "process"),
                      on_progress=on_progress)
    if args.plot:
        from advisor.adapters.files import atomic_write
        from advisor.views.plots import tune_png
        atomic_write(args.plot, tune_png(result, title=Path(workload.source).name))
    if args.json:
        from advisor.views.report import workload_dict
        _emit_json({**workload_dict(workload), **result.as_dict()})
    else:
        out.print(tune_table(workload, result, estimates=args.estimates))
    return EXIT_OK


def cmd_queues(args, out: Console) -> int:
    from advisor.studies.queue_counts import queue_count_study
    _check_param(f"easy:FCFS:P={args.parts}", f"--parts {args.parts}")
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload, _ = _trace_input(args)
    _compile_notice()
    with _progress("weeks replayed") as on_progress:
        study = queue_count_study(workload, args.trigger, args.weeks_ahead, args.estimates,
                                  args.futures, args.parts, args.samples, args.seed,
                                  on_progress)
    if args.plot:
        from advisor.adapters.files import atomic_write
        from advisor.views.plots import queue_count_png
        atomic_write(args.plot, queue_count_png(study))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.queues import queue_count_view
        from advisor.views.report import workload_caption
        out.print(queue_count_view(study, caption=workload_caption(workload,
                                                                   args.estimates)))
    return EXIT_OK


def cmd_plans(args, out: Console) -> int:
    from advisor.studies.plans import plan_study
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload, _ = _trace_input(args)
    _compile_notice()
    with _progress("policies replayed") as on_progress:
        study = plan_study(workload, args.policy, _estimates(args.estimates), args.seed,
                           on_progress)
    bins = study.run_named(args.bins).name if args.bins else \
        next((r.name for r in study.runs[1:] if r.name == "PLAN2"), study.runs[-1].name)
    if args.plot:
        from advisor.adapters.files import atomic_write
        from advisor.views.plots import plan_bins_png
        atomic_write(args.plot, plan_bins_png(study, bins))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.plans import plan_study_view
        from advisor.views.report import workload_caption
        out.print(workload_caption(workload, args.estimates))
        out.print(plan_study_view(study, bins if args.bins else None))
    return EXIT_OK


def cmd_classes(args, out: Console) -> int:
    from advisor.studies.share_classes import ClassRule, class_shares
    rule = ClassRule(busy=args.busy, idle=args.idle)
    workload, _ = _trace_input(args)
    shares = class_shares(workload, rule)
    if args.json:
        _emit_json(shares.as_dict())
    else:
        from advisor.views.coscheduling import class_shares_view
        out.print(class_shares_view(shares))
    return EXIT_OK


def cmd_coscheduling(args, out: Console) -> int:
    from advisor.studies.coscheduling import compare, orders
    _compile_notice()
    with out.status("playing the four workloads under FCFS, gang scheduling, spin-block "
                    "and flexible coscheduling"):
        table = compare(seed=args.seed)
    if args.json:
        _emit_json({"values": table.to_dict(orient="records"),
                    "orders": orders(table).to_dict(orient="records")})
    else:
        from advisor.views.coscheduling import scenarios_view
        out.print(scenarios_view(table, orders(table)))
    return EXIT_OK


def cmd_timeshare(args, out: Console) -> int:
    from advisor.studies.share_classes import ClassRule
    from advisor.studies.timeshare import TimeShare, timeshare_study
    _check_param(f"timeshare/gang:share={args.share:g}:mpl={args.mpl}:slice={args.slice}"
                 f":route={args.route}", "--share, --mpl, --slice or --route")
    setting = TimeShare(share=args.share, mpl=args.mpl, slice_s=args.slice,
                        switch_s=args.switch, route=tuple(args.route.split(",")))
    rule = ClassRule(busy=args.busy, idle=args.idle)
    workload, before = _trace_input(args)
    _compile_notice()
    with out.status("simulating both layouts"):
        study = timeshare_study(workload, setting, before, rule, _estimates(args.estimates))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.coscheduling import timeshare_view
        from advisor.views.report import workload_caption
        out.print(workload_caption(workload, args.estimates))
        out.print(timeshare_view(study))
    return EXIT_OK
