"""What a Slurm site is configured with, as the model holds it (``advisor.model`` exports
every name here): its scheduling configuration (``SchedulingConfig``, and the slurm.conf
keys that write it, ``SLURM_CONF``) and what slurmdbd holds that decides starts (QOS,
associations and their usage, ``Accounting``)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from advisor.errors import BadInput


@dataclass(frozen=True)
class BackfillParameters:
    """SchedulerParameters that steer Slurm's schedulers, typed, with Slurm's defaults
    (slurm.conf(5) SchedulerParameters). Units as Slurm's: bf_window in minutes."""

    bf_interval: int = 30            # seconds
    bf_window: int = 1440            # minutes
    bf_resolution: int = 60          # seconds
    bf_max_job_test: int = 500
    bf_job_part_count_reserve: int = 0   # 0: every job may reserve
    bf_min_age_reserve: int = 0      # seconds
    bf_min_prio_reserve: int = 0
    bf_continue: bool = False
    bf_max_time: int = 0             # seconds; 0: bf_interval's
    bf_yield_interval: int = 2000000  # microseconds
    bf_yield_sleep: int = 500000     # microseconds
    bf_max_job_part: int = 0
    bf_max_job_user: int = 0
    bf_one_resv_per_job: bool = False
    bf_busy_nodes: bool = False
    default_queue_depth: int = 100
    sched_interval: int = 60         # seconds


@dataclass(frozen=True)
class BackfillCost:
    """What a backfill cycle costs on the cluster, in microseconds of slurmctld's time: to
    begin one, and per job it tests (from sdiag's "Backfilling stats": the test cluster's
    figures scaled to the site's mean cycle at its mean depth tried). Zero: cycles are
    free. ``source`` says where the figures come from."""

    cycle_us: int = 0
    job_us: int = 0
    source: str = ""


#: the test cluster's figures (4 nodes of 16 CPUs; ``bench/bf_cost.py`` on 22.05, 24.11
#: and 26.05, docs/slurm-mapping.md F13): what a live snapshot plays where sdiag shows none
TEST_CLUSTER_COST = BackfillCost(630, 23, "the test cluster's (4 nodes)")


#: how slurm.conf(5) spells the TRES names the configuration holds in lower case
TRES_NAMES = {"cpu": "CPU", "mem": "Mem", "node": "Node", "billing": "Billing",
              "energy": "Energy"}


def tres_weights(text: str) -> dict[str, float]:
    """PriorityWeightTRES's ``CPU=1000,Mem=2000,GRES/gpu=-5`` -> {'cpu': 1000.0, 'mem':
    2000.0, 'gres/gpu': -5.0}, the names in lower case as the configuration holds them;
    BadInput naming the part that is not NAME=number."""
    out = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, _, value = item.partition("=")
        try:
            out[key.strip().lower()] = float(value)
        except ValueError:
            raise BadInput(f"PriorityWeightTRES: '{item}' is not NAME=number "
                           "(CPU=1000,GRES/gpu=2000)") from None
    return out


def tres_text(weights: dict[str, float]) -> str:
    """``tres_weights``'s text back, as slurm.conf writes it, in one order
    (CPU=1000,GRES/gpu=2000)."""
    def name(key: str) -> str:
        kind, _, rest = key.partition("/")
        return TRES_NAMES.get(key, key) if not rest else f"{kind.upper()}/{rest}"
    return ",".join(f"{name(k)}={w:g}" for k, w in sorted(weights.items()))


#: PriorityUsageResetPeriod's values [slurm.conf(5)], as ``scontrol show config`` prints them
RESET_PERIODS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")


@dataclass(frozen=True)
class SchedulingConfig:
    """The scheduling configuration in effect (``scontrol show config``). Defaults: Slurm's."""

    priority_type: str = "priority/basic"
    priority_weight_age: int = 0
    priority_weight_assoc: int = 0
    priority_weight_fairshare: int = 0
    priority_weight_job_size: int = 0
    priority_weight_partition: int = 0
    priority_weight_qos: int = 0
    priority_weight_tres: dict[str, float] = field(default_factory=dict)
    priority_flags: tuple[str, ...] = ()
    priority_max_age: int = 7 * 86400      # seconds
    priority_calc_period: int = 300        # seconds
    priority_decay_half_life: int = 7 * 86400
    priority_usage_reset_period: str = "NONE"   # NONE, NOW, DAILY, ... YEARLY
    priority_favor_small: bool = False
    scheduler_type: str = "sched/backfill"
    scheduler_parameters: dict[str, str] = field(default_factory=dict)  # raw, as written
    backfill: BackfillParameters = BackfillParameters()
    select_type: str = "select/cons_tres"
    select_type_parameters: str = ""
    preempt_type: str = "preempt/none"
    preempt_mode: str = "OFF"
    scheduler_time_slice: int = 30         # seconds
    job_submit_plugins: tuple[str, ...] = ()
    over_time_limit: int = 0               # minutes
    accounting_storage_type: str = ""      # accounting_storage/slurmdbd: limits, fair share
    accounting_storage_tres: tuple[str, ...] = ()  # the TRES tracked (gres/gpu, lower case)
    state_save_location: str = ""          # slurmctld's StateSaveLocation
    accounting_enforce: tuple[str, ...] = ()  # AccountingStorageEnforce (limits, qos, ...)
    def_mem_per_cpu: int = 0               # MB; 0: not set
    def_mem_per_node: int = 0              # MB; 0: not set (UNLIMITED: the whole node)
    slurm_version: str = ""
    backfill_cost: BackfillCost = BackfillCost()   # not a key: measured (sdiag)
    #: not a key: slurmctld's host's local time, seconds east of UTC, at which the periods
    #: of PriorityUsageResetPeriod begin (midnight, Sunday, the first of the month)
    utc_offset: int = 0
    #: not a key: when slurmctld last started (scontrol show config's BOOT_TIME), epoch;
    #: 0 unknown
    booted: int = 0

    def measured_as(self, other: SchedulingConfig) -> SchedulingConfig:
        """This configuration with what is read off a cluster, not written in slurm.conf,
        taken from ``other`` (its release, the backfill cycle's cost, the host's zone,
        slurmctld's start): a file's keys played on a live cluster."""
        return replace(self, slurm_version=other.slurm_version,
                       backfill_cost=other.backfill_cost, utc_offset=other.utc_offset,
                       booted=other.booted)

    @property
    def memory_consumable(self) -> bool:
        """Whether select/cons_tres allocates memory: SelectTypeParameters names it
        (CR_Core_Memory, CR_CPU_Memory, CR_Socket_Memory, CR_Memory) [slurm.conf(5)]."""
        return "MEMORY" in self.select_type_parameters.upper()

    @property
    def limits_enforced(self) -> bool:
        """Whether slurmctld holds jobs to QOS and association limits: AccountingStorage-
        Enforce names limits (or safe, which implies them) [slurm.conf(5)]."""
        return bool({"limits", "safe"} & {e.lower() for e in self.accounting_enforce})


#: The slurm.conf keys of ``SchedulingConfig``, each with its field and how its value is
#: written: "text", "int", "tres" (CPU=1000,Mem=2000), "list" (a,b), "bool" (YES/NO),
#: "minutes" (a duration the field holds in seconds, slurm.conf in minutes), "seconds",
#: "count" (a number of minutes kept as is), "megabytes", and "params" (SchedulerParameters,
#: whose typed settings are the ``backfill`` field's). ``advisor.adapters.slurm_text``
#: reads them from ``scontrol show config``, ``advisor.whatif.slurmconf`` writes the ones a
#: candidate may change (``written``).
SLURM_CONF = (
    # key, field, kind, written
    ("SchedulerType", "scheduler_type", "text", True),
    ("SchedulerParameters", "scheduler_parameters", "params", True),
    ("PriorityType", "priority_type", "text", True),
    ("PriorityWeightAge", "priority_weight_age", "int", True),
    ("PriorityWeightAssoc", "priority_weight_assoc", "int", True),
    ("PriorityWeightFairshare", "priority_weight_fairshare", "int", True),
    ("PriorityWeightJobSize", "priority_weight_job_size", "int", True),
    ("PriorityWeightPartition", "priority_weight_partition", "int", True),
    ("PriorityWeightQOS", "priority_weight_qos", "int", True),
    ("PriorityWeightTRES", "priority_weight_tres", "tres", True),
    ("PriorityFlags", "priority_flags", "list", True),
    ("PriorityMaxAge", "priority_max_age", "minutes", True),
    ("PriorityCalcPeriod", "priority_calc_period", "minutes", True),
    ("PriorityDecayHalfLife", "priority_decay_half_life", "minutes", True),
    ("PriorityUsageResetPeriod", "priority_usage_reset_period", "text", True),
    ("PriorityFavorSmall", "priority_favor_small", "bool", True),
    ("SelectType", "select_type", "text", True),
    ("SelectTypeParameters", "select_type_parameters", "text", True),
    ("PreemptType", "preempt_type", "text", True),
    ("PreemptMode", "preempt_mode", "text", True),
    ("SchedulerTimeSlice", "scheduler_time_slice", "seconds", True),
    ("OverTimeLimit", "over_time_limit", "count", True),
    ("JobSubmitPlugins", "job_submit_plugins", "list", True),
    ("AccountingStorageType", "accounting_storage_type", "text", False),
    ("AccountingStorageTRES", "accounting_storage_tres", "list", False),
    ("StateSaveLocation", "state_save_location", "text", False),
    ("AccountingStorageEnforce", "accounting_enforce", "list", False),
    ("DefMemPerCPU", "def_mem_per_cpu", "megabytes", False),
    ("DefMemPerNode", "def_mem_per_node", "megabytes", False),
    ("SLURM_VERSION", "slurm_version", "text", False),
)


@dataclass(frozen=True)
class Qos:
    """A QOS (sacctmgr show qos). Limits: -1 none; TRES limits by TRES name (``cpu``,
    ``mem`` in MB, ``node``, ``gres/gpu``), absent: none."""

    name: str
    priority: int = 0
    max_jobs_per_user: int = -1                  # MaxJobsPU: running jobs per user
    max_tres_per_user: dict[str, int] = field(default_factory=dict)  # MaxTRESPU
    grp_jobs: int = -1                           # GrpJobs: running jobs of the QOS
    grp_tres: dict[str, int] = field(default_factory=dict)           # GrpTRES


@dataclass(frozen=True)
class Association:
    """An association (sacctmgr show assoc, sshare): an account's own (``user`` empty) or a
    user's in an account. Limits as in ``Qos``; ``raw_usage`` is sshare's RawUsage (decayed
    TRES-billing seconds) at the snapshot."""

    account: str
    user: str = ""
    parent: str = ""                 # the parent account ("" for root); a user's: its account
    shares: int = 1                  # RawShares (Fairshare=)
    max_jobs: int = -1               # MaxJobs: running jobs of this association (per user)
    grp_jobs: int = -1               # GrpJobs: running jobs of it and all below it
    grp_tres: dict[str, int] = field(default_factory=dict)  # GrpTRES, of it and all below
    qos: tuple[str, ...] = ()        # the QOS it may use
    default_qos: str = ""
    raw_usage: float = 0.0
    fairshare: float = -1.0          # a user's: sshare's FairShare now (-1: not known)

    def with_usage(self, raw_usage: float) -> Association:
        """This association at another moment: ``raw_usage`` changed, nothing else. (A
        replay moves the usage of hundreds at each decision; ``dataclasses.replace``,
        which validates every field anew, cost five times as much.)"""
        moved = object.__new__(Association)
        moved.__dict__.update(self.__dict__, raw_usage=raw_usage)
        return moved


@dataclass(frozen=True)
class Accounting:
    """What slurmdbd holds that decides starts: QOS and associations (with their usage)."""

    qos: tuple[Qos, ...] = ()
    associations: tuple[Association, ...] = ()
    #: when slurmctld's decay thread last ran (epoch; its state file, where readable):
    #: the phase of its PriorityCalcPeriod passes
    decay_ran: int | None = None
    #: when usage was last reset (PriorityUsageResetPeriod; the same state file), or when
    #: slurmctld first ran where it never was; None: not known
    last_reset: int | None = None

    def __bool__(self) -> bool:
        return bool(self.qos or self.associations)
