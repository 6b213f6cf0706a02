"""The advice benchmark (``advisor.whatif.hindsight``) as a table and a weekly plot."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.model import Workload
from advisor.views.plots import png_bytes, pyplot
from advisor.views.report import narrow_table, short_duration, workload_caption
from advisor.whatif.hindsight import BEST, BEST_SAFE, ONLINE

#: static runs listed besides the named ones, best first
LISTED = 5


def advice_bench_table(workload: Workload, bench) -> Group:
    """The baseline, the best static runs, the online advice; then the next best."""
    t, table = bench.total, bench.table
    title = Text(f"The advice against every candidate kept fixed: decisions every "
                 f"{bench.every / 86400:g} d, ranked by {bench.objective}", style="bold")
    out = narrow_table()
    for col in ("run", "avg wait", "p95", "max wait", "bsld", "R"):
        out.add_column(col, justify="left" if col == "run" else "right")
    base = table.iloc[0]
    names = {"baseline": base.spec, BEST: bench.best, BEST_SAFE: bench.best_safe}
    rows = [(f"{n}: {s}", table[table.spec == s].iloc[0]) for n, s in names.items() if s]
    rows.append((ONLINE, table.iloc[-1]))
    key = bench.objective
    static = table.iloc[1:-1].sort_values(key)
    shown = {r.spec for _, r in rows}
    rows += [(r.spec + ("" if r.safe else " (over risk)"), r)
             for r in static.itertuples() if r.spec not in shown][:LISTED]
    for name, r in rows:
        out.add_row(name, short_duration(r.avg_wait), short_duration(r.p95_wait),
                    short_duration(r.max_wait), f"{r.avg_bsld:.1f}", f"{r.r:+.2f}")
    safe = t["online_vs_best_safe"]
    caption = Text(
        f"online against the baseline {t['online_vs_baseline']:+.1%}, against the best "
        f"static {t['online_vs_best']:+.1%}, against the best within risk "
        + (f"{safe:+.1%}" if safe is not None else "(none)")
        + f" ({key}; < 0: online better); online MaxWait {t['max_wait_over_baseline']:.2f}x "
        f"the baseline's (risk {bench.risk:g}); {t['static_runs']} candidates kept fixed; "
        f"{t['decisions']} decision points, {t['changes']} changes; R: seed 000's slowdown "
        "ratio against the baseline (> 0: better)")
    return Group(workload_caption(workload), title, out, caption)


def advice_bench_png(bench, title: str = "") -> bytes:
    """Average wait per week of submission: the baseline, the best static runs, online."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    w = bench.weeks
    style = {"baseline": ("0.45", "--"), BEST: ("tab:orange", ":"),
             BEST_SAFE: ("tab:green", "-."), ONLINE: ("tab:blue", "-")}
    for name, (colour, ls) in style.items():
        if name in w:
            ax.plot(w["week"], w[name] / 3600, color=colour, ls=ls, lw=1.4, label=name)
    ax.set_xlabel("week of submission")
    ax.set_ylabel("average wait (h)")
    ax.set_title((title + ": " if title else "") + "average wait per week, the advice "
                 "against the candidates kept fixed", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return png_bytes(fig, plt)
