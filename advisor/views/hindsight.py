"""The advice benchmark (``advisor.whatif.hindsight``) as a table and a weekly plot."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.model import Workload
from advisor.views.plots import png_bytes, pyplot
from advisor.views.fit import Col, FitTable
from advisor.views.report import short_duration, workload_caption
from advisor.whatif.hindsight import BEST, BEST_SAFE, ONLINE, ROLLING, SITE

#: static runs listed besides the named ones, best first
LISTED = 5


def advice_bench_table(workload: Workload, bench) -> Group:
    """The baseline, the best static runs, the site's and the rolling pick, the online
    advice; then the next best static runs."""
    t, table = bench.total, bench.table
    title = Text(f"The advice against every candidate kept fixed and the picks a site "
                 f"would make: decisions every {bench.every / 86400:g} d, ranked by "
                 f"{bench.objective}, over {t['jobs']:,} jobs", style="bold")
    out = FitTable(None, [Col("run", figure=False),
                          *map(Col, ("avg wait", "p95", "max wait", "bsld", "R"))])
    base = table.iloc[0]
    by_name = table.set_index("name")
    names = {"baseline": base.spec, BEST: bench.best, BEST_SAFE: bench.best_safe}
    rows = [(f"{n}: {s}", table[table.spec == s].iloc[0]) for n, s in names.items() if s]
    if SITE in by_name.index:
        rows.append((f"{SITE}: {bench.pick}", by_name.loc[SITE]))
    if ROLLING in by_name.index:
        rows.append((f"{ROLLING} ({t['rolling_changes']} changes)", by_name.loc[ROLLING]))
    rows.append((f"{ONLINE} ({t['changes']} changes)", table.iloc[-1]))
    key = bench.objective
    static = table[~table["name"].isin(["baseline", SITE, ROLLING, ONLINE])].sort_values(key)
    shown = {r.spec for _, r in rows}
    rows += [(r.spec + ("" if r.safe else " (over risk)"), r)
             for r in static.itertuples() if r.spec not in shown][:LISTED]
    for name, r in rows:
        out.add_row(name, short_duration(r.avg_wait), short_duration(r.p95_wait),
                    short_duration(r.max_wait), f"{r.avg_bsld:.1f}", f"{r.r:+.2f}")

    def gain(value):
        return "(none)" if value is None else f"{-value:+.1%}"

    caption = Text(
        f"gain of the advice ({key}; > 0: the advice better, as R): against the baseline "
        f"{gain(t['online_vs_baseline'])}, the best static {gain(t['online_vs_best'])}, "
        f"the best within risk {gain(t['online_vs_best_safe'])}, the site's pick "
        f"{gain(t['online_vs_pick'])}, the rolling pick {gain(t['online_vs_rolling'])}; "
        f"the advice's MaxWait {t['max_wait_over_baseline']:.2f}x the baseline's (risk "
        f"{bench.risk:g}); {t['static_runs']} candidates kept fixed; {t['decisions']} "
        f"decision points; R: Lawson and Smirni's slowdown ratio against the baseline")
    return Group(workload_caption(workload), title, out, caption)


def advice_bench_png(bench, title: str = "") -> bytes:
    """Average wait per week of submission: the baseline, the best static runs (named),
    the advice. Each series has a marker of its own and is set a little aside from the
    others, so that one equal to another stays visible."""
    from matplotlib.ticker import MaxNLocator
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=100)
    w = bench.weeks
    label = dict(zip(bench.table["name"], bench.table["spec"]))
    names = {"baseline": f"baseline: {label.get('baseline', '')}",
             BEST: f"best kept fixed (hindsight): {bench.best}",
             BEST_SAFE: f"best kept fixed within risk: {bench.best_safe}",
             SITE: f"the site's pick (weeks before): {bench.pick}",
             ROLLING: "the rolling pick (re-picked weekly)",
             ONLINE: "the advice, followed"}
    style = {"baseline": ("0.45", "--", "s"), BEST: ("tab:orange", ":", "^"),
             BEST_SAFE: ("tab:green", "-.", "v"), SITE: ("tab:purple", (0, (3, 1, 1, 1)), "D"),
             ROLLING: ("tab:brown", (0, (5, 2)), "P"), ONLINE: ("tab:blue", "-", "o")}
    shown = [n for n in style if n in w]
    for k, name in enumerate(shown):
        colour, ls, marker = style[name]
        dodge = (k - (len(shown) - 1) / 2) * 0.06
        ax.plot(w["week"] + dodge, w[name] / 3600, color=colour, ls=ls, lw=1.4,
                marker=marker, ms=5, label=names[name])
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("week of submission (0: the window's first judged week)")
    ax.set_ylabel("average wait (hours)")
    ax.set_title((title + ": " if title else "") + f"average wait per week over "
                 f"{len(w)} week{'s' if len(w) != 1 else ''}, the advice every "
                 f"{bench.every / 86400:g} d against candidates kept fixed", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return png_bytes(fig, plt)
