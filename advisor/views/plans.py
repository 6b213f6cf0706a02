"""Zheng et al.'s study (plans against EASY-FCFS-FCFS) for the terminal: Table II's
utilisation and the mean waits, the waits per month (Fig. 4), and Fig. 6's bins as rows
(its JSON is ``PlanStudy.as_dict``; the heatmaps are ``views.plots.plan_bins_png``)."""
from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from advisor.studies.plans import PlanStudy
from advisor.views.report import narrow_table, short_duration


def plan_study_view(study: PlanStudy, bins_of: str | None = None) -> Group:
    """The summary and the months; with ``bins_of`` (a run's name), Fig. 6 for it: every
    bin holding jobs, as a row."""
    base = study.baseline
    months = study.months()
    head = Text.assemble(
        (f"Plans against {base.policy.label} on {study.trace}, {study.window[0]} to "
         f"{study.window[1]}\n", "bold"),
        "every job ended at its estimate at the latest; utilisation over the whole replay "
        "(Table II), waits from submission")
    summary = narrow_table("Whole window")
    for col in ("policy", "utilisation", "mean wait", "vs FCFS", "mean response",
                "months <,=,>"):
        summary.add_column(col, justify="left" if col == "policy" else "right")
    for run in study.runs:
        diff = (months[run.name] - months[base.name]).round(0)
        change = (run.summary["avg_wait"] / base.summary["avg_wait"] - 1
                  if base.summary["avg_wait"] else 0.0)
        summary.add_row(run.name, f"{run.summary['utilization']:.3f}",
                        short_duration(run.summary["avg_wait"]), f"{change:+.1%}",
                        short_duration(run.summary["avg_response"]),
                        f"{(diff < 0).sum()},{(diff == 0).sum()},{(diff > 0).sum()}")
    monthly = narrow_table("Mean wait per month of submission (Fig. 4)")
    monthly.add_column("month")
    monthly.add_column("jobs", justify="right")
    for run in study.runs:
        monthly.add_column(run.name, justify="right")
    for month, row in months.iterrows():
        monthly.add_row(str(month), str(int(row["jobs"])),
                        *(short_duration(row[r.name]) for r in study.runs))
    parts = [head, summary, monthly]
    if bins_of is not None:
        b = study.bins(bins_of)
        table = narrow_table(f"Mean wait by size and runtime, {bins_of} against "
                             f"{base.name} (Fig. 6; 15 log bins each)")
        for col in ("CPUs", "runtime", "jobs", base.name, bins_of, "ratio"):
            table.add_column(col, justify="right")
        ratio = b.ratio
        for i, k in zip(*np.nonzero(b.jobs)):
            table.add_row(f"{b.size_edges[i]:.0f}-{b.size_edges[i + 1]:.0f}",
                          f"{short_duration(b.runtime_edges[k])}-{short_duration(b.runtime_edges[k + 1])}",
                          str(b.jobs[i, k]), short_duration(b.base[i, k]), short_duration(b.plan[i, k]),
                          f"{ratio[i, k]:.2f}" if np.isfinite(ratio[i, k]) else "inf")
        parts.append(table)
    return Group(*parts)
