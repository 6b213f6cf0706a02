"""A snapshot of a cluster with GPUs, allocated memory and enforced limits, through the CLI
adapter on outputs recorded from the real test cluster under each release (Slurm 22.05.8,
tests/fixtures/slurm-22.05-gpu, 24.11.5, slurm-24.11-gpu, and 26.05.5, slurm-26.05-gpu,
recorded by tests/fixtures/record_snapshot.py: nine jobs asking for GPUs by --gres and
--gpus, memory by --mem and --mem-per-cpu, two accounts, the QOS "capped" with
MaxJobsPU=2, one job on a dependency; on 26.05 a tenth on whole nodes), and the slurm mode
continuing from it. The releases scheduled the nine jobs alike, so the same assertions
hold on all three."""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from advisor.adapters import slurm_accounting, slurm_json, slurm_text
from advisor.adapters.slurm_text import key_values, slurm_duration
from advisor.adapters.slurm_cli import SlurmCommands, snapshot
from advisor.engine.slurm import run_slurm, slurm_input
from advisor.errors import SourceUnavailable
from advisor.model import TEST_CLUSTER_COST, Qos
from advisor.whatif.futures import ArrivalSampler
from advisor.whatif.unplayed import unplayed
from tests.helpers import FIXTURES

RECORDINGS = {name: FIXTURES / f"slurm-{name}-gpu" for name in ("22.05", "24.11", "26.05")}
#: the recorded output of each command the adapter runs, by its first words
OUTPUTS = {("squeue", "--all", "--noheader", "--Format"): "squeue_exclusive.txt",
           ("squeue",): "squeue.json", ("sinfo",): "sinfo.json",
           ("scontrol", "show", "node"): "scontrol_show_node.json",
           ("scontrol", "show", "partition"): "scontrol_show_partition_o.txt",
           ("scontrol", "show", "config"): "scontrol_show_config.txt",
           ("sprio",): "sprio.txt", ("sshare",): "sshare.txt",
           ("sdiag", "--json"): "sdiag.json", ("sdiag",): "sdiag.txt",
           ("sacctmgr", "--noheader", "--parsable2", "show", "qos"): "sacctmgr_qos.txt",
           ("sacctmgr", "--noheader", "--parsable2", "show", "assoc"): "sacctmgr_assoc.txt"}


@dataclass(frozen=True)
class Recorded(SlurmCommands):
    here: Path = RECORDINGS["22.05"]

    def run(self, *args: str) -> str:
        name = next(f for words, f in OUTPUTS.items() if args[:len(words)] == words)
        return (self.here / name).read_text()


def recorded_snapshot(release: str = "22.05"):
    here = RECORDINGS[release]
    snap = snapshot(Recorded(here=here))
    return replace(snap, time=int((here / "captured_at.txt").read_text()))


@pytest.fixture(params=sorted(RECORDINGS))
def release(request):
    return request.param


def test_the_snapshot_holds_memory_gpus_and_limits(release):
    snap = recorded_snapshot(release)
    assert snap.config.slurm_version.startswith(release)
    nodes = {n.name: n for n in snap.machine.nodes}
    assert {n: (x.memory, x.gres) for n, x in nodes.items()} == {
        "n1": (8000, {}), "n2": (8000, {}), "n3": (8000, {"gpu": 2}), "n4": (8000, {"gpu": 2})}
    assert nodes["n3"].alloc_gres == {"gpu": 2} and nodes["n4"].alloc_memory == 7500
    jobs = {j.job_id: j for j in (*snap.running, *snap.pending)}
    assert jobs[1].gres_per_node == {"gpu": 1} and jobs[6].gres_per_node == {"gpu": 1}
    assert jobs[5].gres_per_node == {"gpu": 2} and jobs[5].nodes == 2
    assert (jobs[2].memory_per_node, jobs[3].memory_per_cpu, jobs[4].memory_per_cpu) == \
        (6000, 1000, 500)
    assert jobs[8].state_reason == "QOSMaxJobsPerUserLimit" and jobs[8].qos == "capped"
    assert snap.config.memory_consumable and snap.config.limits_enforced
    capped = next(q for q in snap.accounting.qos if q.name == "capped")
    assert capped == Qos("capped", 0, 2, {"cpu": 16}, -1, {"gres/gpu": 3})
    shares = {(a.account, a.user): a.shares for a in snap.accounting.associations}
    assert shares[("physics", "")] == 3 and shares[("research", "")] == 1
    parents = {(a.account, a.user): a.parent for a in snap.accounting.associations}
    assert parents[("physics", "")] == "root" and parents[("physics", "root")] == "physics"


def test_the_slurm_mode_holds_the_jobs_slurm_held(release):
    """From the snapshot, with every job running 100 s more: job 8 (over capped's
    MaxJobsPU=2, as root runs jobs 4 and 7 in it) starts only when one of those ends, and
    job 1 (a GPU, while job 5 holds all four) only when job 5 ends; job 9 (a dependency)
    is left out and named, and no limit's reason is, as the limits are played."""
    snap = recorded_snapshot(release)
    runtimes = {j.job_id: (snap.time - j.start_time + 100 if j.start_time else 50)
                for j in (*snap.running, *snap.pending)}
    ends = {j.job_id: j.start_time + runtimes[j.job_id] for j in snap.running}
    inp = slurm_input(snap, runtimes, timing=None)
    assert inp.tres == ("mem", "gres/gpu") and inp.limits[0] == "jobs"
    start = dict(zip(inp.job_ids.tolist(), run_slurm(inp)[0].tolist()))
    assert start[8] >= min(ends[4], ends[7])
    assert start[1] >= ends[5]
    assert 9 not in start
    missing = unplayed(snap)
    assert missing == {"jobs waiting on a dependency (left out)": 1}


def test_unplayed_names_limits_when_they_are_not_played(release):
    snap = recorded_snapshot(release)
    loose = replace(snap, config=replace(snap.config, accounting_enforce=()))
    assert "jobs held back by a QOS or association limit" in unplayed(loose)


def test_tres_limits_read_memory_units():
    assert slurm_accounting.tres_limits("cpu=16,mem=8G,gres/gpu=2") == {
        "cpu": 16, "mem": 8192, "gres/gpu": 2}


def test_sacct_records_say_what_each_job_asked(release):
    doc = slurm_json.load((RECORDINGS[release] / "sacct.json").read_text(), "sacct --json")
    recs = {r["job_id"]: r for r in slurm_json.sacct_records(doc)}
    assert (recs[2]["mem_per_node"], recs[2]["mem_per_cpu"]) == (6000, 0)
    assert (recs[3]["mem_per_node"], recs[3]["mem_per_cpu"]) == (0, 1000)
    assert recs[5]["req_gres"] == {"gpu": 4} and recs[5]["req_nodes"] == 2
    assert recs[6]["req_gres"] == {"gpu": 1}
    assert (recs[8]["qos"], recs[8]["account"]) == ("capped", "physics")
    assert recs[5]["node_list"] == "n[3-4]" and recs[2]["node_list"] == "n4"  # GPU nodes
    assert recs[1]["node_list"] == ""                              # never started


def test_sampled_jobs_ask_what_their_originals_asked():
    """A live history's account, QOS, memory and GPUs go with each drawn job."""
    week = 7 * 86400
    history = pd.DataFrame([
        {"user": "root", "submit": week - 1000 * k, "runtime": 60, "limit": 600, "cpus": 2,
         "nodes": 1, "partition": "batch", "account": acct, "qos": qos,
         "mem_per_node": mem, "mem_per_cpu": 0, "gpus": gpus}
        for k, (acct, qos, mem, gpus) in enumerate([("physics", "capped", 6000, 0),
                                                    ("research", "normal", 0, 1)] * 3)])
    jobs, _ = ArrivalSampler(history, now=week, weeks=1).draw(week, np.random.default_rng(0))
    asked = {(j.account, j.qos, j.memory_per_node, j.gres_per_node.get("gpu", 0))
             for j in jobs}
    assert asked == {("physics", "capped", 6000, 0), ("research", "normal", 0, 1)}


def whole_nodes(kv: dict[str, str]) -> bool:
    """Whether scontrol shows a job on whole nodes: Exclusive=NODE from 26.05, before
    OverSubscribe=NO (a job that may share says OK)."""
    return kv["Exclusive"] == "NODE" if "Exclusive" in kv else kv["OverSubscribe"] == "NO"


@pytest.mark.parametrize("name,count", [("24.11", 9), ("26.05", 10)])
def test_the_recorded_snapshot_is_what_scontrol_showed(name, count):
    """Job by job, a recording's snapshot against ``scontrol show job -o`` taken at the
    same moment: ids, states, CPUs, limits, partitions, priorities and whole nodes (26.05's
    JSON leaves the last out: the adapter asks ``squeue -O``)."""
    snap = recorded_snapshot(name)
    jobs = {j.job_id: j for j in (*snap.running, *snap.pending)}
    text = (RECORDINGS[name] / "scontrol_show_job_o.txt").read_text()
    truth = {int(kv["JobId"]): kv for kv in map(key_values, filter(None, text.splitlines()))}
    assert set(jobs) == set(truth) and len(jobs) == count
    for i, kv in truth.items():
        job = jobs[i]
        assert (job.state, job.cpus, ",".join(job.partitions), job.priority) == \
            (kv["JobState"], int(kv["NumCPUs"]), kv["Partition"], int(kv["Priority"])), i
        assert job.time_limit == slurm_duration(kv["TimeLimit"]), i
        assert job.exclusive == whole_nodes(kv), i
    assert any(j.exclusive for j in jobs.values()) == (count == 10)


def test_26_05_read_as_24_11_loses_the_whole_node_job():
    """Read without ``squeue -O`` (as a 24.11 row would), 26.05's JSON makes the job on
    whole nodes an ordinary one."""
    doc = slurm_json.load((RECORDINGS["26.05"] / "squeue.json").read_text(), "squeue")
    running, pending = slurm_json.jobs_from_squeue(doc, 0)
    assert not any(j.exclusive for j in (*running, *pending))
    snap = recorded_snapshot("26.05")
    assert {j.job_id for j in (*snap.running, *snap.pending) if j.exclusive} == {10}


def test_the_snapshot_reads_what_a_backfill_cycle_costs_from_sdiag(release):
    """sdiag's text on 22.05, --json after (recorded with 200 jobs pending): the test
    cluster's model scaled to the mean cycle at the mean depth tried."""
    cost = recorded_snapshot(release).config.backfill_cost
    stats = (slurm_json.backfill_stats(json.loads((RECORDINGS[release] / "sdiag.json")
                                                  .read_text()))
             if release != "22.05" else
             slurm_text.backfill_stats((RECORDINGS[release] / "sdiag.txt").read_text()))
    assert stats["depth_try_mean"] >= 190 and stats["cycles"] >= 15
    model = cost.cycle_us + cost.job_us * stats["depth_try_mean"]
    assert abs(model - stats["cycle_mean_us"]) <= 0.01 * stats["cycle_mean_us"] + 200
    assert cost.job_us / cost.cycle_us == pytest.approx(
        TEST_CLUSTER_COST.job_us / TEST_CLUSTER_COST.cycle_us, rel=0.05)
    assert 10 <= cost.job_us <= 60 and cost.source.startswith("sdiag:")


@dataclass(frozen=True)
class NoSdiag(Recorded):
    """A site that keeps sdiag to its operators."""

    def run(self, *args: str) -> str:
        if args[0] == "sdiag":
            raise SourceUnavailable("sdiag failed: Access/permission denied")
        return super().run(*args)


def test_without_sdiag_the_test_cluster_s_cost_is_played_and_said():
    cost = snapshot(NoSdiag()).config.backfill_cost
    assert (cost.cycle_us, cost.job_us) == (TEST_CLUSTER_COST.cycle_us,
                                            TEST_CLUSTER_COST.job_us)
    assert "permission denied" in cost.source and "test cluster" in cost.source
