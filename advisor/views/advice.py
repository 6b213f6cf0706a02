"""The admin's view of a recommendation: the cluster it saw, the candidates it simulated, the
decision, the exact change (and what ``--apply`` did), and the history of past runs.

Everything here renders the run's JSON document (``recommend --json``, and what the store
keeps), so ``advisor recommend`` and a later ``advisor report`` print the same thing from the
same data, and the JSON is the whole report.
"""
from __future__ import annotations

from datetime import datetime

from rich.console import Group
from rich.text import Text

from advisor.model import Snapshot
from advisor.views.fit import Col, FirstFit, FitTable
from advisor.views.report import _hms, _limit, _when, snapshot_clock


def cluster_dict(snapshot: Snapshot, top: int = 5) -> dict:
    """What the recommendation started from, small enough to store with every run."""
    m = snapshot.machine
    busy = sum(n.alloc_cpus for n in m.nodes) or snapshot.busy_cpus
    parts = []
    for p in m.partitions:
        run = [j for j in snapshot.running if j.partition == p.name]
        wait = [j for j in snapshot.pending if p.name in j.asked]
        parts.append({"name": p.name, "nodes": len(p.nodes), "running": len(run),
                      "running_cpus": sum(j.cpus for j in run), "pending": len(wait),
                      "pending_cpus": sum(j.cpus for j in wait)})
    waits = [snapshot.time - j.submit_time for j in snapshot.pending]
    offset, zone = snapshot_clock(snapshot)
    epoch = None if offset is None else snapshot.time + offset
    return {"when": _when(snapshot, snapshot.time), "epoch": epoch, "zone": zone,
            "name": m.name, "nodes": len(m.nodes),
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
    parts = FitTable(None, [Col("partition", figure=False), Col("nodes"),
                            Col("running (CPUs)"), Col("pending (CPUs)")])
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
    for note in ("history_note", "release_note"):
        if doc.get(note):
            parts.append(Text(doc[note], style="yellow"))
    if doc["candidates"]:
        parts.append(candidates_table(doc, top))
        accounts = accounts_table(doc)
        if accounts is not None:
            parts.append(accounts)
    if doc.get("site_check"):
        parts.append(site_line(doc["site_check"], doc["settings"].get("fidelity_floor", 0)))
    if doc.get("left_out"):
        parts.append(Text(doc["left_out"], style="dim"))
    if doc.get("unplayed_note"):
        parts.append(Text(doc["unplayed_note"] + "; every candidate's fidelity is at most "
                          "approximate", style="yellow"))
    if doc.get("reference_tails"):
        parts.append(Text(floor_line(doc), style="dim"))
    verdict = "change recommended" if doc["change"] else "keep the configuration in effect"
    parts.append(Text(f"{verdict}: {doc['reason']}",
                      style="bold green" if doc["change"] else "bold"))
    change = doc.get("change_detail")
    if change and (change["diff"] or change["job_submit_lua"] or change.get("partitions")
                   or change.get("removed_partitions")):
        parts += _change_view(change)
    if "applied" in doc:
        parts.append(applied_view(doc["applied"]))
    return Group(*parts)


def site_line(site: dict, floor: float) -> Text:
    """How faithfully the simulation reproduced this site the day before, beside the
    candidates' fidelity (``advisor.whatif.sitecheck``); in yellow below ``floor``."""
    if not site["jobs"]:
        return Text("fidelity on this site: no job of the day before to judge (advisor "
                    "check)", style="yellow")
    low = site["within"] < floor
    return Text(f"fidelity on this site: the simulation started {site['within']:.1%} of "
                f"the {site['jobs']} jobs of the day before within {site['tolerance_s']} s "
                f"of their real start, {site['within_minute']:.1%} within a minute "
                "(advisor check)", style="yellow" if low else "dim")


def floor_line(doc: dict) -> str:
    """The floor under the risk limits: the reference replayed on the recent history."""
    t, s = doc["reference_tails"], doc["settings"]
    return (f"risk limits no lower than {s['risk']:g} x the reference's MaxWait "
            f"{_hms(t['max_wait'])} and p95 wait {_hms(t['p95_wait'])} on the last "
            f"{s['history_weeks']} weeks of history ({t['jobs']:,} jobs, replayed)")


#: what the candidates table's columns say, printed under it
CANDIDATES_LEGEND = (
    "the objective and the waits: means over the futures sampled for the candidate, ± "
    "their standard deviation (the race samples the clearly losing fewer: wins says how "
    "many); past: how much better than the configuration in effect on the last weeks of "
    "jobs replayed under it (> 0: better, as everywhere in the advisor's output; -: no "
    "replay, as for a plan); gain: the same over the sampled futures (-: not sampled, "
    "clearly behind on the past); wins: the futures it is better in, of those sampled "
    "for it; waits from now; push: the job pushed furthest past the reference's longest "
    "wait, its wait over its wait under the reference (-: none); acct (where wide "
    "enough): the account whose mean wait grows most, its mean over its mean under the "
    "reference (-: none grows); risk: ok, or the limits broken: max (MaxWait over --risk "
    "times the reference's), p95 (the same for the 95th-percentile wait), push (over "
    "--risk), fair (acct over --risk, or the fair-share deviation over the reference's "
    "by more than --share-slack), past (MaxWait or p95 wait over the limit on the weeks "
    "replayed), site (it would change the site's priority policy)")


#: the compact layout's fidelity: how faithfully Slurm runs a candidate, in one character
FIDELITY_MARK = {"exact": "=", "approximate": "~", "none": "!"}
COMPACT_LEGEND = "fid.: how faithfully Slurm runs it (= exact, ~ approximate, ! none)"


def _rank(row: dict) -> float:
    """A candidate's place: its gain on the past replayed, else on the futures."""
    for key in ("past_gain", "gain"):
        if row.get(key) is not None:
            return -row[key]
    return float("inf")


def shown_rows(rows: list[dict], chosen: str | None, top: int) -> list[tuple[int, dict]]:
    """The configuration in effect (the first row) and the ``top`` candidates by their
    gain on the past replayed (else on the futures), with their index; the recommended
    one (``chosen``) among them wherever it ranks, in the last place's stead."""
    order = sorted(enumerate(rows), key=lambda r: (r[0] != 0, _rank(r[1])))
    shown = order[:top + 1]
    found = [r for r in order[top + 1:] if r[1]["spec"] == chosen]
    return [*shown[:top], found[0]] if chosen and found else shown


def candidates_table(doc: dict, top: int = 12) -> Group:
    """The candidates, the configuration in effect first, then by their gain on the past
    replayed (else on the futures): the objective, gains, wins, waits, push, the account
    wait (wide) and risk of each. Laid out wide (waits in h:mm:ss) where the width
    allows, compact (waits in hours or minutes) where it does not, and one block per
    candidate below that: every figure whole at any width."""
    settings, rows = doc["settings"], doc["candidates"]
    chosen = doc["chosen"]["spec"] if doc["change"] else None
    k = settings["objective"]
    weeks = (f"the last {settings['history_weeks']} weeks replayed and "
             if settings.get("past") else "")
    title = (f"Candidates over {weeks}{settings['samples']} sampled futures of "
             f"{settings['horizon'] // 3600} h (mean ± sd)")
    order = shown_rows(rows, chosen, top)

    def layout(wide: bool) -> FitTable:
        wait = _hms if wide else _hours
        fmt = wait if "wait" in k else (lambda v: f"{v:.1%}" if k == "utilization"
                                        else f"{v:.2f}" if wide else _number(v))
        names = ("candidate", "fidelity", k, "past", "gain", "wins", "avg wait", "p95 wait",
                 "max wait", "push", "acct", "risk") if wide else \
            ("candidate", "fid.", _short(k), "past", "gain", "wins", "avg", "p95", "max",
             "push", "risk")
        table = FitTable(title + ("; waits h:mm:ss" if wide else "; waits in hours (h) or "
                                  "minutes (m)"),
                         [Col(n, figure=n != "candidate") for n in names],
                         note="" if wide else COMPACT_LEGEND)
        for i, row in order:
            style = "bold green" if i and row["spec"] == chosen else \
                ("bold" if i == 0 else None)
            sep = " ± " if wide else "±"
            sampled = row.get("sampled", True) and row[k] is not None

            def cell(text, ok=sampled):
                return text() if ok else "-"

            table.add_row(row["label"], row["fidelity"] if wide else
                          FIDELITY_MARK.get(row["fidelity"], row["fidelity"][:1]),
                          cell(lambda: f"{fmt(row[k])}{sep}{fmt(row[k + '_sd'])}"),
                          _percent(row.get("past_gain")),
                          cell(lambda: f"{row['gain']:+.1%}"), cell(lambda: _wins(row)),
                          cell(lambda: wait(row["avg_wait"])), cell(lambda: wait(row["p95_wait"])),
                          cell(lambda: wait(row["max_wait"])), _push(row),
                          *((_account(row),) if wide else ()), _risk(row),
                          style=style)
        return table

    return Group(FirstFit(layout(True), layout(False)), Text(CANDIDATES_LEGEND, style="dim"))


def accounts_table(doc: dict, top: int = 8) -> FitTable | None:
    """What the recommended change does to each account, against the configuration in
    effect, over the futures sampled: the accounts whose mean wait grows most first
    (None when no change is recommended, or a run stored before accounts were tallied)."""
    rows = doc["candidates"]
    chosen = next((r for r in rows[1:] if doc["change"] and r["spec"] ==
                   doc["chosen"]["spec"]), None)
    if chosen is None or not chosen.get("accounts") or not rows[0].get("accounts"):
        return None
    now, then = rows[0]["accounts"], chosen["accounts"]
    names = [n for n in then if n in now and then[n]["mean_wait"] is not None
             and now[n]["mean_wait"] is not None]
    names.sort(key=lambda n: now[n]["mean_wait"] - then[n]["mean_wait"])
    more = len(names) - top
    table = FitTable(f"Accounts under {chosen['label']}",
                     [Col("account", figure=False), Col("share"), Col("received"),
                      Col("was"), Col("mean wait"), Col("was")],
                     note=f"was: under the configuration in effect; means over the "
                          f"futures; the {min(top, len(names))} of {len(names)} accounts "
                          f"judged whose mean wait grows most"
                          f"{', the others in the JSON' if more > 0 else ''}; share: its "
                          "normalized share among the accounts with work; received: its "
                          "part of the CPU-time delivered within the horizon")
    for n in names[:top]:
        table.add_row(n, f"{then[n]['share']:.1%}", f"{then[n]['received']:.1%}",
                      f"{now[n]['received']:.1%}", _hms(then[n]["mean_wait"]),
                      _hms(now[n]["mean_wait"]))
    return table


def _wins(row: dict) -> str:
    """The futures a candidate is better in, of those sampled for it ('5/8'); a run stored
    before the count was kept: the share."""
    if "samples" not in row:
        return f"{row['wins']:.0%}"
    return f"{round(row['wins'] * row['samples'])}/{row['samples']}"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


#: the limits a candidate can break, as the risk column names them
LIMITS = {"max_wait": "max", "p95_wait": "p95", "tail_push": "push", "fairness": "fair",
          "past": "past", "site_policy": "site"}


def _risk(row: dict) -> str:
    """'ok', or the limits broken ('p95,push'); 'over' for a run stored before they were
    named."""
    if row["safe"]:
        return "ok"
    if row.get("sampled") is False and not row.get("over"):
        return "-"
    return ",".join(LIMITS[n] for n in row["over"]) if "over" in row else "over"


def _hours(seconds: float) -> str:
    """A wait in a few characters: 45m, 2.9h, 36h."""
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h" if seconds < 36000 else f"{seconds / 3600:.0f}h"


def _number(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}"


def _short(objective: str) -> str:
    return {"avg_bsld": "bsld", "avg_wait": "avg w.", "p95_wait": "p95 w.",
            "utilization": "util"}.get(objective, objective)


def _push(row: dict) -> str:
    """``tail_push``: '-' when no job waits beyond the reference's longest wait (or a run
    stored before it existed), 'never' (null) when a job would never start."""
    if "tail_push" not in row or row["tail_push"] == 0 or row.get("sampled") is False:
        return "-"
    return "never" if row["tail_push"] is None else f"{row['tail_push']:.1f}x"


def _account(row: dict) -> str:
    """``account_wait``: '-' when no account's mean wait grows (or a run stored before it
    was measured)."""
    value = row.get("account_wait")
    if value is None or value <= 1.0 or row.get("sampled") is False:
        return "-"
    return f"{value:.1f}x"


def _change_view(change: dict) -> list:
    parts = [Text(f"fidelity: {change['fidelity']}; activation: {change['activation']}")]
    diff = FitTable("slurm.conf (include fragment)",
                    [Col(c, figure=False) for c in ("key", "in effect", "recommended")])
    for key, d in change["diff"].items():
        diff.add_row(key, d["in_effect"] or "(unset)", d["recommended"] or "(unset)")
    parts.append(diff)
    if change.get("partitions"):
        parts.append(Text("partitions (PartitionName lines, in the fragment):\n"
                          + "\n".join(change["partitions"])))
    if change.get("removed_partitions"):
        parts.append(Text("partitions removed: " + ", ".join(change["removed_partitions"])))
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
    """What ``--apply`` did (``advisor.adapters.slurm_apply.Applied.as_dict``)."""
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


def history_view(runs: list[dict]) -> FitTable:
    table = FitTable("Past recommendations (newest first; when: this machine's time; gain "
                     "> 0: better; site: the share of the day before's jobs the simulation "
                     "started on time, advisor check)",
                     [Col("run"), Col("when", justify="left"), Col("source", figure=False),
                      Col("queue bsld"), Col("decision", figure=False), Col("gain"),
                      Col("site"), Col("applied", justify="left"), Col("exit")])
    for r in runs:
        when = datetime.fromtimestamp(r["at"]).strftime("%Y-%m-%d %H:%M")
        applied = r.get("applied")
        table.add_row(str(r["id"]), when, r["source"],
                      "-" if r.get("queue_bsld") is None else f"{r['queue_bsld']:.2f}",
                      r["label"] if r["change"] else "keep",
                      "-" if r.get("gain") is None else f"{r['gain']:+.1%}",
                      "-" if r.get("site") is None else f"{r['site']:.0%}",
                      applied or "-",
                      str(r["exit_code"]))
    return table


def report_view(last: dict | None, runs: list[dict]) -> Group:
    """``advisor report``: the latest run in full, then the history."""
    if last is None:
        return Group(Text("no recommendation stored yet: run advisor recommend first"))
    return Group(Text(f"Latest run ({last.get('source', '')})", style="bold underline"),
                 recommendation_view(last), history_view(runs))
