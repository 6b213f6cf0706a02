"""``advisor plans``: Zheng et al.'s study over a trace (``study.plan_study``)."""
from __future__ import annotations

from advisor.cli_plugins import (EXIT_OK, Command, atomic_write, check_output, compile_notice,
                                 emit_json, estimates, progress, trace_input, trace_options)


def _arguments(p) -> None:
    trace_options(p)
    p.add_argument("--policy", action="append", metavar="SPEC", help="a plan or any policy "
                   "to compare (repeatable; default plan1, plan2, plan3)")
    p.add_argument("--bins", metavar="LABEL", help="also list the wait by job size and "
                   "runtime of this run against EASY-FCFS-FCFS, e.g. PLAN2")
    p.add_argument("--plot", metavar="PNG", help="write that table as heatmaps (of --bins, "
                   "default PLAN2)")


def _run(args, out) -> int:
    from advisor.policies.plan.study import plan_study
    if args.plot:
        check_output(args.plot, extra=("matplotlib", "plot"))
    workload, _ = trace_input(args)
    compile_notice()
    with progress("policies replayed") as on_progress:
        study = plan_study(workload, args.policy, estimates(args.estimates), args.seed,
                           on_progress)
    bins = study.run_named(args.bins).name if args.bins else \
        next((r.name for r in study.runs[1:] if r.name == "PLAN2"), study.runs[-1].name)
    if args.plot:
        from advisor.policies.plan.view import plan_bins_png
        atomic_write(args.plot, plan_bins_png(study, bins))
    if args.json:
        emit_json(study.as_dict())
    else:
        from advisor.policies.plan.view import plan_study_view
        from advisor.views.report import workload_caption
        out.print(workload_caption(workload, args.estimates))
        out.print(plan_study_view(study, bins if args.bins else None))
    return EXIT_OK


PLANS = Command(
    "plans", "plans of the whole queue by simulated annealing against EASY-FCFS-FCFS, "
    "month by month (Zheng et al.'s study)",
    "advisor plans SDSC-BLUE --since 2000-07-01 --until 2000-08-01 --bins PLAN2",
    _arguments, _run, uses_plugins=True)
