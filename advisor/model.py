"""The one data model every part of the advisor speaks.

A ``Workload`` is a table of jobs (pandas) plus the facts about the machine that ran them. Its
columns are the 18 fields of the Standard Workload Format (SWF, Parallel Workloads Archive),
named as below, with ``-1`` meaning "missing" exactly as in SWF, plus two derived columns the
simulator uses:

* ``procs``    = requested processors if > 0, else allocated processors;
* ``estimate`` = requested time if >= 0, else the actual runtime (the request is missing).

Times are integer seconds relative to the trace's start (SWF convention); the absolute
epoch of time 0 is ``TraceHeader.unix_start_time`` when the trace says it.
"""
from __future__ import annotations

import hashlib
import pickle
import re
from dataclasses import asdict, dataclass, field, fields, is_dataclass, replace
from functools import cached_property
from types import UnionType
from typing import Union, get_args, get_origin, get_type_hints

import numpy as np
import pandas as pd

# a site's configuration and accounting: part of the model, kept in their own module
from advisor.site import (RESET_PERIODS, SLURM_CONF, TEST_CLUSTER_COST,  # noqa: F401
                          Accounting, Association, BackfillCost, BackfillParameters, Qos,
                          SchedulingConfig, tres_text, tres_weights)
# a cluster's past as its accounting recorded it: part of the model, in its own module
from advisor.joblog import (JOB_LOG_COLUMNS, STARTED_BY, JobLog, NodeEvent,  # noqa: F401
                            job_log_table)
# the Slurm releases the advisor reads and plays: part of the model, in their own module
from advisor.releases import (RELEASES, RESTART_KEYS, SCHEMAS, Played,  # noqa: F401
                              Release, release_of, schema_release)

#: SWF fields in file order (SWF v2.2 definition).
SWF_FIELDS: tuple[str, ...] = (
    "job_id", "submit", "wait", "runtime", "alloc_procs", "avg_cpu", "used_mem",
    "req_procs", "req_time", "req_mem", "status", "user", "group", "app", "queue",
    "partition", "prev_job", "think_time",
)
#: Fields SWF allows to be fractional; every other field is an integer.
SWF_FLOAT_FIELDS = frozenset({"avg_cpu", "used_mem", "req_mem"})

SECONDS_PER_WEEK = 7 * 24 * 3600
#: what a job without any time limit plans with: a year, as Slurm's YEAR_MINUTES stands in
#: for INFINITE (the one definition; the engine, the Slurm forms and Lua use it)
UNLIMITED_MINUTES = 365 * 24 * 60
UNLIMITED_SECONDS = UNLIMITED_MINUTES * 60
#: The partition every job of a trace runs in: traces of the Archive know one machine.
TRACE_PARTITION = "batch"
#: The columns of a history table, the finished jobs futures are drawn from (times in the
#: snapshot's clock, durations in seconds, -1 unknown).
HISTORY_COLUMNS = ("user", "submit", "runtime", "limit", "cpus", "nodes", "partition")
#: An optional history column: each job's CPU efficiency, CPU time over runtime x CPUs in
#: [0, 1] (NaN unknown), which classes users for time sharing
EFFICIENCY = "efficiency"
#: Optional history columns a live cluster's sacct gives, which sampled jobs carry: account,
#: QOS, MB per node and per CPU asked (0: none), GPUs per node
ACCOUNTING_COLUMNS = ("account", "qos", "mem_per_node", "mem_per_cpu", "gpus")


def printable(text: str) -> str:
    """``text`` with every control character written as an escape (``\\x1b``, ``\\n``):
    names and header values from outside (sacct, a trace's header) reach terminals and SWF
    header lines, where an ESC would drive the terminal and a newline forge a line."""
    return "".join(c if c.isprintable() or c == " " else
                   c.encode("unicode_escape").decode("ascii") for c in text)


@dataclass(frozen=True)
class TraceHeader:
    """What an SWF header says about the log. ``lines`` keeps every header line verbatim."""

    max_procs: int | None = None
    max_nodes: int | None = None
    unix_start_time: int | None = None
    time_zone_string: str | None = None
    notes: tuple[str, ...] = ()
    fields: dict[str, str] = field(default_factory=dict)
    lines: tuple[str, ...] = ()

    @property
    def partition_names(self) -> dict[int, str]:
        """The header's legend of partition numbers (``; Partition: 4  large``)."""
        out: dict[int, str] = {}
        for line in self.lines:
            m = _PARTITION_LINE.match(line)
            if m:
                out.setdefault(int(m.group(1)), printable(m.group(2)))
        return out


_PARTITION_LINE = re.compile(r"^;\s*Partition:\s*(\d+)\s+(\S+)\s*$")


@dataclass(frozen=True)
class CleaningReport:
    """How many jobs each cleaning rule removed, in the order the rules ran."""

    jobs_read: int
    removed: dict[str, int] = field(default_factory=dict)

    @property
    def jobs_kept(self) -> int:
        return self.jobs_read - sum(self.removed.values())


@dataclass(frozen=True)
class Machine:
    """A homogeneous machine of ``procs`` processors (the textbook model of the papers)."""

    procs: int
    name: str = ""


@dataclass(frozen=True)
class Workload:
    """Jobs (one row each, sorted by submit time then job id) and the machine they ran on."""

    jobs: pd.DataFrame
    machine: Machine
    header: TraceHeader = TraceHeader()
    source: str = ""
    cleaning: CleaningReport | None = None
    #: its groups as accounts and users in them (``whatif.trace_accounts``): fair share is
    #: in effect in its slurm-mode plays; None: no accounts
    accounts: Accounting | None = None

    def __len__(self) -> int:
        return len(self.jobs)

    def with_jobs(self, jobs: pd.DataFrame, **changes) -> Workload:
        return replace(self, jobs=sort_jobs(jobs), **changes)


def sort_jobs(jobs: pd.DataFrame) -> pd.DataFrame:
    """Submit order, ties by job id: the order the engine breaks every tie with."""
    return jobs.sort_values(["submit", "job_id"], kind="mergesort").reset_index(drop=True)


def derive_columns(jobs: pd.DataFrame) -> pd.DataFrame:
    """Add ``procs`` and ``estimate`` (see the module docstring) to an SWF table."""
    jobs = jobs.copy()
    jobs["procs"] = np.where(jobs["req_procs"] > 0, jobs["req_procs"], jobs["alloc_procs"])
    jobs["estimate"] = np.where(jobs["req_time"] >= 0, jobs["req_time"], jobs["runtime"])
    return jobs


def empty_jobs() -> pd.DataFrame:
    cols = {f: pd.Series(dtype="float64" if f in SWF_FLOAT_FIELDS else "int64")
            for f in SWF_FIELDS}
    return derive_columns(pd.DataFrame(cols))


def empty_history() -> pd.DataFrame:
    """A history that holds no job: ``HISTORY_COLUMNS``, typed."""
    return pd.DataFrame({c: pd.Series(dtype=object if c in ("user", "partition") else "int64")
                         for c in HISTORY_COLUMNS})


def workload_from_records(records: list[dict], procs: int, name: str = "memory") -> Workload:
    """Build a Workload from a few hand-written jobs (tests, examples).

    Each record needs ``submit``, ``runtime`` and ``procs``; ``estimate`` defaults to the
    runtime, ``job_id`` to the position (1-based), ``user`` to 1; other SWF fields are -1.
    """
    rows = []
    for i, r in enumerate(records, start=1):
        row = {f: -1 for f in SWF_FIELDS}
        row.update(job_id=r.get("job_id", i), submit=r["submit"], runtime=r["runtime"],
                   req_procs=r["procs"], alloc_procs=r["procs"],
                   req_time=r.get("estimate", r["runtime"]), user=r.get("user", 1), wait=-1)
        rows.append(row)
    jobs = pd.DataFrame(rows, columns=list(SWF_FIELDS)) if rows else empty_jobs()
    for f in SWF_FIELDS:
        jobs[f] = jobs[f].astype("float64" if f in SWF_FLOAT_FIELDS else "int64")
    return Workload(jobs=sort_jobs(derive_columns(jobs)), machine=Machine(procs, name),
                    source=name)


# ------------------------------------------------------------------------------------------
# The state of a cluster at one moment: what the advisor simulates forward from.
#
# A live Slurm cluster and a trace replayed up to a moment both produce a ``Snapshot``, so
# everything downstream runs one code path. Times are integer seconds: epoch seconds for a
# live cluster, the trace's own clock for a trace. Durations are seconds, and ``None`` means
# unlimited (Slurm's INFINITE / UNLIMITED) or unknown.

@dataclass(frozen=True)
class Node:
    name: str
    cpus: int
    state: str = "IDLE"              # Slurm's base state, upper case; flags follow after '+'
    alloc_cpus: int = 0
    partitions: tuple[str, ...] = ()
    memory: int = 0                  # RealMemory, MB; 0: not reported
    alloc_memory: int = 0            # MB allocated (when memory is a consumable resource)
    gres: dict[str, int] = field(default_factory=dict)        # {"gpu": 4}: name -> count
    alloc_gres: dict[str, int] = field(default_factory=dict)  # of those, allocated


@dataclass(frozen=True)
class Partition:
    name: str
    nodes: tuple[str, ...]
    max_time: int | None = None      # seconds; None: UNLIMITED
    default_time: int | None = None  # seconds; None: NONE (the job gets max_time)
    priority_tier: int = 1
    priority_job_factor: int = 1
    oversubscribe: str = "NO"
    default: bool = False
    state: str = "UP"
    preempt_mode: str | None = None  # the partition's own PreemptMode (None: the cluster's)

    @property
    def sharing(self) -> int:
        """How many jobs may share a CPU (OverSubscribe=FORCE:N or YES:N; 1: none)."""
        head, _, count = self.oversubscribe.upper().partition(":")
        if head not in ("FORCE", "YES"):
            return 1
        return int(count) if count.isdigit() else OVERSUBSCRIBE_DEFAULT


#: Slurm's count when OverSubscribe=FORCE or YES names none
OVERSUBSCRIBE_DEFAULT = 4


@dataclass(frozen=True)
class Cluster:
    """The machine of a snapshot: nodes and the partitions that group them."""

    name: str
    nodes: tuple[Node, ...]
    partitions: tuple[Partition, ...]

    @cached_property  # (asked per job when priorities are built; a trace has 10^4 nodes)
    def cpus(self) -> int:
        return sum(n.cpus for n in self.nodes)

    @cached_property  # (asked per candidate's layout, per decision)
    def node_cpus(self) -> dict[str, int]:
        """Each node's CPUs by name, in the cluster's order of nodes."""
        return {n.name: n.cpus for n in self.nodes}

    @cached_property  # (asked per job when TRES priorities are built)
    def partition_sizes(self) -> dict[str, tuple[int, int]]:
        """(CPUs, nodes) of each partition by name, counting the nodes the cluster has."""
        cpus = self.node_cpus
        return {p.name: (sum(cpus[n] for n in p.nodes if n in cpus),
                         sum(n in cpus for n in p.nodes)) for p in self.partitions}

    def partition(self, name: str) -> Partition | None:
        return next((p for p in self.partitions if p.name == name), None)

    @property
    def default_partition(self) -> Partition | None:
        """Where a job asking for no partition goes: the Default=YES one, else the first."""
        return next((p for p in self.partitions if p.default),
                    self.partitions[0] if self.partitions else None)

    def with_layout(self, partitions: tuple[Partition, ...] | None) -> Cluster:
        """The same nodes under ``partitions`` (None: its own)."""
        return self if partitions is None else replace(self, partitions=partitions)

    def __reduce__(self):
        return _unpickle_cluster, self._pickled

    @cached_property
    def _pickled(self) -> tuple[bytes, bytes]:
        """(fingerprint, body): what a pickle holds, built once per cluster; the body is the
        name, the nodes' fields as columns and the partitions, pickled (one bytes object
        is copied, where thousands of nodes would be walked)."""
        names = [f.name for f in fields(Node)]
        columns = tuple(tuple(getattr(n, k) for n in self.nodes) for k in names)
        body = pickle.dumps((self.name, columns, self.partitions), 5)
        return hashlib.blake2b(body, digest_size=16).digest(), body


#: the clusters unpickled in this process, by fingerprint: each task of a decision ships
#: the same machine (a trace's has a node per CPU), and a worker builds it once
_UNPICKLED: dict[bytes, Cluster] = {}
_UNPICKLED_KEPT = 8


def _unpickle_cluster(key: bytes, body: bytes) -> Cluster:
    cluster = _UNPICKLED.get(key)
    if cluster is None:
        name, columns, partitions = pickle.loads(body)
        nodes = tuple(Node(*row) for row in zip(*columns))   # (columns in field order)
        cluster = Cluster(name, nodes, partitions)
        if len(_UNPICKLED) >= _UNPICKLED_KEPT:
            _UNPICKLED.pop(next(iter(_UNPICKLED)))
        _UNPICKLED[key] = cluster
    return cluster


def trace_machine(workload: Workload) -> Cluster:
    """A trace's machine as a cluster: one node per processor (the papers' model), all in
    one partition with no time limit."""
    procs = workload.machine.procs
    names = tuple(f"p{i}" for i in range(1, procs + 1))
    nodes = tuple(Node(name=n, cpus=1, partitions=(TRACE_PARTITION,)) for n in names)
    partition = Partition(name=TRACE_PARTITION, nodes=names, default=True)
    return Cluster(name=workload.machine.name or workload.source, nodes=nodes,
                   partitions=(partition,))


@dataclass(frozen=True)
class Job:
    """A running or pending job as the scheduler sees it (no actual runtime: unknown yet)."""

    job_id: int
    user: str
    partition: str                   # running: where it runs; pending: the first requested
    cpus: int
    state: str                       # RUNNING, PENDING, ...
    submit_time: int
    time_limit: int | None           # seconds; None: UNLIMITED
    nodes: int = 1                   # node count
    account: str = ""
    qos: str = ""
    partitions: tuple[str, ...] = () # pending jobs may ask for several
    eligible_time: int | None = None
    start_time: int | None = None    # running: when it started; pending: None
    expected_start: int | None = None  # pending: Slurm's backfill estimate, when it has one
    elapsed: int | None = None       # running: seconds run so far
    node_list: tuple[str, ...] = ()  # running: allocated nodes
    priority: int | None = None
    priority_factors: dict[str, float] = field(default_factory=dict)  # sprio's columns
    state_reason: str = ""
    dependency: str = ""
    held: bool = False
    nice: int = 0
    exclusive: bool = False
    memory_per_node: int = 0         # MB asked per node (--mem); 0: none given
    memory_per_cpu: int = 0          # MB asked per CPU (--mem-per-cpu); 0: none given
    gres_per_node: dict[str, int] = field(default_factory=dict)  # {"gpu": 2} (--gres)
    features: str = ""               # --constraint, as Slurm prints it
    licenses: str = ""               # --licenses
    reservation: str = ""            # --reservation

    @property
    def asked(self) -> tuple[str, ...]:
        """The partitions it may run in: those it asked for, else the one it runs in."""
        return self.partitions or (self.partition,)


@dataclass(frozen=True)
class ScaledJob:
    """A trace's job scaled down to a sleep job for a test cluster (sim-to-real): submitted
    ``offset`` seconds after the first, sleeping ``runtime`` seconds, asking ``cpus`` CPUs
    for ``limit`` minutes in ``partition``, and ``memory`` MB and ``gpus`` GPUs on its node
    when above 0, in ``account`` and ``qos`` when given."""

    key: int            # the trace's job id
    offset: int
    runtime: int
    limit: int          # minutes
    cpus: int
    partition: str
    memory: int = 0     # MB (--mem); 0: the cluster's default
    gpus: int = 0       # --gres=gpu:N
    account: str = ""   # --account; "": the user's default
    qos: str = ""       # --qos; "": the association's default


@dataclass(frozen=True)
class Snapshot:
    """The state at ``time``: machine, running and pending jobs, configuration in effect.

    ``source`` says where it came from (kind, command or trace, schema, policy replayed).
    ``to_dict``/``from_dict`` round-trip losslessly through JSON.
    """

    time: int
    machine: Cluster
    running: tuple[Job, ...]
    pending: tuple[Job, ...]
    config: SchedulingConfig
    source: dict[str, str] = field(default_factory=dict)
    accounting: Accounting = Accounting()

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Snapshot:
        return _build(cls, data)

    @property
    def busy_cpus(self) -> int:
        return sum(j.cpus for j in self.running)


def _build(cls, data):
    """A dataclass from ``asdict`` output (lists back to tuples, nested classes rebuilt)."""
    hints = get_type_hints(cls)
    kwargs = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        kwargs[f.name] = _value(hints[f.name], data[f.name])
    return cls(**kwargs)


def _value(hint, value):
    if value is None:
        return None
    origin = get_origin(hint)
    args = [a for a in get_args(hint) if a is not type(None)]
    if origin is tuple:
        return tuple(_value(args[0], v) for v in value)
    if origin in (Union, UnionType) and args:
        return _value(args[0], value)
    if is_dataclass(hint):
        return _build(hint, value)
    if origin is dict:
        return dict(value)
    return value


def planned_limit(time_limit: int | None, partition: Partition | None) -> int:
    """The limit (s) Slurm plans a job with (F6): its own, else its partition's
    DefaultTime, else MaxTime, else a year (``UNLIMITED_SECONDS``). slurmctld sets it at
    submission, so every part of the advisor reads it here (job_submit.lua's
    ``limit_minutes`` is the same rule in Lua, ``advisor.plugins.enactment``)."""
    if time_limit is not None:
        return time_limit
    if partition is not None and partition.default_time is not None:
        return partition.default_time
    if partition is not None and partition.max_time is not None:
        return partition.max_time
    return UNLIMITED_SECONDS


def job_limit(job: Job, cluster: Cluster) -> int:
    """``planned_limit`` of ``job`` in its partition on ``cluster``."""
    return planned_limit(job.time_limit, cluster.partition(job.partition))
