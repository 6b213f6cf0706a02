"""Coscheduling for the terminal: the heuristic's job classes over a trace, Frachtenberg et
al.'s four scenarios against their published tables (their JSON is ``ClassShares.as_dict``
and the comparison's records), and a time-sliced partition over a trace."""
from __future__ import annotations

import pandas as pd
from rich.console import Group
from rich.text import Text

from advisor.policies.timeshare.inputs import HEURISTIC, ClassShares
from advisor.views.fit import Col, FitTable
from advisor.views.report import short_duration

_MEANING = {"busy": "keeps its CPUs busy: dedicated", "mixed": "waits part of the time",
            "idle": "its CPUs idle over half the time"}


def class_shares_view(shares: ClassShares) -> Group:
    rule = shares.rule
    q1, q2, q3 = shares.quartiles
    head = Text.assemble(
        (f"Job classes on {shares.trace}\n", "bold"),
        f"{HEURISTIC}\n",
        f"CPU time (SWF field 6) known for {shares.known:,} of {shares.jobs:,} jobs "
        f"({shares.known / max(shares.jobs, 1):.0%}); efficiency quartiles "
        f"{q1:.2f} / {q2:.2f} / {q3:.2f}\n"
        f"busy: efficiency >= {rule.busy:g}; idle: below {rule.idle:g}; mixed: between")
    table = FitTable(None, [Col("class", justify="left"), Col("meaning", figure=False),
                            *map(Col, ("jobs", "of jobs", "CPU-hours", "of CPU-h", "users"))])
    for name, row in shares.shares.iterrows():
        table.add_row(name, _MEANING[name], f"{int(row.jobs):,}",
                      f"{row.job_share:.0%}", f"{row.cpu_hours:,.0f}",
                      f"{row.cpu_hour_share:.0%}", f"{int(shares.users[name]):,}")
    foot = Text("A user's class is their median job's: job_submit.lua routes by user,\n"
                "as a job's own efficiency is known only after it ran.", style="dim")
    return Group(head, table, foot)


def scenarios_view(table: pd.DataFrame, orders: pd.DataFrame) -> Group:
    """Model beside paper, one row per scenario and scheduler (ends, turnaround, mean
    response, in seconds), and the schedulers' order per metric."""
    head = Text.assemble(("Frachtenberg et al.'s four scenarios on the process-level "
                          "model\n", "bold"),
                         "each job's end, then turnaround and mean response (s); worst "
                         "error against the published table")
    out = FitTable(None, [Col("scenario", justify="left"), Col("sched", justify="left"),
                          Col("model", figure=False, justify="right"),
                          Col("published", figure=False, justify="right"), Col("worst")])
    for (name, scheduler), part in table.groupby(["scenario", "scheduler"], sort=False):
        worst = part.error.abs().max()
        out.add_row(name, scheduler, " ".join(f"{x:.0f}" for x in part.model),
                    " ".join(f"{x:.0f}" for x in part.paper),
                    Text(f"{worst:.0%}", style="red" if worst > 0.10 else ""))
    ranks = FitTable("The schedulers from best to worst, per metric",
                     [Col(c, figure=False) for c in ("scenario", "metric", "model",
                                                      "published")])
    for row in orders.itertuples():
        same = row.model == row.paper
        ranks.add_row(row.scenario, row.column, Text(row.model, style="" if same else "red"),
                      row.paper)
    return Group(head, out, ranks)


def timeshare_view(study) -> Group:
    """A time-sliced partition against the whole machine space-shared (TimeShareStudy)."""
    s = study.setting
    g, r = study.partition_cpus
    head = Text.assemble(
        (f"Time-sliced partition on {study.trace}, {study.window[0]} to "
         f"{study.window[1]}\n", "bold"),
        "(days of submission, in the trace's time zone)\n",
        f"{g} CPUs gang-scheduled ({s.mpl} jobs per CPU, slice {s.slice_s:g} s, switch "
        f"{s.switch_s:g} s) for the {' and '.join(s.route)} users, {r} CPUs EASY-FCFS;\n"
        "baseline: EASY-FCFS on all CPUs. Users classed by "
        + ("the window's own jobs (hindsight)" if study.hindsight else
           "their jobs before the window"))
    table = FitTable(None, [Col("jobs", figure=False), Col("layout", justify="left"),
                            *map(Col, ("n", "mean wait", "mean response", "mean bsld"))])
    for row in study.metrics().itertuples():
        table.add_row(row.group if row.layout == "baseline" else "", row.layout,
                      f"{row.jobs:,}", short_duration(row.mean_wait),
                      short_duration(row.mean_response), f"{row.mean_bsld:.1f}")
    return Group(head, table)
