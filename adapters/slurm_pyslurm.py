"""Snapshots through pyslurm (>= 25.11, the ``[slurm]`` extra), Slurm's C API from Python.

pyslurm 25.11 builds only against Slurm 25.11 and talks only to a 25.11 slurmctld, so this
path is tested against objects shaped like its documented API (``Jobs.load()``,
``Nodes.load()``, ``Partitions.load()``, ``slurmctld.Config.load()``), not against a real
cluster; the CLI path (adapters/slurm_cli.py) is the one tested against a real Slurm. The
priority factors still come from ``sprio``, and the QOS, associations and usage from
``sacctmgr`` and ``sshare`` (``slurm_cli.accounting``): pyslurm reads neither from
slurmctld. A job's GRES are read from the raw TRES strings (``tres_per_node``,
``tres_per_job``) with the CLI parsers, so that ``--gres`` and ``--gpus`` read alike.
"""
from __future__ import annotations

import time as clock
from dataclasses import replace

from advisor.adapters import slurm_cli, slurm_json, slurm_text
from advisor.errors import MissingExtra, SourceUnavailable
from advisor.model import Job, Node, Partition, SchedulingConfig, Snapshot, release_of


def available() -> bool:
    try:
        import pyslurm  # noqa: F401
    except ImportError:
        return False
    return True


def snapshot(commands: slurm_cli.SlurmCommands = slurm_cli.SlurmCommands(),
             module=None) -> Snapshot:
    """The cluster's state now, through ``module`` (default: ``import pyslurm``)."""
    if module is None:
        try:
            import pyslurm as module
        except ImportError:
            raise MissingExtra("pyslurm", "slurm") from None
    now = int(clock.time())
    try:
        jobs = list(module.Jobs.load().values())
        nodes = list(module.Nodes.load().values())
        partitions = list(module.Partitions.load().values())
        config = module.slurmctld.Config.load()
    except Exception as e:  # pyslurm.RPCError and friends: slurmctld is not answering
        raise SourceUnavailable(f"pyslurm: {type(e).__name__}: {e}; is slurmctld up?") from e
    running, pending = [], []
    for job in filter(None, (_job(j, now) for j in jobs)):
        (pending if job.state == "PENDING" else running).append(job)
    node_objs = tuple(_node(n) for n in nodes)
    part_objs = tuple(_partition(p, tuple(n.name for n in node_objs)) for p in partitions)
    source = {"kind": "slurm", "adapter": "pyslurm",
              "release": getattr(module, "__version__", "")}
    conf = _config(config)
    conf = replace(conf, backfill_cost=slurm_cli.backfill_cost(
        commands, release_of(conf.slurm_version).release), utc_offset=slurm_cli.utc_offset(now))
    return slurm_cli.assemble(now, node_objs, part_objs, running, pending, conf, source,
                              slurm_cli.sprio_factors(commands),
                              accounting=slurm_cli.accounting(commands, conf, ""))


def _names(value) -> list:
    """A pyslurm list setting given as a list or as one comma-separated string."""
    if not value:
        return []
    return value.split(",") if isinstance(value, str) else list(value)


def _minutes(value) -> int | None:
    """pyslurm gives limits in minutes, None or the string UNLIMITED when there is none."""
    if value is None or isinstance(value, str):
        return None
    return int(value) * 60


def _job(j, now: int) -> Job | None:
    state = str(j.state).upper()
    if state in slurm_json.RUNNING_STATES:
        kind = "RUNNING"
    elif state in slurm_json.PENDING_STATES:
        kind = "PENDING"
    else:
        return None
    partitions = tuple(p for p in (j.partition or "").split(",") if p)
    start = j.start_time or None
    reason = j.state_reason or ""
    return Job(job_id=int(j.id), user=j.user_name or str(j.user_id),
               partition=partitions[0] if partitions else "", cpus=int(j.cpus or 1),
               state=state, submit_time=int(j.submit_time or 0),
               time_limit=_minutes(j.time_limit), nodes=int(j.num_nodes or 1),
               account=j.account or "", qos=j.qos or "", partitions=partitions,
               eligible_time=j.eligible_time or None,
               start_time=start if kind == "RUNNING" else None,
               expected_start=start if kind == "PENDING" else None,
               elapsed=int(j.run_time) if kind == "RUNNING" and j.run_time is not None
               else None,
               node_list=slurm_text.expand_hostlist(j.allocated_nodes or "")
               if kind == "RUNNING" else (),
               priority=None if j.priority is None else int(j.priority), state_reason=reason,
               dependency=",".join(f"{k}:{v}" for k, v in (j.dependencies or {}).items() if v),
               held=kind == "PENDING" and (reason in slurm_json.HELD_REASONS or
                                           j.priority == 0),
               nice=int(j.nice or 0), exclusive=str(
                   getattr(j, "resource_sharing", "") or "").lower() == "no",
               memory_per_node=int(getattr(j, "memory_per_node", None) or 0),
               memory_per_cpu=int(getattr(j, "memory_per_cpu", None) or 0),
               gres_per_node=slurm_json.job_gres({
                   "tres_per_node": _raw(getattr(j, "tres_per_node", None)),
                   "tres_per_job": _raw(getattr(j, "tres_per_job", None)),
                   "node_count": j.num_nodes}),
               features="&".join(getattr(j, "constraints", None) or ()),
               licenses=",".join(getattr(j, "licenses", None) or ()),
               reservation=getattr(j, "reservation", None) or "")


def _raw(tres) -> str:
    """The TRES string a pyslurm ``TrackableResources`` was parsed from ("" for none)."""
    return tres if isinstance(tres, str) else (getattr(tres, "raw_str", None) or "")


def _gres(found) -> dict[str, int]:
    """pyslurm's GRES dict (``{"gpu:a100": 2, "gpu": 1}``) as counts by name, types summed
    as the slurm mode plays them."""
    out: dict[str, int] = {}
    for key, value in (found or {}).items():
        count = value if isinstance(value, int) else (
            value.get("count", 0) if isinstance(value, dict) else 0)
        name = str(key).split(":", 1)[0]
        out[name] = out.get(name, 0) + int(count)
    return {k: v for k, v in out.items() if v > 0}


def _node(n) -> Node:
    return Node(name=n.name, cpus=int(n.total_cpus or 0), state=str(n.state).upper(),
                alloc_cpus=int(n.allocated_cpus or 0), partitions=tuple(n.partitions or ()),
                memory=int(getattr(n, "real_memory", None) or 0),
                alloc_memory=int(getattr(n, "allocated_memory", None) or 0),
                gres=_gres(getattr(n, "configured_gres", None)),
                alloc_gres=_gres(getattr(n, "allocated_gres", None)))


def _partition(p, all_nodes: tuple[str, ...]) -> Partition:
    members = all_nodes if (p.nodes or "").upper() == "ALL" else \
        slurm_text.expand_hostlist(p.nodes or "")
    return Partition(name=p.name, nodes=members, max_time=_minutes(p.max_time),
                     default_time=_minutes(p.default_time),
                     priority_tier=int(p.priority_tier or 1),
                     priority_job_factor=int(p.priority_job_factor or 1),
                     oversubscribe=str(p.oversubscribe or "NO").upper(),
                     default=bool(p.is_default), state=str(p.state or "UP").upper())


def _config(c) -> SchedulingConfig:
    raw = {str(k): "" if v is None or v is True else str(v)
           for k, v in (c.scheduler_parameters or {}).items()}
    flags = c.priority_flags or ()
    return SchedulingConfig(
        priority_type=c.priority_type or "priority/basic",
        priority_weight_age=int(c.priority_weight_age or 0),
        priority_weight_assoc=int(c.priority_weight_assoc or 0),
        priority_weight_fairshare=int(c.priority_weight_fair_share or 0),
        priority_weight_job_size=int(c.priority_weight_job_size or 0),
        priority_weight_partition=int(c.priority_weight_partition or 0),
        priority_weight_qos=int(c.priority_weight_qos or 0),
        priority_weight_tres={str(k).lower(): float(v)
                              for k, v in (c.priority_weight_tres or {}).items()},
        priority_flags=tuple(flags.split(",")) if isinstance(flags, str) else tuple(flags),
        priority_max_age=int(c.priority_max_age or 0),
        priority_calc_period=int(c.priority_calc_period or 0),
        priority_decay_half_life=int(c.priority_decay_half_life or 0),
        priority_usage_reset_period=str(getattr(c, "priority_usage_reset_period", None)
                                        or "NONE").upper(),
        priority_favor_small=bool(c.priority_favor_small),
        scheduler_type=c.scheduler_type or "", scheduler_parameters=raw,
        backfill=slurm_text.backfill_parameters(raw), select_type=c.select_type or "",
        select_type_parameters=",".join(c.select_type_parameters or ())
        if not isinstance(c.select_type_parameters, str) else c.select_type_parameters,
        preempt_type=c.preempt_type or "preempt/none",
        preempt_mode=str(getattr(c, "preempt_mode", "OFF") or "OFF"),
        accounting_storage_type=getattr(c, "accounting_storage_type", None) or "",
        accounting_storage_tres=tuple(str(t).lower() for t in _names(
            getattr(c, "accounting_storage_tres", None))),
        accounting_enforce=tuple(str(e).lower() for e in
                                 getattr(c, "accounting_storage_enforce", None) or ()),
        state_save_location=getattr(c, "state_save_location", None) or "",
        def_mem_per_cpu=int(getattr(c, "default_memory_per_cpu", None) or 0),
        def_mem_per_node=int(getattr(c, "default_memory_per_node", None) or 0))
