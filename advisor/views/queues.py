"""The queue-count study (Lawson and Smirni) for the terminal: aggregate R, Table 2's tests
and changes, and R week by week (its JSON is ``QueueCountStudy.as_dict``)."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.studies.queue_counts import QueueCountStudy
from advisor.views.report import narrow_table


def queue_count_view(study: QueueCountStudy, weeks: int | None = None) -> Group:
    """Every week unless ``weeks`` says how many (the first ones)."""
    s = study
    setting = ("the paper's: its what-ifs replay the trace's own future" if s.setting ==
               "paper" else "honest: its what-ifs see only futures drawn from the past")
    head = Text.assemble(
        (f"Runtime-class queues on {s.trace}, {s.estimates} estimates\n", "bold"),
        f"slowdown ratio R against one queue (mean over jobs, crashed ones left out; > 0: "
        f"better than one queue):\n  {s.parts} queues, classes "
        + ("a priori (each week's own runtimes)" if s.estimates == "exact" else
           "from last week's estimates") + f": R {s.r_fixed:+.3f}\n"
        f"  online choice of P = 1..4 (T={s.trigger:g}, L={s.weeks_ahead} week"
        f"{'s' if s.weeks_ahead > 1 else ''}): R {s.r_online:+.3f}\n"
        f"online setting: {setting}")
    t2 = s.table2()
    tests = narrow_table("Tests and changes (Table 2)")
    for col in ("weeks", "tests", "% weeks", "changes", "% tests", "to P=1", "P=2", "P=3",
                "P=4"):
        tests.add_column(col, justify="right")
    tests.add_row(str(t2["weeks"]), str(t2["tests"]), f"{t2['pct_weeks_with_test']:.1f}",
                  str(t2["changes"]), f"{t2['pct_tests_with_change']:.1f}",
                  *(str(t2["to_parts"][str(p)]) for p in range(1, 5)))
    rows = s.weekly if weeks is None else s.weekly.head(weeks)
    week = narrow_table("R per week (Figs. 5 and 7)")
    for col in ("week", "jobs", f"R {s.parts} queues", "R online"):
        week.add_column(col, justify="right")
    for row in rows.itertuples():
        week.add_row(str(row.week), str(row.jobs), f"{row.r_fixed:+.2f}",
                     f"{row.r_online:+.2f}")
    return Group(head, tests, week)
