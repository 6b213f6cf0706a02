"""The slurm mode's input, built from a Snapshot (live or from a trace) or a whole Workload.

``slurm_input`` continues from a snapshot: its running jobs keep their start times, its
pending jobs their submit and eligible times and priority inputs, the machine its nodes and
partitions, and the configuration in effect drives the schedulers. ``workload_input`` plays
a whole trace on the trace's machine (one 1-CPU node per processor, one partition).
``run_slurm`` simulates; it is pure like ``advisor.engine.run``.

Memory (when SelectTypeParameters makes it consumable) and GRES are played as node resources
a job must find on each of its nodes (``tres_rows``). What is not modelled (documented in
docs/simulation.md): held jobs and jobs waiting on a dependency are left out (they cannot
start by themselves); QOS/association limits beyond those ``slurm_limits`` plays, licences,
GRES types, preemption, gang scheduling (a family's player plays a time-sliced partition
beside this engine: ``advisor.plugins.contract.Player``), advanced reservations, node
features and weights;
default_queue_depth (the main scheduler tests the whole queue on every event).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from advisor.engine import Estimates, job_arrays
from advisor.engine.core import NEVER, NO_RESUME
from advisor.engine.priority import (job_size, no_normal_tres, partition_factor,
                                     static_priority, tracked_tres)
from advisor.engine.slurm_core import simulate_slurm
from advisor.engine.slurm_state import new_state
from advisor.engine.slurm_fairshare import build as fairshare_tree
from advisor.engine.slurm_fairshare import played as fairshare_played
from advisor.engine.slurm_fairshare import set_resets
from advisor.engine.slurm_limits import limit_rows
from advisor.engine.slurm_resources import tres_rows
from advisor.engine.slurm_layout import (C_BACKFILL, C_BF_BUSY_NODES, C_BF_CONTINUE,
                                         C_BF_COST_CYCLE, C_BF_COST_JOB, C_BF_MAX_TIME,
                                         C_BF_YIELD_INTERVAL, C_BF_YIELD_SLEEP, C_TICK_US,
                                         C_BF_INTERVAL,
                                         C_BF_MAX_JOB_PART, C_BF_MAX_JOB_TEST,
                                         C_BF_MAX_JOB_USER, C_BF_MIN_AGE, C_BF_MIN_PRIO,
                                         C_BF_ONE_RESV, C_BF_PART_RESERVE, C_BF_RESOLUTION,
                                         C_BF_WINDOW, C_CALC_PERIOD, C_COUNT_RESV,
                                         C_CALC_PHASE, C_DECAY_HALF_LIFE, C_W_FAIRSHARE,
                                         C_FIRST_PASS, C_OVER_TIME, C_SCHED_INTERVAL,
                                         C_ONE_NODE_FIRST, C_RELEVANT_END, C_RESV_END_UP,
                                         C_RESET_AT, C_RESET_IN_EFFECT, C_RESET_LAST,
                                         C_RESET_NEXT,
                                         C_STARTS_ONLY, C_T0, C_UNTIL,
                                         C_WILL_RUN_WINDOW, CONFIG_SIZE,
                                         CPUS, ELIGIBLE, EXCLUSIVE, FIXED, FIXED_PRIO,
                                         JOB_ROWS, LIMIT, MIN_NODES, NREC, REC0, RUNTIME,
                                         SUBMIT, USER)
from advisor.engine.slurm_timing import LIVE, Timing, in_ticks, to_seconds
from advisor.errors import BadInput
from advisor.model import (RESET_PERIODS, UNLIMITED_SECONDS, Accounting, Cluster, Job,
                           SchedulingConfig, Snapshot, Workload, job_limit, release_of,
                           trace_machine)

# priority/basic: each new job gets the lowest priority so far minus one
# [src: src/plugins/priority/basic/priority_basic.c priority_p_set()]
BASIC_FIRST = 4294967294
# cons_tres will-run: the first batch of running jobs released together ends this many
# seconds after the first one's end, rounded up [src: cons_tres _will_run_test()]
WILL_RUN_WINDOW = 30


@dataclass(frozen=True)
class SlurmInput:
    """The compiled slurm core's arguments (see ``slurm_core.simulate_slurm``)."""

    jobs: np.ndarray          # (JOB_ROWS, n) int64, jobs in (submit, job id) order
    rec_job: np.ndarray
    rec_part: np.ndarray
    rec_static: np.ndarray
    node_cpus: np.ndarray
    part_nodes: np.ndarray    # (partitions, nodes) uint8
    part_tier: np.ndarray
    part_max: np.ndarray      # seconds
    cfg: np.ndarray
    w_age: float
    max_age: float
    job_ids: np.ndarray
    timing: Timing | None = None  # None: whole seconds, exact (a trace); see slurm_timing
    # resources beside CPUs (``tres_rows``): their names, amounts per node and each job's
    # need per node; None: CPUs alone
    tres: tuple[str, ...] = ()
    node_tres: np.ndarray | None = None
    job_tres: np.ndarray | None = None
    # QOS and association limits (``slurm_limits.limit_rows``): the resources they cap,
    # each counter's caps, each job's counters and use; None: no limit played
    limits: tuple[str, ...] = ()
    lim_cap: np.ndarray | None = None
    job_lim: np.ndarray | None = None
    job_use: np.ndarray | None = None
    # fair share played (``slurm_fairshare.build``): the association tree (parent, first
    # child, child count, user?), its children, (S, usage, factor now), each job's
    # association; None: not played
    fs_tree: np.ndarray | None = None
    fs_children: np.ndarray | None = None
    fs_values: np.ndarray | None = None
    job_assoc: np.ndarray | None = None
    # each job's fair-share (0 where played), QOS and association factors in [0, 1], which
    # a candidate weighs with its own weights (``under_config``); None: all 0
    factors: np.ndarray | None = None
    # the nodes each running job holds (``slurm_core.restore``): job j's are
    # placed[place[0, j]:][:place[1, j]]; None: chosen by the rule of a start
    place: np.ndarray | None = None
    placed: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.jobs.shape[1])


def run_slurm(inp: SlurmInput) -> tuple[np.ndarray, np.ndarray]:
    """Simulate; returns (start time of each job, its first backfill reservation or -1), in
    the order of ``inp.job_ids``."""
    return _simulate(inp, inp.cfg)


def start_times(inp: SlurmInput, until: int | None = None) -> np.ndarray:
    """``run_slurm``'s start times alone, sooner: backfill cycles that can start nothing
    are skipped instead of planned (a conservative plan at 2,000 pending jobs costs a
    third less). With ``until``, the run stops after that second: a job that has not
    started by then gets -1 (a replay that keeps only the starts before its next
    decision need not drain the queue)."""
    cfg = inp.cfg.copy()
    cfg[C_STARTS_ONLY] = 1
    if until is not None:
        cfg[C_UNTIL] = until
    return _simulate(inp, cfg)[0]


def _simulate(inp: SlurmInput, cfg: np.ndarray):
    place, placed = inp.place, inp.placed
    if place is None or placed is None:
        place, placed = np.zeros((2, len(inp)), np.int64), np.zeros(0, np.int64)
    arguments = (*kernel_arguments(inp, cfg), place, placed)
    start, resv = simulate_slurm(*arguments)
    if inp.timing is None:
        return start, resv
    return to_seconds(start, inp.timing), to_seconds(resv, inp.timing)


def state_for(inp: SlurmInput):
    """(StateArrays, KernelState) of a run of ``inp`` before its first instant, for calling
    the slurm core's steps one at a time (``slurm_state``); times in ``inp.timing``'s
    ticks."""
    return new_state(*kernel_arguments(inp, inp.cfg))


def kernel_arguments(inp: SlurmInput, cfg: np.ndarray) -> tuple:
    """``simulate_slurm``'s arguments: ``inp`` in ticks, absent parts as empty arrays."""
    jobs, part_max, max_age = inp.jobs, inp.part_max, inp.max_age
    if inp.timing is not None:
        jobs, part_max, cfg, max_age = in_ticks(jobs, part_max, cfg, max_age, inp.timing)
    node_tres, job_tres = inp.node_tres, inp.job_tres
    if node_tres is None or job_tres is None:
        node_tres = np.zeros((0, len(inp.node_cpus)), np.int64)
        job_tres = np.zeros((0, jobs.shape[1]), np.int64)
    lim_cap, job_lim, job_use = inp.lim_cap, inp.job_lim, inp.job_use
    if lim_cap is None or job_lim is None or job_use is None:
        lim_cap = np.zeros((0, 1), np.int64)
        job_lim = np.full((1, jobs.shape[1]), -1, np.int64)
        job_use = np.zeros((1, jobs.shape[1]), np.int64)
    fs_tree, fs_children, fs_values, job_assoc = (inp.fs_tree, inp.fs_children,
                                                  inp.fs_values, inp.job_assoc)
    if fs_tree is None or fs_children is None or fs_values is None or job_assoc is None:
        fs_tree, fs_children = np.zeros((4, 0), np.int64), np.zeros(0, np.int64)
        fs_values = np.zeros((3, 0), np.float64)
        job_assoc = np.full(jobs.shape[1], -1, np.int64)
    elif inp.timing is not None:  # usage in CPU-ticks, as the runs it adds
        fs_values = fs_values * np.array([[1.0], [inp.timing.tick], [1.0]])
    return (jobs, inp.rec_job, inp.rec_part, inp.rec_static, inp.node_cpus, inp.part_nodes,
            inp.part_tier, part_max, cfg, inp.w_age, max_age, node_tres, job_tres, lim_cap,
            job_lim, job_use, fs_tree, fs_children, fs_values, job_assoc)


def config_vector(config: SchedulingConfig, t0: int | None = None,
                  first_pass: bool = False, count_reservations: bool = False,
                  will_run_batches: bool = True) -> np.ndarray:
    """The core's configuration vector from the typed configuration (seconds throughout).
    ``count_reservations`` is the textbook idealisation (reservations hold CPU counts, not
    whole nodes): for comparing with the textbook engine, never for predicting Slurm.

    ``will_run_batches``: a reservation's start is found as cons_tres does, releasing
    running jobs in batches of doubling windows from 30 s (``_will_run_test()``), not job
    by job; off only to compare with the textbook's exact earliest start."""
    bf = config.backfill
    cfg = np.zeros(CONFIG_SIZE, np.int64)
    # sched/builtin is the main scheduler alone [slurm.conf(5) SchedulerType]
    cfg[C_BACKFILL] = int(config.scheduler_type == "sched/backfill")
    cfg[C_BF_INTERVAL] = bf.bf_interval
    cfg[C_BF_WINDOW] = bf.bf_window * 60
    cfg[C_BF_RESOLUTION] = bf.bf_resolution
    cfg[C_BF_MAX_JOB_TEST] = bf.bf_max_job_test
    cfg[C_BF_PART_RESERVE] = bf.bf_job_part_count_reserve
    cfg[C_BF_MIN_AGE] = bf.bf_min_age_reserve
    cfg[C_BF_MIN_PRIO] = bf.bf_min_prio_reserve
    cfg[C_BF_MAX_JOB_PART] = bf.bf_max_job_part
    cfg[C_BF_MAX_JOB_USER] = bf.bf_max_job_user
    cfg[C_BF_ONE_RESV] = int(bf.bf_one_resv_per_job)
    cfg[C_BF_BUSY_NODES] = int(bf.bf_busy_nodes)
    cfg[C_CALC_PERIOD] = config.priority_calc_period
    cfg[C_SCHED_INTERVAL] = bf.sched_interval
    cfg[C_OVER_TIME] = config.over_time_limit * 60
    cfg[C_T0] = NO_RESUME if t0 is None else t0
    cfg[C_FIRST_PASS] = int(first_pass)
    cfg[C_COUNT_RESV] = int(count_reservations)
    cfg[C_WILL_RUN_WINDOW] = WILL_RUN_WINDOW if will_run_batches else 0
    cfg[C_DECAY_HALF_LIFE] = config.priority_decay_half_life
    # the release's behaviours (advisor.releases); a trace's configuration names no
    # version, and is played as the oldest release
    played = release_of(config.slurm_version)
    cfg[C_RESV_END_UP] = int(played.plays("resv_end_rounded_up"))
    cfg[C_RELEVANT_END] = int(played.plays("start_at_relevant_end"))
    cfg[C_ONE_NODE_FIRST] = int(played.plays("one_node_first_fit"))
    cfg[C_UNTIL] = NEVER
    cfg[C_BF_MAX_TIME] = (bf.bf_max_time or bf.bf_interval) * 1_000_000
    cfg[C_BF_YIELD_INTERVAL] = bf.bf_yield_interval
    cfg[C_BF_YIELD_SLEEP] = bf.bf_yield_sleep
    cfg[C_BF_CONTINUE] = int(bf.bf_continue)
    cfg[C_BF_COST_CYCLE] = config.backfill_cost.cycle_us
    cfg[C_BF_COST_JOB] = config.backfill_cost.job_us
    cfg[C_TICK_US] = 1_000_000
    cfg[C_RESET_AT] = cfg[C_RESET_NEXT] = NEVER
    return cfg


def _scheduled_partitions(cluster: Cluster) -> list:
    """The partitions jobs are scheduled in: the UP ones (all, if none is UP)."""
    return [p for p in cluster.partitions if p.state == "UP"] or list(cluster.partitions)


def _machine(cluster: Cluster):
    index = {n.name: i for i, n in enumerate(cluster.nodes)}
    node_cpus = np.array([n.cpus for n in cluster.nodes], np.int64)
    parts = _scheduled_partitions(cluster)
    part_nodes = np.zeros((len(parts), len(index)), np.uint8)
    for k, p in enumerate(parts):
        part_nodes[k, [index[n] for n in p.nodes if n in index]] = 1
    tier = np.array([p.priority_tier for p in parts], np.int64)
    pmax = np.array([UNLIMITED_SECONDS if p.max_time is None else p.max_time for p in parts],
                    np.int64)
    return node_cpus, part_nodes, tier, pmax, {p.name: k for k, p in enumerate(parts)}


def policy_factors(job: Job, config: SchedulingConfig, accounting: Accounting,
                   fair: bool) -> tuple[np.ndarray, float]:
    """The job's fair-share, QOS and association factors in [0, 1] (sprio's weighted
    values over the weights in effect; a job without a sprio row gets its QOS's priority
    over the highest [src: priority_multifactor.c _get_qos_priority()]), and what its
    static priority (sprio's constants) must gain to hold them: with fair share played,
    the sprio fair-share value comes out (the core adds the moving one); a QOS factor
    found in the accounting goes in."""
    seen = job.priority_factors
    weights = (config.priority_weight_fairshare, config.priority_weight_qos,
               config.priority_weight_assoc)
    out = np.array([seen.get(k, 0.0) / w if w > 0 else 0.0
                    for k, w in zip(("fairshare", "qos", "assoc"), weights)])
    moved = 0.0
    if fair:
        out[0] = 0.0
        moved -= float(seen.get("fairshare", 0.0))
    if "qos" not in seen and accounting.qos and weights[1] > 0:
        top = max(q.priority for q in accounting.qos)
        mine = next((q.priority for q in accounting.qos if q.name == (job.qos or "normal")),
                    0)
        out[1] = mine / top if top > 0 else 0.0
        moved += weights[1] * out[1]
    return out, moved


def slurm_input(snapshot: Snapshot, runtimes: Mapping[int, int], arrivals: Sequence[Job] = (),
                first_pass: bool = True, config: SchedulingConfig | None = None,
                timing: Timing | None = LIVE, priorities: bool = True,
                keep_nodes: bool = False) -> SlurmInput:
    """The slurm core's input that continues from ``snapshot`` under ``config`` (default:
    the snapshot's). ``runtimes`` gives every job's actual runtime by id (running, pending
    and arriving); ``arrivals`` are jobs submitted after the snapshot. ``timing``: how its
    whole seconds are read (``slurm_timing``; None: as exact instants). ``priorities=False``
    leaves each record's static priority at 0, for a caller that sets it (``under_config``):
    job by job, as sprio's rows are matched, it is most of this function's time.
    ``keep_nodes``: each running job is restored on the nodes of its ``node_list``."""
    config = config or snapshot.config
    cluster = snapshot.machine
    node_cpus, part_nodes, tier, pmax, part_index = _machine(cluster)
    jobs = [j for j in (*snapshot.running, *snapshot.pending, *arrivals)
            if j.state == "RUNNING" or (not j.held and not j.dependency)]
    jobs.sort(key=lambda j: (j.submit_time, j.job_id))
    users = {u: i for i, u in enumerate(sorted({j.user for j in jobs}))}
    n = len(jobs)
    table = np.zeros((JOB_ROWS, n), np.int64)
    rec_job, rec_part, rec_static = [], [], []
    basic = config.priority_type != "priority/multifactor"
    fair = fairshare_played(config, snapshot.accounting)
    factors = np.zeros((3, n), np.float64)
    lowest = BASIC_FIRST
    pending_ids = {j.job_id for j in snapshot.pending}
    for i, job in enumerate(jobs):
        if job.job_id not in runtimes:
            raise BadInput(f"no runtime given for job {job.job_id}")
        names = [job.partition] if job.state == "RUNNING" else list(job.asked)
        parts = [p for p in names if p in part_index]
        if not parts:
            raise BadInput(f"job {job.job_id} asks for partition(s) {','.join(names)} that "
                           f"the snapshot's cluster does not have (or that are not UP)")
        table[SUBMIT, i] = job.submit_time
        table[RUNTIME, i] = runtimes[job.job_id]
        table[LIMIT, i] = job_limit(job, cluster)
        if job.state == "RUNNING" and job.start_time is not None:
            # running at the snapshot, so it ends after it, even past its limit (a trace's
            # overrun; OverTimeLimit): at least a second after, as the plans assume
            floor = snapshot.time + 1 - job.start_time
            table[RUNTIME, i] = max(table[RUNTIME, i], floor)
            table[LIMIT, i] = max(table[LIMIT, i], floor)
        table[CPUS, i] = job.cpus
        table[MIN_NODES, i] = job.nodes
        table[EXCLUSIVE, i] = int(job.exclusive)
        table[ELIGIBLE, i] = job.eligible_time if job.eligible_time is not None \
            else job.submit_time
        table[FIXED, i] = job.start_time if job.state == "RUNNING" else -1
        table[USER, i] = users[job.user]
        table[REC0, i] = len(rec_job)
        table[NREC, i] = len(parts)
        table[FIXED_PRIO, i] = -1
        if basic:
            known = job.priority is not None and job.job_id in pending_ids
            lowest = job.priority if known else lowest - 1
            table[FIXED_PRIO, i] = max(int(lowest) - job.nice, 1)
        factors[:, i], moved = policy_factors(job, config, snapshot.accounting, fair)
        for p in parts:
            rec_job.append(i)
            rec_part.append(part_index[p])
            rec_static.append(static_priority(job, p, cluster, config) + moved
                              if priorities and not basic else 0.0)
    t0 = snapshot.time
    names, node_tres, job_tres = tres_rows(cluster, jobs, config)
    limits = limit_rows(snapshot.accounting, config, jobs) or ((), None, None, None)
    cfg = config_vector(config, t0, first_pass)
    set_resets(cfg, config, t0, snapshot.accounting.last_reset,
               snapshot.config.priority_usage_reset_period)
    tree = (None,) * 4
    if fair:
        parent, norm_shares, is_user, usage, now, children, first, counts, assoc = \
            fairshare_tree(snapshot.accounting, jobs)
        tree = (np.vstack([parent, first, counts, is_user.astype(np.int64)]), children,
                np.vstack([norm_shares, usage, now]), assoc)
        cfg[C_W_FAIRSHARE] = config.priority_weight_fairshare
    # the decay thread's passes recompute the age factor as well as fair share (F7): a job
    # submitted since the last one keeps the priority it was given at submission
    cfg[C_CALC_PHASE] = snapshot.accounting.decay_ran or 0
    inp = SlurmInput(table, np.array(rec_job, np.int64), np.array(rec_part, np.int64),
                     np.array(rec_static, np.float64), node_cpus, part_nodes, tier, pmax,
                     cfg, 0.0 if basic else float(config.priority_weight_age),
                     float(max(config.priority_max_age, 1)),
                     np.array([j.job_id for j in jobs], np.int64), timing, names,
                     node_tres, job_tres, *limits, *tree, factors)
    if not keep_nodes:
        return inp
    place, placed = _placement(jobs, cluster)
    return replace(inp, place=place, placed=placed)


def _placement(jobs: Sequence[Job], cluster: Cluster) -> tuple[np.ndarray, np.ndarray]:
    """(place, placed) of ``SlurmInput``: the nodes of each running job's node list that
    the cluster has."""
    index = {n.name: i for i, n in enumerate(cluster.nodes)}
    place = np.zeros((2, len(jobs)), np.int64)
    placed: list[int] = []
    for i, job in enumerate(jobs):
        if job.state == "RUNNING":
            nodes = [index[n] for n in job.node_list if n in index]
            place[:, i] = len(placed), len(nodes)
            placed += nodes
    return place, np.array(placed, np.int64)


def workload_input(workload: Workload, config: SchedulingConfig,
                   estimates: Estimates = Estimates(), minutes: bool = True,
                   count_reservations: bool = False,
                   will_run_batches: bool = True) -> SlurmInput:
    """A whole trace in the slurm mode, on the trace's machine (one 1-CPU node per
    processor, one partition). Limits are the estimates, rounded up to whole minutes as
    Slurm stores them (``minutes=False`` keeps seconds: the textbook comparison);
    ``count_reservations`` and ``will_run_batches``: see ``config_vector``."""
    arrays = job_arrays(workload, estimates)
    cluster = trace_machine(workload)
    node_cpus, part_nodes, tier, pmax, _ = _machine(cluster)
    n = len(arrays)
    table = np.zeros((JOB_ROWS, n), np.int64)
    table[SUBMIT] = arrays.submit
    table[RUNTIME] = arrays.runtime
    limit = arrays.estimate
    table[LIMIT] = (limit + 59) // 60 * 60 if minutes else limit
    table[CPUS] = arrays.procs
    table[MIN_NODES] = 0
    table[ELIGIBLE] = arrays.submit
    table[FIXED] = -1
    table[USER] = np.unique(workload.jobs["user"].to_numpy(), return_inverse=True)[1]
    table[REC0] = np.arange(n)
    table[NREC] = 1
    table[FIXED_PRIO] = -1
    multifactor = config.priority_type == "priority/multifactor"
    rec = np.arange(n, dtype=np.int64)
    if multifactor:
        static = _static(config, cluster, cluster.partitions, table, rec,
                         np.zeros(n, np.int64), node_cpus, part_nodes)
    else:
        table[FIXED_PRIO] = BASIC_FIRST - np.arange(n)
        static = 0.0
    return SlurmInput(table, rec, np.zeros(n, np.int64), np.zeros(n) + static, node_cpus,
                      part_nodes,
                      tier, pmax, config_vector(config, count_reservations=count_reservations,
                                    will_run_batches=will_run_batches),
                      float(config.priority_weight_age) if multifactor else 0.0,
                      float(max(config.priority_max_age, 1)),
                      workload.jobs["job_id"].to_numpy(np.int64))


def with_backfill(config: SchedulingConfig, **changes) -> SchedulingConfig:
    """``config`` with some SchedulerParameters changed (bf_interval=..., ...)."""
    return replace(config, backfill=replace(config.backfill, **changes))


def _static(config: SchedulingConfig, cluster: Cluster, parts, table: np.ndarray,
            rec_job: np.ndarray, rec_part: np.ndarray, node_cpus: np.ndarray,
            part_nodes: np.ndarray, tres: tuple[str, ...] = (),
            node_tres: np.ndarray | None = None,
            job_tres: np.ndarray | None = None) -> np.ndarray:
    """Per record, the job-size, partition and TRES terms of the priority (§1.1), for whole
    arrays. The job-size factor divides by the limit the job plans with (its own, else its
    partition's DefaultTime or MaxTime). A GRES weight counts where AccountingStorageTRES
    tracks it and ``tres`` plays it (``tres_rows``: ``job_tres`` per node, times nodes)."""
    cpus, nodes = table[CPUS][rec_job], np.maximum(table[MIN_NODES][rec_job], 1)
    if not (table[MIN_NODES] > 0).any():  # a trace's jobs: one CPU per node
        nodes = cpus
    static = config.priority_weight_job_size * job_size(
        nodes, cpus, table[LIMIT][rec_job] // 60, len(cluster.nodes), cluster.cpus,
        config.priority_favor_small, "SMALL_RELATIVE_TO_TIME" in config.priority_flags)
    factor = np.array([partition_factor(p, cluster, config) for p in parts])
    static = static + config.priority_weight_partition * factor[rec_part]
    totals = {"cpu": part_nodes.astype(np.int64) @ node_cpus,
              "node": part_nodes.sum(axis=1, dtype=np.int64)}
    counts = {"cpu": cpus, "node": nodes}
    tracked = tracked_tres(config)
    for k, name in enumerate(tres):
        if name.startswith("gres/") and name in tracked and node_tres is not None \
                and job_tres is not None:
            totals[name] = part_nodes.astype(np.int64) @ node_tres[k]
            counts[name] = job_tres[k][rec_job] * nodes
    for name, w in config.priority_weight_tres.items():
        key = name.lower()
        if key not in totals:
            continue  # a TRES the snapshot does not play (mem, licences): factor 0
        count = counts[key].astype(np.float64)
        if not no_normal_tres(config):
            count = count / np.maximum(totals[key][rec_part], 1)
        static = static + w * count
    return static


def under_config(inp: SlurmInput, config: SchedulingConfig, cluster: Cluster,
                 extra: np.ndarray) -> SlurmInput:
    """The same jobs and machine under another priority/multifactor configuration (a
    candidate's): every record's static priority recomputed, plus ``extra`` per job (the
    site factor and any other constant term, minus nice), plus each job's fair-share, QOS
    and association factors under the candidate's weights (fair share played: its weight
    on the factors as they move), and the scheduler settings of ``config`` with ``inp``'s
    reading of time and reservations."""
    if config.priority_type != "priority/multifactor":
        raise BadInput("under_config needs a priority/multifactor configuration")
    jobs = inp.jobs.copy()
    jobs[FIXED_PRIO] = -1
    static = _static(config, cluster, _scheduled_partitions(cluster), jobs, inp.rec_job,
                     inp.rec_part, inp.node_cpus, inp.part_nodes, inp.tres, inp.node_tres,
                     inp.job_tres)
    cfg = config_vector(config, int(inp.cfg[C_T0]), bool(inp.cfg[C_FIRST_PASS]),
                        bool(inp.cfg[C_COUNT_RESV]), bool(inp.cfg[C_WILL_RUN_WINDOW]))
    cfg[C_T0] = inp.cfg[C_T0]
    set_resets(cfg, config, int(inp.cfg[C_T0]), int(inp.cfg[C_RESET_LAST]),
               RESET_PERIODS[int(inp.cfg[C_RESET_IN_EFFECT])])
    if inp.fs_tree is not None:
        cfg[C_W_FAIRSHARE] = config.priority_weight_fairshare
        cfg[C_CALC_PHASE] = inp.cfg[C_CALC_PHASE]
    if inp.factors is not None:  # the site's fair share, QOS and association, reweighed
        weights = np.array([config.priority_weight_fairshare, config.priority_weight_qos,
                            config.priority_weight_assoc], np.float64)
        extra = extra + weights @ inp.factors
    return replace(inp, jobs=jobs, rec_static=static + extra[inp.rec_job], cfg=cfg,
                   w_age=float(config.priority_weight_age),
                   max_age=float(max(config.priority_max_age, 1)))
