"""Plots (the ``[plot]`` extra): rendered to PNG bytes; the caller writes them."""
from __future__ import annotations

import io
from datetime import datetime, timezone

from advisor.errors import MissingExtra
from advisor.studies.tune import TuneResult


#: policies named on the tune plot, best on the train weeks first
NAMED = 5


def tune_png(result: TuneResult, title: str = "") -> bytes:
    """Lelong et al.'s Fig. 8 style: each policy's mean AvgWait difference to
    EASY-FCFS-FCFS on the training weeks (left) joined to the same on the testing weeks
    (right). The best ``NAMED`` on the train weeks are coloured and named in the legend,
    the others grey."""
    plt = pyplot()
    rows = result.rows()
    fig, ax = plt.subplots(figsize=(7, 7), dpi=100)
    top = sorted(range(len(rows)), key=lambda i: rows[i]["train_avg_wait"])[:NAMED]
    colours = plt.get_cmap("tab10").colors
    for i, r in enumerate(rows):
        named = i in top
        rank = top.index(i) if named else None
        ax.plot([0, 1], [r["train_avg_wait_delta"], r["test_avg_wait_delta"]],
                marker="o", ms=3 if not named else 5, lw=2.2 if named else 0.6,
                color=colours[rank] if named else "0.7", zorder=3 + NAMED - rank if named
                else 1, label=f"{rank + 1}. {r['label']}" + (" (best on train)" if rank == 0
                                                              else "") if named else None)
    ax.axhline(0, color="k", lw=0.8, ls="--", label="EASY-FCFS-FCFS")
    base = rows[result.baseline]
    ax.set_xticks([0, 1], ["train", "test"])
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylabel("mean AvgWait - EASY-FCFS-FCFS's (s)")
    ax.set_title((title + ": " if title else "") + f"AvgWait of {len(rows)} policies, train "
                 f"vs test\nthe {NAMED} best on train coloured, the others grey", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.text(0.02, 0.02, f"EASY-FCFS-FCFS: train {base['train_avg_wait']:.0f} s, "
            f"test {base['test_avg_wait']:.0f} s; {result.train.shape[2]} weeks per half",
            transform=ax.transAxes, fontsize=8)
    fig.tight_layout()
    return png_bytes(fig, plt)


#: how each limit a candidate breaks is drawn: (marker, colour, legend text)
BROKEN = {"max_wait": ("X", "tab:red", "over the MaxWait limit"),
          "p95_wait": ("s", "tab:orange", "over the p95 wait limit"),
          "tail_push": ("^", "tab:purple", "pushes a job past risk x its wait")}


def queue_count_png(study) -> bytes:
    """Lawson and Smirni's Figs. 5 and 7: R per week of P fixed classes and of the online
    choice against one queue (a ``QueueCountStudy``)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4), dpi=100)
    w = study.weekly
    ax.plot(w["week"], w["r_fixed"], lw=1, ls="--", color="0.45",
            label=f"{study.parts} queues (R {study.r_fixed:+.2f})")
    ax.plot(w["week"], w["r_online"], lw=1.4, color="tab:blue",
            label=f"online, T={study.trigger:g} L={study.weeks_ahead} "
                  f"(R {study.r_online:+.2f})")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xlabel("week")
    ax.set_ylabel("R against one queue (> 0: better)")
    ax.set_title(f"{study.trace}: slowdown ratio per week, {study.estimates} estimates, "
                 f"{study.setting} setting", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return png_bytes(fig, plt)


def report_png(last: dict, docs: list[dict]) -> bytes:
    plt = pyplot()
    return png_bytes(report_figure(last, docs), plt)


def report_figure(last: dict, docs: list[dict]):
    """``advisor report --plot``: the latest run's candidates, objective (mean ± sd over the
    samples) against MaxWait from now, with both wait limits and a marker for each limit a
    candidate breaks; and the queue's bounded slowdown at each stored run of the same
    source, changes marked."""
    plt = pyplot()
    from matplotlib.lines import Line2D
    fig, (cand, hist) = plt.subplots(1, 2, figsize=(12, 5.5), dpi=100)
    k = last["settings"]["objective"]
    rows = last["candidates"]
    chosen = last["chosen"]["spec"] if last["change"] else None
    risk = last["settings"]["risk"]
    ref = last["settings"].get("reference")
    base = next((r for r in rows if r["spec"] == ref), rows[0]) if rows else None
    seen = set()
    for i, r in enumerate(rows):
        broken = _broken(r, base, risk)
        marker, colour = ("o", "0.5")
        if broken:
            marker, colour, _ = BROKEN[broken[0]]
        if i == 0:
            marker, colour = "D", "k"
        elif r["spec"] == chosen:
            marker, colour = "*", "tab:green"
        seen.update(broken)
        cand.errorbar(r["max_wait"] / 3600, r[k], yerr=r[k + "_sd"], fmt=marker,
                      ms=9 if marker == "*" else 5, color=colour, elinewidth=0.6,
                      zorder=3 if colour != "0.5" else 2)
        if i == 0 or r["spec"] == chosen:
            cand.annotate(r["label"], (r["max_wait"] / 3600, r[k]), xytext=(5, 4),
                          textcoords="offset points", fontsize=8, color=colour)
    handles = [Line2D([], [], marker="D", color="k", ls="", label="in effect"),
               Line2D([], [], marker="*", color="tab:green", ls="", ms=9,
                      label="recommended"),
               Line2D([], [], marker="o", color="0.5", ls="", label="within the limits")]
    handles += [Line2D([], [], marker=m, color=c, ls="", label=t)
                for name, (m, c, t) in BROKEN.items() if name in seen]
    if base is not None:
        from advisor.whatif.recommend import risk_limit   # the limits decide() used
        tails = last.get("reference_tails")
        of = "reference or its history" if tails else "reference"
        tails = tails or {"max_wait": 0.0, "p95_wait": 0.0}
        limit = risk_limit(risk, base["max_wait"], tails["max_wait"]) / 3600
        cand.axvline(limit, color="tab:red", lw=0.8, ls="--")
        handles.append(Line2D([], [], color="tab:red", lw=0.8, ls="--",
                              label=f"MaxWait limit ({risk:g} x {of})"))
        p95 = risk_limit(risk, base["p95_wait"], tails["p95_wait"]) / 3600
        handles.append(Line2D([], [], color="tab:orange", lw=0.8, ls=":",
                              label=f"p95 wait limit: {p95:.1f} h ({risk:g} x {of}; "
                              "not on this axis)"))
    cand.legend(handles=handles, fontsize=7, loc="best")
    cand.set_xlabel("MaxWait from now, mean over samples (h)")
    cand.set_ylabel(f"{k} (mean ± sd)")
    cand.set_title(f"Candidates at {last.get('cluster', {}).get('when', last['snapshot_time'])}",
                   fontsize=9)
    source = _series(last)
    same = sorted((d for d in docs if _series(d) == source), key=_moment) or [last]
    when = [_moment(d) for d in same]
    bsld = [d.get("queue_bsld", float("nan")) for d in same]
    hist.plot(when, bsld, "-o", ms=3, color="0.4", lw=0.8)
    changes = [(w, b) for w, b, d in zip(when, bsld, same) if d.get("change")]
    if changes:
        hist.scatter(*zip(*changes), color="tab:green", zorder=3, label="change recommended")
        hist.legend(fontsize=8)
    hist.set_ylabel("queue bounded slowdown at the run")
    hist.set_xlabel("the cluster's time at the run (UTC)")
    runs = f"{len(same)} runs" if len(same) > 1 else "run"
    hist.set_title(f"The last {runs} on {source}", fontsize=9)
    import matplotlib.dates as mdates
    locator = mdates.AutoDateLocator()
    hist.xaxis.set_major_locator(locator)
    hist.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    fig.tight_layout()
    return fig


def _series(doc: dict) -> str:
    """The runs drawn together: the same cluster, or the same trace at any moment."""
    return str(doc.get("source", "")).split("@")[0]


def _moment(doc: dict) -> datetime:
    """The cluster's time at the run (a trace's moment when its start is known), else when
    the run was made."""
    try:
        return datetime.strptime(doc["cluster"]["when"], "%Y-%m-%d %H:%M:%S UTC").replace(
            tzinfo=timezone.utc)
    except (KeyError, TypeError, ValueError):
        return datetime.fromtimestamp(doc["at"], timezone.utc)


def _broken(row: dict, base: dict | None, risk: float) -> list[str]:
    """The limits a candidate breaks: as the run named them, or for a run stored before
    they were named, 'max_wait' when that is the one (else the unnamed 'p95_wait')."""
    if row["safe"]:
        return []
    if "over" in row:
        return list(row["over"])
    over_max = base is not None and row["max_wait"] > risk * base["max_wait"]
    return ["max_wait"] if over_max else ["p95_wait"]


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("matplotlib", "plot") from None
    return plt


def png_bytes(fig, plt) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def plan_bins_png(study, name: str) -> bytes:
    """Zheng et al.'s Fig. 6: mean wait binned by job size and runtime (15 log bins each)
    under the baseline and under the plan ``name``, and their ratio (blue: the plan waits
    less); empty bins are left blank (a ``PlanStudy``)."""
    import numpy as np
    from matplotlib.colors import LogNorm, TwoSlopeNorm
    plt = pyplot()
    b = study.bins(name)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), dpi=100)
    waits = np.concatenate([b.base[np.isfinite(b.base)], b.plan[np.isfinite(b.plan)]])
    norm = LogNorm(1.0, max(float(waits.max(initial=2.0)), 2.0))   # a wait of 0 shows as 1 s
    for ax, grid, title in ((axes[0], b.base, study.baseline.name), (axes[1], b.plan, name)):
        mesh = ax.pcolormesh(b.runtime_edges, b.size_edges,
                             np.ma.masked_invalid(np.maximum(grid, 1.0)),
                             cmap="coolwarm", norm=norm, shading="flat")
        ax.set_title(f"{title}: mean wait (s)", fontsize=10)
        fig.colorbar(mesh, ax=ax)
    ratio = np.log2(np.clip(b.ratio, 1 / 64, 64))
    mesh = axes[2].pcolormesh(b.runtime_edges, b.size_edges, np.ma.masked_where(
        b.jobs == 0, ratio), cmap="coolwarm", norm=TwoSlopeNorm(0, -6, 6), shading="flat")
    axes[2].set_title(f"log2 of {name} / {study.baseline.name} mean wait", fontsize=10)
    fig.colorbar(mesh, ax=axes[2])
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("runtime (s)")
        ax.set_ylabel("size (CPUs)")
    fig.suptitle(f"{study.trace}, {study.window[0]} to {study.window[1]}: wait by job size "
                 "and runtime (blue: less wait)", fontsize=11)
    fig.tight_layout()
    return png_bytes(fig, plt)
