"""Zheng et al.'s study (plans against EASY-FCFS-FCFS) for the terminal: utilisation and
the mean waits, the waits per month, and the waits by job size and runtime as rows (its JSON
is ``PlanStudy.as_dict``; the heatmaps are ``plan_bins_png``)."""
from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from advisor.policies.plan.study import PlanStudy
from advisor.views.fit import Col, FitTable
from advisor.views.plots import png_bytes, pyplot
from advisor.views.report import short_duration


def plan_study_view(study: PlanStudy, bins_of: str | None = None) -> Group:
    """The summary and the months; with ``bins_of`` (a run's name), the waits by size and
    runtime for it: every bin holding jobs, as a row."""
    base = study.baseline
    months = study.months()
    head = Text.assemble(
        (f"Plans against {base.policy.label} on {study.trace}, {study.window[0]} to "
         f"{study.window[1]}\n", "bold"),
        "(days of submission, in the trace's time zone)\n",
        "every job ended at its estimate at the latest; utilisation over the whole replay, "
        "waits from submission; gain: the mean wait saved against the baseline (> 0: "
        "better); months better, even and worse than the baseline")
    summary = FitTable("Whole window", [Col("policy", figure=False), *map(Col, (
        "utilisation", "mean wait", "gain", "mean response", "months +,=,-"))])
    for run in study.runs:
        diff = (months[run.name] - months[base.name]).round(0)
        change = (1 - run.summary["avg_wait"] / base.summary["avg_wait"]
                  if base.summary["avg_wait"] else 0.0)
        summary.add_row(run.name, f"{run.summary['utilization']:.3f}",
                        short_duration(run.summary["avg_wait"]), f"{change:+.1%}",
                        short_duration(run.summary["avg_response"]),
                        f"{(diff < 0).sum()},{(diff == 0).sum()},{(diff > 0).sum()}")
    monthly = FitTable("Mean wait per month of submission", [
        Col("month", justify="left"), Col("jobs"), *(Col(r.name) for r in study.runs)])
    for month, row in months.iterrows():
        monthly.add_row(str(month), str(int(row["jobs"])),
                        *(short_duration(row[r.name]) for r in study.runs))
    parts = [head, summary, monthly]
    if bins_of is not None:
        name = study.run_named(bins_of).name
        b = study.bins(bins_of)
        table = FitTable(f"Mean wait by size and runtime, {name} against {base.name} (15 "
                         f"bins each, logarithmic; ratio: {name}'s over {base.name}'s, < 1: "
                         "shorter)", list(map(Col, ("CPUs", "runtime", "jobs", base.name,
                                                    name, "ratio"))))
        ratio = b.ratio
        for i, k in zip(*np.nonzero(b.jobs)):
            runtimes = (f"{short_duration(b.runtime_edges[k])}-"
                        f"{short_duration(b.runtime_edges[k + 1])}")
            table.add_row(f"{b.size_edges[i]:.0f}-{b.size_edges[i + 1]:.0f}", runtimes,
                          str(b.jobs[i, k]), short_duration(b.base[i, k]),
                          short_duration(b.plan[i, k]),
                          f"{ratio[i, k]:.2f}" if np.isfinite(ratio[i, k]) else "inf")
        parts.append(table)
    return Group(*parts)


def plan_bins_png(study, name: str) -> bytes:
    """Zheng et al.'s Fig. 6: mean wait binned by job size and runtime (15 log bins each)
    under the baseline and under the plan ``name``, and their ratio (blue: the plan waits
    less); empty bins are left blank (a ``PlanStudy``)."""
    import numpy as np
    from matplotlib.colors import LogNorm, TwoSlopeNorm
    plt = pyplot()
    b = study.bins(name)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), dpi=100)
    waits = np.concatenate([b.base[np.isfinite(b.base)], b.plan[np.isfinite(b.plan)]])
    norm = LogNorm(1.0, max(float(waits.max(initial=2.0)), 2.0))   # a wait of 0 shows as 1 s
    for ax, grid, title in ((axes[0], b.base, study.baseline.name), (axes[1], b.plan, name)):
        mesh = ax.pcolormesh(b.runtime_edges, b.size_edges,
                             np.ma.masked_invalid(np.maximum(grid, 1.0)),
                             cmap="coolwarm", norm=norm, shading="flat")
        ax.set_title(f"{title}: mean wait (s)", fontsize=10)
        fig.colorbar(mesh, ax=ax)
    ratio = np.log2(np.clip(b.ratio, 1 / 64, 64))
    mesh = axes[2].pcolormesh(b.runtime_edges, b.size_edges, np.ma.masked_where(
        b.jobs == 0, ratio), cmap="coolwarm", norm=TwoSlopeNorm(0, -6, 6), shading="flat")
    axes[2].set_title(f"log2 of {name} / {study.baseline.name} mean wait", fontsize=10)
    fig.colorbar(mesh, ax=axes[2])
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("runtime (seconds)")
        ax.set_ylabel("job size (CPUs)")
    fig.suptitle(f"{study.trace}, jobs submitted {study.window[0]} to {study.window[1]}: "
                 "mean wait by job size and runtime (blue: less wait)", fontsize=11)
    fig.tight_layout()
    return png_bytes(fig, plt)
