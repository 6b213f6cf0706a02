"""A trace's groups as accounts: the tree, the shares file, usage at a moment, fair share
played in the online replay, and what sampled jobs ask (account, SWF field 10 memory)."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from advisor.adapters.swf import read_shares, read_swf, resolve_trace
from advisor.engine import Estimates
from advisor.errors import BadInput
from advisor.model import Accounting, Association
from advisor.plugins.spec import BASELINE, parse_policy
from advisor.settings import Settings
from advisor.whatif.futures import ArrivalSampler, history_from_workload
from advisor.whatif.online import ReplaySystem
from advisor.whatif.recommend import recommend
from advisor.whatif.snapshot import trace_history, trace_snapshot
from advisor.whatif.trace_accounts import (FAIRSHARE_WEIGHT, SITE_BASELINE, account_names,
                                           association_rows, baseline_spec, memory_per_cpu,
                                           site_config, usage_at, with_accounts)


@pytest.fixture(scope="module")
def kth():
    """KTH-SP2's first 1,500 jobs (about three weeks); every job has a group."""
    workload = read_swf(resolve_trace("KTH-SP2"))
    return workload.with_jobs(workload.jobs.iloc[:1500].reset_index(drop=True))


def test_each_group_is_an_account_of_its_users_with_the_shares_given(kth):
    shares = {"g1": 4}
    tree = with_accounts(kth, shares).accounts.associations
    groups = set(kth.jobs["group"].tolist())
    accounts = [a for a in tree if not a.user and a.parent == "root"]
    assert {a.account for a in accounts} == {f"g{g}" for g in groups}
    assert {a.account: a.shares for a in accounts}["g1"] == 4
    assert all(a.shares == 1 for a in accounts if a.account != "g1")
    pairs = {(f"g{g}", str(u)) for g, u in zip(kth.jobs["group"], kth.jobs["user"])}
    assert {(a.account, a.user) for a in tree if a.user} == pairs
    assert all(a.parent == a.account for a in tree if a.user)
    with pytest.raises(BadInput, match="names none of the trace's"):
        with_accounts(kth, {"g999": 2})


def test_a_shares_file_names_groups_by_number_or_name(tmp_path):
    good = tmp_path / "shares"
    good.write_text("# funders\n12 4\ng3   2  # a comment\n\n")
    assert read_shares(good) == {"g12": 4, "g3": 2}
    for text, says in (("12\n", ":1: '12' is not 'GROUP SHARES'"),
                       ("12 4\nphysics 2\n", ":2: 'physics 2'"),
                       ("12 0\n", "of 1 or more"),
                       ("12 4\ng12 1\n", ":2: g12 is given twice"),
                       ("# none\n", "gives no shares")):
        bad = tmp_path / "bad"
        bad.write_text(text)
        with pytest.raises(BadInput, match=says):
            read_shares(bad)


def test_an_association_with_other_usage_is_the_same_association_otherwise():
    """``Association.with_usage`` (``usage_at``'s copy): the usage changed, every other
    field kept, the original untouched, the copy as frozen."""
    was = Association("g1", "7", parent="g1", shares=3, grp_tres={"cpu": 8}, raw_usage=1.0)
    now = was.with_usage(5.0)
    assert now == replace(was, raw_usage=5.0) and was.raw_usage == 1.0
    with pytest.raises(AttributeError):
        now.raw_usage = 2.0  # type: ignore[misc]


def test_usage_is_each_cpu_second_decayed_to_the_moment_and_summed_up_the_tree():
    accounts = Accounting(associations=(
        Association("root"), Association("g1", parent="root"),
        Association("g2", parent="root"), Association("g1", "7", parent="g1"),
        Association("g1", "8", parent="g1"), Association("g2", "9", parent="g2")))
    half_life, t = 3600, 10_000
    account = np.array(["g1", "g1", "g2", "g2"])
    user = np.array(["7", "8", "9", "9"])
    cpus = np.array([4, 2, 8, 1])
    start = np.array([1000, 9000, 9500, -1])       # the last has not started
    end = np.array([5000, 12_000, 9800, -1])       # the second runs past t
    usage = {(a.account, a.user): a.raw_usage
             for a in usage_at(accounts, t, half_life, association_rows(accounts, account, user),
                              cpus, start, end)
             .associations}
    f = 1 - 0.693 / half_life

    def summed(c, a, b):  # second by second, each decayed from its middle to t
        s = np.arange(a, min(b, t)) + 0.5
        return c * np.sum(f ** (t - s))

    expected = {("g1", "7"): summed(4, 1000, 5000), ("g1", "8"): summed(2, 9000, 12_000),
                ("g2", "9"): summed(8, 9500, 9800)}
    for key, value in expected.items():      # the integral, within 0.01% of the sum
        assert usage[key] == pytest.approx(value, rel=1e-4)
    assert usage[("g1", "")] == pytest.approx(usage[("g1", "7")] + usage[("g1", "8")])
    assert usage[("root", "")] == pytest.approx(sum(expected.values()), rel=1e-4)


def test_the_site_plays_fair_share_and_light_groups_wait_less(kth):
    accounted = with_accounts(kth)
    assert baseline_spec(kth) == BASELINE and baseline_spec(accounted) == SITE_BASELINE
    assert site_config(accounted).priority_weight_fairshare == FAIRSHARE_WEIGHT
    waits = {}
    for workload in (kth, accounted):
        system = ReplaySystem(workload, Estimates(), parse_policy(baseline_spec(workload)))
        start = system.play(system.decision_points(86400), lambda t, s, h, c: c)
        waits[workload.accounts is not None] = start - system.submit
        if workload.accounts is not None:
            snap = system.snapshot(10 * 86400, start, system.first.config)
            users = [a for a in snap.accounting.associations if a.user]
            assert snap.config.priority_weight_fairshare == FAIRSHARE_WEIGHT
            assert sum(a.raw_usage > 0 for a in users) > 10
            assert all(j.account.startswith("g") for j in (*snap.running, *snap.pending))
    # the quarter of the accounts that used most CPU-seconds, and the others
    account = account_names(kth.jobs["group"].to_numpy())
    used = pd.Series(kth.jobs["procs"] * kth.jobs["runtime"]).groupby(account).sum()
    heavy = np.isin(account, used.nlargest(len(used) // 4).index)
    # measured: 2,325 s under EASY-FCFS-FCFS, 883 s under fair share
    assert waits[True][~heavy].mean() < 0.6 * waits[False][~heavy].mean()


def test_the_history_and_sampled_jobs_ask_the_account_and_field_10_memory(kth):
    jobs = kth.jobs.copy()
    jobs.loc[:, "req_mem"] = np.where(np.arange(len(jobs)) % 2, 3000.0, -1.0)  # kB/CPU
    workload = kth.with_jobs(jobs)
    assert memory_per_cpu(np.array([3000.0, 1024.0, -1.0])).tolist() == [3, 1, 0]
    history = history_from_workload(workload, 20 * 86400)
    assert set(history["mem_per_cpu"]) == {0, 3}
    assert history["account"].str.fullmatch(r"g\d+").all()
    draw, _ = ArrivalSampler(history, 20 * 86400).draw(86400, np.random.default_rng(0))
    assert draw and {j.memory_per_cpu for j in draw} <= {0, 3}
    assert all(j.account.startswith("g") for j in draw)


def test_recommend_on_a_fair_share_trace_keeps_the_site_policy(kth):
    accounted = with_accounts(kth)
    snap = trace_snapshot(accounted, parse_policy(SITE_BASELINE), 14 * 86400)
    assert snap.config.priority_weight_fairshare == FAIRSHARE_WEIGHT
    assert any(a.raw_usage > 0 for a in snap.accounting.associations)
    rec = recommend(snap, trace_history(accounted, snap), Settings(samples=2, seed=0))
    assert rec.candidates and "PriorityWeightFairshare=10000" in rec.left_out
    assert all(not c.overrides for c in rec.candidates)
    assert all(c.config.priority_weight_fairshare == FAIRSHARE_WEIGHT
               for c in rec.candidates)
