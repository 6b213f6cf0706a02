"""prio/tres and prio/reset: proposed from the site's state, played as Slurm weighs and resets,
enacted as one slurm.conf line."""
from __future__ import annotations

from dataclasses import replace

from advisor.model import Accounting, Association, Cluster, Node, Partition, Snapshot
from advisor.plugins.knob import is_knob
from advisor.plugins.registry import registry
from advisor.plugins.spec import parse_policy
from advisor.settings import Settings
from advisor.whatif.candidates import candidates_for, context_for
from advisor.whatif.recommend import grid_for
from advisor.whatif.slurmconf import change_for
from tests.unit.policies.knobs.test_knobs import FCFS, T0, _job, _starts

#: a site whose priority is a policy (a QOS weight) and that accounts GPUs
GPU_SITE = replace(FCFS, priority_weight_qos=1000,
                   accounting_storage_tres=("cpu", "mem", "node", "gres/gpu"))


def _gpu_queue(config):
    """One node of 16 CPUs and 4 GPUs, all four held for 100 s; a 1-GPU job pending, then
    a 4-GPU one."""
    machine = Cluster("lab", (Node("g1", 16, gres={"gpu": 4}),),
                      (Partition("batch", ("g1",), default=True),))
    held = _job(1, T0 - 100, 4, 200, state="RUNNING", start_time=T0 - 100,
                gres_per_node={"gpu": 4})
    one = _job(2, T0 - 60, 4, 600, gres_per_node={"gpu": 1})
    four = _job(3, T0 - 30, 4, 600, gres_per_node={"gpu": 4})
    snap = Snapshot(time=T0, machine=machine, running=(held,), pending=(one, four),
                    config=config)
    return snap, {1: 200, 2: 600, 3: 600}


def _knobs(snap, name):
    return [c for c in candidates_for(snap)[1:] if c.spec.startswith(f"prio/{name}:")]


def test_a_gpu_weight_is_proposed_where_gpus_are_accounted_and_puts_the_wide_job_first():
    """The 1-GPU job came first and, every weight 0 between them, starts first when the
    GPUs free at T0+100; the 4-GPU job waits for it. GRES/gpu at half the QOS weight gives
    the 4-GPU job four times the 1-GPU job's factor, so it starts then instead. The change
    is that one key, by reconfigure; its label parses back."""
    snap, runtimes = _gpu_queue(GPU_SITE)
    (cand,) = _knobs(snap, "tres")      # (both jobs ask for 4 CPUs: no CPU weight)
    assert cand.spec == "prio/tres:PriorityWeightTRES=GRES/gpu=500"
    assert parse_policy(cand.label) == parse_policy(cand.spec)
    current = candidates_for(snap, [])[0]
    assert _starts(snap, current, runtimes)[2] <= T0 + 102
    assert _starts(snap, current, runtimes)[3] >= T0 + 600
    assert _starts(snap, cand, runtimes)[3] <= T0 + 102
    assert _starts(snap, cand, runtimes)[2] >= T0 + 600
    change = change_for(cand, snap)
    assert list(change.diff) == ["PriorityWeightTRES"] and not change.script
    assert change.diff["PriorityWeightTRES"][1].lower() == "gres/gpu=500"
    assert change.commands == ("scontrol reconfigure",)


def test_an_unaccounted_gpu_counts_nothing_and_is_not_proposed():
    """Without gres/gpu in AccountingStorageTRES slurmctld keeps no GPU count for a
    partition: the weight orders nothing, so none is proposed, and named in a spec it
    leaves the order as it was."""
    snap, runtimes = _gpu_queue(replace(GPU_SITE, accounting_storage_tres=("cpu", "node")))
    assert _knobs(snap, "tres") == []
    named = candidates_for(snap, [parse_policy("PriorityWeightTRES=GRES/gpu=500")])[1]
    assert _starts(snap, named, runtimes)[2] <= T0 + 102


def test_a_cpu_weight_is_halved_and_doubled_where_one_is_set():
    snap, _ = _gpu_queue(replace(GPU_SITE, priority_weight_tres={"cpu": 800.0}))
    wide = replace(snap.pending[1], cpus=12)
    snap = replace(snap, pending=(snap.pending[0], wide))
    specs = [c.spec.split(":", 1)[1] for c in _knobs(snap, "tres")]
    assert specs == ["PriorityWeightTRES=CPU=400", "PriorityWeightTRES=CPU=1600",
                     "PriorityWeightTRES=CPU=800,GRES/gpu=500"]


NO_DECAY = replace(FCFS, priority_weight_fairshare=10000, priority_decay_half_life=0,
                   priority_calc_period=10)
#: chem has used a million CPU-seconds, phys nothing
PEOPLE = (Association("root", raw_usage=1e6), Association("phys", parent="root"),
          Association("chem", parent="root", raw_usage=1e6), Association("phys", "ann"),
          Association("chem", "cat", raw_usage=1e6))


#: 2024-10-04 03:00 UTC, a Friday
NOW = 86400 * 20_000 + 3 * 3600
FIRST_OF_MONTH = 86400 * 19_997


def _usage_site(config, last_reset=None):
    """One node of 2 CPUs: ann's job (phys) runs for 100 s, then ann's second and cat's
    (chem) wait for it; the usage never decays."""
    machine = Cluster("lab", (Node("n1", 2),), (Partition("batch", ("n1",), default=True),))
    first = _job(1, NOW, 2, 1000, user="ann", account="phys")
    again = _job(2, NOW + 1, 2, 1000, user="ann", account="phys")
    cat = _job(3, NOW + 2, 2, 1000, user="cat", account="chem")
    snap = Snapshot(time=NOW, machine=machine, running=(), pending=(), config=config,
                    accounting=Accounting(associations=PEOPLE, last_reset=last_reset))
    return snap, (first, again, cat), {1: 100, 2: 10, 3: 10}


def test_a_reset_is_proposed_where_usage_never_decays_and_forgets_it_at_once():
    """With no decay the site's usage only grows: MONTHLY and QUARTERLY resets are
    proposed. Enabled on a slurmctld whose last reset is long past, the reconfigure resets
    at its next pass, so chem's million no longer holds cat's job behind ann's second;
    with the state file saying the last reset was on the first of this month, MONTHLY
    waits for the next first, and nothing changes in the play."""
    snap, jobs, runtimes = _usage_site(NO_DECAY)
    cands = _knobs(replace(snap, pending=jobs), "reset")
    assert [c.spec for c in cands] == ["prio/reset:PriorityUsageResetPeriod=MONTHLY",
                                       "prio/reset:PriorityUsageResetPeriod=QUARTERLY"]
    monthly = cands[0]
    current = candidates_for(replace(snap, pending=jobs), [])[0]
    before = _starts(snap, current, runtimes, jobs)
    after = _starts(snap, monthly, runtimes, jobs)
    assert before[2] < before[3] and after[3] < after[2]
    recent, _, _ = _usage_site(NO_DECAY, last_reset=FIRST_OF_MONTH)
    kept = _starts(recent, monthly, runtimes, jobs)
    assert kept[2] < kept[3]
    change = change_for(monthly, replace(snap, pending=jobs))
    assert change.diff == {"PriorityUsageResetPeriod": ("NONE", "MONTHLY")}


def test_no_reset_is_proposed_where_usage_decays():
    snap, jobs, _ = _usage_site(replace(NO_DECAY, priority_decay_half_life=7 * 86400))
    assert _knobs(replace(snap, pending=jobs), "reset") == []
    decaying = context_for(replace(snap, pending=jobs))
    assert registry().plugin("prio", "reset").candidates(decaying) == ()


def test_no_knobs_leaves_them_out_of_the_default_grid_not_out_of_a_spec():
    snap, _ = _gpu_queue(GPU_SITE)
    context = context_for(snap)
    every, _ = grid_for(context, Settings())
    assert any(is_knob(p) for p in every)
    without, _ = grid_for(context, Settings(knobs=False))
    assert without == [p for p in every if not is_knob(p)] and without
    named = parse_policy("PriorityWeightTRES=GRES/gpu=500")
    assert grid_for(context, Settings(knobs=False, policies=(named,)))[0] == [named]
