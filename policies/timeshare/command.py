"""The timeshare family's commands: ``advisor classes`` (which jobs would share CPUs),
``advisor coscheduling`` (Frachtenberg et al.'s scenarios on the process-level model) and
``advisor timeshare`` (a time-sliced partition over a trace)."""
from __future__ import annotations

from advisor.cli_plugins import (EXIT_OK, Command, check_param, compile_notice, count,
                                 duration, emit_json, estimates, number, one_of, trace_input,
                                 trace_options, trace_study)


def _class_options(p) -> None:
    """The CPU-efficiency thresholds of the job classes (``inputs.ClassRule``)."""
    p.add_argument("--busy", type=number(0, 1), default=0.9, help="CPU efficiency at or "
                   "above which a job is 'busy' (keeps its CPUs busy; default 0.9)")
    p.add_argument("--idle", type=number(0, 1), default=0.5, help="CPU efficiency below "
                   "which a job is 'idle' (its CPUs idle over half the time; default 0.5)")


def _classes_arguments(p) -> None:
    trace_options(p)
    _class_options(p)


def _classes(args, out) -> int:
    from advisor.policies.timeshare.inputs import ClassRule, class_shares
    rule = ClassRule(busy=args.busy, idle=args.idle)
    workload, _ = trace_input(args)
    shares = class_shares(workload, rule)
    if args.json:
        emit_json(shares.as_dict())
    else:
        from advisor.policies.timeshare.view import class_shares_view
        out.print(class_shares_view(shares))
    return EXIT_OK


def _coscheduling_arguments(p) -> None:
    p.add_argument("--seed", type=count(0), default=0, help="seed of the local schedulers' "
                   "noise")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _coscheduling(args, out) -> int:
    from advisor.policies.timeshare.study_cosched import compare, orders
    compile_notice()
    with out.status("playing the four workloads under FCFS, gang scheduling, spin-block "
                    "and flexible coscheduling"):
        table = compare(seed=args.seed)
    if args.json:
        emit_json({"values": table.to_dict(orient="records"),
                   "orders": orders(table).to_dict(orient="records")})
    else:
        from advisor.policies.timeshare.view import scenarios_view
        out.print(scenarios_view(table, orders(table)))
    return EXIT_OK


def _timeshare_arguments(p) -> None:
    trace_options(p, "; users are classed by the jobs before it (without --since, by the "
                  "whole trace)")
    p.add_argument("--share", type=number(0, above=True), default=0.25, help="fraction of "
                   "the CPUs given to the time-sliced partition, above 0 and at most 0.75, "
                   "as timeshare/gang's share (default 0.25)")
    p.add_argument("--mpl", type=count(2), default=2, help="jobs per CPU in the time-sliced "
                   "partition, 2 to 8 (OverSubscribe=FORCE:mpl, as timeshare/gang's mpl; "
                   "default 2)")
    p.add_argument("--slice", type=duration(1), default=30, help="SchedulerTimeSlice, 5 s to "
                   "65533 s (as timeshare/gang's slice; default 30s, Slurm's)")
    p.add_argument("--switch", type=number(0), default=0.5, help="progress lost at each "
                   "switch of a shared CPU, in seconds (default 0.5)")
    p.add_argument("--route", type=one_of("idle", "idle,mixed"), default="idle",
                   help="whose jobs go to the time-sliced partition: idle (the users whose "
                   "jobs leave their CPUs idle over half the time) or idle,mixed (also those "
                   "that wait part of the time), as timeshare/gang's route (default idle)")
    _class_options(p)


def _timeshare(args, out) -> int:
    from advisor.policies.timeshare.inputs import ClassRule
    from advisor.policies.timeshare.study import TimeShare, timeshare_study
    check_param(f"timeshare/gang:share={args.share:g}:mpl={args.mpl}:slice={args.slice}"
                f":route={args.route}", "--share, --mpl, --slice or --route")
    setting = TimeShare(share=args.share, mpl=args.mpl, slice_s=args.slice,
                        switch_s=args.switch, route=tuple(args.route.split(",")))
    from advisor.policies.timeshare.view import timeshare_view
    from advisor.views.report import workload_caption
    rule = ClassRule(busy=args.busy, idle=args.idle)
    return trace_study(
        args, out, lambda w, before, on_progress: timeshare_study(
            w, setting, before, rule, estimates(args.estimates)),
        progress_of="simulating both layouts", as_dict=lambda w, study: study.as_dict(),
        view=lambda w, study: [workload_caption(w, args.estimates), timeshare_view(study)])


CLASSES = Command(
    "classes", "which jobs would share CPUs: the jobs of a trace classed by CPU efficiency "
    "(SWF field 6, the CPU time, over the runtime)",
    "advisor classes SDSC-BLUE --busy 0.9 --idle 0.5", _classes_arguments, _classes)
COSCHEDULING = Command(
    "coscheduling", "gang scheduling, spin-block and flexible coscheduling on four synthetic "
    "workloads, a process-level model checked against the published tables (Frachtenberg "
    "et al.)", "advisor coscheduling --json", _coscheduling_arguments, _coscheduling)
TIMESHARE = Command(
    "timeshare", "what a gang-scheduled partition for the users whose jobs idle their CPUs "
    "would do to waits and response times, against the whole machine space-shared",
    "advisor timeshare SDSC-BLUE --since 2001-03-01 --until 2001-04-01 --mpl 2",
    _timeshare_arguments, _timeshare)
