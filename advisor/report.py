"""Reports: rich renderables for the terminal, and the same content as JSON-ready dicts."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from advisor.model import Workload
from advisor.plugins import describe_params, registry
from advisor.replay import ReplayResult

if TYPE_CHECKING:  # tune pulls in the process pool machinery: not needed to print a replay
    from advisor.tune import TuneResult


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}"


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
    table = Table(title="Replay (waits in h:mm:ss)", title_justify="left", box=box.SIMPLE)
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
    table = Table(title=f"Tuning over {result.train.shape[2]} resampled weeks per half "
                        "(relative to EASY-FCFS-FCFS)", title_justify="left", box=box.SIMPLE)
    table.add_column("policy", no_wrap=True)
    for col in ("train AvgWait", "test AvgWait", "train MaxWait", "test MaxWait"):
        table.add_column(col, justify="right")
    shown = order[:top] + ([result.baseline] if result.baseline not in order[:top] else [])
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
    out = {}
    for key, p in sorted(registry().items()):
        out[key] = {"summary": p.summary, "params": describe_params(p.Params)}
    return out


def policies_table() -> Table:
    table = Table(title="Installed policy plugins", title_justify="left", box=box.SIMPLE)
    table.add_column("plugin")
    table.add_column("what it does")
    table.add_column("parameters")
    for key, info in policies_dict().items():
        params = "\n".join(f"{p['name']}={p['default']}: {p.get('help', '')}"
                           for p in info["params"])
        table.add_row(key, info["summary"], params or "-")
    return table
