"""The native families (issue 58, item 1): the settings Slurm sites tune themselves,
proposed from the site's configuration and queue, played by the slurm mode, enacted as
slurm.conf lines alone."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from advisor.engine.slurm import slurm_input, with_backfill
from advisor.model import (BackfillCost, Cluster, Job, Node, Partition, SchedulingConfig,
                           Snapshot)
from advisor.plugins.registry import registry
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.candidates import candidates_for, context_for
from advisor.whatif.decision import decide
from advisor.whatif.scenario import candidate_input, candidate_starts, nice_of
from advisor.whatif.slurmconf import change_for
from advisor.adapters.swf import read_swf, resolve_trace
from advisor.whatif.snapshot import trace_snapshot
from advisor.whatif.trace_accounts import SITE_BASELINE, with_accounts
from tests.unit.whatif.test_past_replay import _futures
from tests.unit.whatif.test_site_policy import _fair_share_site

#: FCFS under priority/multifactor (every weight 0), as a site running the baseline has it
FCFS = replace(SchedulingConfig(), priority_type="priority/multifactor")
T0 = 1_000_000


def _machine(nodes: int = 4, cpus: int = 16) -> Cluster:
    names = tuple(f"n{i}" for i in range(1, nodes + 1))
    return Cluster("lab", tuple(Node(n, cpus) for n in names),
                   (Partition("batch", names, default=True),))


def _job(i: int, submit: int, cpus: int, limit: int, **kw) -> Job:
    return Job(job_id=i, user=kw.pop("user", "u"), partition="batch", cpus=cpus,
               state=kw.pop("state", "PENDING"), submit_time=submit, time_limit=limit,
               partitions=("batch",), **kw)


def _starts(snap: Snapshot, cand, runtimes: dict, arrivals=()) -> dict[int, int]:
    """Each job's start under ``cand`` (by id), as a sampled future plays it."""
    base = slurm_input(snap, runtimes, arrivals, config=snap.config)
    inp = candidate_input(base, cand, snap, nice_of(base, snap), runtimes, arrivals)
    start = candidate_starts(inp, cand, snap, runtimes, arrivals)
    return dict(zip(inp.job_ids.tolist(), start.tolist()))


def _one(snap: Snapshot, key: str) -> list:
    """The candidates of the plugins under ``key`` (a family, or family/name) in the
    default grid for ``snap``."""
    return [c for c in candidates_for(snap)[1:] if c.spec.split(":")[0].startswith(key)]


def _fair_trace() -> Snapshot:
    """KTH-SP2's first 1,500 jobs with its groups as accounts, fair share in effect, two
    weeks in."""
    workload = read_swf(resolve_trace("KTH-SP2"))
    workload = with_accounts(workload.with_jobs(workload.jobs.iloc[:1500]
                                                .reset_index(drop=True)))
    return trace_snapshot(workload, parse_policy(SITE_BASELINE), 14 * 86400)


def test_every_knob_is_a_plugin_of_its_family_and_its_label_is_its_spec():
    members = {p.key for p in registry().plugins.values()}
    for key in ("prio/age", "prio/jobsize", "prio/fairshare", "prio/qos",
                "prio/partition", "prio/decay", "bf/window", "bf/max_job_test",
                "bf/max_job_user", "bf/max_job_part", "bf/busy_nodes", "bf/resolution",
                "bf/interval", "bf/continue", "bf/max_time"):
        assert key in members
    snap = _fair_trace()
    natives = [c for c in candidates_for(snap)[1:] if c.enactment.keeps_job_rules]
    assert {c.spec.split(":")[0] for c in natives} >= {"prio/age", "prio/jobsize",
                                                       "prio/fairshare", "prio/decay"}
    for c in natives:
        # what the advisor prints can be given back to it
        assert parse_policy(c.label) == parse_policy(c.spec), c.label
        assert c.fidelity == "exact"


def _deep_queue(config, count: int, short_id: int):
    """Three of four nodes busy for 10 h; ``count`` whole-machine jobs pending, then a 1-h
    job of one node: (snapshot, running, wide, short)."""
    running = tuple(_job(k, T0 - 600, 16, 36000, state="RUNNING", start_time=T0 - 600)
                    for k in (1, 2, 3))
    wide = tuple(_job(10 + k, T0 - 500 + k, 64, 7200) for k in range(count))
    short = _job(short_id, T0 - 100, 16, 3600)
    snap = Snapshot(time=T0, machine=_machine(), running=running, pending=(*wide, short),
                    config=config)
    return snap, running, wide, short


def test_a_deep_queue_gets_bf_max_job_test_raised_and_the_short_job_past_it_starts_now():
    """Three of four nodes busy for 10 h; twelve whole-machine jobs pending, then a 1-h job
    of one node. bf_max_job_test=5 never lets backfill reach it: it waits for every wide
    job. The candidate raises the depth to the queue's length (in hundreds) and starts it
    on the idle node at once, as Slurm's backfill would."""
    config = with_backfill(FCFS, bf_max_job_test=5)
    snap, running, wide, short = _deep_queue(config, 12, 99)
    (cand,) = _one(snap, "bf")[:1]
    assert cand.spec == "bf/max_job_test:bf_max_job_test=100", cand.spec
    runtimes = {j.job_id: j.time_limit for j in (*running, *wide, short)}
    current = candidates_for(snap, [])[0]
    assert _starts(snap, current, runtimes)[99] >= T0 + 36000
    assert _starts(snap, cand, runtimes)[99] - T0 <= config.backfill.bf_interval
    change = change_for(cand, snap)
    assert change.diff == {"SchedulerParameters": ("bf_max_job_test=5",
                                                   "bf_max_job_test=100")}
    assert not change.script and change.commands == ("scontrol reconfigure",)


def test_a_cycle_that_yields_gets_bf_continue_and_reaches_the_short_job_past_its_yields():
    """A slow slurmctld (50 ms a job tested, as sdiag might show): three of four nodes
    busy for 10 h, a hundred whole-machine jobs pending, then a 1-h job of one node; a
    whole-machine job arrives every second for ten minutes. A cycle over the queue holds
    the locks 5 s, past bf_yield_interval (2 s): it yields after 40 jobs, an arrival has
    come meanwhile, and without bf_continue it ends there, every cycle, until the
    arrivals stop. bf_continue is proposed (bf_max_time is not: the cycle fits in
    bf_interval), and with it the first cycle goes on to the short job."""
    config = replace(FCFS, backfill_cost=BackfillCost(job_us=50_000))
    snap, running, wide, short = _deep_queue(config, 100, 999)
    assert [c.spec for c in _one(snap, "bf")] == ["bf/continue:bf_continue=yes"]
    (cand,) = _one(snap, "bf")
    arrivals = tuple(_job(2000 + k, T0 + k, 64, 7200) for k in range(1, 600))
    runtimes = {j.job_id: j.time_limit for j in (*running, *wide, short, *arrivals)}
    current = candidates_for(snap, [])[0]
    assert _starts(snap, current, runtimes, arrivals)[999] > T0 + 600
    assert _starts(snap, cand, runtimes, arrivals)[999] - T0 <= 2 * config.backfill.bf_interval
    change = change_for(cand, snap)
    assert change.diff == {"SchedulerParameters": ("", "bf_continue")}


def test_a_cycle_past_bf_max_time_gets_it_raised_to_the_cycle_s_length():
    """At half a second a job tested, a cycle over the 101 pending jobs takes 50.5 s and
    yields 25 times for 0.5 s: 63 s, past bf_max_time (bf_interval's 30 s). Both keys are
    proposed, bf_max_time at the cycle's length in whole seconds."""
    config = replace(FCFS, backfill_cost=BackfillCost(job_us=500_000))
    snap, *_ = _deep_queue(config, 100, 999)
    assert [c.spec for c in _one(snap, "bf")] == ["bf/continue:bf_continue=yes",
                                                  "bf/max_time:bf_max_time=63"]


def test_a_limit_past_bf_window_gets_the_window_widened_and_its_job_a_reservation():
    """Four nodes run jobs with 2-day limits that end within 4 h; a whole-machine job is
    pending, and one-node jobs arrive every half hour for a day, each asking 2 days and
    running 2 h. With bf_window at Slurm's day, the wide job's earliest start by the
    limits always lies past it: no reservation, and the arrivals backfill onto every node
    it waits for, all day. The candidate widens the window to the running limits: the
    wide job holds a reservation that no arrival fits before, and starts when the
    running jobs end."""
    running = tuple(_job(k, T0 - 600, 16, 2 * 86400, state="RUNNING", start_time=T0 - 600)
                    for k in (1, 2, 3, 4))
    wide = _job(10, T0 - 300, 64, 4 * 3600)
    snap = Snapshot(time=T0, machine=_machine(), running=running, pending=(wide,),
                    config=FCFS)
    (cand,) = _one(snap, "bf/window")
    assert cand.config.backfill.bf_window == 48 * 60
    arrivals = tuple(_job(100 + k, T0 + 1800 * k, 16, 2 * 86400) for k in range(48))
    runtimes = {j.job_id: 7200 for j in arrivals}
    runtimes.update({k: 3600 * k - 600 for k in (1, 2, 3, 4)})
    runtimes[10] = 3600
    current = candidates_for(snap, [])[0]
    assert _starts(snap, current, runtimes, arrivals)[10] > T0 + 86400
    assert _starts(snap, cand, runtimes, arrivals)[10] <= T0 + 4 * 3600 + 60


def test_a_native_change_keeps_the_jobs_site_factors_and_the_script_in_effect():
    """Jobs pending with site factors (a job_submit.lua's) keep them under a knob, which
    writes no job_submit.lua and clears nothing; an ordering gives them its own (0)."""
    snap, hist = _fair_share_site()
    first = snap.pending[0]
    marked = replace(first, priority_factors={**first.priority_factors, "site": 5000.0})
    snap = replace(snap, pending=(marked, *snap.pending[1:]),
                   config=replace(snap.config, job_submit_plugins=("lua",)))
    knob, ordering = candidates_for(snap, [parse_policy("PriorityWeightAge=500"),
                                           parse_policy("easy:FCFS:FCFS")])[1:]
    runtimes = {j.job_id: 3600 for j in (*snap.running, *snap.pending)}
    base = slurm_input(snap, runtimes, config=snap.config)
    row = int(np.flatnonzero(base.job_ids == marked.job_id)[0])
    statics = []
    for cand in (knob, ordering):
        inp = candidate_input(base, cand, snap, nice_of(base, snap), runtimes)
        statics.append(inp.rec_static[inp.rec_job == row].max())
    assert statics[0] - statics[1] >= 5000 - 1e-6
    change = change_for(knob, snap)
    assert set(change.diff) == {"PriorityWeightAge"} and not change.script
    assert not any("SiteFactor" in c for c in change.commands)
    assert any("SiteFactor=0" in c for c in change_for(ordering, snap).commands)


def test_the_knobs_are_proposed_from_the_site_not_everywhere():
    """No priority knob where priority is no policy (FCFS alone), no bf_window where no
    limit reaches past it, no depth where the queue is short; a site running a policy with
    fair share gets its age, job-size, fair-share and half-life changes."""
    short = _job(10, T0 - 300, 16, 3600)
    snap = Snapshot(time=T0, machine=_machine(), running=(), pending=(short,), config=FCFS)
    specs = [c.spec for c in candidates_for(snap)[1:] if c.enactment.keeps_job_rules]
    assert specs == []
    fair = _fair_trace()
    context = context_for(fair)
    decay = registry().plugin("prio", "decay")
    halves = [p.PriorityDecayHalfLife for p in decay.candidates(context)]
    assert halves == [fair.config.priority_decay_half_life // 2,
                      fair.config.priority_decay_half_life * 2]


def test_a_job_submit_lua_winner_needs_a_clear_margin_over_the_best_knob():
    """On a priority/multifactor site an ordering added through job_submit.lua (SPF's site
    factor) is recommended over a winning knob only when it beats it by --lua-margin; when
    it is, the reason says what the knob would have given."""
    snap, _ = _fair_share_site()
    cands = candidates_for(snap, [parse_policy("easy:SPF:SPF:scale=1"),
                                  parse_policy("PriorityWeightAge=500")])
    assert cands[1].enactment.site_factor is not None and cands[2].enactment.keeps_job_rules
    s = Settings(objective="avg_wait")
    close = _futures([[100.0] * 4, [60.0] * 4, [63.0] * 4])       # 40% against 37%
    assert decide(cands, close, s)[0] == 2
    assert decide(cands, close, replace(s, lua_margin=0.02))[0] == 1
    clear = _futures([[100.0] * 4, [50.0] * 4, [63.0] * 4])       # 50% against 37%
    chosen, why, _ = decide(cands, clear, s)
    assert chosen == 1 and "the best change of slurm.conf alone, PriorityWeightAge=500" in why


def test_a_knob_that_changes_nothing_here_is_named_in_the_reason():
    """A knob proposed from the queue now (a depth, a window) that ties the configuration
    in effect in every future says so when nothing is recommended: the figures why not."""
    snap, _ = _fair_share_site()
    cands = candidates_for(snap, [parse_policy("easy:SPF:SPF:scale=1"),
                                  parse_policy("bf_max_job_test=1000")])
    chosen, why, table = decide(cands, _futures([[100.0] * 4, [101.0] * 4, [100.0] * 4]),
                                Settings(objective="avg_wait"))
    assert chosen == 0 and table[2]["futures_silent"]
    assert "bf_max_job_test=1000 would change nothing here (tied with the configuration " \
        "in effect in every future sampled)" in why
