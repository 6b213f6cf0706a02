"""Candidates in Slurm's terms, the decision rule, the emitted change and the executors."""
from dataclasses import replace

import numpy as np
import pytest

from advisor.whatif.candidates import candidates_for, slurm_candidate
from advisor.plugins.contract import Context
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.racing import simulate
from advisor.whatif.recommend import decide
from advisor.whatif.runner import TASKS_PER_WORKER, ProcessExecutor, SerialExecutor, batch_bounds
from advisor.whatif.scenario import METRICS
from advisor.whatif.slurmconf import change_for, conf_lines
from tests.unit.whatif.test_futures import _setup
from tests.conftest import bundled


#: the default grid as it stood before the policy families became plugins (identical, in
#: the same order: T=24h is now written T=1d), but for the plans' 1-day threshold
#: runtime-class queues pair with EASY-FCFS only; with no history, the fallback boundaries
GRID = ["easy:FCFS:P=2:cuts=4h", "easy:FCFS:P=3:cuts=1h/12h",
        "easy:FCFS:P=4:cuts=1h/4h/12h", "plan1:T=1d", "plan2:T=1d", "plan3:T=1d", "easy:FCFS",
        "depth:FCFS:k=2", "depth:FCFS:k=4", "conservative:FCFS"] + [
    f"{bf}:{order}" + (f":{k}" if k else "") + f":T={t}"
    for order in ("SPF", "LPF", "SQF", "LQF")
    for bf, k in (("easy", ""), ("depth", "k=2"), ("depth", "k=4"), ("conservative", ""))
    for t in ("4h", "12h", "1d")]


def _results(objective_rows, max_wait=None):
    """(candidates, samples, metrics) with the given avg_bsld per sample."""
    obj = np.array(objective_rows, float)
    out = np.zeros(obj.shape + (len(METRICS),))
    out[:, :, 0] = obj
    out[:, :, METRICS.index("max_wait")] = 1000 if max_wait is None else \
        np.array(max_wait, float)[:, None]
    return out


def _cands(n):
    snap, _ = _setup(bundled("KTH-SP2", False))
    return candidates_for(snap, [parse_policy(s) for s in ("easy:SPF", "easy:LCFS",
                                                            "easy:SQF")])[:n]


def test_a_clear_win_is_recommended_and_a_small_or_unsteady_one_is_not():
    cands = _cands(3)
    s = Settings()
    # SPF 20% better in all samples; LCFS 30% better on average but only in half of them
    res = _results([[10, 10, 10, 10], [8, 8, 8, 8], [4, 4, 11, 11]])
    chosen, why, table = decide(cands, res, s)
    assert chosen == 1 and table[1]["wins"] == 1.0 and table[2]["wins"] == 0.5
    assert decide(cands, _results([[10] * 4, [9.8] * 4, [11] * 4]), s)[0] == 0  # 2% < 5%


def test_risk_limits_veto_a_candidate_whose_max_wait_grows_too_much():
    cands = _cands(3)
    res = _results([[10] * 4, [5] * 4, [8] * 4], max_wait=[1000, 1600, 1400])
    chosen, _, table = decide(cands, res, Settings(risk=1.5))
    assert not table[1]["safe"] and chosen == 2


def test_a_reference_sets_the_limits_and_replaces_a_configuration_that_breaks_them():
    cands = _cands(3)
    # in effect: MaxWait 3000; the reference (candidate 2): 1000, so the limit is 1560
    res = _results([[10] * 4, [9.9] * 4, [12] * 4], max_wait=[3000, 1500, 1000])
    assert decide(cands, res, Settings(risk=1.5))[0] == 0      # against itself: fine
    chosen, why, table = decide(cands, res, Settings(risk=1.5), ref=2)
    assert not table[0]["safe"] and table[1]["safe"] and chosen == 1   # 1%: no gain needed
    assert "over a risk limit" in why
    res = _results([[10] * 4, [5] * 4, [12] * 4], max_wait=[1000, 1600, 1000])
    chosen, _, table = decide(cands, res, Settings(risk=1.5), ref=2)
    assert not table[1]["safe"] and chosen == 0   # twice as good, but over the limit


def test_hysteresis_keeps_the_previous_recommendation_unless_clearly_beaten():
    cands = _cands(3)
    res = _results([[10] * 4, [8] * 4, [7.8] * 4])
    assert decide(cands, res, Settings())[0] == 2
    assert decide(cands, res, Settings(), previous=cands[1].spec)[0] == 1
    res = _results([[10] * 4, [8] * 4, [6] * 4])
    assert decide(cands, res, Settings(), previous=cands[1].spec)[0] == 2


def test_the_emitted_fragment_is_the_simulated_configuration():
    snap, _ = _setup(bundled("KTH-SP2", False))
    for spec in ("easy:SPF", "conservative:LQF", "depth:SQF:k=4:T=12h", "none:FCFS"):
        cand = slurm_candidate(parse_policy(spec), Context(snap.machine, snap.config))
        change = change_for(cand, snap)
        lines = dict(conf_lines(snap.config))
        for line in change.fragment.splitlines():
            if not line.startswith("#"):
                key, _, value = line.partition("=")
                lines[key] = value
        want = conf_lines(cand.config)
        if cand.site:
            want["JobSubmitPlugins"] = "lua"
            assert "job_desc.site_factor" in change.script
        assert lines == want, spec


def test_spf_site_factors_rank_pending_jobs_by_limit():
    snap, _ = _setup(bundled("KTH-SP2", False))
    cand = slurm_candidate(parse_policy("easy:SPF"), Context(snap.machine, snap.config))
    change = change_for(cand, snap)
    site = {int(c.split()[2].split("=")[1]): int(c.split()[3].split("=")[1])
            for c in change.commands if c.startswith("scontrol update")}
    limits = {j.job_id: j.time_limit for j in snap.pending}
    assert len(site) == len(snap.pending) > 5
    ranked = sorted(site, key=lambda i: -site[i])
    assert [limits[i] // 60 for i in ranked] == sorted(limits[i] // 60 for i in ranked)
    with pytest.raises(Exception, match="no form"):
        slurm_candidate(parse_policy("easy:EXP"), Context(snap.machine, snap.config))


@pytest.mark.parametrize("candidates,samples,workers", [
    (100, 8, 2), (100, 1, 2), (100, 8, 32), (10, 1, 3), (3, 1, 8), (1, 16, 2), (30, 3, 1)])
def test_tasks_are_as_few_as_keep_every_worker_busy(candidates, samples, workers):
    """Each task pays for shipping the snapshot and building its input: a sample's
    candidates go in as few batches as still give each worker TASKS_PER_WORKER tasks (or
    one per candidate), of even sizes."""
    bounds = batch_bounds(candidates, samples, workers)
    assert [c0 for c0, _ in bounds] == [0] + [c1 for _, c1 in bounds[:-1]]
    assert bounds[-1][1] == candidates
    sizes = {c1 - c0 for c0, c1 in bounds}
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1
    want = TASKS_PER_WORKER * workers
    assert samples * len(bounds) >= min(want, candidates * samples)
    assert len(bounds) == 1 or samples * (len(bounds) - 1) < want


@pytest.mark.xdist_group("ray")
def test_every_executor_gives_the_same_results():
    snap, hist = _setup(bundled("KTH-SP2", False))
    cands = candidates_for(snap)[:30]
    s = Settings(samples=3, horizon=43200, seed=5)
    serial = simulate(snap, hist, cands, s, SerialExecutor())
    assert serial.shape == (30, 3, len(METRICS)) and serial[:, :, 0].min() >= 1
    assert len({tuple(r) for r in serial[:, 0, :4]}) > 3  # the candidates differ
    with ProcessExecutor(2) as pool:
        np.testing.assert_array_equal(serial, simulate(snap, hist, cands, s, pool))
    ray = pytest.importorskip("ray")
    from advisor.whatif.runner import RayExecutor
    ex = RayExecutor(2)
    try:
        np.testing.assert_array_equal(serial, simulate(snap, hist, cands, s, ex))
    finally:
        ex.close()
    assert not ray.is_initialized()


def test_the_horizon_grows_to_the_queues_drain_time():
    """CTC-SP2 on day 66 under EASY-FCFS: 60 pending jobs whose limits take the machine
    1.8 days; the futures last that long (not a day), up to --horizon-max, and a day when
    the queue drains sooner (day 84) or --horizon-max is 0."""
    from advisor.model import job_limit
    from advisor.whatif.futures import history_from_workload
    from advisor.whatif.recommend import recommend
    from advisor.whatif.snapshot import trace_snapshot
    ctc = bundled("CTC-SP2", False)
    deep = trace_snapshot(ctc, parse_policy("easy:FCFS:FCFS"), 66 * 86400)
    work = sum(j.cpus * job_limit(j, deep.machine) for j in deep.pending)
    drain = work // deep.machine.cpus
    assert len(deep.pending) == 60 and 1.5 * 86400 < drain < 2 * 86400
    quick = Settings(samples=1, policies=(parse_policy("easy:SPF:T=1d"),))
    hist = history_from_workload(ctc, deep.time)
    assert recommend(deep, hist, quick).settings.horizon == drain
    assert recommend(deep, hist, replace(quick, horizon_max=36 * 3600)).settings.horizon == \
        36 * 3600
    assert recommend(deep, hist, replace(quick, horizon_max=0)).settings.horizon == 86400
    light = trace_snapshot(ctc, parse_policy("easy:FCFS:FCFS"), 84 * 86400)
    assert recommend(light, hist, quick).settings.horizon == 86400


def test_a_candidate_input_is_the_input_built_from_scratch_under_its_configuration():
    """``under_config`` (vectorised, per candidate) against ``slurm_input`` (job by job)."""
    from dataclasses import replace

    from advisor.engine.slurm import run_slurm, slurm_input, under_config
    from advisor.whatif.futures import draw_sample
    snap, hist = _setup(bundled("KTH-SP2", False))
    sample = draw_sample(snap, hist, 86400, 1)
    base = slurm_input(snap, sample.runtimes, sample.arrivals)
    for spec in ("easy:SQF", "conservative:LQF:T=12h", "depth:FCFS:k=4"):
        cand = slurm_candidate(parse_policy(spec), Context(snap.machine, snap.config))
        cfg = replace(cand.config, priority_weight_job_size=5000)
        fast = under_config(base, cfg, snap.machine, np.zeros(len(base)))
        slow = slurm_input(snap, sample.runtimes, sample.arrivals, config=cfg)
        np.testing.assert_array_equal(fast.jobs, slow.jobs)
        np.testing.assert_allclose(fast.rec_static, slow.rec_static, rtol=1e-12)
        np.testing.assert_array_equal(fast.cfg, slow.cfg)
        np.testing.assert_array_equal(run_slurm(fast)[0], run_slurm(slow)[0])


def test_default_grid_holds_only_candidates_that_bound_waiting():
    """A job may be passed only by jobs submitted less than T after it: the age slope is the
    ordering's whole key (a day of limits at least, the longest MaxTime; every CPU) per T.
    LCFS has no such form (its site factor grows with the clock) and is refused."""
    from dataclasses import replace

    from advisor.errors import BadInput
    from advisor.plugins.grid import default_grid
    snap, _ = _setup(bundled("KTH-SP2", False))
    specs = [p.spec for p in default_grid(Context(snap.machine, snap.config))]
    assert specs == GRID
    assert len(specs) == 58 and not [s for s in specs if "LCFS" in s]
    assert all("T=" in s for s in specs if ":FCFS" not in s and "plan" not in s)
    with pytest.raises(BadInput, match="LCFS has no Slurm form"):
        slurm_candidate(parse_policy("easy:LCFS:T=4h"), Context(snap.machine, snap.config))
    # the slope: the key's whole range per T, up to two weeks (84 T of 4 h)
    sqf = slurm_candidate(parse_policy("easy:SQF:T=4h"), Context(snap.machine, snap.config))
    assert sqf.config.priority_weight_age == 84 * snap.machine.cpus == 8400
    assert sqf.config.priority_max_age == 14 * 86400
    spf = slurm_candidate(parse_policy("easy:SPF:T=4h"), Context(snap.machine, snap.config))
    assert spf.config.priority_weight_age == 84 * 1440  # the trace's partition: no MaxTime
    m = snap.machine
    week = replace(m, partitions=tuple(replace(p, max_time=7 * 86400) for p in m.partitions))
    spf = slurm_candidate(parse_policy("easy:SPF:T=4h"), Context(week, snap.config))
    assert spf.config.priority_weight_age == 84 * 7 * 1440


def test_a_candidate_without_site_factors_clears_the_ones_in_effect():
    """The simulation gives such a candidate's jobs site factor 0; the change must too."""
    from dataclasses import replace
    snap, _ = _setup(bundled("KTH-SP2", False))
    pending = tuple(replace(j, priority_factors={"site": 1000 + i} if i % 2 else {})
                    for i, j in enumerate(snap.pending))
    snap = replace(snap, pending=pending,
                   config=replace(snap.config, job_submit_plugins=("lua",)))
    cand = slurm_candidate(parse_policy("easy:FCFS"), Context(snap.machine, snap.config))
    change = change_for(cand, snap)
    cleared = [c for c in change.commands if c.endswith("SiteFactor=0")]
    assert len(cleared) == len(pending) // 2 > 0
    assert any("job_submit.lua sets site factors" in c for c in change.caveats)


def test_tail_push_flags_the_job_a_candidate_leaves_behind():
    from advisor.whatif.scenario import tail_push
    ref = [100, 5000, 20000, 60]                # the reference's worst wait: 20,000 s
    same_max = [10, 30000, 200, 60]             # max 30,000: only 1.5x the reference's...
    starve = [10, 200, 9000, 25000]             # ...but this one takes a 60 s job to 25,000
    never = [10, 200, 9000, np.nan]             # never started: pushed without bound
    push = tail_push(np.array([ref, same_max, starve, never], np.float32), 0)
    assert push[0] == 0                         # nothing beyond its own worst
    assert push[1] == pytest.approx(6.0)        # 30,000 / 5,000
    assert push[2] == pytest.approx(25000 / 60)
    assert push[3] == np.inf
    s = Settings()
    res = _results([[10] * 4, [5] * 4, [5] * 4], max_wait=[1000, 1000, 1000])
    res[2, :, METRICS.index("tail_push")] = 2.0     # over risk 1.5: vetoed
    chosen, _, table = decide(_cands(3), res, s)
    assert chosen == 1 and not table[2]["safe"]


def test_the_waits_tail_push_reads_count_from_the_snapshot():
    """An old job's past wait is the same under every candidate: counted in, a 3-day-old
    job pushed one more day was only at 4/3 of its wait, and daily plans postponed one
    wide job for eight days (SDSC-BLUE online). From the snapshot, the push shows whole."""
    from advisor.whatif.futures import draw_sample
    from advisor.whatif.scenario import Task, evaluate
    snap, hist = _setup(bundled("KTH-SP2", False))
    assert min(j.submit_time for j in snap.pending) < snap.time - 3600   # old jobs wait
    cands = _cands(2)
    out, waits, ages, *_ = evaluate(Task(snap, tuple(cands), draw_sample(snap, hist, 86400, 1),
                                     86400))
    k = METRICS.index("max_wait")
    for c in range(len(cands)):
        assert np.nanmax(waits[c]) == pytest.approx(out[c, k])    # the max's own count
    assert np.nanmin(waits) >= 0


def test_the_default_grid_leaves_conservative_out_of_a_long_queue():
    """Above --conservative-up-to pending jobs the default grid has no conservative
    candidate, the recommendation says so, and a named one is still simulated."""
    from advisor.plugins.grid import grid
    from advisor.whatif.recommend import recommend
    snap, hist = _setup(bundled("KTH-SP2", False))
    n = len(snap.pending)
    assert n > 1
    context = Context(snap.machine, snap.config, n, n)
    full, why = grid(context)
    assert [p.spec for p in full] == GRID and why == ""
    kept, why = grid(replace(context, long_queue=n - 1))
    assert [p.spec for p in kept] == [s for s in GRID if not s.startswith(
        ("conservative:", "plan"))]
    assert len(kept) == 42
    assert why == (f"16 backfill/conservative and plan/sa candidates not simulated: {n} jobs "
                   f"pending, more than --conservative-up-to {n - 1} (on a long queue each of "
                   "their simulations or plans takes seconds); name one with --candidate, "
                   "e.g. plan1:T=1d, to simulate it")
    quick = Settings(samples=1, horizon=3600, conservative_up_to=n - 1)
    rec = recommend(snap, hist, quick)
    assert rec.as_dict()["left_out"] == why
    assert len(rec.candidates) > 30
    assert not [c for c in rec.candidates if c.config.backfill.bf_job_part_count_reserve == 0]
    named = recommend(snap, hist, replace(quick, policies=(parse_policy("conservative:FCFS"),)))
    assert named.left_out == "" and named.candidates[1].spec == "conservative:FCFS"
