"""The study commands of ``advisor``: tune, queues, plans, classes and coscheduling (each a
paper's study over a trace or a model). ``advisor.cli`` dispatches to them and maps their
errors to exit codes."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from rich.console import Console

from advisor.cli_common import (EXIT_OK, _check_output, _compile_notice, _emit_json,
                                _estimates, _load, _progress, _window)


def cmd_tune(args, out: Console) -> int:
    from advisor.units import parse_duration
    from advisor.views.report import tune_table
    from advisor.whatif.runner import make_executor
    from advisor.studies.tune import tune
    thresholds = tuple(parse_duration(t) for t in args.threshold)
    estimates = replace(_estimates(args.estimates), seed=args.seed)
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload = _load(args)
    _compile_notice()
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


def cmd_queues(args, out: Console) -> int:
    from advisor.studies.queue_counts import queue_count_study
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload = _load(args)
    _compile_notice()
    with out.status("simulating the queue counts"):
        study = queue_count_study(workload, args.trigger, args.weeks_ahead, args.estimates,
                                  args.setting, args.parts, args.samples, args.seed)
    if args.plot:
        from adapters.files import atomic_write
        from advisor.views.plots import queue_count_png
        atomic_write(args.plot, queue_count_png(study))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.queues import queue_count_view
        out.print(queue_count_view(study))
    return EXIT_OK


def cmd_plans(args, out: Console) -> int:
    from advisor.studies.plans import plan_study
    if args.plot:
        _check_output(args.plot, extra=("matplotlib", "plot"))
    workload = _load(args)
    since, until = _window(args, workload)
    _compile_notice()
    with out.status("replaying the plans") as status:
        study = plan_study(workload, args.policy, since, until, _estimates(args.estimates),
                           args.seed, progress=lambda name: status.update(f"replaying {name}"))
    bins = args.bins or next((r.name for r in study.runs[1:] if r.name == "PLAN 2"),
                             study.runs[-1].name)
    if args.plot:
        from adapters.files import atomic_write
        from advisor.views.plots import plan_bins_png
        atomic_write(args.plot, plan_bins_png(study, bins))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.plans import plan_study_view
        out.print(plan_study_view(study, bins if args.bins else None))
    return EXIT_OK


def cmd_classes(args, out: Console) -> int:
    from advisor.studies.share_classes import ClassRule, class_shares
    rule = ClassRule(busy=args.busy, idle=args.idle)
    shares = class_shares(_load(args), rule)
    if args.json:
        _emit_json(shares.as_dict())
    else:
        from advisor.views.coscheduling import class_shares_view
        out.print(class_shares_view(shares))
    return EXIT_OK


def cmd_coscheduling(args, out: Console) -> int:
    from advisor.studies.coscheduling import compare, orders
    _compile_notice()
    with out.status("playing the four scenarios under FCFS, GS, SB and FCS"):
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
    setting = TimeShare(share=args.share, mpl=args.mpl, slice_s=args.slice,
                        switch_s=args.switch, route=tuple(args.route.split("+")))
    rule = ClassRule(busy=args.busy, idle=args.idle)
    workload = _load(args)
    since, until = _window(args, workload)
    _compile_notice()
    with out.status("simulating both layouts"):
        study = timeshare_study(workload, setting, since, until, rule,
                                _estimates(args.estimates))
    if args.json:
        _emit_json(study.as_dict())
    else:
        from advisor.views.coscheduling import timeshare_view
        out.print(timeshare_view(study))
    return EXIT_OK
