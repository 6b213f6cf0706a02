"""The library stands without the command line: any source opened by name
(``advisor.sources.open_source``), a source held in memory (``StaticSource``), ``advise``
called directly, and settings checked once, when made."""
from __future__ import annotations

import json

import pytest

from advisor.errors import BadInput, SourceUnavailable
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.sources import open_source
from advisor.whatif.advise import Source, StaticSource, TraceMoment, advise

FAST = Settings(samples=2, seed=0, policies=(parse_policy("easy:FCFS:FCFS"),
                                             parse_policy("easy:SPF:SPF:T=12h")))


@pytest.fixture(scope="module")
def moment() -> TraceMoment:
    source = open_source("swf:KTH-SP2@150d")
    assert isinstance(source, TraceMoment) and isinstance(source, Source)
    return source


def test_advise_takes_a_source_held_in_memory(moment):
    snap = moment.snapshot()
    past = moment.history(snap, 4)
    memory = StaticSource("memory", snap, past)
    assert isinstance(memory, Source) and not memory.live
    advice = advise(memory, FAST)
    labels = {c.label for c in advice.recommendation.candidates}
    assert {"in effect", "EASY-SPF-SPF T=12h"} <= labels      # in effect: EASY-FCFS-FCFS
    assert advice.snapshot is snap
    # the same snapshot and history through the trace's own source: the same advice
    again = advise(moment, FAST)
    assert again.recommendation.as_dict() == advice.recommendation.as_dict()


def test_a_history_held_in_memory_is_cut_to_the_weeks_asked(moment):
    snap = moment.snapshot()
    past = moment.history(snap, 8)
    memory = StaticSource("memory", snap, past)
    recent = memory.history(snap, 2)
    assert len(recent) < len(past)
    assert recent["submit"].min() >= snap.time - 2 * 7 * 86400
    assert len(StaticSource("memory", snap).history(snap, 4)) == 0


def test_a_snapshot_file_is_a_source_with_no_history(moment, tmp_path):
    snap = moment.snapshot()
    path = tmp_path / "queue.json"
    path.write_text(json.dumps(snap.to_dict()))
    source = open_source(f"snapshot:{path}")
    assert isinstance(source, StaticSource) and source.name == f"snapshot:{path}"
    assert source.snapshot() == snap
    assert list(source.history(snap, 4).columns)[:3] == ["user", "submit", "runtime"]
    advice = advise(source, FAST)
    assert "no finished job" in advice.history_note


def test_a_bad_snapshot_file_says_what_it_is(tmp_path):
    with pytest.raises(SourceUnavailable, match="cannot read the snapshot"):
        open_source(f"snapshot:{tmp_path / 'none.json'}")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BadInput, match="not a snapshot's JSON"):
        open_source(f"snapshot:{bad}")
    bad.write_text(json.dumps({"time": 0}))
    with pytest.raises(BadInput, match="not a snapshot"):
        open_source(f"snapshot:{bad}")


def test_a_trace_source_takes_its_policy_and_accounts_by_name():
    source = open_source("swf:KTH-SP2@150d", policy="easy:SPF:SPF", fair_share=True)
    assert source.policy == parse_policy("easy:SPF:SPF")
    accounts = {a.account for a in source.workload.accounts.associations}
    assert len(accounts) > 2 and "root" in accounts
    with pytest.raises(BadInput, match="a live cluster has its own"):
        open_source("slurm", fair_share=True)


def test_settings_are_checked_once_when_made():
    with pytest.raises(BadInput, match="--risk"):
        Settings(risk=0.5)
