"""Slurm's job priority, factor by factor, as priority/multifactor computes it.

The formula is docs/slurm-mapping.md's "The multifactor priority", after
[src: src/plugins/priority/multifactor/priority_multifactor.c _get_priority_internal(),
set_priority_factors(), _get_tres_factors()] and [doc: priority_multifactor.shtml].
``weighted_factors`` gives each weighted term as ``sprio`` prints it; the engine adds the age
term itself as time passes (``advisor.engine.slurm_layout.priority``).

Fair-share, QOS and association terms depend on slurmdbd state the snapshot does not hold
(usage, QOS priorities): they are taken as per-job constants from the snapshot's ``sprio``
row when it has one, else 0. So is the site factor, which only job_submit.lua, a site-factor
plugin or an administrator sets.
"""
from __future__ import annotations

import numpy as np

from advisor.model import (Cluster, Job, Partition, SchedulingConfig,
                           planned_limit)


def age_factor(job: Job, now: int, config: SchedulingConfig) -> float:
    """min((now - eligible) / PriorityMaxAge, 1) [slurm.conf(5) PriorityMaxAge]."""
    eligible = job.eligible_time if job.eligible_time is not None else job.submit_time
    return min(max(now - eligible, 0) / max(config.priority_max_age, 1), 1.0)


def job_size(nodes, cpus, minutes, nodes_total: int, cpus_total: int, favor_small: bool,
             relative_to_time: bool):
    """The job-size factor for numbers or numpy arrays [src: set_priority_factors(), weight_js
    branch]: nodes and CPUs relative to the whole cluster, half each; PriorityFavorSmall
    mirrors it; SMALL_RELATIVE_TO_TIME divides the size in CPUs by the time limit in minutes.
    Clipped to [0, 1]."""
    nodes = np.maximum(nodes, 1)
    if relative_to_time:
        size = np.maximum(nodes * cpus_total / nodes_total, cpus)
        f = size / np.maximum(minutes, 1) / cpus_total
        if favor_small:
            f = 1.0 - f
    elif favor_small:
        f = ((nodes_total - nodes) / nodes_total + (cpus_total - cpus) / cpus_total) / 2
    else:
        f = (nodes / nodes_total + cpus / cpus_total) / 2
    return np.clip(f, 0.0, 1.0)


def job_size_factor(job: Job, cluster: Cluster, config: SchedulingConfig,
                    partition: Partition | None) -> float:
    minutes = planned_limit(job.time_limit, partition) // 60   # SMALL_RELATIVE_TO_TIME's
    return float(job_size(job.nodes, job.cpus, minutes,
                          len(cluster.nodes), cluster.cpus, config.priority_favor_small,
                          "SMALL_RELATIVE_TO_TIME" in config.priority_flags))


def partition_factor(partition: Partition | None, cluster: Cluster,
                     config: SchedulingConfig) -> float:
    """PriorityJobFactor over the largest of all partitions, or raw with NO_NORMAL_PART."""
    if partition is None:
        return 0.0
    if "NO_NORMAL_PART" in config.priority_flags:
        return float(partition.priority_job_factor)
    top = max((p.priority_job_factor for p in cluster.partitions), default=0)
    return partition.priority_job_factor / top if top > 0 else 0.0


def tres_factor(name: str, job: Job, partition: Partition | None, cluster: Cluster,
                config: SchedulingConfig) -> float:
    """The job's requested count of a TRES over its partition's total; the raw count with
    NO_NORMAL_TRES [slurm.conf(5) PriorityWeightTRES, PriorityFlags; src:
    priority_multifactor.c _get_tres_factors()]. Known: cpu, node, and a GRES
    (``gres/gpu``: per node times nodes) where AccountingStorageTRES tracks it (else
    slurmctld counts none of it); other TRES (mem, licences) count 0."""
    if name in ("cpu", "node"):
        have = job.cpus if name == "cpu" else max(job.nodes, 1)
    elif name.startswith("gres/") and name in tracked_tres(config):
        have = job.gres_per_node.get(name[5:], 0) * max(job.nodes, 1)
    else:
        return 0.0
    if no_normal_tres(config):
        return float(have)
    total = partition_tres(name, partition, cluster)
    return have / total if total else 0.0


def partition_tres(name: str, partition: Partition | None, cluster: Cluster) -> int:
    """How much of a TRES (cpu, node, gres/NAME) the partition's nodes have (the
    cluster's without a partition)."""
    if name in ("cpu", "node"):
        cpus, nodes = (cluster.partition_sizes[partition.name] if partition is not None
                       else (cluster.cpus, len(cluster.nodes)))
        return cpus if name == "cpu" else nodes
    members = set(partition.nodes) if partition is not None else None
    return sum(n.gres.get(name[5:], 0) for n in cluster.nodes
               if members is None or n.name in members)


def tracked_tres(config: SchedulingConfig) -> set[str]:
    """The TRES slurmctld accounts (AccountingStorageTRES), lower case."""
    return {t.lower() for t in config.accounting_storage_tres}


def no_normal_tres(config: SchedulingConfig) -> bool:
    """22.05's ``scontrol show config`` prints NO_NORMAL_ALL when any NO_NORMAL_* flag is
    set (recorded: PriorityFlags=NO_NORMAL_TRES shows as NO_NORMAL_ALL while sprio still
    normalises the partition factor). The display cannot tell which, so NO_NORMAL_ALL is read
    as NO_NORMAL_TRES, the flag a TRES-weight ordering (docs/slurm-mapping.md, Orderings) needs."""
    flags = config.priority_flags
    return "NO_NORMAL_TRES" in flags or "NO_NORMAL_ALL" in flags


def weighted_factors(job: Job, partition_name: str, cluster: Cluster,
                     config: SchedulingConfig, now: int | None = None) -> dict[str, float]:
    """Each weighted term, keyed as ``sprio``'s columns (see adapters.slurm_text): age (if
    ``now`` is given), jobsize, partition, tres, and the constants fairshare, qos, assoc, site
    (from the job's sprio row) and nice (negated)."""
    partition = cluster.partition(partition_name)
    seen = job.priority_factors
    out = {
        "jobsize": config.priority_weight_job_size * job_size_factor(job, cluster, config,
                                                                     partition),
        "partition": config.priority_weight_partition * partition_factor(partition, cluster,
                                                                         config),
        "tres": sum(w * tres_factor(name.lower(), job, partition, cluster, config)
                    for name, w in config.priority_weight_tres.items()),
        "fairshare": float(seen.get("fairshare", 0.0)),
        "qos": float(seen.get("qos", 0.0)),
        "assoc": float(seen.get("assoc", 0.0)),
        "site": float(seen.get("site", 0.0)),
        "nice": -float(job.nice),
    }
    if now is not None:
        out["age"] = config.priority_weight_age * age_factor(job, now, config)
    return out


def static_priority(job: Job, partition_name: str, cluster: Cluster,
                    config: SchedulingConfig) -> float:
    """The priority before truncation, without the age term (the engine adds it)."""
    return sum(weighted_factors(job, partition_name, cluster, config).values())


def job_priority(job: Job, partition_name: str, cluster: Cluster, config: SchedulingConfig,
                 now: int) -> int:
    """The integer priority Slurm gives the job at ``now``: truncated, at least 1."""
    total = sum(weighted_factors(job, partition_name, cluster, config, now).values())
    return int(min(max(int(total), 1), 4294967295))
