"""The queue-count study (Lawson and Smirni) for the terminal: the aggregate slowdown ratio,
the online policy's tests and changes, and the ratio week by week (its JSON is
``QueueCountStudy.as_dict``; the plot is ``queue_count_png``)."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.policies.queues.study import QueueCountStudy
from advisor.views.fit import Col, FitTable
from advisor.views.plots import png_bytes, pyplot


def queue_count_view(study: QueueCountStudy, weeks: int | None = None,
                     caption: Text | None = None) -> Group:
    """Every week unless ``weeks`` says how many (the first ones); ``caption``: the trace
    played (``report.workload_caption``)."""
    s = study
    futures = ("hindsight: each test replays the trace's own next weeks, as the study "
               "did" if s.futures == "hindsight" else "sampled: each test sees only "
               "futures drawn from the jobs finished by then, as a live cluster would")
    head = Text.assemble(
        (f"Runtime-class queues on {s.trace}, {s.estimates} estimates\n", "bold"),
        "R: Lawson and Smirni's slowdown ratio against one queue (mean over jobs, crashed "
        "ones left out; > 0: better than one queue)\n"
        f"  {s.parts} queues, classes "
        + ("a priori (each week's own runtimes)" if s.estimates == "exact" else
           "from last week's estimates") + f": R {s.r_fixed:+.3f}\n"
        f"  P = 1..4 queues chosen online when the queue's bounded slowdown passes "
        f"{s.trigger:g}, each test simulating {s.weeks_ahead} week"
        f"{'s' if s.weeks_ahead > 1 else ''}: R {s.r_online:+.3f}\n"
        f"futures: {futures}")
    t2 = s.table2()
    tests = FitTable("Tests and changes of the online choice (weeks: from the first "
                     "submission to the last job's end)", list(map(Col, (
                         "weeks", "tests", "% weeks", "changes", "% tests", "to P=1",
                         "P=2", "P=3", "P=4"))))
    tests.add_row(str(t2["weeks"]), str(t2["tests"]), f"{t2['pct_weeks_with_test']:.1f}",
                  str(t2["changes"]), f"{t2['pct_tests_with_change']:.1f}",
                  *(str(t2["to_parts"][str(p)]) for p in range(1, 5)))
    rows = s.weekly if weeks is None else s.weekly.head(weeks)
    week = FitTable("R per week of submission (> 0: better than one queue)", list(map(Col, (
        "week", "jobs", f"R {s.parts} queues", "R online"))))
    for row in rows.itertuples():
        week.add_row(str(row.week), str(row.jobs), f"{row.r_fixed:+.2f}",
                     f"{row.r_online:+.2f}")
    return Group(*([caption] if caption is not None else []), head, tests, week)


def queue_count_png(study) -> bytes:
    """Lawson and Smirni's Figs. 5 and 7: R per week of P fixed classes and of the online
    choice against one queue (a ``QueueCountStudy``)."""
    from matplotlib.ticker import MaxNLocator
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    w = study.weekly
    ax.plot(w["week"], w["r_fixed"], lw=1, ls="--", color="0.45",
            label=f"{study.parts} queues (R {study.r_fixed:+.2f})")
    ax.plot(w["week"], w["r_online"], lw=1.4, color="tab:blue",
            label=f"online, T={study.trigger:g} L={study.weeks_ahead} "
                  f"(R {study.r_online:+.2f})")
    ax.axhline(0, color="k", lw=0.8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("week of submission (0: the trace's first)")
    ax.set_ylabel("R against one queue (no unit; > 0: better)")
    ax.set_title(f"{study.trace}: Lawson and Smirni's slowdown ratio per week, "
                 f"{study.estimates} estimates, {study.futures} futures", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return png_bytes(fig, plt)
