"""Plots an admin reads without the docs: a unit on every axis, a title that says what and
when, a legend that names each policy, no series hidden under another, ticks in weeks or
dates. Each figure is caught before it becomes a PNG."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib.dates as mdates  # noqa: E402

from advisor.policies.ordering import view as tune_view  # noqa: E402
from advisor.policies.plan import view as plan_view  # noqa: E402
from advisor.policies.queues import view as queue_view  # noqa: E402
from advisor.views import hindsight, plots  # noqa: E402

UNITS = ("(hours)", "(seconds", "(no unit", "(CPUs)", "(%)")


@pytest.fixture()
def caught(monkeypatch):
    figures = []

    def keep(fig, plt):
        figures.append(fig)
        return b"\x89PNG"
    monkeypatch.setattr(plots, "png_bytes", keep)
    monkeypatch.setattr(hindsight, "png_bytes", keep)
    monkeypatch.setattr(plan_view, "png_bytes", keep)
    monkeypatch.setattr(queue_view, "png_bytes", keep)
    monkeypatch.setattr(tune_view, "png_bytes", keep)
    return figures


def _labelled(ax) -> None:
    for label in (ax.get_xlabel(), ax.get_ylabel()):
        assert any(u in label for u in UNITS) or "week" in label or "time at" in label, label


def _recommend(store, moment):
    done = subprocess.run([sys.executable, "-m", "advisor.cli", "recommend", "--from",
                           f"swf:KTH-SP2@{moment}", "--samples", "2", "--executor", "serial",
                           "--store", str(store), "--json"], capture_output=True, text=True)
    assert done.returncode in (0, 10), done.stderr
    return json.loads(done.stdout)


def test_the_report_of_one_run_spans_a_day_not_years(tmp_path):
    """A first run alone: its history panel is a day around it (it once spanned four years,
    from the trace's time to the run's own), in the trace's zone, named."""
    doc = _recommend(tmp_path / "one.sqlite", "150d")
    fig = plots.report_figure(doc, [doc])
    cand, hist = fig.axes
    for ax in (cand, hist):
        _labelled(ax)
        assert ax.get_title()
    assert "Europe/Stockholm" in hist.get_xlabel() and "1 run" in hist.get_title()
    lo, hi = (mdates.num2date(x) for x in hist.get_xlim())
    assert hi - lo <= timedelta(days=1)
    legend = [t.get_text() for t in cand.get_legend().get_texts()]
    if doc["change"]:
        assert any(t.startswith("recommended: ") and doc["chosen"]["label"] in t
                   for t in legend)
    assert not cand.texts          # no label written over the markers


def test_the_advice_against_static_names_its_policies_and_counts_weeks(caught):
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.settings import Settings
    from advisor.whatif.hindsight import advice_bench, bench_window
    whole = read_swf(resolve_trace("KTH-SP2"))
    window, prior = bench_window(whole, 20 * 7 * 86400, 22 * 7 * 86400)
    bench = advice_bench(window, 86400, Settings(samples=1), prior=prior)
    hindsight.advice_bench_png(bench, "KTH-SP2")
    (fig,) = caught
    (ax,) = fig.axes
    _labelled(ax)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(bench.best in t for t in legend) and any("baseline: " in t for t in legend)
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert all(float(t).is_integer() for t in ticks)
    xs = [tuple(np.round(line.get_xdata(), 3)) for line in ax.get_lines()]
    assert len(set(xs)) == len(xs)             # each series set aside: none hides another


def test_the_plans_heatmap_says_which_days(caught):
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.cleaning import trace_window
    from advisor.policies.plan.study import plan_study
    from advisor.units import parse_moment
    atlas = read_swf(resolve_trace("LLNL-Atlas"))
    def moment(d):
        return parse_moment(d, atlas.header)

    study = plan_study(trace_window(atlas, moment("2007-02-01"), moment("2007-02-08")),
                       ["plan2:N=5"])
    plan_view.plan_bins_png(study, "PLAN2 N=5")
    (fig,) = caught
    assert "2007-02-01 to 2007-02-07" in fig._suptitle.get_text()
    for ax in fig.axes[:3]:
        _labelled(ax)


def test_the_tune_and_queue_plots_have_units_and_named_series(caught):
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.policies.ordering.study import tune
    from advisor.policies.queues.study import queue_count_study
    kth = read_swf(resolve_trace("KTH-SP2"))
    tune_view.tune_png(tune(kth, weeks=3), "KTH-SP2")
    queue_view.queue_count_png(queue_count_study(kth, 100, 1))
    for fig in caught:
        ax = fig.axes[0]
        _labelled(ax)
        assert ax.get_title() and ax.get_legend() is not None
    tune_ax = caught[0].axes[0]
    named = [line for line in tune_ax.get_lines() if not line.get_label().startswith("_")]
    assert len({line.get_marker() for line in named[:-1]}) == len(named) - 1
