"""A cluster's state at a moment of its past, rebuilt from a job log: which jobs run, wait
and arrive, what is left out and why, the runtimes, fair-share usage carried back from
sshare's figure or forward from the log, and a trace read as a Slurm site's log."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.engine.slurm_fairshare import decay_per_second
from advisor.errors import BadInput
from advisor.model import (Accounting, Association, Cluster, JobLog, Node, Partition,
                           SchedulingConfig, job_log_table)
from advisor.whatif.past_state import state_at, trace_job_log, usage_at

NODES = tuple(Node(name=f"n{i}", cpus=8) for i in range(1, 3))
CLUSTER = Cluster("lab", NODES, (Partition("batch", ("n1", "n2"), default=True),
                                 Partition("small", ("n1",))))
CONFIG = SchedulingConfig(priority_type="priority/multifactor",
                          priority_weight_fairshare=1000, priority_decay_half_life=3600)
ACCOUNTS = Accounting(associations=(
    Association("root"), Association("a", parent="root", shares=1),
    Association("a", user="u1"), Association("b", parent="root", shares=3),
    Association("b", user="u2")))


def row(job_id, submit, start, end, cpus=2, partition="batch", user="u1", account="a",
        **extra):
    base = {"job_id": job_id, "user": user, "account": account, "qos": "",
            "partition": partition, "submit": submit, "eligible": submit, "start": start,
            "end": end, "state": "COMPLETED", "cpus": cpus, "nodes": 1, "node_list": "",
            "limit": 600, "mem_per_node": 0, "mem_per_cpu": 0, "gpus": 0, "billing": cpus,
            "features": "", "reservation": "", "backfilled": False, "requeued": 0,
            "reason": ""}
    return {**base, **extra}


LOG = JobLog(job_log_table([
    row(1, 0, 10, 500),                              # running at 100
    row(2, 50, 200, 300),                            # pending at 100, judged
    row(3, 60, -1, 80),                              # cancelled before 100: gone
    row(4, 70, -1, 150),                             # cancelled after 100, while waiting
    row(5, 120, 130, 190, node_list="n2"),           # arrives, judged
    row(6, 130, 400, 450, reservation="maint"),      # in a reservation
    row(7, 140, 145, 160, cpus=12, partition="small"),  # larger than its partition
    row(8, 150, 155, 170, partition="gone"),         # a partition the cluster lacks
    row(9, 250, 260, 280),                           # submitted after the window
    row(10, 90, 95, -1, node_list="n1,n2"),          # still running when read
    row(11, 95, -1, -1),                             # still pending when read
]), read_at=1000, source="test")


def test_who_runs_waits_arrives_and_what_is_left_out():
    state = state_at(LOG, 100, 200, CLUSTER, CONFIG)
    snap = state.snapshot
    assert [j.job_id for j in snap.running] == [1, 10]
    assert snap.running[1].node_list == ("n1", "n2") and snap.running[0].elapsed == 90
    assert sorted(j.job_id for j in snap.pending) == [2, 11]
    # arrivals until the window's end or the last judged start, whichever is later (job
    # 2 at 200): job 9 comes after both, job 6's start in a reservation does not count
    assert [j.job_id for j in state.arrivals] == [5, 8]
    assert state.judged == (2, 5, 8)
    assert state.left_out == {
        "jobs cancelled before they started (left out)": (4,),
        "jobs in an advanced reservation (left out)": (6,),
        "jobs larger than their partition (left out)": (7,),
        "jobs in a partition the configuration does not have (played in batch)": (8,)}
    assert next(j for j in state.arrivals if j.job_id == 8).partition == "batch"
    assert state.runtimes[1] == 490 and state.runtimes[5] == 60
    assert state.runtimes[10] == 1000 - 95 + 1      # a second past the reading
    assert state.runtimes[11] == 600                # its limit


def test_jobs_started_past_the_reach_are_not_judged():
    state = state_at(LOG, 100, 200, CLUSTER, CONFIG, reach=50)
    assert 2 in state.judged and 5 in state.judged
    later = state_at(LOG, 40, 60, CLUSTER, CONFIG, reach=50)
    assert later.judged == () and later.left_out[
        "jobs that started over 50s after the window (not judged)"] == (2,)


def test_pending_jobs_are_judged_only_when_asked():
    state = state_at(LOG, 100, 200, CLUSTER, CONFIG, judge_pending=False)
    assert state.judged == (5, 8)


def _sum_of_users(accounting):
    by = {(a.account, a.user): a.raw_usage for a in accounting.associations}
    return by


def test_usage_forward_from_the_log_decays_each_second_run():
    """Job 1 (2 CPUs, 10 to 500) charges the integral of its CPUs decayed to the moment;
    each account's usage is its users', and root's the sum."""
    at = 400
    got = _sum_of_users(usage_at(LOG, ACCOUNTS, CONFIG, at))
    d = decay_per_second(3600)

    def charged(cpus, a, b):
        return cpus * (d ** (at - b) - d ** (at - a)) / -math.log(d)
    u1 = (charged(2, 10, 400) + charged(2, 200, 300) + charged(2, 130, 190)
          + charged(12, 145, 160) + charged(2, 155, 170) + charged(2, 95, 400)
          + charged(2, 260, 280))
    assert got[("a", "u1")] == pytest.approx(u1)
    assert got[("a", "")] == pytest.approx(u1) and got[("root", "")] == pytest.approx(u1)
    assert got[("b", "u2")] == 0.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(1, 3000), st.integers(1, 16),
                          st.sampled_from(["u1", "u2"])), min_size=1, max_size=30),
       st.integers(100, 6000), st.integers(600, 7 * 86400))
def test_usage_carried_back_from_now_is_the_usage_built_forward(jobs, at, half_life):
    """sshare's usage at the reading, carried back to a moment by the jobs that ran since
    and the decay, is the usage the log builds forward to that moment."""
    rows = [row(k + 1, s, s, s + r, cpus=c, user=u, account="a" if u == "u1" else "b")
            for k, (s, r, c, u) in enumerate(jobs)]
    config = SchedulingConfig(priority_type="priority/multifactor",
                              priority_weight_fairshare=1000,
                              priority_decay_half_life=half_life)
    read_at = max(r["end"] for r in rows) + 10
    log = JobLog(job_log_table(rows), read_at=read_at)
    now = usage_at(log, ACCOUNTS, config, read_at)       # forward: no usage known now
    assert any(a.raw_usage > 0 for a in now.associations)
    back = _sum_of_users(usage_at(log, now, config, at))
    forward = _sum_of_users(usage_at(log, ACCOUNTS, config, at))
    for key, value in forward.items():
        # (carried back, a float's rounding grows by the decay undone: 1e-6 seen)
        assert back[key] == pytest.approx(value, rel=1e-4, abs=1e-4)


def test_a_trace_as_a_slurm_site_s_log():
    """CEA-Curie's excerpt (bundled): its jobs on the epoch of its UnixStartTime, its
    partitions by name, a job that ran no second on no processor never started."""
    workload = read_swf(resolve_trace("CEA-Curie"))
    log = trace_job_log(workload)
    jobs, swf = log.jobs, workload.jobs
    t0 = workload.header.unix_start_time
    assert len(jobs) == len(swf) and log.zone == "Europe/Paris"
    first = swf.iloc[0]
    assert jobs.iloc[0]["submit"] == t0 + first["submit"]
    started = jobs[jobs["start"] >= 0]
    assert (started["start"] >= started["submit"]).all()
    never = (swf["runtime"] <= 0) & ((swf["alloc_procs"] <= 0) | (swf["status"] == 5))
    assert (jobs["start"] < 0).sum() == never.sum() > 1000
    assert set(jobs["partition"]) >= {"standard", "large", "hybrid"}
    assert jobs["account"].str.startswith("g").all()
    assert (jobs["limit"] % 60 == 0).all()               # whole minutes, as Slurm keeps
    assert log.read_at == jobs["end"].max()


def test_a_trace_without_start_times_cannot_be_checked():
    """LLNL-Atlas (bundled): SWF field 3 is -1 on every job."""
    workload = read_swf(resolve_trace("LLNL-Atlas"))
    assert (workload.jobs["wait"] < 0).all()
    with pytest.raises(BadInput, match=f"logs no start time.*all {len(workload.jobs)} jobs"):
        trace_job_log(workload)


def test_jobs_without_a_logged_wait_are_left_out_and_said():
    workload = read_swf(resolve_trace("CEA-Curie"))
    jobs = workload.jobs.copy()
    jobs.loc[jobs.index[:5], "wait"] = -1
    log = trace_job_log(workload.with_jobs(jobs))
    assert len(log.jobs) == len(jobs) - 5
    assert log.notes == ("5 jobs without a logged wait (SWF field 3 -1) left out",)
    assert np.all(log.jobs["submit"].diff().dropna() >= 0)
