"""Reports: rich renderables for the terminal, and the same content as JSON-ready dicts."""
from __future__ import annotations

from collections import Counter
import numpy as np
from rich.console import Group
from rich.text import Text

from advisor.model import Snapshot, Workload, release_of
from advisor.plugins.grid import catalogue
from advisor.studies.replay import ReplayResult
from advisor.units import format_moment
from advisor.views.fit import Col, FitTable

def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


def short_duration(seconds: float) -> str:
    """A duration in one unit, to two or three figures (59s, 24m, 3.5h, 2.1d)."""
    if not np.isfinite(seconds):
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            value = seconds / size
            return f"{value:.1f}{unit}" if value < 10 else f"{value:.0f}{unit}"
    return f"{seconds:.0f}s"


def workload_dict(workload: Workload) -> dict:
    cleaning = workload.cleaning
    return {
        "trace": workload.source, "machine": workload.machine.name,
        "procs": workload.machine.procs, "jobs": len(workload),
        "cleaning": {"jobs_read": cleaning.jobs_read, "removed": cleaning.removed}
        if cleaning else None,
    }


def workload_caption(workload: Workload, estimates: str = "user") -> Text:
    """The trace played: its jobs, what the cleaning removed, and, when the user's
    requested times are the estimates, how many jobs requested none (their runtime stands
    in: an estimate no scheduler had)."""
    c = workload.cleaning
    removed = ", ".join(f"{n} {k}" for k, n in c.removed.items()) if c else ""
    text = f"{workload.source}: {len(workload):,} jobs on {workload.machine.procs:,} CPUs"
    if c:
        text += f" ({c.jobs_read:,} read; removed: {removed or 'none'})"
    missing = unrequested(workload)
    if estimates == "user" and missing:
        text += (f"; {missing:,} jobs ({missing / max(len(workload), 1):.0%}) requested no "
                 "time, so their runtime stands in as their estimate")
    return Text(text, style="dim")


def unrequested(workload: Workload) -> int:
    """How many jobs requested no time (SWF field 9 absent)."""
    jobs = workload.jobs
    return int((jobs["req_time"] <= 0).sum()) if "req_time" in jobs else 0


def replay_dict(workload: Workload, results: list[ReplayResult], estimates: str) -> dict:
    return {**workload_dict(workload), "estimates": estimates,
            "jobs_without_request": unrequested(workload),
            "policies": {r.policy.spec: r.as_dict() for r in results}}


def replay_table(workload: Workload, results: list[ReplayResult], defaulted: bool = False,
                 estimates: str = "user") -> Group:
    """One row per policy; ``defaulted``: no policy was asked for, so the table says
    these are the defaults."""
    title = "Replay (waits in h:mm:ss)" + (": no --policy given, so the default four"
                                           if defaulted else "")
    table = FitTable(title, [Col("policy", figure=False), *map(Col, (
        "jobs", "avg wait", "p90 wait", "max wait", "avg bsld", "util"))])
    for r in results:
        s = r.summary
        table.add_row(r.policy.label, str(s["jobs"]), _hms(s["avg_wait"]), _hms(s["p90_wait"]),
                      _hms(s["max_wait"]), f"{s['avg_bsld']:.1f}", f"{s['utilization']:.1%}")
    return Group(table, workload_caption(workload, estimates))


def policies_dict() -> dict:
    """The installed families and plugins (``advisor.plugins.grid.catalogue``)."""
    return {"families": catalogue()}


def _bounds(p: dict) -> str:
    """A parameter's choices (a|b) or range (1.., ..5, 1..5); "" when it has neither."""
    if "choices" in p:
        return "|".join(p["choices"])
    if "min" in p or "max" in p:
        return f"{p.get('min', '')}..{p.get('max', '')}"
    return ""


def policies_table() -> Group:
    """One table per family: each plugin, what it does, its parameters (default, bounds),
    its points in the default grid and its fidelity in Slurm."""
    tables = []
    for family in catalogue():
        default = family["default"]
        title = (f"{family['family']} (default {default})" if default else
                 f"{family['family']} (optional)")
        table = FitTable(title, [Col("plugin", justify="left"),
                                 Col("what it does, parameters", figure=False),
                                 Col("grid", figure=False), Col("Slurm", justify="left")])
        for m in family["members"]:
            params = [p["name"] + (f"={p['default']}" if p["default"] != "" else "")
                      + (f" ({_bounds(p)})" if _bounds(p) else "") + f": {p.get('help', '')}"
                      for p in m["params"]]
            table.add_row(m["plugin"].split("/", 1)[1], "\n".join([m["summary"], *params]),
                          ", ".join(m["candidates"]) or "-", m["fidelity"])
        tables.append(table)
    return Group(*tables, Text("grid: the points each plugin adds to the default grid of "
                               "advisor recommend; Slurm: how faithfully Slurm runs it",
                               style="dim"))


# ------------------------------------------------------------------------------ snapshots
def snapshot_clock(snapshot: Snapshot) -> tuple[int | None, str | None]:
    """What makes the snapshot's times dates: the epoch of its time 0 (None when a trace does
    not say it) and the zone its moments are read in (None: this machine's, as Slurm's
    commands print a live cluster's; a trace's own time zone otherwise)."""
    if snapshot.source.get("kind") == "slurm":
        return 0, None
    start = snapshot.source.get("unix_start_time")
    return (int(start), snapshot.source.get("time_zone") or "UTC") if start else (None, None)


def _when(snapshot: Snapshot, t: int | None) -> str:
    """An instant of the snapshot as a date in its zone, named; the trace's own clock when
    its start is unknown."""
    if t is None:
        return "-"
    offset, zone = snapshot_clock(snapshot)
    return f"{t:,} s into the trace" if offset is None else format_moment(t + offset, zone)


def _limit(seconds: int | None) -> str:
    return "UNLIMITED" if seconds is None else _hms(seconds)


def snapshot_view(snapshot: Snapshot, top: int = 10) -> Group:
    """What the advisor sees: nodes busy and idle, the queue by partition, the top of the
    queue with its priorities, the configuration in effect."""
    m, src = snapshot.machine, snapshot.source
    where = src.get("trace") or f"Slurm {src.get('release', '')} ({src.get('adapter', '')})"
    busy = sum(n.alloc_cpus for n in m.nodes) or snapshot.busy_cpus
    head = Text.assemble((f"Snapshot of {m.name or where}", "bold"),
                         f" at {_when(snapshot, snapshot.time)}: {len(m.nodes)} nodes, "
                         f"{m.cpus} CPUs, {busy} busy ({busy / max(m.cpus, 1):.0%}); "
                         f"{len(snapshot.running)} running, {len(snapshot.pending)} pending")
    states = FitTable("Nodes by state", [Col("state", figure=False), *map(Col, (
        "nodes", "CPUs", "allocated"))])
    counts: dict[str, list[int]] = {}
    for n in m.nodes:
        c = counts.setdefault(n.state, [0, 0, 0])
        c[0], c[1], c[2] = c[0] + 1, c[1] + n.cpus, c[2] + n.alloc_cpus
    for state, (k, cpus, alloc) in sorted(counts.items()):
        states.add_row(state, str(k), str(cpus), str(alloc))

    parts = FitTable("Partitions and their queues", [Col("partition", figure=False), *map(
        Col, ("nodes", "MaxTime", "tier", "factor", "running (CPUs)", "pending (CPUs)"))])
    for p in m.partitions:
        run = [j for j in snapshot.running if j.partition == p.name]
        wait = [j for j in snapshot.pending if p.name in j.asked]
        parts.add_row(p.name + ("*" if p.default else ""), str(len(p.nodes)),
                      _limit(p.max_time), str(p.priority_tier), str(p.priority_job_factor),
                      f"{len(run)} ({sum(j.cpus for j in run)})",
                      f"{len(wait)} ({sum(j.cpus for j in wait)})")

    queue = FitTable(f"Top of the queue (first {top} by priority)", [
        Col("job", justify="left"), Col("user", figure=False), Col("partition", figure=False),
        Col("CPUs"), Col("limit"), Col("waited"), Col("priority"),
        Col("factors", figure=False), Col("reason", figure=False)])
    for j in snapshot.pending[:top]:
        factors = " ".join(f"{k}={v:g}" for k, v in j.priority_factors.items()
                           if v and k != "priority")
        queue.add_row(str(j.job_id), j.user, ",".join(j.asked),
                      str(j.cpus), _limit(j.time_limit), _hms(snapshot.time - j.submit_time),
                      "-" if j.priority is None else str(j.priority), factors or "-",
                      ("held " if j.held else "") + j.state_reason)

    c = snapshot.config
    weights = {"Age": c.priority_weight_age, "Fairshare": c.priority_weight_fairshare,
               "JobSize": c.priority_weight_job_size, "Partition": c.priority_weight_partition,
               "QOS": c.priority_weight_qos, "Assoc": c.priority_weight_assoc}
    conf = Text.assemble(("Configuration in effect: ", "bold"), (
        f"{c.scheduler_type}, {c.priority_type} ("
        + (", ".join(f"{k}={v}" for k, v in weights.items() if v) or "no weights")
        + f"), PriorityCalcPeriod={_hms(c.priority_calc_period)}, "
        f"bf_interval={c.backfill.bf_interval}s, bf_window={c.backfill.bf_window}min, "
        f"bf_resolution={c.backfill.bf_resolution}s"
        + (f", bf_job_part_count_reserve={c.backfill.bf_job_part_count_reserve}"
           if c.backfill.bf_job_part_count_reserve else "")
        + f", {c.select_type}"))
    cost = c.backfill_cost
    if cost.job_us or cost.cycle_us:
        conf.append(f"; a backfill cycle costs {cost.cycle_us} us + {cost.job_us} us per job "
                    f"tested ({cost.source})")
    if src.get("kind") == "swf":
        conf = Text.assemble(("Policy replayed: ", "bold"), f"{src.get('policy')} (textbook "
                             "engine; priority = rank in the policy's queue order)")
    note = release_of(c.slurm_version).note
    return Group(head, states, parts, queue, conf, *([Text(note, style="yellow")] if note else []))


def online_table(workload: Workload, result, weeks: int = 12) -> Group:
    """Lawson and Smirni's comparison: overall, the policies followed, and the first weeks."""
    t = result.total
    title = Text(f"Online replay: the advisor every {result.every / 86400:g} d against "
                 f"{result.baseline} kept throughout (engine: slurm mode)", style="bold")
    head = FitTable(None, [Col("", justify="left"), Col("static"), Col("online")])
    head.add_row("avg wait", _hms(t["avg_wait_static"]), _hms(t["avg_wait_online"]))
    head.add_row("max wait", _hms(t["max_wait_static"]), _hms(t["max_wait_online"]))
    head.add_row("avg bounded slowdown", f"{t['avg_bsld_static']:.2f}",
                 f"{t['avg_bsld_online']:.2f}")
    caption = Text(f"R (Lawson and Smirni's slowdown ratio, mean over {t['jobs']} jobs; "
                   f"> 0: online better) {t['r']:+.3f}; weeks with R > 0: "
                   f"{t['weeks_better']} of {t['weeks']}; "
                   f"{t['decisions']} decision points, {t['simulated']} simulated, "
                   f"{t['changes']} changes")
    used = Counter(d.spec for d in result.decisions)
    policies = Text("in effect after a decision point: " + ", ".join(
        f"{spec} {n}" for spec, n in used.most_common(8)), style="dim")
    week = FitTable(f"Per week (first {weeks}; R > 0: online better)", list(map(Col, (
        "week", "jobs", "R", "avg wait static", "avg wait online", "max wait static",
        "max wait online"))))
    for row in result.weeks.head(weeks).itertuples():
        week.add_row(str(row.week), str(row.jobs), f"{row.r:+.2f}",
                     _hms(row.avg_wait_static), _hms(row.avg_wait_online),
                     _hms(row.max_wait_static), _hms(row.max_wait_online))
    return Group(workload_caption(workload), title, head, caption, policies, week)
