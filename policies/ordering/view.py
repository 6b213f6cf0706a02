"""Lelong et al.'s tuning study for the terminal (its JSON is ``TuneResult.as_dict``) and its
plot."""
from __future__ import annotations

from rich.console import Group
from rich.text import Text

from advisor.model import Workload
from advisor.policies.ordering.study import TuneResult
from advisor.views.fit import Col, FitTable
from advisor.views.plots import png_bytes, pyplot
from advisor.views.report import _hms, workload_caption


COLUMNS = [Col("policy", figure=False), *map(Col, ("train avg wait", "test avg wait",
                                                   "train max wait", "test max wait"))]


def tune_table(workload: Workload, result: TuneResult, top: int = 10,
               estimates: str = "user") -> Group:
    rows = result.rows()
    order = sorted(range(len(rows)), key=lambda i: rows[i]["train_avg_wait"])
    shown = order[:top] + ([result.baseline] if result.baseline not in order[:top] else [])
    table = FitTable(f"Tuning over {result.train.shape[2]} resampled weeks per half: "
                     f"the best {min(top, len(rows))} of {len(rows)} policies on the train "
                     "weeks" + (", and the baseline" if len(shown) > top else "")
                     + " (--json lists all); each wait's cut against EASY-FCFS-FCFS's (> 0: "
                     "shorter, as every gain the advisor prints)", COLUMNS)
    for i in shown:
        r = rows[i]
        style = "bold green" if i == result.best else ("dim" if i == result.baseline else "")
        table.add_row(r["label"], *(_cut(r[f"{half}_{metric}_ratio"]) for metric in
                                    ("avg_wait", "max_wait") for half in ("train", "test")),
                      style=style)
    best, base = rows[result.best], rows[result.baseline]
    verdict = Text.assemble(
        ("Best on train: ", "bold"), (best["label"], "bold green"),
        f"; on the test weeks its mean AvgWait is {_hms(best['test_avg_wait'])} against "
        f"{_hms(base['test_avg_wait'])} for EASY-FCFS-FCFS "
        f"({_cut(best['test_avg_wait_ratio'])} cut), mean MaxWait "
        f"{_hms(best['test_max_wait'])} against {_hms(base['test_max_wait'])}.")
    return Group(table, verdict, workload_caption(workload, estimates))


def _cut(ratio: float) -> str:
    """A wait's ratio to the baseline's as the advisor's gains are shown: the share it is
    cut by (> 0: shorter)."""
    return f"{1 - ratio:+.0%}"


#: policies named on the tune plot, best on the train weeks first
NAMED = 5


def tune_png(result: TuneResult, title: str = "") -> bytes:
    """Lelong et al.'s Fig. 8 style: each policy's mean AvgWait difference to
    EASY-FCFS-FCFS on the training weeks (left) joined to the same on the testing weeks
    (right). The best ``NAMED`` on the train weeks are coloured, marked and named in the
    legend (set a little aside from each other, so that none hides another), the others
    grey."""
    plt = pyplot()
    rows = result.rows()
    fig, ax = plt.subplots(figsize=(7, 8), dpi=100)
    top = sorted(range(len(rows)), key=lambda i: rows[i]["train_avg_wait"])[:NAMED]
    colours = plt.get_cmap("tab10").colors
    markers = "os^vD"
    for i, r in enumerate(rows):
        if i not in top:
            ax.plot([0, 1], [-r["train_avg_wait_delta"], -r["test_avg_wait_delta"]],
                    marker="o", ms=3, lw=0.6, color="0.7", zorder=1)
    for rank, i in enumerate(top):
        r = rows[i]
        dodge = (rank - (NAMED - 1) / 2) * 0.015
        ax.plot([dodge, 1 + dodge], [-r["train_avg_wait_delta"], -r["test_avg_wait_delta"]],
                marker=markers[rank % len(markers)], ms=6, lw=2.0, color=colours[rank],
                zorder=3 + NAMED - rank, label=f"{rank + 1}. {r['label']}"
                + (" (best on train)" if rank == 0 else ""))
    ax.axhline(0, color="k", lw=0.8, ls="--", label="EASY-FCFS-FCFS (the reference)")
    base = rows[result.baseline]
    ax.set_xticks([0, 1], ["train weeks", "test weeks"])
    ax.set_xlabel("weeks resampled from the trace's first half (train) and second (test)")
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylabel("EASY-FCFS-FCFS's mean AvgWait less the policy's (seconds; > 0: shorter)")
    ax.set_title((title + ": " if title else "") + f"AvgWait of {len(rows)} policies over "
                 f"{result.train.shape[2]} resampled weeks per half\nEASY-FCFS-FCFS waits "
                 f"{base['train_avg_wait']:.0f} s on train, {base['test_avg_wait']:.0f} s on "
                 f"test;\nthe {NAMED} best on train coloured, the others grey", fontsize=10)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=2)
    fig.tight_layout()
    return png_bytes(fig, plt)
