"""Slurm's JSON (``squeue/sinfo/scontrol/sacct --json``) across releases, to model objects.

Two families of shapes, told apart by the document's ``meta`` block:

* 22.05, ``openapi/v0.0.38`` (``openapi/dbv0.0.38`` for sacct): flat plain values; unset
  numbers are ``null`` (an unlimited time limit is ``null``; ``cpus`` may be ``null`` when
  the job gave no task count); ``job_state`` is a string; ``sinfo`` has ``nodes[]`` only.
* 23.02 to 26.05, ``data_parser/v0.0.39`` to ``v0.0.45``: numbers are objects
  ``{"set", "infinite", "number"}``; ``job_state`` and node ``state`` are arrays of flags;
  ``sinfo`` gives grouped records ``sinfo[]`` (each node's allocation lost), so nodes come
  from ``scontrol show node --json``; from v0.0.40 sacct's ``required`` says whether its
  memory is per CPU or per node; v0.0.45 (26.05) leaves the job's ``shared`` empty and
  prints neither of its replacements, so the adapter asks ``squeue -O`` which jobs are
  exclusive. Checked on a real 24.11 (v0.0.42) and 26.05 (v0.0.45).

Which release prints which schema, and what each leaves out, is ``advisor.releases``.

Field names follow squeue(1)/sinfo(1)/sacct(1) and the data_parser plugins
(src/plugins/data_parser/v0.0.4x/parsers.c). Pure functions: documents in, objects out.
"""
from __future__ import annotations

import json

from advisor.adapters.slurm_text import (expand_hostlist, gres_counts, tres_gres, tres_items,
                                         tres_memory)
from advisor.errors import BadInput, SourceUnavailable
from advisor.model import RELEASES, SCHEMAS, Job, Node

#: Job states of jobs holding resources (squeue(1) JOB STATE CODES).
RUNNING_STATES = {"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STAGE_OUT",
                  "SIGNALING", "RESIZING"}
PENDING_STATES = {"PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED"}
HELD_REASONS = {"JobHeldUser", "JobHeldAdmin"}
NOTHING_FOUND = 9003  # slurmdb error number of an empty query


def load(text: str, command: str) -> dict:
    """Parse a command's JSON output; BadInput naming the command when it is not JSON."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{command}: output is not JSON ({e.msg} at line {e.lineno}); "
                       "is this Slurm 22.05 or newer?") from None
    if not isinstance(doc, dict):
        raise BadInput(f"{command}: expected a JSON object, got {type(doc).__name__}")
    # 22.05's sacct reports an empty window as error 9003 "Nothing found": not a failure
    errors = [e for e in doc.get("errors") or []
              if not (isinstance(e, dict) and e.get("error_number") == NOTHING_FOUND)]
    if errors:  # e.g. 22.05's squeue exits 0 with an error here when slurmctld is down
        first = errors[0]
        msg = "; ".join(str(first.get(k)) for k in ("description", "error")
                        if first.get(k)) if isinstance(first, dict) else str(first)
        daemon = "slurmdbd" if command.startswith("sacct") else "slurmctld"
        raise SourceUnavailable(f"{command}: Slurm could not answer: {msg}; is {daemon} "
                                "up and reachable?")
    return doc


def schema(doc: dict, command: str) -> str:
    """The document's schema version (``v0.0.38`` ... ``v0.0.45``), from its ``meta``."""
    plugin = (doc.get("meta") or {}).get("plugin") or {}
    name = plugin.get("data_parser") or plugin.get("type") or ""
    version = name.rsplit("/", 1)[-1].replace("dbv", "v")
    if version not in SCHEMAS:
        found = name or "no meta.plugin"
        raise BadInput(f"{command}: unknown JSON schema '{found}'; this advisor reads "
                       f"{SCHEMAS[0]} to {SCHEMAS[-1]} (Slurm {RELEASES[0].name} to "
                       f"{RELEASES[-1].name})")
    return version


def slurm_release(doc: dict) -> str:
    meta = doc.get("meta") or {}
    slurm = meta.get("Slurm") or meta.get("slurm") or {}
    return str(slurm.get("release", ""))


def number(value, infinite=None):
    """A plain number, or Slurm's ``{set, infinite, number}``; None when unset."""
    if isinstance(value, dict):
        if value.get("infinite"):
            return infinite
        if not value.get("set", True):
            return None
        value = value.get("number")
    return value


def flags(value) -> list[str]:
    """A state or flag field: a string (22.05) or an array of strings (23.02+)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in value.replace(",", "+").split("+") if v]
    return [str(v) for v in value]


def _minutes(value) -> int | None:
    minutes = number(value)
    return None if minutes is None else int(minutes) * 60


#: what Slurm stores in a time it has not set (NO_VAL, 0xfffffffe; INFINITE above it):
#: 26.05's sacct prints it as the start of a job cancelled before it started
NO_VAL = 0xfffffffe


def _epoch(value) -> int | None:
    t = number(value)
    return int(t) if t and int(t) < NO_VAL else None


def job_cpus(raw: dict) -> int:
    """CPUs a job holds or asks for. 22.05 gives ``cpus: null`` when the job set no task
    count; then the requested TRES (``cpu=N``), then tasks x cpus-per-task, then nodes."""
    cpus = number(raw.get("cpus"))
    if cpus:
        return int(cpus)
    tres = tres_items(raw.get("tres_alloc_str") or raw.get("tres_req_str"))
    if tres.get("cpu", "").isdigit():
        return int(tres["cpu"])
    tasks = number(raw.get("tasks")) or 0
    per_task = number(raw.get("cpus_per_task")) or 1
    if tasks:
        return int(tasks) * int(per_task)
    return int(number(raw.get("node_count")) or 1)


def job_memory(raw: dict) -> tuple[int, int]:
    """(MB per node, MB per CPU) a job asks for, defaults applied (--mem, --mem-per-cpu,
    else DefMemPerCPU/DefMemPerNode as slurmctld filled them in); without either field, its
    requested TRES' memory over its nodes."""
    per_cpu = int(number(raw.get("memory_per_cpu")) or 0)
    per_node = int(number(raw.get("memory_per_node")) or 0)
    if per_cpu or per_node:
        return (0, per_cpu) if per_cpu else (per_node, 0)
    nodes = max(int(number(raw.get("node_count")) or 1), 1)
    return tres_memory(raw.get("tres_req_str")) // nodes, 0


def job_gres(raw: dict) -> dict[str, int]:
    """GRES a job asks for on each node: --gres (tres_per_node), else --gpus and the like
    (tres_per_job, then the requested TRES) spread over its nodes, rounded up."""
    per_node = gres_counts(raw.get("tres_per_node"))
    if per_node:
        return per_node
    total = gres_counts(raw.get("tres_per_job")) or tres_gres(raw.get("tres_req_str"))
    nodes = max(int(number(raw.get("node_count")) or 1), 1)
    return {name: -(-count // nodes) for name, count in total.items()}


def _exclusive(raw: dict) -> bool:
    shared = raw.get("shared")
    if shared == "none" or (isinstance(shared, list) and "none" in shared):
        return True
    exclusive = raw.get("exclusive")
    return bool(exclusive) and exclusive not in (["false"], "false", [])


def jobs_from_squeue(doc: dict, now: int) -> tuple[list[Job], list[Job]]:
    """(running, pending) jobs of ``squeue --json``; finished jobs still listed are left out."""
    schema(doc, "squeue --json")
    running, pending = [], []
    for raw in doc.get("jobs") or []:
        states = flags(raw.get("job_state"))
        base = states[0] if states else ""
        if base in RUNNING_STATES or "COMPLETING" in states[1:]:
            kind = "RUNNING"
        elif base in PENDING_STATES:
            kind = "PENDING"
        else:
            continue
        start = _epoch(raw.get("start_time"))
        partitions = tuple(p for p in (raw.get("partition") or "").split(",") if p)
        reason = raw.get("state_reason") or ""
        priority = number(raw.get("priority"))
        memory = job_memory(raw)
        job = Job(
            job_id=int(number(raw["job_id"])), user=raw.get("user_name") or
            str(raw.get("user_id", "")), partition=partitions[0] if partitions else "",
            cpus=job_cpus(raw), state=base, submit_time=_epoch(raw.get("submit_time")) or 0,
            time_limit=_minutes(raw.get("time_limit")),
            nodes=int(number(raw.get("node_count")) or 1),
            account=raw.get("account") or "", qos=raw.get("qos") or "",
            partitions=partitions, eligible_time=_epoch(raw.get("eligible_time")),
            start_time=start if kind == "RUNNING" else None,
            expected_start=start if kind == "PENDING" else None,
            elapsed=max(0, now - start) if kind == "RUNNING" and start else None,
            node_list=expand_hostlist(raw.get("nodes") or "") if kind == "RUNNING" else (),
            priority=None if priority is None else int(priority),
            state_reason=reason, dependency=raw.get("dependency") or "",
            held=kind == "PENDING" and (reason in HELD_REASONS or priority == 0),
            nice=int(number(raw.get("nice")) or 0), exclusive=_exclusive(raw),
            memory_per_node=memory[0], memory_per_cpu=memory[1], gres_per_node=job_gres(raw),
            features=raw.get("features") or "", licenses=raw.get("licenses") or "",
            reservation=raw.get("resv_name") or "")
        (running if kind == "RUNNING" else pending).append(job)
    return running, pending


def nodes_from_json(doc: dict, command: str) -> tuple[Node, ...]:
    """Nodes of 22.05's ``sinfo --json`` or of ``scontrol show node --json`` (``nodes[]``,
    one record per node in slurmctld's order). 23.02+'s ``sinfo --json`` groups nodes,
    with the group's allocations summed: refused."""
    schema(doc, command)
    if "sinfo" in doc:
        raise BadInput(f"{command}: grouped sinfo records do not give each node's "
                       "allocation; use 'scontrol show node --json'")
    out = []
    for raw in doc.get("nodes") or []:
        state = "+".join(s.upper() for s in flags(raw.get("state")))
        out.append(Node(name=raw["name"], cpus=int(number(raw.get("cpus")) or 0),
                        state=state or "UNKNOWN",
                        alloc_cpus=int(number(raw.get("alloc_cpus")) or 0),
                        partitions=tuple(raw.get("partitions") or ()),
                        memory=int(number(raw.get("real_memory")) or 0),
                        alloc_memory=int(number(raw.get("alloc_memory")) or 0),
                        gres=_node_gres(raw.get("gres"), raw.get("tres")),
                        alloc_gres=_node_gres(raw.get("gres_used"), raw.get("tres_used"))))
    return tuple(out)


def _node_gres(gres, tres) -> dict[str, int]:
    """A node's GRES: from its TRES string when it has one (``gres/gpu=2``), else from its
    GRES string (``gpu:2``)."""
    from_tres = tres_gres(tres) if isinstance(tres, str) else {}
    return from_tres or gres_counts(gres)


def sacct_records(doc: dict) -> list[dict]:
    """Jobs of ``sacct --json`` as flat records (times epoch, limit seconds or None)."""
    schema(doc, "sacct --json")
    out = []
    for raw in doc.get("jobs") or []:
        t = raw.get("time") or {}
        alloc = {x.get("type"): number(x.get("count"))
                 for x in (raw.get("tres") or {}).get("allocated") or []}
        asked = (raw.get("tres") or {}).get("requested") or []
        req = {x.get("type"): int(number(x.get("count")) or 0) for x in asked
               if x.get("type") != "gres"}
        req_gres = {x.get("name"): int(number(x.get("count")) or 0) for x in asked
                    if x.get("type") == "gres" and x.get("name")}
        state = flags((raw.get("state") or {}).get("current"))
        required = raw.get("required") or {}
        reservation = raw.get("reservation") or {}
        out.append({
            "job_id": int(number(raw["job_id"])), "user": raw.get("user") or "",
            "group": raw.get("group") or "", "account": raw.get("account") or "",
            "qos": raw.get("qos") or "",
            "partition": raw.get("partition") or "", "state": state[0] if state else "",
            "submit": _epoch(t.get("submission")), "eligible": _epoch(t.get("eligible")),
            "start": _epoch(t.get("start")), "end": _epoch(t.get("end")),
            "elapsed": int(number(t.get("elapsed")) or 0),
            "limit": _minutes(t.get("limit")),
            "req_cpus": int(number(required.get("CPUs")) or 0),
            "alloc_cpus": int(alloc.get("cpu") or 0),
            "nodes": int(number(raw.get("allocation_nodes")) or 0),
            "node_list": _node_list(raw.get("nodes")),
            "total_cpu": _cpu_seconds(t.get("total")),
            **_memory_asked(required, req), "req_nodes": max(req.get("node", 1), 1),
            "req_gres": req_gres, "billing": int(alloc.get("billing") or 0),
            "features": str(raw.get("constraints") or ""),
            "reservation": str(reservation.get("name") or "")
            if isinstance(reservation, dict) else "",
            "backfilled": "STARTED_ON_BACKFILL" in flags(raw.get("flags")),
            "requeued": int(number(raw.get("restart_cnt")) or 0),
            "reason": str((raw.get("state") or {}).get("reason") or "")})
    return out


def _node_list(nodes) -> str:
    """The nodes a job ran on, as Slurm writes them ("n[3-4]"); "" before it started
    (sacct prints "None assigned")."""
    return "" if not nodes or nodes == "None assigned" else str(nodes)


def _memory_asked(required: dict, tres: dict) -> dict:
    """``mem_per_node`` and ``mem_per_cpu`` (MB, one of them 0) of a sacct record. From
    v0.0.40 (23.11) ``required`` says which (``memory_per_cpu``, ``memory_per_node``). In
    22.05 ``required.memory`` does not; the requested TRES' total does: per CPU when that
    amount times the CPUs, and not the amount alone, is the total."""
    per_cpu = number(required.get("memory_per_cpu"))
    if per_cpu:
        return {"mem_per_node": 0, "mem_per_cpu": int(per_cpu)}
    per_node = number(required.get("memory_per_node"))
    if per_node:
        return {"mem_per_node": int(per_node), "mem_per_cpu": 0}
    amount = int(number(required.get("memory")) or 0)
    total, cpus = tres.get("mem", 0), tres.get("cpu", 0)
    if amount and cpus > 1 and amount * cpus == total != amount:
        return {"mem_per_node": 0, "mem_per_cpu": amount}
    per_node = amount or total // max(tres.get("node", 1), 1)
    return {"mem_per_node": per_node, "mem_per_cpu": 0}


def _cpu_seconds(value) -> float | None:
    """sacct's TotalCPU (user + system) in seconds, or None when the record has none."""
    if not isinstance(value, dict) or "seconds" not in value:
        return None
    return float(number(value.get("seconds")) or 0) + \
        float(number(value.get("microseconds")) or 0) / 1e6


def backfill_stats(doc: dict) -> dict[str, int]:
    """sdiag --json's backfill statistics, as ``slurm_text.backfill_stats`` reads its text
    (the JSON's ``bf_table_size_mean`` is not the text's "Mean table size": the sum over
    the cycles is used)."""
    stats = doc.get("statistics")
    keys = ("bf_cycle_counter", "bf_cycle_last", "bf_cycle_mean", "bf_depth_mean_try",
            "bf_table_size_sum")
    if not isinstance(stats, dict) or any(k not in stats for k in keys):
        raise BadInput("sdiag --json: no backfill statistics (statistics.bf_cycle_mean, "
                       "...); is SchedulerType=sched/backfill?")
    cycles = int(number(stats["bf_cycle_counter"]) or 0)
    return {"cycles": cycles, "cycle_last_us": int(number(stats["bf_cycle_last"]) or 0),
            "cycle_mean_us": int(number(stats["bf_cycle_mean"]) or 0),
            "depth_try_mean": int(number(stats["bf_depth_mean_try"]) or 0),
            "table_mean": int(number(stats["bf_table_size_sum"]) or 0) // max(cycles, 1)}
