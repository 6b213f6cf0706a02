"""timeshare/gang: its layout, route and Lua, and the slurm mode's time-sliced partition
(policies/timeshare/player.py) on a small hand-built snapshot whose schedule can be worked
out by hand, then on SDSC-BLUE with users classed from the history's field 6."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from advisor.engine.slurm import slurm_input
from advisor.errors import BadInput
from advisor.model import Cluster, Job, Node, Partition, SchedulingConfig, Snapshot
from advisor.plugins import NoSlurmForm
from advisor.plugins.contract import Context
from advisor.plugins.spec import parse_policy
from advisor.policies.timeshare.inputs import history_classes
from advisor.policies.timeshare.player import SWITCH_S, gang_partition
from advisor.whatif.candidates import candidates_for, current_candidate, slurm_candidate
from advisor.whatif.futures import draw_sample
from advisor.whatif.scenario import (METRICS, Task, candidate_input, candidate_starts,
                                     evaluate, nice_of)
from advisor.whatif.slurmconf import change_for
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup

T0 = 1000
SPEC = "easy:FCFS:FCFS+timeshare/gang:share=0.25:mpl=2"
CLASSES = (("alice", "idle"), ("bob", "busy"))
#: a history whose users' median CPU efficiency gives those classes
HISTORY = pd.DataFrame({"user": ["alice", "alice", "bob"], "submit": [0, 60, 120],
                        "efficiency": [0.2, 0.3, 0.95]})


def _on(snap, history=HISTORY) -> Context:
    return Context(snap.machine, snap.config, history=history)
CONFIG = SchedulingConfig(priority_type="priority/multifactor")


def _cluster() -> Cluster:
    nodes = tuple(Node(f"n{i}", 4, partitions=("batch",)) for i in range(1, 5))
    return Cluster("toy", nodes, (
        Partition("batch", tuple(n.name for n in nodes), default=True),
        Partition("debug", ("n3", "n4"), max_time=1800)))


def _job(job_id, user, cpus, state="PENDING", **kw) -> Job:
    return Job(job_id=job_id, user=user, partition="batch", cpus=cpus, state=state,
               submit_time=kw.pop("submit_time", T0 - 100), time_limit=200, **kw)


def _snapshot() -> Snapshot:
    running = (_job(1, "carol", 4, "RUNNING", start_time=T0 - 50, elapsed=50,
                    node_list=("n4",)),)
    pending = (_job(2, "alice", 4), _job(3, "alice", 4), _job(4, "bob", 8),
               _job(5, "alice", 16), _job(6, "alice", 1, partitions=("debug",)))
    return Snapshot(T0, _cluster(), running, pending, CONFIG)


def test_the_layout_route_and_settings():
    snap = _snapshot()
    cand = slurm_candidate(parse_policy(SPEC), _on(snap))
    parts = {p.name: p for p in cand.enactment.partitions}
    assert parts["batch"].nodes == ("n1", "n2", "n3") and parts["batch"].default
    assert parts["batch_ts"].nodes == ("n4",) and parts["batch_ts"].oversubscribe == "FORCE:2"
    assert parts["debug"].nodes == ("n3",)           # loses n4: the gang nodes are its own
    assert (cand.config.preempt_mode, cand.config.scheduler_time_slice) == ("GANG", 30)
    change = change_for(cand, snap)
    assert change.restart and "PreemptMode" in change.diff
    # alice's 4-CPU jobs share; bob's stays; 16 CPUs fit neither side: first choice kept;
    # a job asking for another partition keeps it
    moved = dict(c.split()[2:4] for c in change.commands if "Partition=" in c)
    assert moved == {"JobId=2": "Partition=batch_ts", "JobId=3": "Partition=batch_ts",
                     "JobId=5": "Partition=batch_ts"}
    assert '["alice"] = true' in change.script and '"bob"' not in change.script
    if shutil.which("luac5.3") or shutil.which("luac"):
        luac = shutil.which("luac5.3") or shutil.which("luac")
        done = subprocess.run([luac, "-p", "-"], input=change.script, text=True,
                              capture_output=True)
        assert done.returncode == 0, done.stderr


def test_candidates_need_a_dc_user_and_undo_an_earlier_layout():
    snap = _snapshot()
    assert history_classes(HISTORY) == CLASSES
    gang = parse_policy(SPEC).choice("timeshare").plugin
    assert gang.candidates(Context(snap.machine, CONFIG)) == ()
    points = gang.candidates(Context(snap.machine, CONFIG, history=HISTORY))
    assert len(points) == 4 and {p.share for p in points} == {0.25, 0.5}
    cand = slurm_candidate(parse_policy(SPEC), _on(snap))
    laid = Snapshot(T0, Cluster("toy", snap.machine.nodes, cand.enactment.partitions),
                    (), (), cand.config)
    undo = gang.candidates(Context(laid.machine, cand.config, history=HISTORY))[0]
    assert undo.share == 0
    back = slurm_candidate(parse_policy("easy:FCFS:FCFS+timeshare/gang:share=0"), _on(laid))
    assert [p.name for p in back.enactment.partitions] == ["batch", "debug"]
    assert back.enactment.partitions[0].nodes == ("n1", "n2", "n3", "n4")


def test_the_slurm_mode_plays_the_time_sliced_partition():
    snap = _snapshot()
    cand = slurm_candidate(parse_policy(SPEC), _on(snap))
    runtimes = {1: 100, 2: 100, 3: 100, 4: 100, 5: 100, 6: 100}
    base = slurm_input(snap, runtimes, config=snap.config)
    inp = candidate_input(base, cand, snap, nice_of(base, snap), runtimes)
    start = dict(zip(inp.job_ids.tolist(), candidate_starts(inp, cand, snap, runtimes)))
    # n4: job 1 (batch, running) holds it alone to T0 + 50; then jobs 2 and 3 share it,
    # each at (1 - switch/slice)/2 of full speed: 100 s of work take 200 / (1 - 0.5/30) s;
    # a shared job's start is its end less its runtime alone
    end = T0 + 50 + 100 * 2 / (1 - SWITCH_S / 30)
    assert start[2] == start[3] == int(np.ceil(end - 100))
    assert T0 <= start[4] <= T0 + 2                     # bob: batch's 12 CPUs are idle
    assert start[5] == -1                               # 16 CPUs: neither side has them
    assert T0 <= start[6] <= T0 + 2 and start[1] == T0 - 50


def test_a_layout_the_slurm_mode_cannot_play_is_refused():
    snap = _snapshot()
    overlapping = Cluster("toy", snap.machine.nodes, (
        snap.machine.partitions[0], Partition("ts", ("n4",), oversubscribe="FORCE:2")))
    with pytest.raises(BadInput, match="nodes of its own"):
        gang_partition(overlapping, SchedulingConfig(preempt_mode="GANG"))
    with pytest.raises(BadInput, match="without PreemptMode=GANG"):
        gang_partition(overlapping, SchedulingConfig())
    live = Snapshot(T0, overlapping, (), (), SchedulingConfig(preempt_mode="GANG"))
    with pytest.raises(BadInput, match="configuration in effect"):
        candidates_for(live, [])
    with pytest.raises(NoSlurmForm, match="textbook"):
        gang = parse_policy(SPEC).choice("timeshare")
        gang.plugin.configure(None, gang.params)


@pytest.fixture(scope="module")
def blue():
    return _setup(bundled("SDSC-BLUE", False))


def test_users_are_classed_from_the_history_and_their_candidates_simulate(blue):
    snap, history = blue
    classes = history_classes(history)
    kinds = {c for _, c in classes}
    assert kinds <= {"busy", "mixed", "idle"} and "idle" in kinds
    cands = candidates_for(snap, [parse_policy(SPEC)], history=history)
    assert len(cands) == 2 and cands[1].fidelity == "approximate"
    sample = draw_sample(snap, history, 86400, seed=1)
    metrics, waits, *_ = evaluate(Task(snap, tuple(cands), sample, 86400))
    assert metrics.shape == (2, len(METRICS)) and np.isfinite(metrics[:, 1]).all()
    assert not np.array_equal(waits[0], waits[1])        # the layout changes the schedule
    same = evaluate(Task(snap, (current_candidate(snap.config, machine=snap.machine),
                               cands[1]), sample, 86400))
    assert np.array_equal(same[0], metrics)               # deterministic
