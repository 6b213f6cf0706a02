"""Resources beside CPUs in the slurm mode: what each node has and each job asks for on
each of its nodes (memory, GRES), as rows the slurm core reads (``slurm_core``)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from advisor.engine.slurm_layout import WHOLE_NODE
from advisor.model import Cluster, Job, SchedulingConfig


def memory_need(job: Job, config: SchedulingConfig) -> int:
    """MB job asks for on each node (< 0: per CPU; WHOLE_NODE: all the node has): its own
    request, else DefMemPerCPU, else DefMemPerNode, else the node's whole memory; an
    exclusive job holds the whole node [slurm.conf(5) DefMemPerCPU, DefMemPerNode]."""
    if job.exclusive:
        return WHOLE_NODE
    if job.memory_per_node > 0 or job.memory_per_cpu > 0:
        return job.memory_per_node if job.memory_per_node > 0 else -job.memory_per_cpu
    if config.def_mem_per_cpu > 0:
        return -config.def_mem_per_cpu
    return config.def_mem_per_node if config.def_mem_per_node > 0 else WHOLE_NODE


def tres_rows(cluster: Cluster, jobs: Sequence[Job], config: SchedulingConfig
              ) -> tuple[tuple[str, ...], np.ndarray | None, np.ndarray | None]:
    """(names, amount per node, need per node of each job) of the resources beside CPUs
    that may hold a job back: memory when it is consumable and every node reports it, and
    each GRES a job asks for (types are not told apart). Memory is left out when no job
    can run short of it: each asks for it per CPU and that covers every node's CPUs (a
    site whose DefMemPerCPU is RealMemory over CPUs). None: CPUs alone."""
    names, nodes, needs = [], [], []
    if config.memory_consumable and cluster.nodes and all(n.memory > 0 for n in cluster.nodes):
        mem = np.array([n.memory for n in cluster.nodes], np.int64)
        need = np.array([memory_need(j, config) for j in jobs], np.int64)
        cpus = np.array([n.cpus for n in cluster.nodes], np.int64)
        per_cpu = -need[need < 0]
        if (need >= 0).any() or (per_cpu.size and (per_cpu.max() * cpus > mem).any()):
            names.append("mem")
            nodes.append(mem)
            needs.append(need)
    for name in sorted({g for j in jobs for g, c in j.gres_per_node.items() if c > 0}):
        names.append(f"gres/{name}")
        nodes.append(np.array([n.gres.get(name, 0) for n in cluster.nodes], np.int64))
        needs.append(np.array([j.gres_per_node.get(name, 0) for j in jobs], np.int64))
    if not names:
        return (), None, None
    return tuple(names), np.vstack(nodes), np.vstack(needs)
