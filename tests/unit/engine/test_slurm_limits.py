"""QOS and association limits in the slurm mode: each kind of counter on a case worked out
by hand, the rule that a job over a limit blocks nothing, and no limit where slurmctld
enforces none."""
from __future__ import annotations

from dataclasses import replace

from advisor.engine.slurm import run_slurm, slurm_input
from advisor.model import (Accounting, Association, Cluster, Job, Node, Partition, Qos,
                           SchedulingConfig, Snapshot)

ENFORCED = replace(SchedulingConfig(), accounting_enforce=("associations", "limits", "qos"))
TREE = (Association("root", parent=""), Association("phys", parent="root"),
        Association("chem", parent="root"), Association("phys", "ann"),
        Association("phys", "bob"), Association("chem", "cat"))


def cluster(nodes=2, cpus=8, gpus=0) -> Cluster:
    names = tuple(f"n{i}" for i in range(1, nodes + 1))
    return Cluster("lab", tuple(Node(n, cpus, gres={"gpu": gpus} if gpus else {})
                                for n in names),
                   (Partition("batch", names, default=True),))


def job(i, submit, cpus, user="ann", account="phys", qos="normal", **kw) -> Job:
    return Job(job_id=i, user=user, partition="batch", cpus=cpus, state="PENDING",
               submit_time=submit, time_limit=100, partitions=("batch",), account=account,
               qos=qos, **kw)


def starts(jobs, runtimes, accounting, config=ENFORCED, machine=None):
    snap = Snapshot(time=-1, machine=machine or cluster(), running=(), pending=(),
                    config=config, accounting=accounting)
    inp = slurm_input(snap, dict(zip([j.job_id for j in jobs], runtimes)), jobs, timing=None)
    start, _ = run_slurm(inp)
    order = {int(k): i for i, k in enumerate(inp.job_ids)}
    return [int(start[order[j.job_id]]) for j in jobs], inp


def test_max_jobs_per_user_holds_the_third_job_and_blocks_nobody():
    """MaxJobsPU=2: ann's third capped job waits for her first to end (at 20), and a job
    of hers in another QOS, behind it in the queue, starts at once in the main pass: a
    job over a limit does not block its partition."""
    acct = Accounting(qos=(Qos("normal"), Qos("capped", max_jobs_per_user=2)), associations=TREE)
    jobs = [job(1, 0, 1, qos="capped"), job(2, 0, 1, qos="capped"),
            job(3, 1, 1, qos="capped"), job(4, 2, 1), job(5, 3, 1, user="bob", qos="capped")]
    got, inp = starts(jobs, [20, 50, 10, 10, 10], acct)
    assert inp.limits[0] == "jobs"
    assert got == [0, 0, 20, 2, 3]


def test_max_tres_per_user_counts_cpus():
    acct = Accounting(qos=(Qos("normal", max_tres_per_user={"cpu": 10}),), associations=TREE)
    jobs = [job(1, 0, 6), job(2, 1, 6), job(3, 2, 6, user="bob")]
    got, _ = starts(jobs, [30, 10, 10], acct)
    assert got == [0, 30, 2]


def test_group_gpu_limit_of_a_qos_spans_users():
    """GrpTRES=gres/gpu=3 over all users of the QOS, on nodes with 2 GPUs each (4 in all):
    the fourth one-GPU job waits for the first to end though a GPU is free."""
    acct = Accounting(qos=(Qos("normal", grp_tres={"gres/gpu": 3}),), associations=TREE)
    jobs = [job(i, i, 1, user=u, gres_per_node={"gpu": 1})
            for i, u in enumerate(("ann", "bob", "cat", "ann"), start=1)]
    got, _ = starts(jobs, [40, 50, 60, 10], acct, machine=cluster(gpus=2))
    assert got == [1, 2, 3, 41]


def test_an_accounts_group_limit_covers_the_users_below_it():
    """phys has GrpJobs=2: ann and bob share it, cat (chem) does not."""
    tree = tuple(replace(a, grp_jobs=2) if a.account == "phys" and not a.user else a
                 for a in TREE)
    acct = Accounting(qos=(Qos("normal"),), associations=tree)
    jobs = [job(1, 0, 1), job(2, 0, 1, user="bob"), job(3, 1, 1, user="bob"),
            job(4, 2, 1, user="cat", account="chem")]
    got, _ = starts(jobs, [30, 40, 10, 10], acct)
    assert got == [0, 0, 30, 2]


def test_an_accounts_max_jobs_passes_down_to_each_user():
    """MaxJobs=1 on the account phys: one running job per user of it, not per account."""
    tree = tuple(replace(a, max_jobs=1) if a.account == "phys" and not a.user else a
                 for a in TREE)
    acct = Accounting(qos=(Qos("normal"),), associations=tree)
    jobs = [job(1, 0, 1), job(2, 0, 1, user="bob"), job(3, 1, 1)]
    got, _ = starts(jobs, [30, 40, 10], acct)
    assert got == [0, 0, 30]


def test_no_limit_is_played_where_slurmctld_enforces_none():
    acct = Accounting(qos=(Qos("normal"), Qos("capped", max_jobs_per_user=1)), associations=TREE)
    jobs = [job(1, 0, 1, qos="capped"), job(2, 0, 1, qos="capped")]
    got, inp = starts(jobs, [20, 20], acct, config=SchedulingConfig())
    assert inp.limits == () and got == [0, 0]
    got, inp = starts(jobs, [20, 20], acct)
    assert got == [0, 20]
