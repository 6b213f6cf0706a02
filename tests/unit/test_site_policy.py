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
from advisor.whatif.scenario import METRICS
from advisor.whatif.site_policy import overridden, site_policy
from tests.conftest import bundled
from tests.unit.test_futures import _setup


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


def test_no_candidate_that_drops_fair_share_is_simulated_or_recommended_by_default():
    snap, hist = _fair_share_site()
    every = candidates_for(snap)
    # every ordering zeroes the other weights so that it alone orders; a plan keeps them
    # and puts the jobs pending now above them by site factor, until the next run
    keep = [c.spec for c in every[1:] if not c.overrides]
    assert len(every) > 10 and keep and all(s.startswith("plan") for s in keep)
    assert set(every[1].overrides) == {"PriorityWeightFairshare", "PriorityWeightQOS"}
    rec = recommend(snap, hist, Settings(samples=2, past=False))
    assert [c.spec for c in rec.candidates[1:]] == keep
    assert "PriorityWeightFairshare=1000" in rec.left_out
    assert "--replace-site-policy" in rec.left_out
    # a queue counted long proposes no plan: nothing keeps the policy, nothing is
    # simulated, and the reason says why
    rec = recommend(snap, hist, Settings(samples=2, past=False, conservative_up_to=0))
    assert len(rec.candidates) == 1 and not rec.triggered and not rec.change
    assert "no candidate keeps the site's priority policy" in rec.reason
    # a site that allows it gets the whole grid simulated
    rec = recommend(snap, hist, Settings(samples=2, past=False, replace_site_policy=True))
    assert rec.triggered and len(rec.candidates) == len(every)


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
