"""Snapshots and history from Slurm's own commands.

``squeue --json`` gives the jobs (and, where a release's JSON leaves it out, ``squeue -O``
which of them are exclusive); ``sinfo --json`` (22.05) or ``scontrol show node --json``
the nodes; ``scontrol show partition -o`` the partitions; ``scontrol show config`` (text
in every release) the configuration, ``sdiag`` what a backfill cycle costs, and ``sprio``
the priority factors of pending jobs;
where accounting is kept in slurmdbd, ``sacctmgr`` and ``sshare`` the QOS, associations
and usage. What differs by release is its row in ``advisor.releases``. Every command runs
with a timeout, from a configurable directory; any failure is one error naming the
command: a snapshot is whole or it is not made.
"""
from __future__ import annotations

import os
import subprocess
import time as clock
from dataclasses import dataclass, replace

import pandas as pd

from advisor.adapters import slurm_accounting, slurm_json, slurm_text
from advisor.errors import BadInput, SourceUnavailable
from advisor.model import (
    ACCOUNTING_COLUMNS,
    EFFICIENCY,
    HISTORY_COLUMNS,
    TEST_CLUSTER_COST,
    Accounting,
    BackfillCost,
    SWF_FIELDS,
    SWF_FLOAT_FIELDS,
    CleaningReport,
    Cluster,
    JobLog,
    Machine,
    Release,
    Snapshot,
    TraceHeader,
    Workload,
    printable,
    derive_columns,
    job_log_table,
    schema_release,
    sort_jobs,
)

#: SWF status codes (SWF v2.2): 1 completed, 0 failed, 5 cancelled; -1 otherwise.
SWF_STATUS = {"COMPLETED": 1, "FAILED": 0, "TIMEOUT": 0, "NODE_FAIL": 0, "OUT_OF_MEMORY": 0,
              "BOOT_FAIL": 0, "DEADLINE": 0, "PREEMPTED": 0, "CANCELLED": 5}


#: how Slurm's clients say the daemon did not answer ("Unable to contact slurm controller")
UNREACHABLE = "unable to contact slurm"


@dataclass(frozen=True)
class SlurmCommands:
    """How to run Slurm's commands: from ``bin_dir`` (default: PATH), each within
    ``timeout`` seconds, with ``env`` added to the environment (e.g. SLURM_CONF)."""

    bin_dir: str | None = None
    timeout: float = 30.0
    env: tuple[tuple[str, str], ...] = ()

    def run(self, *args: str) -> str:
        name = " ".join(args)
        exe = os.path.join(self.bin_dir, args[0]) if self.bin_dir else args[0]
        try:
            r = subprocess.run([exe, *args[1:]], capture_output=True, text=True,
                               timeout=self.timeout, env={**os.environ, **dict(self.env)})
        except FileNotFoundError:
            where = self.bin_dir or "PATH"
            raise SourceUnavailable(f"{args[0]}: not found in {where}; install Slurm's "
                                    "client commands or pass --slurm-bin DIR") from None
        except subprocess.TimeoutExpired:
            raise SourceUnavailable(f"{name}: no answer within {self.timeout:g} s; is "
                                    "slurmctld responsive? (raise --slurm-timeout)") from None
        if r.returncode != 0:
            lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
            msg = lines[-1] if lines else f"exit code {r.returncode}"
            if UNREACHABLE in msg.lower():   # 23.02+ fail here where 22.05 printed JSON
                daemon = "slurmdbd" if args[0] in ("sacct", "sacctmgr") \
                    else "slurmctld"
                msg += f"; is {daemon} up and reachable?"
            raise SourceUnavailable(f"{name} failed: {msg}")
        return r.stdout


def _json(commands: SlurmCommands, *cmd: str) -> tuple[dict, str]:
    """A command's ``--json`` document, and the command's name for messages."""
    name = " ".join((*cmd, "--json"))
    return slurm_json.load(commands.run(*cmd, "--json"), name), name


def snapshot(commands: SlurmCommands = SlurmCommands()) -> Snapshot:
    """The cluster's state now."""
    now = int(clock.time())
    squeue = slurm_json.load(commands.run("squeue", "--all", "--json"), "squeue --json")
    version = slurm_json.schema(squeue, "squeue --json")
    release = schema_release(version)
    running, pending = slurm_json.jobs_from_squeue(squeue, now)
    if not release.job_exclusive_in_json:
        whole = exclusive_jobs(commands)
        running, pending = ([replace(j, exclusive=j.job_id in whole) for j in jobs]
                            for jobs in (running, pending))
    if release.sinfo_groups_nodes:   # summing their allocations; scontrol does not
        nodes = slurm_json.nodes_from_json(*_json(commands, "scontrol", "show", "node"))
    else:
        nodes = slurm_json.nodes_from_json(*_json(commands, "sinfo", "--all"))
    # partitions as text: 22.05 has no JSON of them, and 24.11's omits Default=YES
    text = commands.run("scontrol", "show", "partition", "--all", "--oneliner")
    partitions = slurm_text.parse_partitions(text, tuple(n.name for n in nodes))
    config_text = commands.run("scontrol", "show", "config")
    config = slurm_text.parse_config(config_text)
    config = replace(config, backfill_cost=backfill_cost(commands, release),
                     utc_offset=utc_offset(now))
    factors = sprio_factors(commands)
    # (22.05's JSON does not name the cluster; its configuration does)
    cluster_name = str(((squeue.get("meta") or {}).get("slurm") or {}).get("cluster", "")) \
        or slurm_text.config_entry(config_text, "ClusterName")
    source = {"kind": "slurm", "adapter": "cli", "schema": version,
              "release": slurm_json.slurm_release(squeue)}
    return assemble(now, nodes, partitions, running, pending, config, source, factors,
                    cluster_name, accounting(commands, config, cluster_name))


def utc_offset(now: int) -> int:
    """This host's local time at ``now``, seconds east of UTC: slurmctld's, where the
    advisor runs beside it (the periods of PriorityUsageResetPeriod begin at its local
    midnight)."""
    return int(clock.localtime(now).tm_gmtoff)


def backfill_cost(commands: SlurmCommands, release: Release) -> BackfillCost:
    """What a backfill cycle costs on this cluster, from sdiag's backfill statistics
    (``--json`` where the release prints it, else its text): the test cluster's cost
    model (a fixed part and a part per job tried) scaled to sdiag's mean cycle at its
    mean depth. Where sdiag has no cycle to show yet, or will not answer (a site may keep
    it to operators), the test cluster's figures, and the source says so."""
    try:
        if release.sdiag_json:
            doc, _ = _json(commands, "sdiag")
            stats = slurm_json.backfill_stats(doc)
        else:
            stats = slurm_text.backfill_stats(commands.run("sdiag"))
    except (SourceUnavailable, BadInput) as e:
        return _test_cluster_cost(str(e))
    if stats["cycles"] == 0 or stats["cycle_mean_us"] == 0:
        return _test_cluster_cost("sdiag: no cycle since its reset")
    model = TEST_CLUSTER_COST.cycle_us + TEST_CLUSTER_COST.job_us * stats["depth_try_mean"]
    ratio = stats["cycle_mean_us"] / model
    return BackfillCost(round(TEST_CLUSTER_COST.cycle_us * ratio),
                        max(round(TEST_CLUSTER_COST.job_us * ratio), 1),
                        f"sdiag: {stats['cycles']} cycles, mean {stats['cycle_mean_us']} us "
                        f"over {stats['depth_try_mean']} jobs tried")


def _test_cluster_cost(why: str) -> BackfillCost:
    """The test cluster's figures, the source saying why they stand in."""
    return replace(TEST_CLUSTER_COST, source=f"{TEST_CLUSTER_COST.source} ({why})")


def exclusive_jobs(commands: SlurmCommands) -> set[int]:
    """The jobs that hold or ask for whole nodes, as ``squeue -O JobId,Exclusive`` says:
    for a release whose JSON leaves it out (``Release.job_exclusive_in_json``)."""
    return slurm_text.parse_exclusive(commands.run(
        "squeue", "--all", "--noheader", "--Format", slurm_text.EXCLUSIVE_FORMAT))


def accounting(commands: SlurmCommands, config, cluster_name: str) -> Accounting:
    """QOS, associations and usage from slurmdbd, where slurmctld keeps accounting there
    (none otherwise: without slurmdbd no limit is enforced and no usage kept)."""
    if config.accounting_storage_type != "accounting_storage/slurmdbd":
        return Accounting()
    found = slurm_accounting.read_accounting(commands.run, cluster_name)
    ran, reset = decay_state(config.state_save_location)
    return replace(found, decay_ran=ran, last_reset=reset)


def decay_state(state_dir: str) -> tuple[int | None, int | None]:
    """When slurmctld's decay thread last ran and when it last reset usage (or first
    ran), from its state file (two big-endian 64-bit times [src: priority_multifactor.c
    _write_last_decay_ran()]); None where it cannot be read (the advisor off slurmctld's
    host, or not root)."""
    try:
        with open(os.path.join(state_dir, "priority_last_decay_ran"), "rb") as f:
            head = f.read(16)
    except OSError:
        return None, None
    if not state_dir or len(head) < 8:
        return None, None
    reset = int.from_bytes(head[8:], "big") if len(head) == 16 else None
    return int.from_bytes(head[:8], "big"), reset


def sprio_factors(commands: SlurmCommands) -> dict[tuple[int, str], dict[str, float]]:
    """sprio's factors by (job id, partition): every adapter's source of them."""
    return slurm_text.parse_sprio(commands.run("sprio", "--noheader", "--format",
                                               slurm_text.SPRIO_FORMAT))


def assemble(now, nodes, partitions, running, pending, config, source, factors=None,
             cluster_name: str = "", accounting: Accounting = Accounting()) -> Snapshot:
    """A Snapshot from parsed parts, each pending job given its sprio ``factors`` (for the
    partition it is listed under); refuses a snapshot that is not whole."""
    if not nodes:
        raise BadInput("the cluster reports no nodes; a snapshot needs its machine")
    if not partitions:
        raise BadInput("the cluster reports no partitions; a snapshot needs them")
    if factors:
        pending = [replace(j, priority_factors=factors.get((j.job_id, j.partition), {}))
                   for j in pending]
    if not config.slurm_version:
        config = replace(config, slurm_version=source.get("release", ""))
    def key(j):
        return j.submit_time, j.job_id

    return Snapshot(time=now, machine=Cluster(cluster_name, tuple(nodes), tuple(partitions)),
                    running=tuple(sorted(running, key=key)),
                    pending=tuple(sorted(pending, key=lambda j: (-(j.priority or 0),
                                                                 j.submit_time, j.job_id))),
                    config=config, source=source, accounting=accounting)


# ------------------------------------------------------------------------------- history
def history(since: int, until: int | None = None,
            commands: SlurmCommands = SlurmCommands(), procs: int | None = None) -> Workload:
    """Finished jobs from slurmdbd (``sacct --json``) between two epochs, as a Workload on
    ``procs`` processors (default: the widest job; sacct does not know the machine)."""
    args = ["sacct", "--json", "--allusers", "--allocations",
            "--starttime", _sacct_time(since)]
    if until is not None:
        args += ["--endtime", _sacct_time(until)]
    doc = slurm_json.load(commands.run(*args), "sacct --json")
    return workload_from_sacct(slurm_json.sacct_records(doc), name="slurm", procs=procs)


def finished_jobs(since: int, commands: SlurmCommands = SlurmCommands()) -> pd.DataFrame:
    """Jobs that ran and ended since an epoch, as the advisor's history table
    (``advisor.model.HISTORY_COLUMNS``; epoch seconds, limits in seconds, -1 unknown)."""
    args = ["sacct", "--json", "--allusers", "--allocations", "--starttime",
            _sacct_time(since)]
    doc = slurm_json.load(commands.run(*args), "sacct --json")
    rows = [{"user": r["user"], "submit": r["submit"], "runtime": r["end"] - r["start"],
             "limit": -1 if r["limit"] is None else r["limit"],
             "cpus": r["alloc_cpus"] or r["req_cpus"], "nodes": max(r["nodes"], 1),
             "partition": r["partition"].split(",")[0], EFFICIENCY: job_efficiency(r),
             "account": r["account"], "qos": r["qos"], "mem_per_node": r["mem_per_node"],
             "mem_per_cpu": r["mem_per_cpu"],
             "gpus": -(-r["req_gres"].get("gpu", 0) // r["req_nodes"])}
            for r in slurm_json.sacct_records(doc) if r["start"] and r["end"] and r["submit"]]
    return pd.DataFrame(rows, columns=[*HISTORY_COLUMNS, EFFICIENCY, *ACCOUNTING_COLUMNS])


def job_log(since: int, until: int, commands: SlurmCommands = SlurmCommands(),
            now: int | None = None) -> JobLog:
    """What slurmdbd holds of the jobs pending or running at any time between two epochs
    (``sacct --json``, as they stand now), of the nodes out of service meanwhile
    (``sacctmgr show event``) and of the changes to associations and QOS (``sacctmgr
    list transactions``)."""
    now = int(clock.time()) if now is None else now
    doc = slurm_json.load(commands.run(
        "sacct", "--json", "--allusers", "--allocations", "--starttime", _sacct_time(since),
        "--endtime", _sacct_time(until)), "sacct --json")
    rows = [log_row(r) for r in slurm_json.sacct_records(doc) if r["submit"]]
    window = (f"Start={_sacct_time(since)}", f"End={_sacct_time(until)}")
    events = slurm_accounting.parse_events(commands.run(
        "sacctmgr", "--noheader", "--parsable2", "show", "event", "Event=Node", *window,
        "format=" + ",".join(slurm_accounting.EVENT_FIELDS)))
    changes = slurm_accounting.parse_transactions(commands.run(
        "sacctmgr", "--noheader", "--parsable2", "list", "transactions", *window,
        "format=" + ",".join(slurm_accounting.TRANSACTION_FIELDS)))
    return JobLog(job_log_table(rows), read_at=now, events=events, source="sacct",
                  changes=changes)


def log_row(r: dict) -> dict:
    """A sacct record (``slurm_json.sacct_records``) as a job log's row
    (``advisor.model.JOB_LOG_COLUMNS``): its request, as the scheduler saw it (a 16-CPU
    job given two nodes asked for one). A field a record made by an earlier advisor lacks
    reads as unknown."""
    cpus = r["req_cpus"] or r["alloc_cpus"]
    nodes = r.get("req_nodes", 1)
    return {"job_id": r["job_id"], "user": r["user"], "account": r.get("account", ""),
            "qos": r.get("qos", ""), "partition": r["partition"], "submit": r["submit"],
            "eligible": r["eligible"] or r["submit"], "start": r["start"], "end": r["end"],
            "state": r["state"], "cpus": cpus, "nodes": nodes,
            "node_list": ",".join(slurm_text.expand_hostlist(r.get("node_list", ""))),
            "limit": r["limit"], "mem_per_node": r.get("mem_per_node", 0),
            "mem_per_cpu": r.get("mem_per_cpu", 0),
            "gpus": -(-r.get("req_gres", {}).get("gpu", 0) // max(nodes, 1)),
            "billing": r.get("billing") or cpus, "features": r.get("features", ""),
            "reservation": r.get("reservation", ""), "backfilled": r.get("backfilled", False),
            "requeued": r.get("requeued", 0), "reason": r.get("reason", "")}


def job_efficiency(record: dict) -> float:
    """TotalCPU / (Elapsed x AllocCPUS) in [0, 1]; NaN when unknown."""
    avg, elapsed = _avg_cpu(record), record["end"] - record["start"]
    return float("nan") if avg < 0 or elapsed <= 0 else min(max(avg / elapsed, 0.0), 1.0)


def _avg_cpu(record: dict) -> float:
    """SWF field 6, the CPU time per allocated CPU: sacct's TotalCPU over AllocCPUS (so
    that field 6 over the runtime is the job's CPU efficiency); -1 when unknown."""
    total, cpus = record.get("total_cpu"), record["alloc_cpus"] or record["req_cpus"]
    return -1.0 if total is None or not cpus else round(total / cpus, 3)


def workload_from_sacct(records: list[dict], name: str = "slurm",
                        procs: int | None = None) -> Workload:
    """sacct records -> the SWF table. Only jobs that started and ended are kept (counted
    in ``cleaning``); times are relative to the first submission, whose epoch is the
    header's UnixStartTime; users, groups and partitions are numbered by first appearance
    (SWF fields are numbers); ``queue`` is the partition's number."""
    done = [r for r in records if r["start"] and r["end"] and r["submit"]]
    never = sum(1 for r in records if not r["start"] and r["end"])
    unfinished = len(records) - len(done) - never
    ids: dict[str, dict[str, int]] = {"user": {}, "group": {}, "partition": {}}

    def number(kind: str, value: str) -> int:
        return ids[kind].setdefault(value, len(ids[kind]) + 1)

    t0 = min((r["submit"] for r in done), default=0)
    rows = []
    for r in sorted(done, key=lambda r: (r["submit"], r["job_id"])):
        part = number("partition", r["partition"].split(",")[0])
        rows.append({
            "job_id": r["job_id"], "submit": r["submit"] - t0,
            "wait": r["start"] - r["submit"], "runtime": r["end"] - r["start"],
            "alloc_procs": r["alloc_cpus"] or r["req_cpus"], "avg_cpu": _avg_cpu(r),
            "used_mem": -1.0, "req_procs": r["req_cpus"] or r["alloc_cpus"],
            "req_time": -1 if r["limit"] is None else r["limit"], "req_mem": -1.0,
            "status": SWF_STATUS.get(r["state"], -1), "user": number("user", r["user"]),
            "group": number("group", r["group"]), "app": -1, "queue": part,
            "partition": part, "prev_job": -1, "think_time": -1})
    jobs = pd.DataFrame(rows, columns=list(SWF_FIELDS))
    for f in SWF_FIELDS:
        jobs[f] = jobs[f].astype("float64" if f in SWF_FLOAT_FIELDS else "int64")
    legend = [f"; Note: {kind} {n} = {printable(value)}"
              for kind in ("user", "group", "partition")
              for value, n in ids[kind].items()]
    procs = procs or (int(jobs["alloc_procs"].max()) if len(jobs) else 0)
    header = TraceHeader(max_procs=procs, unix_start_time=t0 if done else None,
                         notes=tuple(legend),
                         lines=(f"; UnixStartTime: {t0}", f"; MaxProcs: {procs}",
                                "; Note: converted from sacct --json by slurm-policy-advisor",
                                *legend))
    report = CleaningReport(jobs_read=len(records),
                            removed={"not finished": unfinished, "never started": never})
    return Workload(jobs=sort_jobs(derive_columns(jobs)), machine=Machine(procs, name),
                    header=header, source=name, cleaning=report)


def _sacct_time(epoch: int) -> str:
    return clock.strftime("%Y-%m-%dT%H:%M:%S", clock.localtime(epoch))
