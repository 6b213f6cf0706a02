"""A slurm.conf file, read as slurmctld would: its scheduling keys, nodes and partitions.

For a site known only by its files (a trace from a Slurm-run cluster, a configuration not
yet in effect): ``read_slurm_conf(path)`` gives the ``Cluster`` (its ``NodeName`` and
``PartitionName`` lines, ``DEFAULT`` lines carried to those after them, ``Include`` files
read in place) and the ``SchedulingConfig`` (the keys of ``advisor.model.SLURM_CONF``, in
slurm.conf's units: bare durations in minutes, SchedulerTimeSlice in seconds).
Keys the advisor does not play are passed over, as scontrol's other lines are. A line
that cannot be understood is one error naming the file, the line and the fix.
"""
from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from advisor.adapters.files import read_bytes
from advisor.adapters.slurm_text import (backfill_parameters, config_value, expand_hostlist,
                                         gres_counts, megabytes, partition_record)
from advisor.errors import BadInput
from advisor.model import SLURM_CONF, Cluster, Node, Partition, SchedulingConfig

#: Include depth slurmctld allows is not documented; a loop must still end
MAX_INCLUDES = 16
#: the TRES slurmctld tracks whatever AccountingStorageTRES adds [slurm.conf(5)]
ALWAYS_TRACKED = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")
#: node keys whose product is the CPU count when CPUs= is not given [slurm.conf(5)]
TOPOLOGY = ("Boards", "SocketsPerBoard", "Sockets", "CoresPerSocket", "ThreadsPerCore")


def read_slurm_conf(path: str | Path, name: str = "") -> tuple[Cluster, SchedulingConfig]:
    """The cluster and the scheduling configuration ``path`` describes."""
    lines = list(_lines(Path(path), 0))
    keys: dict[str, tuple[str, str]] = {}
    nodes: list[Node] = []
    partitions: list[tuple[str, dict[str, str]]] = []
    node_default: dict[str, str] = {}
    part_default: dict[str, str] = {}
    for where, line in lines:
        fields = _fields(line, where)
        head, value = next(iter(fields.items()))
        if head.lower() == "nodename":
            if value.upper() == "DEFAULT":
                node_default.update(fields)
                continue
            nodes.extend(_nodes({**node_default, **fields}, where))
        elif head.lower() == "partitionname":
            if value.upper() == "DEFAULT":
                part_default.update(fields)
                continue
            partitions.append((where, {**part_default, **fields}))
        else:
            for key, text in fields.items():
                keys[key.lower()] = (where, text)
    if not nodes:
        raise BadInput(f"{path}: no NodeName line; a slurm.conf describes its nodes "
                       "(NodeName=n[1-4] CPUs=16)")
    if not partitions:
        raise BadInput(f"{path}: no PartitionName line; give the partitions the jobs ran in "
                       "(PartitionName=batch Nodes=ALL Default=YES)")
    names = tuple(n.name for n in nodes)
    parts = tuple(_partition(kv, names, where) for where, kv in partitions)
    nodes = [replace(n, partitions=tuple(p.name for p in parts if n.name in p.nodes))
             for n in nodes]
    cluster_name = keys.get("clustername", ("", name))[1] or name
    return Cluster(cluster_name, tuple(nodes), parts), _config(keys)


def _lines(path: Path, depth: int):
    """(where, line) of each setting, comments and blank lines dropped, ``Include`` files
    read where they stand (a relative path from the including file's folder)."""
    if depth > MAX_INCLUDES:
        raise BadInput(f"{path}: Include nested more than {MAX_INCLUDES} deep; is a file "
                       "including itself?")
    text = read_bytes(path).decode("utf-8", errors="replace")
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        if head.lower() == "include":
            target = Path(rest.strip())
            yield from _lines(target if target.is_absolute() else path.parent / target,
                              depth + 1)
            continue
        yield f"{path}, line {n}", line


def _fields(line: str, where: str) -> dict[str, str]:
    """``Key=Value Key2="a b"`` as {key: value}, in the line's order."""
    try:
        tokens = shlex.split(line)
    except ValueError as e:
        raise BadInput(f"{where}: {e} in '{line[:60]}'; close the quote") from None
    out = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise BadInput(f"{where}: '{token[:40]}' is not Key=Value; slurm.conf(5) "
                           "writes each setting so")
        out[key] = value
    return out


def _nodes(kv: dict[str, str], where: str) -> list[Node]:
    cpus = _count(kv, "CPUs", where, 0) or _count(kv, "CPUTot", where, 0)
    if not cpus:
        cpus = 1
        for key in TOPOLOGY:
            cpus *= _count(kv, key, where, 1)
    memory = megabytes(kv.get("RealMemory", "1"))
    gres = gres_counts(kv.get("Gres", ""))
    return [Node(name=n, cpus=cpus, memory=memory, gres=dict(gres))
            for n in expand_hostlist(kv["NodeName"])]


def _partition(kv: dict[str, str], nodes: tuple[str, ...], where: str) -> Partition:
    """A ``PartitionName`` line (without Nodes=: all of them, as the advisor has read
    it), every node it names defined by a NodeName line."""
    part = partition_record({"Nodes": "ALL", **kv}, nodes, where)
    defined = set(nodes)
    unknown = [n for n in part.nodes if n not in defined]
    if unknown:
        raise BadInput(f"{where}: partition {part.name} names node {unknown[0]} "
                       "that no NodeName line defines")
    return part


def _count(kv: dict[str, str], key: str, where: str, default: int) -> int:
    text = kv.get(key)
    if text is None:
        return default
    if not text.strip().isdigit():
        raise BadInput(f"{where}: {key}={text} is not a whole number")
    return int(text)


def _config(keys: dict[str, tuple[str, str]]) -> SchedulingConfig:
    """The scheduling keys of ``keys`` (lower-case key -> (where, value)), Slurm's
    defaults for the others."""
    defaults = SchedulingConfig()
    values = {}
    for key, field, kind, _ in SLURM_CONF:
        if key.lower() not in keys:
            continue
        where, text = keys[key.lower()]
        if kind == "seconds" and text.strip().isdigit():
            text += " sec"               # slurm.conf's unit here, not minutes
        values[field] = config_value(text, kind, f"{where}, {key}", getattr(defaults, field))
    given = values.get("accounting_storage_tres", ())
    values["accounting_storage_tres"] = ALWAYS_TRACKED + tuple(
        t.lower() for t in given if t.lower() not in ALWAYS_TRACKED)
    return SchedulingConfig(**values,
                            backfill=backfill_parameters(values.get("scheduler_parameters",
                                                                    {})))
