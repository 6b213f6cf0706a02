"""QOS and association limits as the slurm core plays them: counters of running work.

Each limit Slurm enforces on running jobs is a *counter*: the jobs it covers and a cap per
resource (running jobs, CPUs, memory, nodes, a GRES). A job may start only when, for each
counter that covers it, what the running jobs of that counter use plus what the job asks
stays within every cap [src: acct_policy.c acct_policy_job_runnable_pre_select() for job
counts, acct_policy_job_runnable_post_select() for TRES]. The counters:

* a QOS's MaxJobsPU and MaxTRESPU: one counter per (QOS, user);
* a QOS's GrpJobs and GrpTRES: one per QOS;
* an association's MaxJobs (a user's, else the nearest account above it that sets one, as
  Slurm passes it down): one per (account, user);
* an association's GrpJobs and GrpTRES: one per association, covering it and everything
  below it in the account tree.

Played only where slurmctld enforces limits (AccountingStorageEnforce=limits or safe) and
the snapshot holds the accounting (``Snapshot.accounting``); otherwise there are no
counters and the core runs as without them.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from advisor.engine.slurm_layout import WHOLE_NODE
from advisor.engine.slurm_resources import memory_need
from advisor.model import Accounting, Association, Job, SchedulingConfig

#: the first resource of every counter: running jobs
JOBS = "jobs"


def job_usage(job: Job, mem_need: int, resource: str) -> int:
    """What ``job`` counts toward a cap on ``resource`` (TRES names as sacctmgr's)."""
    nodes = max(job.nodes, 1)
    if resource == JOBS:
        return 1
    if resource == "cpu":
        return job.cpus
    if resource == "node":
        return nodes
    if resource == "mem":
        if mem_need >= WHOLE_NODE:
            return 0  # (the whole node: not known per job here)
        return mem_need * nodes if mem_need >= 0 else -mem_need * job.cpus
    if resource.startswith("gres/"):
        return job.gres_per_node.get(resource[5:], 0) * nodes
    return 0


def _chain(assoc: dict[tuple[str, str], Association], account: str) -> list[Association]:
    """The account's association and those above it, nearest first."""
    out, seen = [], set()
    while account and account not in seen and (account, "") in assoc:
        seen.add(account)
        a = assoc[(account, "")]
        out.append(a)
        account = a.parent
    return out


def limit_rows(accounting: Accounting, config: SchedulingConfig, jobs: Sequence[Job]):
    """(resource names, caps (counters, resources; -1 none), each job's counters (slots,
    jobs; -1 none), each job's use (resources, jobs)), or None when no limit is played."""
    if not (config.limits_enforced and accounting):
        return None
    qos = {q.name: q for q in accounting.qos}
    assoc = {(a.account, a.user): a for a in accounting.associations}
    counters: dict[tuple, dict[str, int]] = {}
    member: list[list[int]] = []
    index: dict[tuple, int] = {}

    def counter(key: tuple, jobs_cap: int, tres: dict[str, int]) -> int | None:
        caps = dict(tres)
        if jobs_cap >= 0:
            caps[JOBS] = jobs_cap
        if not caps:
            return None
        if key not in index:
            index[key] = len(index)
            counters[key] = caps
        return index[key]

    for job in jobs:
        mine = []
        user_assoc = assoc.get((job.account, job.user))
        q = qos.get(job.qos or (user_assoc.default_qos if user_assoc else "") or "normal")
        if q is not None:
            mine.append(counter(("qos-user", q.name, job.user), q.max_jobs_per_user,
                                q.max_tres_per_user))
            mine.append(counter(("qos", q.name), q.grp_jobs, q.grp_tres))
        chain = _chain(assoc, job.account)
        if user_assoc is not None:
            max_jobs = next((a.max_jobs for a in (user_assoc, *chain) if a.max_jobs >= 0), -1)
            mine.append(counter(("user", job.account, job.user), max_jobs, {}))
            mine.append(counter(("user-grp", job.account, job.user), user_assoc.grp_jobs,
                                user_assoc.grp_tres))
        for a in chain:
            mine.append(counter(("account", a.account), a.grp_jobs, a.grp_tres))
        member.append([g for g in mine if g is not None])
    if not counters:
        return None
    names = [JOBS] + sorted({r for caps in counters.values() for r in caps} - {JOBS})
    caps = np.full((len(counters), len(names)), -1, np.int64)
    for key, g in index.items():
        for r, cap in counters[key].items():
            caps[g, names.index(r)] = cap
    slots = max((len(m) for m in member), default=0)
    job_lim = np.full((max(slots, 1), len(jobs)), -1, np.int64)
    for j, m in enumerate(member):
        job_lim[:len(m), j] = m
    needs = [memory_need(job, config) for job in jobs]
    use = np.array([[job_usage(job, need, r) for job, need in zip(jobs, needs)]
                    for r in names], np.int64).reshape(len(names), len(jobs))
    return tuple(names), caps, job_lim, use
