"""Each account's figures under every candidate (issue 58, item 3): in the JSON for every
candidate sampled, and in the report for the recommended change against the configuration
in effect, at 80 columns, every figure whole."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rich.console import Console

from advisor.views.advice import _hms, accounts_table, recommendation_view

#: a fair-share snapshot of KTH-SP2 (the trace's groups as accounts) where a change wins
COMMAND = ["recommend", "--from", "swf:KTH-SP2@48d", "--fair-share", "--no-store",
           "--executor", "serial", "--json"]


@pytest.fixture(scope="module")
def doc():
    done = subprocess.run([sys.executable, "-m", "advisor.cli", *COMMAND],
                          capture_output=True, text=True)
    assert done.returncode == 10, done.stderr      # the test's premise: a change
    return json.loads(done.stdout)


def test_every_sampled_candidate_carries_each_judged_account(doc):
    rows = doc["candidates"]
    sampled = [r for r in rows if r["sampled"]]
    assert len(sampled) >= 2 and all(r["accounts"] for r in sampled)
    assert all(not r["accounts"] for r in rows if not r["sampled"])
    for r in sampled:
        figures = r["accounts"].values()
        assert all(0.0 <= f["received"] <= 1.0 and 0.0 < f["share"] <= 1.0 for f in figures)
        assert sum(f["received"] for f in figures) <= 1.0 + 1e-3
        jobs = [f["jobs"] for f in figures]
        assert jobs == sorted(jobs, reverse=True)     # most jobs first
    # the same accounts under the candidates sampled on the same futures (their jobs are)
    most = max(r["samples"] for r in sampled)
    assert len({tuple(sorted(r["accounts"])) for r in sampled if r["samples"] == most}) == 1


def test_the_report_shows_the_change_account_by_account(doc):
    console = Console(width=80, record=True, color_system=None)
    console.print(recommendation_view(doc))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    chosen = next(r for r in doc["candidates"][1:] if r["spec"] == doc["chosen"]["spec"])
    now, then = doc["candidates"][0]["accounts"], chosen["accounts"]
    table = accounts_table(doc, top=8)
    shown = [row[0].plain for row in table.rows]
    growth = [then[n]["mean_wait"] - now[n]["mean_wait"] for n in shown]
    assert growth == sorted(growth, reverse=True) and len(shown) == min(8, len(then))
    assert f"Accounts under {chosen['label']}" in text
    for n in shown:
        line = next(line for line in text.splitlines() if line.startswith(n + " "))
        assert _hms(then[n]["mean_wait"]) in line and _hms(now[n]["mean_wait"]) in line
    # none when the configuration is kept
    assert accounts_table(dict(doc, change=False)) is None
