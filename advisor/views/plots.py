"""Plots (the ``[plot]`` extra): rendered to PNG bytes; the caller writes them."""
from __future__ import annotations

import io
from datetime import datetime, timezone

from advisor import units
from advisor.errors import MissingExtra


#: how each limit a candidate breaks is drawn: (marker, colour, legend text)
BROKEN = {"max_wait": ("X", "tab:red", "over the MaxWait limit"),
          "p95_wait": ("s", "tab:orange", "over the p95 wait limit"),
          "tail_push": ("^", "tab:purple", "pushes a job past risk x its wait"),
          "fairness": ("D", "tab:pink", "over the fairness limit (an account's wait or "
                                        "share)"),
          "past": ("v", "tab:brown", "over a limit on the weeks replayed")}


def report_png(last: dict, docs: list[dict]) -> bytes:
    plt = pyplot()
    return png_bytes(report_figure(last, docs), plt)


def report_figure(last: dict, docs: list[dict]):
    """``advisor report --plot``: the latest run's sampled candidates, objective (mean ± sd
    over the samples) against MaxWait from now, with both wait limits and a marker for each
    limit a candidate breaks; and the queue's bounded slowdown at each stored run of the same
    source, changes marked."""
    plt = pyplot()
    from matplotlib.lines import Line2D
    fig, (cand, hist) = plt.subplots(1, 2, figsize=(12, 6.5), dpi=100)
    k = last["settings"]["objective"]
    rows = last["candidates"]
    chosen = last["chosen"]["spec"] if last["change"] else None
    risk = last["settings"]["risk"]
    ref = last["settings"].get("reference")
    base = next((r for r in rows if r["spec"] == ref), rows[0]) if rows else None
    scale, unit = OBJECTIVE_AXIS.get(k, (1.0, ""))
    seen = set()
    for i, r in enumerate(rows):
        if r.get(k) is None or r.get("max_wait") is None:
            continue        # not sampled (racing: clearly behind on the past replayed)
        broken = _broken(r, base, risk)
        marker, colour = ("o", "0.5")
        if broken:
            marker, colour, _ = BROKEN[broken[0]]
        if i == 0:
            marker, colour = "D", "k"
        elif r["spec"] == chosen:
            marker, colour = "*", "tab:green"
        seen.update(broken)
        cand.errorbar(r["max_wait"] / 3600, r[k] * scale, yerr=r[k + "_sd"] * scale,
                      fmt=marker, ms=9 if marker == "*" else 5, color=colour, elinewidth=0.6,
                      zorder=3 if colour != "0.5" else 2)
    # the two runs that matter are named in the legend, not over the markers
    handles = [Line2D([], [], marker="D", color="k", ls="",
                      label="the configuration in effect")]
    if chosen:
        label = next(r["label"] for r in rows if r["spec"] == chosen)
        handles.append(Line2D([], [], marker="*", color="tab:green", ls="", ms=9,
                              label=f"recommended: {label}"))
    handles.append(Line2D([], [], marker="o", color="0.5", ls="", label="within the limits"))
    handles += [Line2D([], [], marker=m, color=c, ls="", label=t)
                for name, (m, c, t) in BROKEN.items() if name in seen]
    if base is not None:
        from advisor.whatif.racing import risk_limit   # the limits decide() used
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
    cand.legend(handles=handles, fontsize=7, loc="upper center", ncol=2,
                bbox_to_anchor=(0.5, -0.13))   # under the axes: no marker hidden
    cand.set_xlabel("MaxWait from now, mean over the sampled futures (hours)")
    cand.set_ylabel(f"{k}{unit}, mean ± sd over the sampled futures")
    cluster = last.get("cluster") or {}
    cand.set_title(f"The candidates of the run at {cluster.get('when', '?')}", fontsize=9)
    source = _series(last)
    same = sorted((d for d in docs if _series(d) == source), key=_epoch) or [last]
    zone = units.zone(_zone(same[-1]))
    when = [datetime.fromtimestamp(_epoch(d), zone) for d in same]
    bsld = [d.get("queue_bsld", float("nan")) for d in same]
    hist.plot(when, bsld, "-o", ms=4, color="0.4", lw=0.8, label="a run")
    changes = [(w, b) for w, b, d in zip(when, bsld, same) if d.get("change")]
    if changes:
        hist.scatter(*zip(*changes), color="tab:green", zorder=3, s=30,
                     label="a run that recommended a change")
    hist.legend(fontsize=8, loc="upper center", ncol=2, bbox_to_anchor=(0.5, -0.13))
    hist.set_ylabel("the queue's bounded slowdown at the run (no unit)")
    hist.set_xlabel(f"the cluster's time at the run ({units.zone_name(_zone(same[-1]))})")
    if len(same) == 1 or when[0] == when[-1]:   # one instant: a day around it, not years
        from datetime import timedelta
        hist.set_xlim(when[0] - timedelta(hours=12), when[0] + timedelta(hours=12))
    first, last_when = when[0].strftime("%Y-%m-%d %H:%M"), when[-1].strftime("%Y-%m-%d %H:%M")
    span = first if first == last_when else f"{first} to {last_when}"
    runs = f"{len(same)} runs" if len(same) > 1 else "1 run"
    hist.set_title(f"{runs} on {source}, {span}", fontsize=9)
    import matplotlib.dates as mdates
    locator = mdates.AutoDateLocator(tz=zone)
    hist.xaxis.set_major_locator(locator)
    hist.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone,
                                                               show_offset=False))
    fig.tight_layout()
    return fig


#: how the report plots each objective: (factor, unit in the axis label)
OBJECTIVE_AXIS = {"avg_bsld": (1.0, " (no unit)"), "avg_wait": (1 / 3600, " (hours)"),
                  "p95_wait": (1 / 3600, " (hours)"), "utilization": (100.0, " (%)")}


def _series(doc: dict) -> str:
    """The runs drawn together: the same cluster, or the same trace at any moment."""
    return str(doc.get("source", "")).split("@")[0]


def _epoch(doc: dict) -> float:
    """The cluster's time at the run (a trace's moment when its start is known), else when
    the run was made."""
    cluster = doc.get("cluster") or {}
    if cluster.get("epoch") is not None:
        return float(cluster["epoch"])
    try:                          # a run stored before the epoch was
        return datetime.strptime(cluster["when"], "%Y-%m-%d %H:%M:%S UTC").replace(
            tzinfo=timezone.utc).timestamp()
    except (KeyError, TypeError, ValueError):
        return float(doc.get("at", 0))


def _zone(doc: dict) -> str | None:
    """The zone the run's dates are in: the trace's, or this machine's (None)."""
    return (doc.get("cluster") or {}).get("zone")


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
