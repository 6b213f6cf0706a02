"""The recent past replayed under each candidate, and the decision that weighs it beside the
sampled futures: racing, the minimum dwell, risk judged on the weeks replayed."""
from dataclasses import replace

import numpy as np

from advisor.model import SECONDS_PER_WEEK
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.candidates import candidates_for
from advisor.whatif.past import PAST_OBJECTIVES, PastReplay, replay_past
from advisor.whatif.racing import FIRST_SAMPLES, close_call, race_field
from advisor.whatif.decision import OVERWHELMING
from advisor.whatif.recommend import decide, recommend
from advisor.whatif.runner import ProcessExecutor
from advisor.whatif.scenario import METRICS
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup
from tests.unit.whatif.test_recommend import _cands

SPECS = ("easy:FCFS", "easy:SPF:T=1d", "easy:LPF:T=1d", "plan1:T=1d")


def _figures(avg_wait, max_wait=None, weekly=None):
    """A PastReplay with these mean waits (NaN: no replay) and MaxWaits (default 1000),
    each week's mean wait the same (or ``weekly``: candidates x 4)."""
    out = np.zeros((len(avg_wait), len(METRICS)))
    out[:, METRICS.index("avg_wait")] = avg_wait
    out[:, METRICS.index("max_wait")] = 1000 if max_wait is None else max_wait
    out[np.isnan(np.asarray(avg_wait, float))] = np.nan
    weeks = np.full((len(avg_wait), 4, len(PAST_OBJECTIVES)), np.nan)
    weeks[:, :, 0] = (np.repeat(np.asarray(avg_wait, float)[:, None], 4, axis=1)
                      if weekly is None else weekly)
    return PastReplay(out, weeks, 500, 0, 4 * SECONDS_PER_WEEK)


def _futures(rows):
    """(candidates, samples, metrics): these mean waits per sample, MaxWait 1000."""
    obj = np.array(rows, float)
    out = np.zeros(obj.shape + (len(METRICS),))
    out[:, :, METRICS.index("avg_wait")] = obj
    out[:, :, METRICS.index("max_wait")] = 1000
    return out


def test_the_last_weeks_are_replayed_under_every_candidate_but_a_plan():
    snap, hist = _setup(bundled("KTH-SP2", False))
    cands = candidates_for(snap, [parse_policy(s) for s in SPECS])
    memo = {}
    past = replay_past(snap, hist, cands, 2, memo=memo)
    # the two whole weeks before the snapshot's week
    end = snap.time - snap.time % SECONDS_PER_WEEK
    recent = ((hist["submit"] >= end - 2 * SECONDS_PER_WEEK) & (hist["submit"] < end)).sum()
    assert past.jobs == recent > 100 and past.end == end
    # week by week: the weeks' mean waits, weighed by their jobs, are the whole mean
    sub = hist["submit"].to_numpy()
    per_week = [((sub >= end - (2 - w) * SECONDS_PER_WEEK) &
                 (sub < end - (1 - w) * SECONDS_PER_WEEK)).sum() for w in range(2)]
    weekly = past.by_week("avg_wait")
    assert weekly.shape == (len(cands), 2)
    np.testing.assert_allclose(weekly[0] @ per_week / sum(per_week),
                               past.figure("avg_wait")[0], rtol=1e-9)
    # later in the same week the memo gives the same figures without a replay
    # (the plan has none; the jobs one, the sample one)
    assert len(memo) == len(cands) - 1 + 2 and memo["sample"][0] == (end, 2)
    later = replace(snap, time=end + SECONDS_PER_WEEK - 1)
    again = replay_past(later, hist[hist["submit"] < end], cands, 2, memo=memo)
    np.testing.assert_array_equal(again.results, past.results)
    waits = past.figure("avg_wait")
    plan = next(i for i, c in enumerate(cands) if c.spec.startswith("plan1"))
    assert np.isnan(waits[plan]) and not cands[plan].enactment.replayable
    assert np.isfinite(np.delete(waits, plan)).all() and (np.delete(waits, plan) >= 0).all()
    # the order changes the waits: a replay is no constant
    assert len({round(w) for w in np.delete(waits, plan)}) > 1
    pool = ProcessExecutor(2)
    try:
        again = replay_past(snap, hist, cands, 2, pool)
    finally:
        pool.close()
    np.testing.assert_array_equal(again.results, past.results)


def test_too_short_a_history_replays_nothing():
    snap, hist = _setup(bundled("KTH-SP2", False))
    cands = candidates_for(snap, [parse_policy("easy:SPF:T=1d")])
    assert replay_past(snap, hist.iloc[:5], cands, 4) is None


def test_a_win_on_the_past_needs_the_futures_not_against_it():
    cands = _cands(3)
    s = Settings(objective="avg_wait")
    past = _figures([100.0, 80.0, 90.0])                 # 20% and 10% better on the past
    chosen, why, table = decide(cands, _futures([[10] * 4, [9] * 4, [9] * 4]), s, past=past)
    assert chosen == 1 and table[1]["past_gain"] == 0.2
    assert "over the last 4 weeks replayed (500 jobs) it would have cut the mean wait by " \
        "20% (better in 4 of the 4 weeks)" in why and "better in 4 of 4)" in why
    # the futures say the past's winner does worse now: the other one
    chosen, _, _ = decide(cands, _futures([[10] * 4, [11] * 4, [9] * 4]), s, past=past)
    assert chosen == 2
    chosen, why, _ = decide(cands, _futures([[10] * 4, [11] * 4, [11] * 4]), s, past=past)
    assert chosen == 0 and why.startswith("no change: the best candidate")


def test_within_the_dwell_only_overwhelming_evidence_changes():
    cands = _cands(3)
    s = Settings(objective="avg_wait")
    futures = _futures([[10] * 4, [9] * 4, [10] * 4])
    past = _figures([100.0, 80.0, 100.0])
    chosen, why, _ = decide(cands, futures, s, past=past, dwell=86400)
    assert chosen == 0 and "no change yet" in why and "less than 1w ago" in why
    assert "changes in 1d at the earliest" in why
    strong = 1 - OVERWHELMING * s.min_gain - 0.01
    chosen, _, _ = decide(cands, _futures([[10] * 4, [10 * strong] * 4, [10] * 4]), s,
                          past=_figures([100.0, 100 * strong, 100.0]), dwell=86400)
    assert chosen == 1


def test_risk_is_judged_on_the_weeks_replayed_and_rescues_from_them():
    cands = _cands(3)
    s = Settings(objective="avg_wait", risk=1.5)
    futures = _futures([[10] * 4, [8] * 4, [9] * 4])
    # candidate 1 waited least on the past but its MaxWait grew 2x there: out
    past = _figures([100.0, 70.0, 85.0], max_wait=[1000.0, 2000.0, 1100.0])
    chosen, _, table = decide(cands, futures, s, past=past)
    assert chosen == 2 and table[1]["over"] == ["past"]
    # nothing else wins: the reason names the figure over its limit, and by how much
    past = _figures([100.0, 70.0, 100.0], max_wait=[1000.0, 2000.0, 1100.0])
    chosen, why, _ = decide(cands, futures, s, past=past)
    assert chosen == 0 and "on the weeks replayed, MaxWait 2.00 x in effect's, over 1.5 x" in why
    # the configuration in effect is the one over the limit against the reference
    past = _figures([100.0, 110.0, 105.0], max_wait=[3000.0, 1000.0, 1100.0])
    chosen, why, _ = decide(cands, futures, s, ref=1, past=past, dwell=86400)
    assert chosen == 2 and "over a risk limit" in why


def test_a_candidate_without_a_replay_needs_overwhelming_futures():
    cands = _cands(3)
    s = Settings(objective="avg_wait")
    past = _figures([100.0, 99.0, np.nan])
    assert decide(cands, _futures([[10] * 4, [10] * 4, [8.9] * 4]), s, past=past)[0] == 0
    assert decide(cands, _futures([[10] * 4, [10] * 4, [8.0] * 4]), s, past=past)[0] == 2


def test_racing_samples_the_best_on_the_past_and_whatever_has_no_replay():
    cands = _cands(3) * 3            # nine entries; only their places matter here
    past = _figures([100.0, 70.0, 80.0, 90.0, 60.0, np.nan, 95.0, 75.0, 99.0],
                    max_wait=[1000.0] * 4 + [5000.0] + [1000.0] * 4)
    keep = race_field(cands, past, Settings(objective="avg_wait", race=2), ref=8)
    # in effect, the reference, the two best within the limits (4 is over them), no replay
    assert keep == [0, 1, 5, 7, 8]
    # a change of settings alone (a knob proposed from the queue now) is sampled whatever
    # its past: its merit is the state now, which weeks replayed from idle do not hold
    knob = replace(cands[6], enactment=replace(cands[6].enactment, keeps_job_rules=True))
    assert race_field([*cands[:6], knob, *cands[7:]], past,
                      Settings(objective="avg_wait", race=2), ref=8) == [0, 1, 5, 6, 7, 8]
    assert race_field(cands, past, Settings(objective="avg_wait", race=0)) == list(range(9))
    assert race_field(cands, None, Settings(objective="avg_wait")) == list(range(9))


def test_a_close_call_on_the_futures_is_sampled_again():
    s = Settings(objective="avg_wait")
    past = _figures([100.0, 80.0, 90.0])
    # the past's favourite (1) is level with the configuration in effect on the futures
    level = _futures([[10, 10, 10, 10], [9, 11, 10.5, 9.5], [9, 9, 9, 9]])
    assert close_call(level, s, past) == 1
    clear = _futures([[10, 10, 10, 10], [8, 8.5, 8, 8.2], [9, 9, 9, 9]])
    assert close_call(clear, s, past) is None
    assert close_call(level, s, None) is None


def test_a_recommendation_samples_the_raced_candidates_only():
    snap, hist = _setup(bundled("KTH-SP2", False))
    s = Settings(objective="avg_wait", samples=2, race=3, horizon_max=0)
    rec = recommend(snap, hist, s)
    sampled = [row for row in rec.table if row["sampled"]]
    # in effect, up to 3 best on the past (the reference is in effect), those without a
    # replay (the plans, and conservative backfilling, costly to replay) and the knobs
    unplayed = [row for row in rec.table if row["past_gain"] is None]
    assert {r["spec"].split(":")[0] for r in unplayed} == {"plan1", "plan2", "plan3",
                                                          "conservative"}
    knobs = [row for row in rec.table if row["spec"].startswith(("bf/", "prio/"))]
    assert all(row["sampled"] for row in knobs)
    assert len(sampled) <= 1 + 3 + len(unplayed) + len(knobs) < len(rec.table)
    assert rec.past is not None and rec.past.jobs > 100
    assert "replayed" in rec.as_dict()["reason"] or "no change" in rec.reason


def test_candidates_clearly_behind_on_their_first_samples_are_dropped():
    snap, hist = _setup(bundled("KTH-SP2", False))
    s = Settings(objective="avg_wait", samples=4, race=8, horizon_max=0)
    rec = recommend(snap, hist, s)
    counts = {row["label"]: row["samples"] for row in rec.table}
    assert set(counts.values()) <= {0, FIRST_SAMPLES, 4, 8} and counts["in effect"] >= 4
    dropped = [row for row in rec.table if row["samples"] == FIRST_SAMPLES]
    kept = [row for row in rec.table if row["samples"] >= 4]
    assert dropped and len(kept) > 1
    assert all(row["gain"] < 0 for row in dropped)       # behind on the samples they had


def test_with_no_futures_the_past_replayed_alone_decides():
    cands = _cands(3)
    s = Settings(objective="avg_wait", samples=0)
    none = np.zeros((3, 0, len(METRICS)))
    chosen, why, table = decide(cands, none, s, past=_figures([100.0, 80.0, 90.0]))
    assert chosen == 1 and "sampled futures" not in why and table[1]["gain"] is None
    assert decide(cands, none, s, past=_figures([100.0, 97.0, 99.0]))[0] == 0
    chosen, why, _ = decide(cands, none, s, past=_figures([100.0, 80.0, 90.0]), dwell=3600)
    assert chosen == 1                      # 20% >= 3 x 5%: overwhelming
    chosen, why, _ = decide(cands, none, s, past=_figures([100.0, 90.0, 95.0]), dwell=3600)
    assert chosen == 0 and why.startswith("no change yet")
    snap, hist = _setup(bundled("KTH-SP2", False))
    rec = recommend(snap, hist, s)
    assert rec.results.shape[1] == 0 and rec.past is not None


def test_a_winner_too_costly_to_replay_every_time_is_replayed_before_it_is_recommended(
        monkeypatch):
    """Conservative backfilling is left out of the replay at every decision; when it would
    win on its futures it is replayed, and the decision made again with its past."""
    import advisor.whatif.recommend as rec_module
    snap, hist = _setup(bundled("KTH-SP2", False))
    seen = []

    def deciding(candidates, results, settings, previous, ref, floor, past, dwell):
        # two conservative candidates win on their futures; replayed, they do not
        costly = [i for i, c in enumerate(candidates) if c.spec.startswith("conserv")][:2]
        seen.append([bool(np.isnan(past.results[i]).all()) for i in costly])
        table = [{"eligible": i in costly and seen[-1][costly.index(i)]}
                 for i in range(len(candidates))]
        return (costly[0] if seen[-1][0] else 0), "test", table

    monkeypatch.setattr(rec_module, "decide", deciding)
    rec = recommend(snap, hist, Settings(objective="avg_wait", samples=2, horizon_max=0))
    assert seen == [[True, True], [False, False]] and rec.chosen == 0
    costly = [i for i, c in enumerate(rec.candidates) if c.spec.startswith("conserv")]
    assert sum(not np.isnan(rec.past.results[i]).all() for i in costly) == 2


def test_a_costly_candidate_replacing_one_over_a_limit_is_replayed_first(monkeypatch):
    """The best within the limits replacing a configuration over one is not a winner
    (``eligible``) but is recommended all the same: when it is too costly to replay at
    every decision it is replayed first, and the next best in its turn."""
    import advisor.whatif.recommend as rec_module
    snap, hist = _setup(bundled("KTH-SP2", False))
    seen = []

    def deciding(candidates, results, settings, previous, ref, floor, past, dwell):
        costly = [i for i, c in enumerate(candidates) if c.spec.startswith("conserv")][:2]
        seen.append([bool(np.isnan(past.results[i]).all()) for i in costly])
        table = [{"eligible": False} for _ in candidates]
        # over a limit once replayed: the first, then the second; then none is left
        unplayed = [i for i, fresh in zip(costly, seen[-1]) if fresh]
        return (unplayed[0] if unplayed else 0), "test", table

    monkeypatch.setattr(rec_module, "decide", deciding)
    rec = recommend(snap, hist, Settings(objective="avg_wait", samples=2, horizon_max=0))
    assert seen == [[True, True], [False, True], [False, False]] and rec.chosen == 0


def test_a_win_on_the_past_must_hold_week_after_week():
    cands = _cands(3)
    s = Settings(objective="avg_wait")
    futures = _futures([[10] * 4, [9] * 4, [9] * 4])
    # 1: 20% better overall, from one good week; 2: 10% better in every week
    weekly = np.array([[100.0] * 4, [40.0, 110.0, 105.0, 105.0], [90.0] * 4])
    past = _figures([100.0, 80.0, 90.0], weekly=weekly)
    chosen, why, table = decide(cands, futures, s, past=past)
    assert chosen == 2 and table[1]["past_wins"] == 0.25 and table[2]["past_wins"] == 1.0
    assert decide(cands, futures, Settings(objective="avg_wait", steady=False),
                  past=past)[0] == 1


def test_the_weeks_replayed_keep_the_jobs_still_running_or_pending():
    """CTC-SP2 6 hours into its eighth week under EASY-FCFS: 85 of the jobs of the 4 weeks
    before are still running or pending, and are replayed too, each with a runtime drawn
    within its limit (a running one's past its elapsed time), the same at every replay of
    the week."""
    from advisor.model import job_limit
    from advisor.whatif.futures import history_from_workload
    from advisor.whatif.past import past_sample, unfinished
    from advisor.whatif.snapshot import trace_snapshot
    ctc = bundled("CTC-SP2", False)
    snap = trace_snapshot(ctc, parse_policy("easy:FCFS:FCFS"), 7 * SECONDS_PER_WEEK + 6 * 3600)
    held = {j.job_id for j in (*snap.running, *snap.pending)}
    hist = history_from_workload(ctc, snap.time, held)
    end = snap.time - snap.time % SECONDS_PER_WEEK
    begin = end - 4 * SECONDS_PER_WEEK
    mine = [j for j in (*snap.running, *snap.pending) if begin <= j.submit_time < end]
    rows = unfinished(hist, snap, begin, end)
    assert len(rows) == len(mine) == 85
    for j, (_, row) in zip(mine, rows.iterrows()):
        assert row["submit"] == j.submit_time and row["cpus"] == j.cpus
        assert (j.elapsed or 0) < row["runtime"] <= job_limit(j, snap.machine)
    assert unfinished(hist, snap, begin, end).equals(rows)
    finished = ((hist["submit"] >= begin) & (hist["submit"] < end)).sum()
    _, sample = past_sample(hist, snap, 4)
    assert len(sample.arrivals) == finished + len(mine)


def test_a_job_that_overran_its_limit_is_replayed_killed_at_it():
    """KTH-SP2's log holds jobs that ran past their requested time; Slurm kills a job at
    its limit (plus OverTimeLimit, 0 here), and so does every future: the weeks replayed
    are the same with those runtimes cut at the limit, and so is the risk limits' floor."""
    from advisor.whatif.recommend import reference_tails
    snap, hist = _setup(bundled("KTH-SP2", False))
    limit, runtime = hist["limit"].to_numpy(), hist["runtime"].to_numpy()
    over = (limit > 0) & (runtime > limit)
    end = snap.time - snap.time % SECONDS_PER_WEEK
    recent = hist["submit"].to_numpy() >= end - 2 * SECONDS_PER_WEEK
    assert (over & recent).sum() > 10
    cut = hist.assign(runtime=np.where(over, limit, runtime))
    cands = candidates_for(snap, [parse_policy(s) for s in SPECS[:2]])
    logged, killed = replay_past(snap, hist, cands, 2), replay_past(snap, cut, cands, 2)
    assert np.array_equal(logged.results, killed.results, equal_nan=True)
    fcfs = parse_policy("easy:FCFS")
    assert reference_tails(hist, snap.machine.cpus, fcfs, 2) == \
        reference_tails(cut, snap.machine.cpus, fcfs, 2)
    # played to their end, they would have made a busier past
    assert reference_tails(hist, snap.machine.cpus, fcfs, 2, over_time=10 ** 7) != \
        reference_tails(cut, snap.machine.cpus, fcfs, 2)
