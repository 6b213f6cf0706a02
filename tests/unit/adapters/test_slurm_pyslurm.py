"""The pyslurm path, against objects shaped like pyslurm 25.11's documented API (pyslurm
cannot be built here: it builds only against Slurm 25.11, which Debian does not ship). The objects
carry the same jobs as our real 22.05 recording, so both adapters must agree."""
from dataclasses import replace
from types import SimpleNamespace as Obj

import pytest

from advisor.adapters import slurm_json, slurm_pyslurm, slurm_text
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.errors import MissingExtra, SourceUnavailable
from tests.helpers import FIXTURES
from tests.unit.adapters.test_slurm_parsers import NOW, OURS, read, squeue_doc


class Collection(dict):
    """``Jobs``/``Nodes``/``Partitions``: ``load()`` gives a dict-like map of objects."""

    items_ = {}

    @classmethod
    def load(cls, **_):
        return cls(cls.items_)


def fake_pyslurm(fail: bool = False):
    raw = {j["job_id"]: j for j in squeue_doc()["jobs"]}
    jobs = {i: Obj(id=i, user_name=r["user_name"], user_id=0, account=r["account"],
                   partition=r["partition"], qos=r["qos"], state=r["job_state"],
                   state_reason=r["state_reason"], priority=r["priority"], nice=r["nice"],
                   time_limit=r["time_limit"], submit_time=r["submit_time"],
                   eligible_time=r["eligible_time"], start_time=r["start_time"],
                   run_time=NOW - r["start_time"] if r["job_state"] == "RUNNING" else 0,
                   cpus=r["cpus"], num_nodes=r["node_count"], allocated_nodes=r["nodes"],
                   dependencies={"afterok": "17(unfulfilled)"} if r["dependency"] else {})
            for i, r in raw.items()}
    nodes = {n.name: Obj(name=n.name, state=n.state, total_cpus=n.cpus,
                         allocated_cpus=n.alloc_cpus, partitions=list(n.partitions))
             for n in slurm_json.nodes_from_json(slurm_json.load(read(OURS, "sinfo.json"),
                                                                 "s"), "s")}
    parts = {p.name: Obj(name=p.name, nodes=",".join(p.nodes),
                         max_time="UNLIMITED" if p.max_time is None else p.max_time // 60,
                         default_time=None if p.default_time is None else
                         p.default_time // 60, priority_tier=p.priority_tier,
                         priority_job_factor=p.priority_job_factor,
                         oversubscribe=p.oversubscribe, is_default=p.default, state=p.state)
             for p in slurm_text.parse_partitions(read(OURS, "scontrol_show_partition.txt"))}
    c = slurm_text.parse_config(read(OURS, "scontrol_show_config.txt"))
    config = Obj(priority_type=c.priority_type, priority_weight_age=1000,
                 priority_weight_assoc=0, priority_weight_fair_share=0,
                 priority_weight_job_size=500, priority_weight_partition=1000,
                 priority_weight_qos=0, priority_weight_tres={}, priority_max_age=86400,
                 priority_calc_period=60, priority_decay_half_life=604800,
                 priority_flags=[], priority_favor_small=False,
                 scheduler_type="sched/backfill",
                 scheduler_parameters={"bf_interval": "1", "bf_continue": True},
                 select_type="select/cons_tres", select_type_parameters=["CR_CORE"],
                 preempt_type="preempt/none", preempt_mode="OFF")

    def loader(items):
        if fail:
            def load(**_):
                raise RuntimeError("Unable to contact slurm controller")
            return Obj(load=load)
        return type("Map", (Collection,), {"items_": items})

    return Obj(Jobs=loader(jobs), Nodes=loader(nodes), Partitions=loader(parts),
               slurmctld=Obj(Config=Obj(load=lambda: config)), __version__="25.11.2")


class RecordedSprio(SlurmCommands):
    """sprio's and sdiag's recorded outputs (sdiag's of the release the configuration
    names: text on 22.05, JSON after)."""

    def run(self, *args):
        if args[0] == "sdiag":
            name = "sdiag-26.05-depth200.json" if "--json" in args else \
                "sdiag-22.05-depth200.txt"
            return (FIXTURES / "sdiag" / name).read_text()
        assert args[0] == "sprio"
        return read(OURS, "sprio.txt")


def test_pyslurm_snapshot_agrees_with_the_cli_parsers():
    snap = slurm_pyslurm.snapshot(RecordedSprio(), module=fake_pyslurm())
    running, pending = slurm_json.jobs_from_squeue(squeue_doc(), NOW)
    assert [j.job_id for j in snap.running] == sorted(j.job_id for j in running)
    by_id = {j.job_id: j for j in running + pending}
    for job in (*snap.running, *snap.pending):
        cli = by_id[job.job_id]
        assert (job.cpus, job.state, job.time_limit, job.partitions, job.priority,
                job.held, job.submit_time, job.start_time, job.node_list) == \
            (cli.cpus, cli.state, cli.time_limit, cli.partitions, cli.priority, cli.held,
             cli.submit_time, cli.start_time, cli.node_list)
    assert snap.machine.cpus == 64 and snap.machine.partition("short").max_time == 1800
    assert snap.config.backfill.bf_interval == 1 and snap.config.backfill.bf_continue
    assert snap.config.select_type_parameters == "CR_CORE"
    assert snap.config.backfill_cost.source.startswith("sdiag: 16 cycles")
    assert {j.job_id: j.priority_factors.get("jobsize") for j in snap.pending}[18] == 188
    assert snap.source["adapter"] == "pyslurm"


def test_pyslurm_errors():
    with pytest.raises(SourceUnavailable, match="pyslurm: RuntimeError: Unable to contact"):
        slurm_pyslurm.snapshot(RecordedSprio(), module=fake_pyslurm(fail=True))
    if not slurm_pyslurm.available():
        with pytest.raises(MissingExtra, match=r"slurm-policy-advisor\[slurm\]"):
            slurm_pyslurm.snapshot(RecordedSprio())


def test_pyslurm_reads_memory_gpus_and_accounting_as_the_cli_does():
    """The GPU recording (tests/fixtures/slurm-22.05-gpu) as pyslurm objects: memory per
    node and CPU, GRES from the raw TRES strings (``--gres`` and ``--gpus``), the nodes'
    memory and GPUs, and the accounting read by sacctmgr/sshare as the CLI path does."""
    from tests.unit.adapters.test_slurm_accounting import (RECORDINGS, Recorded,
                                                           recorded_snapshot)
    cli = recorded_snapshot()
    raw = {j["job_id"]: j for j in squeue_doc(RECORDINGS["22.05"])["jobs"]}

    def tres(text):
        return Obj(raw_str=text) if text else None

    def job(j):
        r = raw[j.job_id]
        return Obj(id=j.job_id, user_name=j.user, user_id=0, account=j.account,
                   partition=",".join(j.asked), qos=j.qos, state=j.state,
                   state_reason=j.state_reason, priority=j.priority, nice=j.nice,
                   time_limit=None if j.time_limit is None else j.time_limit // 60,
                   submit_time=j.submit_time, eligible_time=j.eligible_time,
                   start_time=j.start_time or 0, run_time=j.elapsed, cpus=j.cpus,
                   num_nodes=j.nodes, allocated_nodes=",".join(j.node_list),
                   dependencies={}, resource_sharing="OK",
                   memory_per_node=r.get("memory_per_node"),
                   memory_per_cpu=r.get("memory_per_cpu"),
                   tres_per_node=tres(r.get("tres_per_node")),
                   tres_per_job=tres(r.get("tres_per_job")),
                   constraints=[], licenses=[], reservation="")

    def node(n):
        return Obj(name=n.name, state=n.state, total_cpus=n.cpus, allocated_cpus=n.alloc_cpus,
                   partitions=list(n.partitions), real_memory=n.memory,
                   allocated_memory=n.alloc_memory,
                   configured_gres={f"{k}:tesla": v for k, v in n.gres.items()},
                   allocated_gres=dict(n.alloc_gres))

    base = fake_pyslurm()
    c = cli.config
    config = Obj(**{**vars(base.slurmctld.Config.load()),
                    "accounting_storage_type": c.accounting_storage_type,
                    "accounting_storage_enforce": [e.upper() for e in c.accounting_enforce],
                    "state_save_location": "", "default_memory_per_cpu": c.def_mem_per_cpu,
                    "default_memory_per_node": None,
                    "select_type_parameters": c.select_type_parameters})
    jobs = {j.job_id: job(j) for j in (*cli.running, *cli.pending) if not j.dependency}
    module = Obj(Jobs=type("J", (Collection,), {"items_": jobs}),
                 Nodes=type("N", (Collection,), {
                     "items_": {n.name: node(n) for n in cli.machine.nodes}}),
                 Partitions=base.Partitions, slurmctld=Obj(Config=Obj(load=lambda: config)))
    snap = slurm_pyslurm.snapshot(Recorded(), module=module)
    ours = {j.job_id: j for j in (*snap.running, *snap.pending)}
    theirs = {j.job_id: j for j in (*cli.running, *cli.pending)}
    assert set(ours) == set(jobs) and len(ours) >= 8
    for i, j in ours.items():
        assert (j.memory_per_node, j.memory_per_cpu, j.gres_per_node) == \
            (theirs[i].memory_per_node, theirs[i].memory_per_cpu, theirs[i].gres_per_node)
    assert ours[6].gres_per_node == {"gpu": 1}          # --gpus 1: tres_per_job
    assert [(n.memory, n.alloc_memory, n.gres, n.alloc_gres) for n in snap.machine.nodes] \
        == [(n.memory, n.alloc_memory, n.gres, n.alloc_gres) for n in cli.machine.nodes]
    assert snap.config.memory_consumable and snap.config.limits_enforced
    assert snap.accounting == replace(cli.accounting, decay_ran=None)
