"""Reports: rich renderables for the terminal, and the same content as JSON-ready dicts."""
from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import numpy as np
from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from advisor.model import Snapshot, Workload
from advisor.plugins.grid import catalogue
from advisor.studies.replay import ReplayResult

if TYPE_CHECKING:  # tune pulls in the process pool machinery: not needed to print a replay
    from advisor.studies.tune import TuneResult


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


def narrow_table(title: str | None = None, **options) -> Table:
    """The house table: one space between columns and none at the edges, so that tables
    read at 80 columns (a terminal, a cron mail)."""
    return Table(title=title, title_justify="left", box=box.SIMPLE, pad_edge=False,
                 padding=(0, 1, 0, 0), **options)


def workload_dict(workload: Workload) -> dict:
    cleaning = workload.cleaning
    return {
        "trace": workload.source, "machine": workload.machine.name,
        "procs": workload.machine.procs, "jobs": len(workload),
        "cleaning": {"jobs_read": cleaning.jobs_read, "removed": cleaning.removed}
        if cleaning else None,
    }


def workload_caption(workload: Workload) -> Text:
    c = workload.cleaning
    removed = ", ".join(f"{n} {k}" for k, n in c.removed.items()) if c else ""
    text = f"{workload.source}: {len(workload)} jobs on {workload.machine.procs} processors"
    if c:
        text += f" ({c.jobs_read} read; removed: {removed or 'none'})"
    return Text(text, style="dim")


def replay_dict(workload: Workload, results: list[ReplayResult], estimates: str) -> dict:
    return {**workload_dict(workload), "estimates": estimates,
            "policies": {r.policy.spec: r.as_dict() for r in results}}


def replay_table(workload: Workload, results: list[ReplayResult]) -> Group:
    table = narrow_table("Replay (waits in h:mm:ss)")
    table.add_column("policy", no_wrap=True)
    for col in ("jobs", "avg wait", "p90 wait", "max wait", "avg bsld", "util"):
        table.add_column(col, justify="right", no_wrap=True)
    for r in results:
        s = r.summary
        table.add_row(r.policy.label, str(s["jobs"]), _hms(s["avg_wait"]), _hms(s["p90_wait"]),
                      _hms(s["max_wait"]), f"{s['avg_bsld']:.1f}", f"{s['utilization']:.1%}")
    return Group(table, workload_caption(workload))


def tune_table(workload: Workload, result: TuneResult, top: int = 10) -> Group:
    rows = result.rows()
    order = sorted(range(len(rows)), key=lambda i: rows[i]["train_avg_wait"])
    shown = order[:top] + ([result.baseline] if result.baseline not in order[:top] else [])
    table = narrow_table(f"Tuning over {result.train.shape[2]} resampled weeks per half "
                         f"(relative to EASY-FCFS-FCFS): the best {min(top, len(rows))} of "
                         f"{len(rows)} policies on the train weeks"
                         + (", and the baseline" if len(shown) > top else "")
                         + " (--json lists all)")
    table.add_column("policy", no_wrap=True)
    for col in ("train AvgWait", "test AvgWait", "train MaxWait", "test MaxWait"):
        table.add_column(col, justify="right")
    for i in shown:
        r = rows[i]
        style = "bold green" if i == result.best else ("dim" if i == result.baseline else "")
        table.add_row(r["label"], f"{r['train_avg_wait_ratio']:.0%}",
                      f"{r['test_avg_wait_ratio']:.0%}", f"{r['train_max_wait_ratio']:.0%}",
                      f"{r['test_max_wait_ratio']:.0%}", style=style)
    best, base = rows[result.best], rows[result.baseline]
    verdict = Text.assemble(
        ("Best on train: ", "bold"), (best["label"], "bold green"),
        f"; on the test weeks its mean AvgWait is {_hms(best['test_avg_wait'])} against "
        f"{_hms(base['test_avg_wait'])} for EASY-FCFS-FCFS "
        f"({best['test_avg_wait_ratio'] - 1:+.0%}), mean MaxWait "
        f"{_hms(best['test_max_wait'])} against {_hms(base['test_max_wait'])}.")
    return Group(table, verdict, workload_caption(workload))


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
        table = narrow_table(title)
        table.add_column("plugin", no_wrap=True)
        table.add_column("what it does, parameters")
        table.add_column("grid", no_wrap=False)
        table.add_column("Slurm", no_wrap=True)
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
def _when(snapshot: Snapshot, t: int | None) -> str:
    """An instant of the snapshot: a UTC date for a live cluster, or for a trace whose
    start is known; the trace's own clock otherwise."""
    if t is None:
        return "-"
    offset = snapshot.source.get("unix_start_time")
    if snapshot.source.get("kind") == "slurm" or offset:
        epoch = t + int(offset or 0)
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"t={t}"


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
    states = narrow_table("Nodes by state")
    for col in ("state", "nodes", "CPUs", "allocated"):
        states.add_column(col, justify="left" if col == "state" else "right")
    counts: dict[str, list[int]] = {}
    for n in m.nodes:
        c = counts.setdefault(n.state, [0, 0, 0])
        c[0], c[1], c[2] = c[0] + 1, c[1] + n.cpus, c[2] + n.alloc_cpus
    for state, (k, cpus, alloc) in sorted(counts.items()):
        states.add_row(state, str(k), str(cpus), str(alloc))

    parts = narrow_table("Partitions and their queues")
    for col in ("partition", "nodes", "MaxTime", "tier", "factor", "running (CPUs)",
                "pending (CPUs)"):
        parts.add_column(col, justify="left" if col == "partition" else "right")
    for p in m.partitions:
        run = [j for j in snapshot.running if j.partition == p.name]
        wait = [j for j in snapshot.pending if p.name in j.asked]
        parts.add_row(p.name + ("*" if p.default else ""), str(len(p.nodes)),
                      _limit(p.max_time), str(p.priority_tier), str(p.priority_job_factor),
                      f"{len(run)} ({sum(j.cpus for j in run)})",
                      f"{len(wait)} ({sum(j.cpus for j in wait)})")

    queue = narrow_table(f"Top of the queue (first {top} by priority)")
    for col in ("job", "user", "partition", "CPUs", "limit", "waited", "priority", "factors",
                "reason"):
        queue.add_column(col, justify="right" if col in ("CPUs", "priority") else "left")
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
    if src.get("kind") == "swf":
        conf = Text.assemble(("Policy replayed: ", "bold"), f"{src.get('policy')} (textbook "
                             "engine; priority = rank in the policy's queue order)")
    return Group(head, states, parts, queue, conf)


def online_table(workload: Workload, result, weeks: int = 12) -> Group:
    """Seed 000's comparison: overall, the policies followed, and the first weeks."""
    t = result.total
    title = Text(f"Online replay: the advisor every {result.every / 86400:g} d against "
                 f"{result.baseline} kept throughout (engine: slurm mode)", style="bold")
    head = narrow_table()
    for col in ("", "static", "online"):
        head.add_column(col, justify="right" if col else "left")
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
    week = narrow_table(f"Per week (first {weeks})")
    for col in ("week", "jobs", "R", "avg wait static", "avg wait online", "max wait static",
                "max wait online"):
        week.add_column(col, justify="right")
    for row in result.weeks.head(weeks).itertuples():
        week.add_row(str(row.week), str(row.jobs), f"{row.r:+.2f}",
                     _hms(row.avg_wait_static), _hms(row.avg_wait_online),
                     _hms(row.max_wait_static), _hms(row.max_wait_online))
    return Group(workload_caption(workload), title, head, caption, policies, week)
