"""A site's own priority policy (fair share, QOS, association, partition weights) is not
replaced unless the site allows it (issue 41, item 4)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from advisor.errors import BadInput
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.candidates import candidates_for
from advisor.whatif.recommend import decide, recommend
from advisor.whatif.scenario import METRICS, job_columns
from advisor.whatif.site_policy import overridden, site_policy
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup


def _fair_share_site():
    """KTH-SP2's snapshot on a site with fair share and QOS weights in effect."""
    snap, hist = _setup(bundled("KTH-SP2", False))
    config = replace(snap.config, priority_type="priority/multifactor",
                     priority_weight_fairshare=1000, priority_weight_qos=500,
                     priority_weight_age=100)
    return replace(snap, config=config), hist


def test_the_policy_is_the_weights_in_use_and_partitions_only_when_they_differ():
    snap, _ = _fair_share_site()
    config = replace(snap.config, priority_weight_partition=1000)
    # one partition: its factor adds one constant to every job, no policy
    assert set(site_policy(config, snap.machine)) == {"priority_weight_fairshare",
                                                      "priority_weight_qos"}
    other = replace(snap.machine.partitions[0], name="high", priority_job_factor=10)
    two = replace(snap.machine, partitions=(*snap.machine.partitions, other))
    assert "priority_weight_partition" in site_policy(config, two)
    assert site_policy(replace(config, priority_type="priority/basic"), two) == {}
    # only the weights a configuration changes are overridden; the age weight is not policy
    assert overridden(config, replace(config, priority_weight_age=0), two) == ()
    assert overridden(config, replace(config, priority_weight_qos=0), two) == (
        "PriorityWeightQOS",)


def test_by_default_only_candidates_that_keep_the_policy_are_simulated_and_one_wins():
    snap, hist = _fair_share_site()
    every = candidates_for(snap)
    # an ordering that replaces the weights (scale 0) zeroes them so that it alone orders;
    # added to them (scale >= 1) it keeps them, and so does a plan (its site factors put
    # the jobs pending now above them until the next run); a native knob keeps them
    # unless it is one of them
    for c in every[1:]:
        if c.enactment.keeps_job_rules:
            weight = c.spec.split(":")[1].split("=")[0]
            assert c.overrides == ((weight,) if weight in ("PriorityWeightFairshare",
                                                           "PriorityWeightQOS") else ()), c.spec
            continue
        added = ":scale=" in c.spec or c.spec.startswith("plan")
        assert bool(c.overrides) != added, c.spec
    assert {c.spec.split("/")[0] for c in every if c.enactment.keeps_job_rules} == {"prio"}
    assert set(every[1].overrides) == {"PriorityWeightFairshare", "PriorityWeightQOS"}
    rec = recommend(snap, hist, Settings(objective="avg_wait"))
    assert rec.candidates[1:] and not any(c.overrides for c in rec.candidates[1:])
    assert "PriorityWeightFairshare=1000" in rec.left_out
    assert "--replace-site-policy" in rec.left_out
    # a gain exists there (KTH-SP2's queue; its jobs carry no fair-share factor of their
    # own, so the policy plays flat): found among the orderings added to the policy
    assert rec.change and ":scale=" in rec.candidates[rec.chosen].spec, rec.reason
    # a site that allows it gets the whole grid simulated
    rec = recommend(snap, hist, Settings(samples=2, past=False, replace_site_policy=True))
    assert rec.triggered and len(rec.candidates) == len(every)


def test_an_ordering_added_to_the_policy_keeps_its_weights_and_spans_scale_times_them():
    snap, _ = _fair_share_site()
    names = ("easy:SPF:scale=4", "easy:LPF:scale=1", "easy:SQF:scale=4", "easy:LQF:scale=1",
             "easy:FCFS:scale=1:T=12h")
    spf, lpf, sqf, lqf, fcfs = candidates_for(snap, [parse_policy(s) for s in names])[1:]
    for c in (spf, lpf, sqf, lqf, fcfs):
        assert not c.overrides and c.config.priority_weight_fairshare == 1000
        assert c.config.priority_weight_qos == 500
    jobs = job_columns(snap.pending, snap)
    short = jobs.limit == jobs.limit.min()
    values = spf.site.values(jobs, snap.time)
    assert values.min() >= 0 and values.max() <= 4000 and values[short].max() == values.max()
    assert (lpf.site.values(jobs, snap.time) <= 1000).all()
    # the CPU count by a normalized TRES weight, SQF's over a constant base of its span
    assert sqf.config.priority_weight_tres == {"CPU": -4000.0}
    assert set(sqf.site.values(jobs, snap.time)) == {4000}
    assert lqf.config.priority_weight_tres == {"CPU": 1000.0} and lqf.site is None
    # a threshold on the site's own priority: the age slope gains the policy's whole
    # range (1000 + 500) per T, up to two weeks
    assert fcfs.config.priority_weight_age == 1500 * 14 * 86400 // (12 * 3600)
    # with no policy in effect there is nothing to add to
    plain, _ = _setup(bundled("KTH-SP2", False))
    with pytest.raises(BadInput, match="none is in effect"):
        candidates_for(plain, [parse_policy("easy:SPF:scale=4")])


def test_a_scale_is_written_only_when_given_so_older_specs_stay_as_they_were():
    assert parse_policy("easy:SPF:T=1d").spec == "easy:SPF:T=1d"
    assert parse_policy("easy:SPF:scale=0:T=1d").canonical == "easy:SPF:T=1d"
    assert parse_policy("depth:SQF:k=2:scale=4").canonical == "depth:SQF:scale=4:k=2"
    assert parse_policy("depth:SQF:scale=4:k=2").label == "DEPTH-SQF-SQF scale=4"


def test_a_named_candidate_that_drops_it_is_refused_with_the_fix():
    snap, hist = _fair_share_site()
    with pytest.raises(BadInput, match="PriorityWeightFairshare.*--replace-site-policy"):
        recommend(snap, hist, Settings(samples=2, past=False,
                                       policies=(parse_policy("easy:SPF"),)))


def test_a_reference_that_replaces_the_policy_is_judged_against_but_never_chosen():
    snap, _ = _fair_share_site()
    cands = candidates_for(snap, [parse_policy("easy:SPF")])
    out = np.zeros((2, 4, len(METRICS)))
    out[0, :, METRICS.index("avg_wait")] = 100.0
    out[1, :, METRICS.index("avg_wait")] = 10.0         # overwhelmingly better
    chosen, why, table = decide(cands, out, Settings(objective="avg_wait"), ref=1)
    assert chosen == 0 and "site_policy" in table[1]["over"]
    chosen, _, _ = decide(cands, out, Settings(objective="avg_wait",
                                               replace_site_policy=True), ref=1)
    assert chosen == 1
