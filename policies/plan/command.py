"""``advisor plans``: Zheng et al.'s study over a trace (``study.plan_study``)."""
from __future__ import annotations

from advisor.cli_plugins import Command, estimates, trace_options, trace_study


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
    from advisor.policies.plan.view import plan_bins_png, plan_study_view
    from advisor.views.report import workload_caption

    def bins(study) -> str:
        return study.run_named(args.bins).name if args.bins else \
            next((r.name for r in study.runs[1:] if r.name == "PLAN2"), study.runs[-1].name)

    return trace_study(
        args, out, lambda w, before, on_progress: plan_study(
            w, args.policy, estimates(args.estimates), args.seed, on_progress),
        progress_of="policies replayed",
        png=lambda w, study: plan_bins_png(study, bins(study)),
        as_dict=lambda w, study: study.as_dict(),
        view=lambda w, study: [workload_caption(w, args.estimates),
                               plan_study_view(study, bins(study) if args.bins else None)])


PLANS = Command(
    "plans", "plans of the whole queue by simulated annealing against EASY-FCFS-FCFS, "
    "month by month (Zheng et al.'s study)",
    "advisor plans SDSC-BLUE --since 2000-07-01 --until 2000-08-01 --bins PLAN2",
    _arguments, _run, uses_plugins=True)
