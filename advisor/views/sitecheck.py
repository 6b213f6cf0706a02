"""A site check as the admin reads it (``advisor check``): how well the simulation
reproduced this site's own past, overall and by partition, the jobs furthest off and what
they had in common, and what the replay did not play. Built from the check's dict
(``SiteCheck.as_dict``), which is also its JSON."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.units import format_moment
from advisor.views.fit import Col, FitTable
from advisor.views.report import short_duration


def _share(value: float) -> str:
    return "-" if value != value else f"{value:.1%}"


def _signed(seconds: float) -> str:
    if seconds != seconds:
        return "-"
    return ("+" if seconds >= 0 else "-") + short_duration(abs(seconds))


def headline(doc: dict) -> str:
    """One line: the share within the tolerance, and of how many jobs."""
    if not doc["jobs"]:
        return "no job of the window started: nothing to judge"
    return (f"{_share(doc['within'])} of {doc['jobs']} jobs started within "
            f"{doc['tolerance_s']} s of their real start, {_share(doc['within_minute'])} "
            "within a minute")


def sitecheck_view(doc: dict) -> Group:
    windows = doc["windows"]
    zone = doc.get("zone")
    parts: list = []
    if windows:
        begin, end = windows[0][0], windows[-1][1]
        span = windows[0][1] - windows[0][0]
        parts.append(Text.assemble(
            ("Site check", "bold"), f" of {doc['source'] or 'the log'}: "
            f"{format_moment(begin, zone)} to {format_moment(end, zone)}, "
            f"{len(windows)} replay{'s' if len(windows) != 1 else ''} of "
            f"{short_duration(span)} from the state rebuilt at each start"))
    parts.append(Text(headline(doc), style="bold"))
    if doc["jobs"]:
        parts.append(Text(
            f"Error: mean {short_duration(doc['mean_error_s'])}, 95th percentile "
            f"{short_duration(doc['p95_error_s'])}; on average the simulation starts jobs "
            f"{_signed(doc['bias_s'])} (mean wait real {short_duration(doc['real_wait_s'])}, "
            f"simulated {short_duration(doc['sim_wait_s'])})"
            + (f"; {doc['never_started']} never started in the replay"
               if doc["never_started"] else "")))
        parts.append(partitions_table(doc))
        parts.append(furthest_table(doc))
        if doc["in_common"]:
            parts.append(Text("In common: " + "; ".join(doc["in_common"])))
    if doc["findings"]:
        parts.append(Text("Not played, or played as it is now:", style="bold"))
        parts += [Text(f"- {f}") for f in doc["findings"]]
    return Group(*parts)


def partitions_table(doc: dict) -> FitTable:
    tol = doc["tolerance_s"]
    table = FitTable(None, [Col("partition", figure=False), Col("jobs"),
                            Col(f"within {tol} s"), Col("within 1 min"),
                            Col("mean error"), Col("p95 error")])
    for name, f in doc["partitions"].items():
        table.add_row(name, str(f["jobs"]), _share(f["within"]), _share(f["within_minute"]),
                      short_duration(f["mean_error_s"]), short_duration(f["p95_error_s"]))
    return table


def furthest_table(doc: dict) -> FitTable:
    zone = doc.get("zone")
    table = FitTable("The jobs furthest off", [
        Col("job"), Col("partition", figure=False), Col("CPUs"), Col("submitted"),
        Col("real start"), Col("simulated")])
    for row in doc["furthest"]:
        sim = row["sim"]
        table.add_row(str(row["job_id"]), str(row["partition"]), str(row["cpus"]),
                      format_moment(row["submit"], zone)[5:16],
                      "+" + short_duration(row["real"] - row["submit"]),
                      "never" if sim < 0 else _signed(row["sim"] - row["real"]))
    table.note = "real start: its wait; simulated: how far from the real start"
    return table
