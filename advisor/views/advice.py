"""The admin's view of a recommendation: the cluster it saw, the candidates it simulated, the
decision, the exact change (and what ``--apply`` did), and the history of past runs.

Everything here renders the run's JSON document (``recommend --json``, and what the store
keeps), so ``advisor recommend`` and a later ``advisor report`` print the same thing from the
same data, and the JSON is the whole report.
"""
from __future__ import annotations

from datetime import datetime, timezone

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from advisor.model import Snapshot
from advisor.views.report import _hms, _limit, _when


def cluster_dict(snapshot: Snapshot, top: int = 5) -> dict:
    """What the recommendation started from, small enough to store with every run."""
    m = snapshot.machine
    busy = sum(n.alloc_cpus for n in m.nodes) or snapshot.busy_cpus
    parts = []
    for p in m.partitions:
        run = [j for j in snapshot.running if j.partition == p.name]
        wait = [j for j in snapshot.pending if p.name in (j.partitions or (j.partition,))]
        parts.append({"name": p.name, "nodes": len(p.nodes), "running": len(run),
                      "running_cpus": sum(j.cpus for j in run), "pending": len(wait),
                      "pending_cpus": sum(j.cpus for j in wait)})
    waits = [snapshot.time - j.submit_time for j in snapshot.pending]
    return {"when": _when(snapshot, snapshot.time), "name": m.name, "nodes": len(m.nodes),
            "cpus": m.cpus, "busy_cpus": busy, "running": len(snapshot.running),
            "pending": len(snapshot.pending), "oldest_wait": max(waits, default=0),
            "partitions": parts,
            "top": [{"job": j.job_id, "user": j.user, "cpus": j.cpus,
                     "limit": _limit(j.time_limit), "waited": snapshot.time - j.submit_time,
                     "priority": j.priority} for j in snapshot.pending[:top]]}


def cluster_view(c: dict) -> Group:
    head = Text.assemble((f"Cluster {c['name'] or ''}".rstrip(), "bold"),
                         f" at {c['when']}: {c['nodes']} nodes, {c['cpus']} CPUs, "
                         f"{c['busy_cpus']} busy ({c['busy_cpus'] / max(c['cpus'], 1):.0%}); "
                         f"{c['running']} running, {c['pending']} pending, the oldest waiting "
                         f"{_hms(c['oldest_wait'])}")
    parts = Table(box=box.SIMPLE)
    for col in ("partition", "nodes", "running (CPUs)", "pending (CPUs)"):
        parts.add_column(col, justify="left" if col == "partition" else "right")
    for p in c["partitions"]:
        parts.add_row(p["name"], str(p["nodes"]), f"{p['running']} ({p['running_cpus']})",
                      f"{p['pending']} ({p['pending_cpus']})")
    return Group(head, parts)


def recommendation_view(doc: dict, top: int = 12) -> Group:
    """The candidates simulated (best first), the decision, and the exact change."""
    parts = []
    if doc.get("cluster"):
        parts.append(cluster_view(doc["cluster"]))
    parts.append(Text(f"queue bounded slowdown now {doc['queue_bsld']:.2f}; history "
                      f"{doc['history_jobs']} finished jobs", style="dim"))
    settings, rows = doc["settings"], doc["candidates"]
    chosen = doc["chosen"]["spec"] if doc["change"] else None
    if rows:
        k = settings["objective"]
        table = Table(title=f"Candidates over {settings['samples']} sampled futures of "
                      f"{settings['horizon'] // 3600} h (mean ± sd; waits h:mm:ss; push: "
                      "the job pushed furthest past the reference's longest wait, its wait "
                      "over its wait under the reference)",
                      title_justify="left", box=box.SIMPLE)
        for col in ("candidate", "fidelity", k, "gain", "wins", "avg wait",
                    "p95 from now", "max from now", "push", "risk"):
            table.add_column(col, justify="left" if col in ("candidate", "fidelity")
                             else "right", no_wrap=True)
        order = sorted(enumerate(rows), key=lambda r: (r[0] != 0, -r[1]["gain"]))
        fmt = _hms if "wait" in k else (lambda v: f"{v:.1%}" if k == "utilization"
                                        else f"{v:.2f}")
        for i, row in order[:top + 1]:
            style = "bold green" if i and row["spec"] == chosen else ("bold" if i == 0
                                                                      else None)
            table.add_row(row["label"], row["fidelity"],
                          f"{fmt(row[k])} ± {fmt(row[k + '_sd'])}", f"{row['gain']:+.1%}",
                          f"{row['wins']:.0%}", _hms(row["avg_wait"]), _hms(row["p95_wait"]),
                          _hms(row["max_wait"]), _push(row),
                          "ok" if row["safe"] else "over",
                          style=style)
        parts.append(table)
    if doc.get("left_out"):
        parts.append(Text(doc["left_out"], style="dim"))
    verdict = "change recommended" if doc["change"] else "keep the configuration in effect"
    parts.append(Text(f"{verdict}: {doc['reason']}",
                      style="bold green" if doc["change"] else "bold"))
    change = doc.get("change_detail")
    if change and (change["diff"] or change["job_submit_lua"] or change.get("partitions")):
        parts += _change_view(change)
    if "applied" in doc:
        parts.append(applied_view(doc["applied"]))
    return Group(*parts)


def _push(row: dict) -> str:
    """``tail_push``: '-' when no job waits beyond the reference's longest wait (or a run
    stored before it existed), 'never' (null) when a job would never start."""
    if "tail_push" not in row or row["tail_push"] == 0:
        return "-"
    return "never" if row["tail_push"] is None else f"{row['tail_push']:.1f}x"


def _change_view(change: dict) -> list:
    parts = [Text(f"fidelity: {change['fidelity']}; activation: {change['activation']}")]
    diff = Table(title="slurm.conf (include fragment)", title_justify="left", box=box.SIMPLE)
    for col in ("key", "in effect", "recommended"):
        diff.add_column(col)
    for key, d in change["diff"].items():
        diff.add_row(key, d["in_effect"] or "(unset)", d["recommended"] or "(unset)")
    parts.append(diff)
    if change.get("partitions"):
        parts.append(Text("partitions (PartitionName lines, in the fragment):\n"
                          + "\n".join(change["partitions"])))
    if change["job_submit_lua"]:
        parts.append(Text("job_submit.lua applies the job rules (written with --write, "
                          "installed with --apply)"))
    commands = change["commands"]
    if commands:
        more = len(commands) - 6
        parts.append(Text("\n".join(commands[:6] + ([f"... {more} more"] if more > 0
                                                    else []))))
    parts += [Text(f"caveat: {c}", style="dim") for c in change["caveats"]]
    return parts


def applied_view(applied: dict) -> Text:
    """What ``--apply`` did (``adapters.slurm_apply.Applied.as_dict``)."""
    if "error" in applied:
        return Text(f"not applied: {applied['error']}", style="bold red")
    keys = ", ".join(f"{k}={v}" for k, v in applied["verified"].items()) or "none"
    lines = [f"applied: {applied['fragment']} written"
             + (f" and {applied['job_submit_lua']}" if applied["job_submit_lua"] else "")
             + " (backups: " + (", ".join(applied["backups"]) or "none, files were new")
             + "); scontrol reconfigure done",
             f"scontrol show config confirms {keys}",
             f"site factors updated on {applied['site_updates']} pending jobs"
             + (f" ({len(applied['skipped_jobs'])} no longer pending, skipped)"
                if applied["skipped_jobs"] else "")]
    return Text("\n".join(lines), style="green")


def history_view(runs: list[dict]) -> Table:
    table = Table(title="Past recommendations (newest first)", title_justify="left",
                  box=box.SIMPLE)
    for col in ("run", "when", "source", "queue bsld", "decision", "gain", "applied", "exit"):
        table.add_column(col, justify="right" if col in ("run", "queue bsld", "gain", "exit")
                         else "left")
    for r in runs:
        when = datetime.fromtimestamp(r["at"], timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        applied = r.get("applied")
        table.add_row(str(r["id"]), when, r["source"],
                      "-" if r.get("queue_bsld") is None else f"{r['queue_bsld']:.2f}",
                      r["label"] if r["change"] else "keep",
                      "-" if r.get("gain") is None else f"{r['gain']:+.1%}",
                      applied or "-",
                      str(r["exit_code"]))
    return table


def report_view(last: dict | None, runs: list[dict]) -> Group:
    """``advisor report``: the latest run in full, then the history."""
    if last is None:
        return Group(Text("no recommendation stored yet: run advisor recommend first"))
    return Group(Text(f"Latest run ({last.get('source', '')})", style="bold underline"),
                 recommendation_view(last), history_view(runs))
