"""A forecast as a user or an admin reads it (``advisor forecast``): each pending job's
median start and 80% interval in the admin's time zone (a trace's own), beside Slurm's own
estimate. Built from the forecast's dict (``Forecast.as_dict`` and the clock), which is
also its JSON."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.units import format_moment
from advisor.views.fit import Col, FitTable
from advisor.views.report import short_duration


def _at(t: int, doc: dict, day: bool) -> str:
    """An instant as the clock shows it (``MM-DD hh:mm`` when ``day``, else ``hh:mm``),
    or 'later' (-1: not by the horizon)."""
    if t < 0:
        return "later"
    epoch = doc.get("clock_epoch")
    if epoch is None:
        return f"+{short_duration(t - doc['time'])}"
    text = format_moment(t + epoch, doc.get("zone"))
    return text[5:16] if day else text[11:16]


def forecast_view(doc: dict, top: int = 20) -> Group:
    jobs = sorted(doc["jobs"], key=lambda j: (j["median"] < 0, j["median"], j["job_id"]))
    epoch = doc.get("clock_epoch")
    now = "-" if epoch is None else format_moment(doc["time"] + epoch, doc.get("zone"))
    head = Text.assemble(("Start forecast", "bold"), f" at {now}: {len(jobs)} pending jobs "
                         f"over {doc['samples']} sampled futures of "
                         f"{short_duration(doc['horizon_s'])}")
    if not jobs:
        return Group(head, Text("no pending job"))
    day = len({_at(j["median"], doc, True)[:5] for j in jobs if j["median"] >= 0}) > 1 \
        or doc["horizon_s"] > 86400
    table = FitTable(None, [Col("job"), Col("user", figure=False), Col("partition",
                                                                         figure=False),
                            Col("CPUs"), Col("median"), Col("80% interval"),
                            Col("squeue --start")])
    for j in jobs[:top]:
        low, high = _at(j["low"], doc, day), _at(j["high"], doc, day)
        if day and low[:5] == high[:5]:         # one day: its date once
            high = high[6:]
        span = f"{low}-{high}" if j["low"] >= 0 else "later"
        table.add_row(str(j["job_id"]), j["user"], j["partition"], str(j["cpus"]),
                      _at(j["median"], doc, day), span,
                      _at(j["slurm"], doc, day) if j["slurm"] >= 0 else "none")
    zone = doc.get("zone") or "this machine's time"
    table.note = (f"times in {zone}; later: not by the horizon in half the samples or more "
                  "(median) or in the interval's end; squeue --start: Slurm's backfill "
                  "plan, every job to its limit and none arriving")
    more = [] if len(jobs) <= top else [Text(f"... and {len(jobs) - top} more (--top, "
                                             "--json)", style="dim")]
    return Group(head, table, *more)
