"""Plots (the ``[plot]`` extra): rendered to PNG bytes; the caller writes them."""
from __future__ import annotations

import io

from advisor.errors import MissingExtra
from advisor.tune import TuneResult


def tune_png(result: TuneResult, title: str = "") -> bytes:
    """Seed 002 Fig. 8 style: each policy's mean AvgWait difference to EASY-FCFS-FCFS on the
    training weeks (left) joined to the same on the testing weeks (right)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("matplotlib", "plot") from None
    rows = result.rows()
    fig, ax = plt.subplots(figsize=(6, 7), dpi=100)
    for i, r in enumerate(rows):
        best = i == result.best
        ax.plot([0, 1], [r["train_avg_wait_delta"], r["test_avg_wait_delta"]],
                marker="o", lw=2.5 if best else 0.8, color="tab:green" if best else "0.55",
                zorder=3 if best else 1)
        if best:
            ax.annotate(r["label"], (1, r["test_avg_wait_delta"]), xytext=(6, 0),
                        textcoords="offset points", va="center", color="tab:green")
    ax.axhline(0, color="k", lw=0.8, ls="--")
    base = rows[result.baseline]
    ax.set_xticks([0, 1], ["train", "test"])
    ax.set_xlim(-0.2, 1.6)
    ax.set_ylabel("mean AvgWait - EASY-FCFS-FCFS's (s)")
    ax.set_title(title or "AvgWait, train vs test", fontsize=10)
    ax.text(0.02, 0.02, f"EASY-FCFS-FCFS: train {base['train_avg_wait']:.0f} s, "
            f"test {base['test_avg_wait']:.0f} s; {result.train.shape[2]} weeks per half",
            transform=ax.transAxes, fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
