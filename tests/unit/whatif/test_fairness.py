"""Fairness measured and limited (issue 58, item 3): each account's CPU-time against its
normalized shares, its mean wait against the reference's, and the risk limit on both."""
from __future__ import annotations

import numpy as np
import pytest

from dataclasses import replace

from advisor.model import (Accounting, Association, Cluster, Job, Node, Partition,
                           SchedulingConfig, Snapshot)
from advisor.settings import Settings
from advisor.plugins.spec import parse_policy
from advisor.whatif.candidates import candidates_for
from advisor.whatif.fairness import (AccountTally, account_wait, normalized_shares,
                                     share_deviation)
from advisor.whatif.futures import FutureSample
from advisor.whatif.recommend import decide
from advisor.whatif.scenario import METRICS, Task, evaluate
from tests.unit.whatif.test_past_replay import _cands, _futures

T0 = 1_000_000


def test_normalized_shares_are_slurms_down_the_tree():
    tree = Accounting(associations=(
        Association("root"), Association("a", parent="root", shares=3),
        Association("b", parent="root", shares=1), Association("a1", parent="a", shares=1),
        Association("a2", parent="a", shares=1), Association("a", user="u", parent="a")))
    assert np.allclose(normalized_shares(tree, ["a", "b", "a1", "a2"]),
                       [0.75, 0.25, 0.375, 0.375])
    # users standing in for accounts (no associations): equal shares
    assert np.allclose(normalized_shares(Accounting(), ["user:x", "user:y"]), [0.5, 0.5])


def test_the_deviation_is_half_the_cpu_time_moved_away_from_the_shares():
    cpu = np.array([20.0, 10.0, 10.0])
    accounts = np.array([0, 0, 1])
    assert share_deviation(cpu, accounts, np.array([0.5, 0.5])) == 0.25
    assert share_deviation(cpu, accounts, np.array([0.75, 0.25])) == 0.0
    assert share_deviation(np.zeros(3), accounts, np.array([0.5, 0.5])) == 0.0


def test_the_account_wait_is_the_worst_account_mean_over_the_reference_s():
    waits = np.full((3, 14), 1000.0)
    accounts = np.array([0] * 5 + [1] * 5 + [2] * 4)
    waits[1, :5] = 5000.0           # account 0 waits five times longer under candidate 1
    waits[2, 10:] = 90000.0         # account 2 has too few jobs to judge
    out = account_wait(waits, accounts, ref=0)
    # each mean plus the reference's mean over all jobs (1000 s): (5000 + 1000) / 2000
    assert np.allclose(out, [1.0, 3.0, 1.0])
    assert np.allclose(account_wait(waits, accounts, ref=1)[0], 1.0)   # none slower


def test_a_candidate_that_starves_an_account_or_skews_the_shares_is_over_the_limit():
    cands = _cands(4)
    futures = _futures([[100.0] * 4, [50.0] * 4, [50.0] * 4, [60.0] * 4])
    wait, dev = METRICS.index("account_wait"), METRICS.index("share_dev")
    futures[:, :, wait] = 1.0
    futures[:, :, dev] = 0.10
    futures[1, :, wait] = 2.0                      # an account's mean wait doubled
    futures[2, :, dev] = 0.10 + 0.06               # over the reference's by > 0.05
    futures[3, :, dev] = 0.10 + 0.04               # within it
    chosen, _, table = decide(cands, futures, Settings(objective="avg_wait"))
    assert [row["over"] for row in table] == [[], ["fairness"], ["fairness"], []]
    assert chosen == 3
    # a wider slack lets the skewed one in, and it wins
    chosen, _, _ = decide(cands, futures, Settings(objective="avg_wait", share_slack=0.1))
    assert chosen == 2


def test_favouring_small_jobs_moves_cpu_time_from_the_account_of_wide_ones():
    """Four 16-CPU nodes; account 'wide' (3 shares) has six whole-machine jobs pending,
    account 'small' (1 share) twenty-four one-node jobs submitted after them, all of 2 h.
    Over 8 h, FCFS gives 'wide' all the CPU-time (deviation 1 - 0.75 = 0.25); a job-size
    weight favouring small jobs gives it all to 'small' (0.75), and 'wide' waits past
    --risk times its mean wait under FCFS: the fairness limit's case."""
    names = tuple(f"n{i}" for i in range(1, 5))
    machine = Cluster("lab", tuple(Node(n, 16) for n in names),
                      (Partition("batch", names, default=True),))
    tree = Accounting(associations=(
        Association("root"), Association("wide", parent="root", shares=3),
        Association("small", parent="root", shares=1),
        Association("wide", user="w", parent="wide"),
        Association("small", user="s", parent="small")))

    def job(i, submit, cpus, account, user):
        return Job(job_id=i, user=user, account=account, partition="batch", cpus=cpus,
                   state="PENDING", submit_time=submit, time_limit=7200,
                   partitions=("batch",))

    pending = tuple(job(k, T0 - 1000 + k, 64, "wide", "w") for k in range(6)) + \
        tuple(job(100 + k, T0 - 500 + k, 16, "small", "s") for k in range(24))
    config = replace(SchedulingConfig(), priority_type="priority/multifactor")
    snap = Snapshot(time=T0, machine=machine, running=(), pending=pending, config=config,
                    accounting=tree)
    cands = candidates_for(snap, [parse_policy("PriorityWeightJobSize=100000 "
                                               "PriorityFavorSmall=yes")])
    sample = FutureSample(0, {j.job_id: 7200 for j in pending}, ())
    outcome = evaluate(Task(snap, tuple(cands), sample, 8 * 3600))
    out, waits, ages, accounts = outcome[:4]
    dev = out[:, METRICS.index("share_dev")]
    assert np.allclose(dev, [0.25, 0.75])
    assert account_wait(waits + ages, accounts, 0)[1] > Settings().risk

    # account by account, as the JSON and the report give it
    tally = AccountTally(len(cands))
    for c in range(len(cands)):
        tally.add(c, outcome.names, accounts, waits[c] + ages, outcome.received[c],
                  outcome.shares)
    fcfs, small_first = tally.figures(0), tally.figures(1)
    assert list(fcfs) == ["small", "wide"]         # most jobs first
    assert (fcfs["wide"]["share"], fcfs["small"]["share"]) == (0.75, 0.25)
    assert (fcfs["wide"]["received"], small_first["wide"]["received"]) == (1.0, 0.0)
    assert small_first["small"]["received"] == 1.0
    # FCFS: the wide jobs one after the other from the snapshot (2 h each, submitted
    # 1000 s before it, a second apart), the small ones after them; favouring small jobs,
    # the small ones four at a time (six rounds), then the wide ones (within seconds:
    # the slurm mode starts a job at its scheduler's next pass)
    assert fcfs["wide"]["jobs"] == small_first["wide"]["jobs"] == 6
    assert fcfs["wide"]["mean_wait"] == pytest.approx(1000 - 2.5 + 2.5 * 7200, abs=5)
    assert small_first["wide"]["mean_wait"] == pytest.approx(1000 - 2.5 + 8.5 * 7200, abs=5)
    assert small_first["small"]["mean_wait"] == pytest.approx(500 - 11.5 + 2.5 * 7200, abs=5)


def test_the_weeks_replayed_carry_each_job_s_account_and_the_accounts_shares():
    """The past replay's jobs ask what the history says they asked (their accounts), and
    its idle machine holds the accounts' shares without usage and no user association:
    fair share is not played there, the fairness figures are measured."""
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.whatif.past import past_sample
    from advisor.whatif.snapshot import trace_history, trace_snapshot
    from advisor.whatif.trace_accounts import SITE_BASELINE, with_accounts

    workload = read_swf(resolve_trace("KTH-SP2"))
    workload = with_accounts(workload.with_jobs(workload.jobs.iloc[:1500]
                                                .reset_index(drop=True)))
    snap = trace_snapshot(workload, parse_policy(SITE_BASELINE), 14 * 86400)
    idle, sample = past_sample(trace_history(workload, snap), snap, 1)
    assert {j.account[:1] for j in sample.arrivals} <= {"g", "n"}
    assert len({j.account for j in sample.arrivals}) > 1
    assoc = idle.accounting.associations
    assert assoc and not any(a.user for a in assoc) and not any(a.raw_usage for a in assoc)
