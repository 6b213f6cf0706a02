"""The advice benchmark: the online advisor against every candidate kept fixed over the
same decision points, on a window of a real trace."""
import io
import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from rich.console import Console

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.cleaning import trace_window
from advisor.engine import Estimates
from advisor.errors import BadInput
from advisor.model import SECONDS_PER_WEEK, trace_machine
from advisor.plugins.contract import Context
from advisor.plugins.knob import is_knob
from advisor.plugins.spec import BASELINE, parse_policy
from advisor.whatif.hindsight import (BEST_SAFE, ONLINE, ROLLING, SITE, FixedTask,
                                      advice_bench, bench_window, best_within_risk,
                                      fixed_base, fixed_runs, fixed_starts, pick_snapshots,
                                      rolling_picks, static_policies, switching_starts,
                                      warm_window)
from advisor.views.hindsight import advice_bench_table
from advisor.whatif.online import ReplaySystem
from advisor.settings import Settings
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.runner import make_executor
from advisor.whatif.trace_accounts import (account_names, baseline_spec, site_config,
                                           with_accounts)


@pytest.fixture(scope="module")
def kth():
    return read_swf(resolve_trace("KTH-SP2"))


@pytest.fixture(scope="module")
def kth_window(kth):
    """KTH-SP2's weeks 20 to 23 (2,052 jobs): a queue that a scheduler can shorten."""
    t0 = int(kth.jobs["submit"].min())
    return trace_window(kth, t0 + 20 * SECONDS_PER_WEEK, t0 + 23 * SECONDS_PER_WEEK)


@hsettings(max_examples=25, deadline=None)
@given(load=st.floats(0.5, 3.0), first=st.integers(0, 2000), n=st.integers(1, 400))
def test_a_window_keeps_its_jobs_and_divides_the_gaps(kth, load, first, n):
    jobs = kth.jobs
    since, until = int(jobs.submit.iloc[first]), int(jobs.submit.iloc[first + n]) + 1
    out = trace_window(kth, since, until, load).jobs
    inside = jobs[(jobs.submit >= since) & (jobs.submit < until)]
    assert sorted(out.job_id) == sorted(inside.job_id)
    assert (out.runtime.to_numpy() == inside.set_index("job_id").loc[out.job_id].runtime
            .to_numpy()).all()
    gap_in = inside.submit.max() - inside.submit.min()
    assert out.submit.min() == inside.submit.min()
    assert abs((out.submit.max() - out.submit.min()) - gap_in / load) <= 1


def test_a_window_refuses_what_it_cannot_cut(kth):
    with pytest.raises(BadInput, match="--load"):
        trace_window(kth, load=0)
    with pytest.raises(BadInput, match="no job"):
        trace_window(kth, 10, 11)


def test_the_history_before_a_window_is_what_had_finished_then(kth):
    """The advisor's history at a window's start is sacct's then: the trace's jobs that
    had ended by that moment by its own record, nothing of the window; every decision's
    history starts with it."""
    t0 = int(kth.jobs["submit"].min())
    since = t0 + 20 * SECONDS_PER_WEEK
    window, prior = bench_window(kth, since, since + 3 * SECONDS_PER_WEEK)
    jobs = kth.jobs
    ended = (jobs.submit + jobs.wait.clip(lower=0) + jobs.runtime) <= since
    assert len(prior) == int(ended.sum()) > 5000 and (prior.submit < since).all()
    assert window.jobs.submit.min() >= since
    system = ReplaySystem(window, Estimates(), parse_policy(BASELINE), prior)
    seen = []
    system.play(system.decision_points(86400)[:3],
                lambda t, snap, history, cur: seen.append(history) or cur)
    for history in seen:
        assert len(history) >= len(prior) and "efficiency" not in history
        assert (history.submit.iloc[:len(prior)].to_numpy() == prior.submit.to_numpy()).all()
    assert len(seen[-1]) > len(prior)


def test_the_baseline_kept_fixed_is_the_online_runs_baseline(kth_window):
    """A candidate kept fixed is cut at the same decision points as the online run and its
    baseline: the baseline's policy kept fixed gives the baseline's schedule exactly."""
    system = ReplaySystem(kth_window, Estimates(), parse_policy(BASELINE))
    baseline = system.play(system.decision_points(86400), lambda t, s, h, c: c)
    fixed = fixed_starts(FixedTask(kth_window, Estimates(), 86400, parse_policy(BASELINE),
                                   ()))
    assert np.array_equal(fixed, baseline) and (fixed >= system.submit).all()
    spf = fixed_starts(FixedTask(kth_window, Estimates(), 86400, parse_policy("easy:SPF"),
                                 ()))
    assert not np.array_equal(spf, baseline)


@pytest.mark.parametrize("risk", [1.0, 1.5])
def test_the_sites_pick_is_the_best_within_risk_on_the_weeks_before(kth_window, risk):
    """What a site tuning by hand would fix: of the candidates kept fixed over its past
    weeks, the lowest AvgWait among those whose MaxWait and p95 wait are within ``risk``
    times EASY-FCFS-FCFS's, computed here from the start times alone. On these weeks the
    lowest AvgWait of the three (DEPTH-SQF-SQF k=4) waits 3.75 times the baseline's
    MaxWait, so the pick is another one (here the baseline itself)."""
    specs = [BASELINE, "easy:LPF", "depth:SQF:k=4", "conservative:FCFS"]
    fixed = fixed_runs(kth_window, 86400, [parse_policy(p) for p in specs])
    submit = kth_window.jobs["submit"].to_numpy()
    runtime = kth_window.jobs["runtime"].to_numpy()
    base_label = parse_policy(BASELINE).label
    base = fixed[base_label][1] - submit
    within = {}
    for name, (_spec, start) in fixed.items():
        wait = start - submit
        if (wait.max() <= risk * base.max() and
                np.percentile(wait, 95) <= risk * np.percentile(base, 95)):
            within[name] = wait.mean()
    pick = best_within_risk(submit, runtime, fixed, np.ones(len(submit), bool), risk,
                            base_label)
    assert pick == min(within, key=within.get)
    means = {name: (start - submit).mean() for name, (_, start) in fixed.items()}
    assert min(means, key=means.get) not in within
    assert base_label in within        # the baseline is always within its own limits


def test_the_advice_beats_the_baseline_on_a_short_window(kth):
    """The benchmark's direction in CI: daily advice (4 samples, avg_wait, the history
    before the window known, its 4 weeks before played as a warm-up) over three weeks of
    KTH-SP2 waits less on average than EASY-FCFS-FCFS kept fixed; the table holds the
    site's pick and the rolling pick beside every candidate kept fixed."""
    t0 = int(kth.jobs["submit"].min()) + 20 * SECONDS_PER_WEEK
    window, prior, first = warm_window(kth, t0, t0 + 3 * SECONDS_PER_WEEK)
    assert first == t0 and window.jobs["submit"].min() >= t0 - 4 * SECONDS_PER_WEEK
    executor = make_executor(2, "process")
    try:
        bench = advice_bench(window, 86400, Settings(objective="avg_wait", samples=4),
                             executor, prior=prior, first=first)
    finally:
        executor.close()
    table = bench.table
    base, online = table.iloc[0], table.iloc[-1]
    assert base["name"] == "baseline" and online["name"] == ONLINE
    assert online["avg_wait"] < base["avg_wait"] and bench.total["online_vs_baseline"] < 0
    assert bench.total["jobs"] == int((window.jobs["submit"] >= first).sum())
    assert {SITE, ROLLING} <= set(table["name"]) and bench.pick
    assert len(bench.rolling) == 3 and bench.rolling[0] == bench.pick
    assert bench.online.decisions[0].time >= first
    static = table[~table["name"].isin(["baseline", SITE, ROLLING, ONLINE])]
    assert len(static) == bench.total["static_runs"] > 40
    safe = static[static.spec == bench.best_safe].iloc[0]
    assert safe["safe"] and safe["max_wait"] <= 1.5 * base["max_wait"]
    assert base["r"] == 0
    assert bench.weeks["week"].tolist() == [0, 1, 2] and BEST_SAFE in bench.weeks
    json.dumps(bench.as_dict())
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(advice_bench_table(window, bench))
    text = console.export_text()
    assert "best static" in text and bench.best in text.replace("\n", "")
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_rolling_pick_re_applies_the_sites_rule_every_week(kth_window):
    """The rolling pick, an automated hand-tuner: each week the best within risk over the
    weeks before (its first week: the site's pick), put in effect by switching the replay
    at that time; before it the baseline runs, and nothing started before a switch
    changes."""
    specs = [BASELINE, "easy:SPF:T=1d", "easy:LPF:T=1d", "depth:SQF:k=4:T=12h"]
    policies = [parse_policy(p) for p in specs]
    runs = fixed_runs(kth_window, 86400, policies)
    submit = kth_window.jobs["submit"].to_numpy(np.int64)
    runtime = kth_window.jobs["runtime"].to_numpy(np.int64)
    base = policies[0].label
    first = int(submit.min()) + SECONDS_PER_WEEK
    picks = rolling_picks(submit, runtime, runs, first, 2, 1, 1.5, base)
    assert [t for t, _ in picks] == [first, first + SECONDS_PER_WEEK]
    assert picks[0][1] == best_within_risk(submit, runtime, runs, submit < first, 1.5, base)
    waits = {n: (s - submit)[submit < first] for n, (_, s) in runs.items()}
    within = [n for n, w in waits.items() if w.max() <= 1.5 * waits[base].max()
              and np.percentile(w, 95) <= 1.5 * np.percentile(waits[base], 95)]
    assert picks[0][1] == min(within, key=lambda n: waits[n].mean())
    # no switch: the baseline's run; a switch changes nothing started before it
    by_label = {p.label: p for p in policies}
    assert np.array_equal(switching_starts(kth_window, 86400, by_label, []), runs[base][1])
    at = first + 2 * 86400
    spf = switching_starts(kth_window, 86400, by_label, [(at, policies[1].label)])
    before = runs[base][1] <= at
    assert np.array_equal(spf[before], runs[base][1][before])
    assert not np.array_equal(spf, runs[base][1])


def test_fairness_columns_see_an_account_held_back(kth):
    """With the trace's groups as accounts, each run has its fair-share deviation and its
    account wait against the first run. Holding the busiest account's jobs back ten days
    makes its mean wait the largest ratio and takes its CPU-seconds out of the window
    (each account's, by the last submission, against equal shares: worked out here with
    pandas)."""
    from advisor.engine import job_arrays
    from advisor.whatif.hindsight import fairness_columns

    w = with_accounts(kth.with_jobs(kth.jobs.iloc[:400].reset_index(drop=True)))
    submit, runtime = w.jobs["submit"].to_numpy(np.int64), job_arrays(w).runtime
    names = account_names(w.jobs["group"].to_numpy())
    values, counts = np.unique(names, return_counts=True)
    busiest = values[counts.argmax()]
    late = np.where(names == busiest, submit + 10 * 86400, submit)
    cols = fairness_columns(w, runtime, {"baseline": ("b", submit), "late": ("l", late)},
                            np.ones(len(submit), bool))
    assert cols["acct_wait"][0] == 1.0 and cols["acct_wait"][1] > 2.0
    for start, dev in zip((submit, late), cols["share_dev"]):
        ran = (np.clip(np.minimum(start + runtime, submit.max()) - start, 0, None)
               * w.jobs["procs"].to_numpy())
        got = pd.Series(ran).groupby(names).sum()
        assert dev == pytest.approx(0.5 * np.abs(got / got.sum() - 1 / len(values)).sum())
    assert cols["share_dev"][0] != cols["share_dev"][1]


def test_the_static_grid_holds_the_knobs_the_site_saw_and_keeps_each_fixed(kth):
    """A site picking by hand can set a slurm.conf key: with the states of its last weeks
    (each day's, under the baseline) the static grid holds each knob's proposals at the
    latest day it proposed any, once per knob; a knob kept fixed changes the baseline's
    configuration (the one in effect then) and nothing else, so its run is the baseline's
    with that key changed. Without those states, no knob."""
    t0 = int(kth.jobs["submit"].min()) + 20 * SECONDS_PER_WEEK
    window, prior, first = warm_window(with_accounts(kth), t0, t0 + SECONDS_PER_WEEK)
    machine, base = trace_machine(window), site_config(window)
    snaps = pick_snapshots(window, first, 86400)
    assert len(snaps) == 28 and snaps[-1].time == first
    plain = static_policies(machine, None, base=base)
    grid = static_policies(machine, None, base=base, snapshots=snaps)
    knobs = [p for p in grid if is_knob(p)]
    assert not any(is_knob(p) for p in plain) and grid[:len(plain)] == plain
    assert len(grid) == len(plain) + len(knobs)
    labels = [p.label for p in knobs]
    assert "PriorityWeightAge=5000 PriorityMaxAge=1w" in labels
    assert sum(lab.startswith("PriorityDecayHalfLife=") for lab in labels) == 2
    assert not any(lab.startswith("PriorityWeightFairshare") for lab in labels)
    age = next(p for p in knobs if p.label.startswith("PriorityWeightAge=5000"))
    system = ReplaySystem(window, Estimates(), parse_policy(baseline_spec(window)))
    config = slurm_candidate(age, Context(machine, fixed_base(age, window, system))).config
    assert config == replace(system.first.config, priority_weight_age=5000)
    starts = fixed_starts(FixedTask(window, Estimates(), 86400, age, None))
    baseline = system.play(system.decision_points(86400), lambda t, s, h, c: c)
    assert (starts >= system.submit).all() and not np.array_equal(starts, baseline)


def test_each_change_is_judged_on_the_jobs_submitted_while_it_was_in_effect(kth):
    """Two changes: the first holds the busiest account's jobs back ten days, the second
    (from the middle submission on) none. In hindsight the first breaks the account-wait
    limit over the jobs it scheduled and the second, whose jobs wait as the baseline's,
    does not; a decision that changed nothing is no change; other runs are judged on the
    same jobs."""
    from advisor.whatif.hindsight import change_fairness
    from advisor.whatif.online import Decision, OnlineResult

    w = with_accounts(kth.with_jobs(kth.jobs.iloc[:400].reset_index(drop=True)))
    submit = w.jobs["submit"].to_numpy(np.int64)
    names = account_names(w.jobs["group"].to_numpy())
    values, counts = np.unique(names, return_counts=True)
    middle = int(np.median(submit))
    late = np.where((names == values[counts.argmax()]) & (submit < middle),
                    submit + 10 * 86400, submit)
    decisions = [Decision(int(submit.min()), True, "easy:SPF", True, ""),
                 Decision(middle - 10, True, "easy:SPF", False, ""),
                 Decision(middle, True, "easy:LPF", True, "")]
    online = OnlineResult("b", 86400, late, submit, decisions, pd.DataFrame())
    got = change_fairness(w, submit, online, np.ones(len(submit), bool),
                          {"pick": submit, "late pick": late})
    assert [c["spec"] for c in got] == ["easy:SPF", "easy:LPF"]
    assert got[0]["jobs"] + got[1]["jobs"] == len(submit)
    assert got[0]["acct_wait"] > 2.0 and got[1]["acct_wait"] == 1.0
    # beside them, what other runs did to the same jobs
    assert got[0]["pick"] == 1.0 and got[0]["late pick"] == got[0]["acct_wait"]
