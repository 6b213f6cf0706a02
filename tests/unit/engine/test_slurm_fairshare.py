"""Fair share in the slurm mode: Fair Tree's factors against what sshare printed on the real
test cluster, its rules on hand-made trees, and usage that moves the order of the queue."""
from __future__ import annotations

import calendar
import datetime as dt
from dataclasses import replace

import numpy as np
import pytest

from advisor.engine.slurm import run_slurm, slurm_input
from advisor.engine.slurm_fairshare import build, fair_tree, next_reset, reset_schedule
from advisor.engine.slurm_timing import LIVE
from advisor.model import (Accounting, Association, Cluster, Job, Node, Partition,
                           SchedulingConfig, Snapshot)


def factors(assocs, jobs=()):
    parent, shares, is_user, usage, _, children, first, counts, _ = build(
        Accounting(associations=tuple(assocs)), jobs)
    lf, out = np.zeros(len(parent)), np.full(len(parent), np.nan)
    fair_tree(parent, shares, is_user, usage, children, first, counts, lf, out)
    return {(a.account, a.user): out[i] for i, a in enumerate(
        [a for a in assocs if not a.user and not a.parent] +
        [a for a in assocs if a.user or a.parent]) if a.user}


def tree(phys_usage=0.0, chem_usage=0.0, root_usage=None, phys_shares=3):
    total = phys_usage + chem_usage if root_usage is None else root_usage
    return [Association("root", raw_usage=total),
            Association("root", "root", raw_usage=0.0),
            Association("phys", parent="root", shares=phys_shares, raw_usage=phys_usage),
            Association("phys", "ann", raw_usage=phys_usage),
            Association("chem", parent="root", raw_usage=chem_usage),
            Association("chem", "ann", raw_usage=chem_usage)]


def test_under_served_account_ranks_first():
    """phys has 3 of 5 shares and a third of the usage: LF 1.8 against chem's 0.3. root's
    own user has no usage (LF infinite) and ranks first: factors 3/3, 2/3, 1/3."""
    got = factors(tree(phys_usage=100.0, chem_usage=200.0))
    assert got == pytest.approx({("root", "root"): 1.0, ("phys", "ann"): 2 / 3,
                                 ("chem", "ann"): 1 / 3})


def test_over_served_account_ranks_last():
    got = factors(tree(phys_usage=900.0, chem_usage=100.0))
    assert got[("chem", "ann")] > got[("phys", "ann")]


def test_users_with_no_usage_tie():
    """Without usage every LF is infinite: all users tie at the top rank (factor 1)."""
    assert set(factors(tree()).values()) == {1.0}


def test_matches_sshare_on_the_recorded_cluster():
    """sshare on the test cluster, no usage yet: every user association has FairShare 1.0
    (tests/fixtures/slurm-22.05-lab/sshare_al.txt: root/root 0.333 with usage 8270, the
    research users 1.0 with none): the ranking of the first and the ties of the others."""
    assocs = [Association("root", raw_usage=8270.0),
              Association("root", "root", raw_usage=8270.0),
              Association("research", parent="root", raw_usage=0.0),
              Association("research", "nobody"), Association("research", "root")]
    got = factors(assocs)
    assert got == pytest.approx({("root", "root"): 1 / 3, ("research", "nobody"): 1.0,
                                 ("research", "root"): 1.0})


FAIR = replace(SchedulingConfig(), priority_type="priority/multifactor",
               priority_weight_fairshare=10000, priority_calc_period=1)
PEOPLE = (Association("root"), Association("phys", parent="root"),
          Association("chem", parent="root"), Association("phys", "ann"),
          Association("chem", "cat"))


def play(jobs, runtimes, config=FAIR, people=PEOPLE, decay_ran=None):
    names = ("n1",)
    snap = Snapshot(time=-1, machine=Cluster("lab", (Node("n1", 2),),
                                             (Partition("batch", names, default=True),)),
                    running=(), pending=(), config=config,
                    accounting=Accounting(associations=people, decay_ran=decay_ran))
    inp = slurm_input(snap, dict(zip([j.job_id for j in jobs], runtimes)), jobs, timing=None)
    start, _ = run_slurm(inp)
    order = {int(k): i for i, k in enumerate(inp.job_ids)}
    return [int(start[order[j.job_id]]) for j in jobs], inp


def job(i, submit, user, account) -> Job:
    return Job(job_id=i, user=user, partition="batch", cpus=2, state="PENDING",
               submit_time=submit, time_limit=1000, partitions=("batch",), account=account)


JOBS = [job(1, 0, "ann", "phys"), job(2, 1, "ann", "phys"), job(3, 2, "cat", "chem")]


def test_usage_that_accrues_puts_the_other_account_first():
    """ann's first job runs 100 s: phys accrues usage, chem none, so when it ends cat's
    job (submitted after ann's second) starts first."""
    got, inp = play(JOBS, [100, 10, 10])
    assert inp.fs_tree is not None
    assert got == [0, 110, 100]


def test_without_the_fair_share_weight_submit_order_decides():
    got, inp = play(JOBS, [100, 10, 10], config=replace(FAIR, priority_weight_fairshare=0))
    assert inp.fs_tree is None and got == [0, 100, 110]


def test_usage_in_the_snapshot_counts():
    """chem used a million CPU-seconds before the snapshot: even after ann's 100 s run,
    phys is the less served, and ann's second job goes first."""
    people = tuple(replace(a, raw_usage=1e6) if a.account in ("root", "chem") else a
                   for a in PEOPLE)
    got, _ = play(JOBS, [100, 10, 10], people=people)
    assert got == [0, 100, 110]


def test_usage_decays_with_the_half_life():
    """The same million, with a half-life of 2 s, is gone within the first job's run."""
    people = tuple(replace(a, raw_usage=1e6) if a.account in ("root", "chem") else a
                   for a in PEOPLE)
    got, _ = play(JOBS, [100, 10, 10], config=replace(FAIR, priority_decay_half_life=2),
                  people=people)
    assert got == [0, 110, 100]


def test_until_the_first_tick_the_factors_are_sshares():
    """PriorityCalcPeriod 60 s and no usage yet: Fair Tree would tie ann and cat, but
    sshare said ann's factor is 0 (on the real test cluster an account added after
    slurmctld's start has no normalised shares until its next pass): when ann's first job
    ends at 30, cat's job goes first; without sshare's factors submit order decides."""
    config = replace(FAIR, priority_calc_period=60)
    known = tuple(replace(a, fairshare=0.0 if a.user == "ann" else 1.0) if a.user else a
                  for a in PEOPLE)
    got, _ = play(JOBS, [30, 10, 10], config=config, people=known)
    assert got == [0, 40, 30]
    got, _ = play(JOBS, [30, 10, 10], config=config)
    assert got == [0, 30, 40]


def test_the_ticks_fall_at_the_decay_threads_phase():
    """sshare says ann's factor is 1 and cat's 0, the usage says the opposite once ann's
    first job has run: the factors change at the first PriorityCalcPeriod tick (60 s).
    With the decay thread last run at 30 (its state file) the tick is at 30, when ann's
    first job ends, and cat's job goes first; at multiples of 60, ann's."""
    config = replace(FAIR, priority_calc_period=60)
    known = tuple(replace(a, fairshare=1.0 if a.user == "ann" else 0.0) if a.user else a
                  for a in PEOPLE)
    got, _ = play(JOBS, [30, 10, 10], config=config, people=known)
    assert got == [0, 30, 40]
    got, _ = play(JOBS, [30, 10, 10], config=config, people=known, decay_ran=30)
    assert got == [0, 40, 30]


def test_the_tree_is_built_once_and_its_usage_read_at_each_call():
    """``build`` keeps the tree of a set of associations while their usage moves (a
    replay's moments): each call reads its own usage, and sorting one call's children in
    place (as ``fair_tree`` does) leaves the next call's in the tree's own order."""
    served, starved = tree(phys_usage=100.0, chem_usage=200.0), tree(phys_usage=900.0,
                                                                    chem_usage=100.0)
    first = build(Accounting(associations=tuple(served)), ())
    kids = first[5].copy()
    assert factors(served)[("phys", "ann")] > factors(served)[("chem", "ann")]
    assert factors(starved)[("phys", "ann")] < factors(starved)[("chem", "ann")]
    again = build(Accounting(associations=tuple(served)), ())
    assert np.array_equal(again[5], kids)
    assert np.array_equal(again[3], first[3]) and again[3][2] == 100.0


def test_shares_are_normalized_over_each_level():
    """S: an association's shares over its siblings' (phys 3 of 5 under root, beside
    root's own user and chem, 1 each; each user the whole of its account's); 0 for the
    root."""
    _, shares = build(Accounting(associations=tuple(tree())), ())[:2]
    assert shares[0] == 0.0
    assert shares.tolist()[1:] == pytest.approx([1 / 5, 3 / 5, 1.0, 1 / 5, 1.0])


# PriorityUsageResetPeriod: a UTC midnight 50 s after the snapshot, chem's million CPU-seconds
# of usage and no decay, so that only a reset can undo it
MIDNIGHT = 86400 * 20_000
NO_DECAY = replace(FAIR, priority_decay_half_life=0, priority_calc_period=10)
HEAVY_CHEM = tuple(replace(a, raw_usage=1e6) if a.account in ("root", "chem") else a
                   for a in PEOPLE)


def play_at(now, config, in_effect="NONE", last_reset=None, timing=None):
    """JOBS shifted to ``now``, played under ``config`` from a snapshot of a site that runs
    ``in_effect``; the starts relative to ``now`` (``timing``: whole seconds, or LIVE's
    tenths)."""
    jobs = [replace(j, submit_time=now + j.submit_time) for j in JOBS]
    snap = Snapshot(time=now, machine=Cluster("lab", (Node("n1", 2),),
                                              (Partition("batch", ("n1",), default=True),)),
                    running=(), pending=(),
                    config=replace(config, priority_usage_reset_period=in_effect),
                    accounting=Accounting(associations=HEAVY_CHEM, last_reset=last_reset))
    inp = slurm_input(snap, dict(zip([j.job_id for j in jobs], [100, 10, 10])), jobs,
                      config=config, timing=timing)
    start, _ = run_slurm(inp)
    order = {int(k): i for i, k in enumerate(inp.job_ids)}
    return [int(start[order[j.job_id]]) - now for j in jobs]


@pytest.mark.parametrize("timing, late", [(None, 0), (LIVE, 1)], ids=["seconds", "live"])
def test_a_daily_reset_at_midnight_puts_the_heavy_account_back_in_line(timing, late):
    """ann's first job runs across midnight. Without a reset chem's million keeps cat's job
    behind ann's second; with DAILY in effect the usage is zeroed at the pass before
    midnight's and what phys runs after it puts cat first. Before the snapshot's day
    ends nothing changes: a reset a day later is played too, but too late to matter.
    (LIVE reads the snapshot's seconds in tenths: the second job starts a second later.)"""
    now = MIDNIGHT - 50
    assert play_at(now, NO_DECAY, timing=timing) == [0, 100, 110 + late]
    daily = replace(NO_DECAY, priority_usage_reset_period="DAILY")
    assert play_at(now, daily, "DAILY", timing=timing) == [0, 110 + late, 100]
    assert play_at(MIDNIGHT + 3600, daily, "DAILY", timing=timing) == [0, 100, 110 + late]


def test_a_candidate_that_brings_a_reset_in_resets_at_once_unless_one_was_recent():
    """WEEKLY where none is in effect: slurmctld's last reset (or first start) long ago,
    the boundary after it is past and the reconfigure resets at its next pass; with the
    state file saying the last reset was an hour ago, the next is Sunday's, past the
    play."""
    now = MIDNIGHT + 3 * 3600
    weekly = replace(NO_DECAY, priority_usage_reset_period="WEEKLY")
    assert play_at(now, weekly) == [0, 110, 100]
    assert play_at(now, weekly, last_reset=now - 3600) == [0, 100, 110]


def test_next_reset_follows_slurms_calendar():
    """_next_reset(): midnight then a day; the Sunday after (from a Sunday, the next one);
    the first of the next month, quarter and year; in local time, and a daily reset long
    overdue at the last midnight before now."""
    def at(*when, offset=0):
        return calendar.timegm(dt.datetime(*when).timetuple()) - offset

    tuesday = at(2026, 12, 1, 20, 0)
    assert next_reset("DAILY", tuesday, tuesday) == at(2026, 12, 2)
    assert next_reset("WEEKLY", tuesday, tuesday) == at(2026, 12, 6)
    assert next_reset("WEEKLY", at(2026, 12, 6, 9), tuesday) == at(2026, 12, 13)
    assert next_reset("MONTHLY", at(2026, 12, 31, 23), tuesday) == at(2027, 1, 1)
    assert next_reset("QUARTERLY", at(2026, 5, 10), tuesday) == at(2026, 7, 1)
    assert next_reset("QUARTERLY", at(2026, 11, 10), tuesday) == at(2027, 1, 1)
    assert next_reset("YEARLY", tuesday, tuesday) == at(2027, 1, 1)
    # 20:00 UTC is 05:00 the next day at UTC+9: the next local midnight is 15:00 UTC
    assert next_reset("DAILY", tuesday, tuesday, 9 * 3600) == at(2026, 12, 3,
                                                                 offset=9 * 3600)
    # long overdue: the loop leaves the last boundary at most a period before now
    assert next_reset("DAILY", at(2026, 10, 1, 7), tuesday) == at(2026, 12, 1)
    assert next_reset("WEEKLY", at(2026, 10, 1, 7), tuesday) == at(2026, 11, 29)
    assert reset_schedule("MONTHLY", tuesday, at(2026, 12, 1)) == (at(2027, 1, 1),
                                                                   at(2027, 2, 1), 0)
    assert reset_schedule("DAILY", tuesday, 0) == (tuesday, at(2026, 12, 2), 86400)
