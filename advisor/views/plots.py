"""Plots (the ``[plot]`` extra): rendered to PNG bytes; the caller writes them."""
from __future__ import annotations

import io
from datetime import datetime, timezone

from advisor.errors import MissingExtra
from advisor.studies.tune import TuneResult


def tune_png(result: TuneResult, title: str = "") -> bytes:
    """Seed 002 Fig. 8 style: each policy's mean AvgWait difference to EASY-FCFS-FCFS on the
    training weeks (left) joined to the same on the testing weeks (right)."""
    plt = _pyplot()
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
    return _png(fig, plt)


def report_png(last: dict, docs: list[dict]) -> bytes:
    """``advisor report --plot``: the latest run's candidates, objective (mean ± sd over the
    samples) against MaxWait from now, with the risk limit; and the queue's bounded
    slowdown at each stored run, changes marked."""
    plt = _pyplot()
    fig, (cand, hist) = plt.subplots(1, 2, figsize=(12, 5), dpi=100)
    k = last["settings"]["objective"]
    rows = last["candidates"]
    chosen = last["chosen"]["spec"] if last["change"] else None
    for i, r in enumerate(rows):
        colour = "tab:green" if r["spec"] == chosen and i else (
            "k" if i == 0 else ("0.5" if r["safe"] else "tab:red"))
        cand.errorbar(r["max_wait"] / 3600, r[k], yerr=r[k + "_sd"], fmt="o", ms=4,
                      color=colour, elinewidth=0.7, zorder=3 if colour != "0.5" else 2)
        if i == 0 or colour == "tab:green":
            cand.annotate(r["label"], (r["max_wait"] / 3600, r[k]), xytext=(5, 4),
                          textcoords="offset points", fontsize=8, color=colour)
    ref = last["settings"].get("reference")
    base = next((r for r in rows if r["spec"] == ref), rows[0]) if rows else None
    if base is not None:
        cand.axvline(last["settings"]["risk"] * base["max_wait"] / 3600, color="tab:red",
                     lw=0.8, ls="--", label=f"MaxWait risk limit (x{last['settings']['risk']:g})")
        cand.legend(fontsize=8, loc="best")
    cand.set_xlabel("MaxWait from now, mean over samples (h)")
    cand.set_ylabel(f"{k} (mean ± sd)")
    cand.set_title(f"Candidates at {last.get('cluster', {}).get('when', last['snapshot_time'])}"
                   "\nblack: in effect, green: recommended, red: over a risk limit",
                   fontsize=9)
    when = [datetime.fromtimestamp(d["at"], timezone.utc) for d in docs]
    bsld = [d.get("queue_bsld", float("nan")) for d in docs]
    hist.plot(when, bsld, "-o", ms=3, color="0.4", lw=0.8)
    changes = [(w, b) for w, b, d in zip(when, bsld, docs) if d.get("change")]
    if changes:
        hist.scatter(*zip(*changes), color="tab:green", zorder=3, label="change recommended")
        hist.legend(fontsize=8)
    hist.set_ylabel("queue bounded slowdown at the run")
    hist.set_title(f"The last {len(docs)} runs (UTC)", fontsize=9)
    import matplotlib.dates as mdates
    locator = mdates.AutoDateLocator()
    hist.xaxis.set_major_locator(locator)
    hist.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    fig.tight_layout()
    return _png(fig, plt)


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("matplotlib", "plot") from None
    return plt


def _png(fig, plt) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
