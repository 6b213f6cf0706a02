"""queues/runtime, Lawson and Smirni's runtime-class queues as a policy family: the textbook
engine runs them and nothing it cannot; the Slurm form splits the default partition into
classes routed by limit (the whole partition for jobs too wide for their classes), and the
slurm mode plays that layout; the honest online setting sees nothing after the test."""
from __future__ import annotations

import numpy as np
import pytest

from advisor.engine import Estimates, job_arrays, run
from advisor.engine.slurm import slurm_input
from advisor.engine.slurm_layout import FIXED
from advisor.errors import BadInput
from advisor.plugins import Context, JobColumns
from advisor.plugins.spec import parse_policy
from advisor.policies.queues.inputs import history_limits
from advisor.policies.queues.kernel import TRIGGERED, MultiQueue, run_queues
from advisor.policies.queues.plugin import parse_cuts
from advisor.policies.queues.study import score_parts
from advisor.whatif.candidates import slurm_candidate
from advisor.whatif.futures import draw_sample
from advisor.whatif.scenario import candidate_input, nice_of, routed
from advisor.whatif.slurmconf import change_for
from tests.conftest import bundled
from tests.unit.whatif.test_futures import _setup


@pytest.fixture(scope="module")
def kth():
    workload = bundled("KTH-SP2", False)
    return workload, job_arrays(workload, Estimates("user"))


def test_the_textbook_engine_runs_the_policy_and_refuses_what_it_is_not(kth):
    _, arrays = kth
    one = run(arrays, parse_policy("easy:FCFS:P=1").engine_config())
    easy = run(arrays, parse_policy("easy:FCFS").engine_config())
    assert np.array_equal(one[0], easy[0])
    given = run(arrays, parse_policy("easy:FCFS:P=3:cuts=1h/12h").engine_config())
    classes = np.searchsorted([3600, 43200], arrays.estimate, side="right")
    assert np.array_equal(given[0], run_queues(arrays, 3, classes)[0])
    weekly = run(arrays, parse_policy("easy:FCFS:P=4").engine_config())
    assert np.array_equal(weekly[0], run_queues(arrays, 4)[0])
    for spec in ("easy:SPF:P=2", "depth:FCFS:k=2:P=2", "easy:FCFS:T=4h:P=2"):
        with pytest.raises(BadInput, match="EASY backfilling and FCFS in each queue"):
            run(arrays, parse_policy(spec).engine_config())
    with pytest.raises(BadInput, match="needs 2 boundaries"):
        parse_policy("easy:FCFS:P=3:cuts=1h")


def test_the_slurm_form_splits_the_default_partition_and_routes_by_limit():
    snap, hist = _setup(bundled("KTH-SP2", False))
    cand = slurm_candidate(parse_policy("easy:FCFS:P=2:cuts=1h"),
                           Context(snap.machine, snap.config))
    e = cand.enactment
    parts = {p.name: p for p in e.partitions}
    assert set(parts) == {"batch", "batch1", "batch2"} and parts["batch"].default
    assert len(parts["batch1"].nodes) == len(parts["batch2"].nodes) == 50
    assert not set(parts["batch1"].nodes) & set(parts["batch2"].nodes)
    assert (parts["batch1"].max_time, parts["batch2"].max_time) == (3600, None)
    assert cand.config.backfill.bf_job_part_count_reserve == 1 and e.fidelity == "approximate"
    jobs = JobColumns(np.zeros(4, np.int64), np.array([600, 7200, 600, 600]),
                      np.array([8, 8, 64, 8]),
                      np.array(["batch", "", "batch1,batch2", "other"], object))
    assert list(e.route.values(jobs, 0)) == ["batch1,batch2", "batch2", "batch", "other"]
    change = change_for(cand, snap)
    assert [line.split()[0] for line in change.partitions] == ["PartitionName=batch1",
                                                               "PartitionName=batch2"]
    assert "advisor_route(job_desc, part_list)" in change.script
    assert '{"batch1", 60, 50}' in change.script and '{"batch2", nil, 50}' in change.script
    moved = [c for c in change.commands if "Partition=" in c]
    assert moved and all(c.endswith(("Partition=batch1,batch2", "Partition=batch2",
                                      "Partition=batch")) for c in moved)

    # the slurm mode plays the layout, each pending job in the partitions of its route
    sample = draw_sample(snap, hist, 86400, 1)
    base = slurm_input(snap, sample.runtimes, sample.arrivals, config=snap.config)
    inp = candidate_input(base, cand, snap, nice_of(base, snap), sample.runtimes,
                          sample.arrivals)
    assert inp.part_nodes.shape[0] == 3
    pending = inp.jobs[FIXED][inp.rec_job] < 0
    assert len(np.unique(inp.rec_part[pending])) >= 2

    # from that layout: three classes replace the two, and one class removes them
    now = routed(snap, cand)
    three = slurm_candidate(parse_policy("easy:FCFS:P=3:cuts=30m/4h"),
                            Context(now.machine, now.config))
    assert {p.name for p in three.enactment.partitions} == {"batch", "batch1", "batch2",
                                                            "batch3"}
    one = slurm_candidate(parse_policy("easy:FCFS:P=1"), Context(now.machine, now.config))
    assert [p.name for p in one.enactment.partitions] == ["batch"]
    assert change_for(one, now).removed == ("batch1", "batch2")
    assert set(one.enactment.route.values(jobs, 0)) == {"batch", "other"}


def test_boundaries_from_the_history_balance_its_last_week():
    snap, hist = _setup(bundled("KTH-SP2", False))
    limits = np.array(history_limits(hist))
    from advisor.plugins.registry import plugin
    runtime = plugin("queues", "runtime")
    points = runtime.candidates(Context(snap.machine, snap.config, history=hist))
    assert [p.P for p in points] == [2, 3, 4]
    for p in points:
        cuts = list(parse_cuts(p.cuts))
        counts = np.bincount(np.searchsorted(cuts, limits, side="left"), minlength=p.P)
        assert counts.min() >= len(limits) / p.P / 3, (p, counts)


def test_the_honest_setting_sees_nothing_after_the_test(kth):
    """Changing every job submitted after the test changes no honest score; the paper's
    setting, which replays the trace's future, sees it."""
    workload, arrays = kth
    users = workload.jobs["user"].astype(str).to_numpy()
    state = MultiQueue(arrays, 4)
    assert state.advance(trigger=20) == TRIGGERED
    later = arrays.submit > state.now
    assert later.any()
    other = arrays.take(np.arange(len(arrays)))
    other.runtime[later] = other.estimate[later]
    other.procs[later] = 1
    twin = MultiQueue(other, 4)
    assert twin.advance(trigger=20) == TRIGGERED and twin.now == state.now
    week = 7 * 86400
    honest = [score_parts(s, week, futures_kind="sampled", users=users, samples=2, seed=5)
              for s in (state, twin)]
    assert honest[0] == honest[1]
    paper = [score_parts(s, week) for s in (state, twin)]
    assert paper[0] != paper[1]
