"""A recommendation checks the site first (``advise``'s ``site_check``): the day before
the snapshot replayed from the site's accounting, the figure carried in the advice and its
JSON, the check made once a day per configuration (the store keeps it), and no change
recommended where the simulation did not reproduce the site (``distrusted``, below
``fidelity_floor``)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.adapters.store import KEPT_CHECKS, Store
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.sources import open_source
from advisor.views.advice import recommendation_view
from advisor.whatif.advise import StaticSource, advise, check_key, config_key
from advisor.whatif.decision import distrusted
from advisor.whatif.past_state import trace_job_log
from rich.console import Console

#: a grid under which KTH-SP2 at day 150 recommends a change (asserted below)
FAST = Settings(samples=2, seed=0, policies=(parse_policy("easy:FCFS:FCFS"),
                                             parse_policy("easy:SPF:SPF:T=12h")))


@pytest.fixture(scope="module")
def site():
    """KTH-SP2 at day 150 as a site whose accounting is its log (on the trace's clock):
    its snapshot, history, and the log of the jobs submitted before the moment, each as
    known then (a start or an end after it not yet known)."""
    moment = open_source("swf:KTH-SP2@150d")
    snap = moment.snapshot()
    log = trace_job_log(moment.workload, epoch=False)
    jobs = log.jobs[log.jobs["submit"] <= snap.time].copy()
    jobs.loc[jobs["start"] > snap.time, "start"] = -1
    jobs.loc[jobs["end"] > snap.time, "end"] = -1
    return snap, moment.history(snap, 4), replace(log, jobs=jobs, read_at=snap.time)


def test_the_rule_and_its_words():
    site = {"jobs": 200, "within": 0.31, "tolerance_s": 30}
    words = distrusted(site, 0.5)
    assert words.startswith("the simulation started only 31% of this site's 200 jobs")
    assert "the floor is 50%" in words and "does not trust" in words
    assert distrusted(site, 0.3) is None
    assert distrusted(None, 0.5) is None and distrusted({"jobs": 0}, 0.5) is None


def test_the_advice_carries_the_check_and_refuses_below_the_floor(site):
    snap, history, log = site
    plain = advise(StaticSource("kth", snap, history), FAST)
    assert plain.recommendation.change and plain.site_check is None   # no accounting
    checked = advise(StaticSource("kth", snap, history, log), FAST)
    figure = checked.site_check
    assert figure["jobs"] > 20 and figure["tolerance_s"] == 30
    day = 86400
    assert figure["until"] == snap.time - snap.time % day
    assert figure["since"] == figure["until"] - day
    assert checked.as_dict()["site_check"] == figure
    trusted = figure["within"] >= FAST.fidelity_floor
    assert checked.recommendation.change == trusted
    # the same site with every logged start two hours late: nothing reproduced
    late = replace(log, jobs=log.jobs.assign(start=log.jobs["start"].where(
        log.jobs["start"] < 0, log.jobs["start"] + 7200)))
    refused = advise(StaticSource("kth", snap, history, late), FAST)
    assert refused.site_check["within"] < 0.1
    assert not refused.recommendation.change and refused.change is None
    assert "does not trust its simulation of this site" in refused.recommendation.reason
    assert "it would recommend EASY-SPF-SPF T=12h" in refused.recommendation.reason
    shown = Console(width=80, record=True)
    shown.print(recommendation_view(refused.as_dict()))
    assert "fidelity on this site: the simulation started" in shown.export_text()
    # a floor of 0 trusts it whatever it finds
    anyway = advise(StaticSource("kth", snap, history, late),
                    replace(FAST, fidelity_floor=0.0))
    assert anyway.recommendation.change


class Counting(StaticSource):
    reads: list = []

    def job_log(self, since, until):
        self.reads.append((since, until))
        return super().job_log(since, until)


def test_a_day_s_runs_check_once(site, tmp_path):
    snap, history, log = site
    store = Store(tmp_path / "advisor.sqlite")
    source = Counting("kth", snap, history, log)
    settings = replace(FAST, samples=0, site_check=2 * 86400)
    first = advise(source, settings, store=store).site_check
    again = advise(source, settings, store=store).site_check
    assert len(Counting.reads) == 1 and again == first
    # another configuration in effect: checked anew
    other = replace(snap, config=replace(snap.config, priority_max_age=3600))
    assert check_key(other, 0, 1) != check_key(snap, 0, 1)
    advise(Counting("kth", other, history, log), settings, store=store)
    assert len(Counting.reads) == 2
    for k in range(KEPT_CHECKS + 3):
        store.save_site_check("kth", f"k{k}", {"jobs": k}, now=k)
    kept = store.db.execute("SELECT COUNT(*) FROM site_checks WHERE source='kth'").fetchone()
    assert kept[0] == KEPT_CHECKS and store.site_check("kth", "k0") is None
    store.close()


def test_a_configuration_the_store_saw_in_the_window_is_named(site, tmp_path):
    """A run recorded the day before under another configuration: the check says the
    rules changed (played as they are now)."""
    snap, history, log = site
    store = Store(tmp_path / "advisor.sqlite")
    earlier = snap.time - snap.time % 86400 - 3600
    store.record({"snapshot_time": earlier, "config_key": "another"}, "kth", 0)
    store.record({"snapshot_time": earlier, "config_key": config_key(snap)}, "kth", 0)
    said = advise(StaticSource("kth", snap, history, log), replace(FAST, samples=0),
                  store=store).site_check["findings"]
    assert any("the rules changed 1 times within the window (first: the configuration "
               "in effect differed" in f for f in said), said
    store.close()
