"""The queue-count study (Lawson and Smirni) for the terminal: the aggregate slowdown ratio,
the online policy's tests and changes, and the ratio week by week (its JSON is
``QueueCountStudy.as_dict``)."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.studies.queue_counts import QueueCountStudy
from advisor.views.fit import Col, FitTable


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
