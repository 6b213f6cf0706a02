"""The slurm core's input layout and a record's place in the queue, compiled.

Shared by ``slurm`` (which builds the job table and the configuration vector) and
``slurm_core`` (which simulates): the rows of the job table, the entries of the
configuration vector, a record's integer priority (docs/slurm-mapping.md) and
its F1 queue key.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine.structures import sort_by_key

# rows of the job table
(SUBMIT, RUNTIME, LIMIT, CPUS, MIN_NODES, EXCLUSIVE, ELIGIBLE, FIXED, FIXED_PRIO, USER,
 REC0, NREC) = range(12)
JOB_ROWS = 12
# entries of the configuration vector
(C_BACKFILL, C_BF_INTERVAL, C_BF_WINDOW, C_BF_RESOLUTION, C_BF_MAX_JOB_TEST,
 C_BF_PART_RESERVE, C_BF_MIN_AGE, C_BF_MIN_PRIO, C_BF_MAX_JOB_PART, C_BF_MAX_JOB_USER,
 C_BF_ONE_RESV, C_BF_BUSY_NODES, C_CALC_PERIOD, C_SCHED_INTERVAL, C_OVER_TIME, C_T0,
 C_FIRST_PASS, C_COUNT_RESV, C_END_LATENCY, C_WILL_RUN_WINDOW,
 C_STARTS_ONLY, C_W_FAIRSHARE, C_DECAY_HALF_LIFE, C_CALC_PHASE, C_RESV_END_UP,
 C_RELEVANT_END, C_ONE_NODE_FIRST, C_UNTIL,
 # the backfill cycle's cost (``slurm_backfill``), in microseconds, and an engine tick's
 C_BF_MAX_TIME, C_BF_YIELD_INTERVAL, C_BF_YIELD_SLEEP, C_BF_CONTINUE, C_BF_COST_CYCLE,
 C_BF_COST_JOB, C_TICK_US,
 # PriorityUsageResetPeriod (``slurm_fairshare.reset_schedule``): the next two instants at
 # which usage is reset (NEVER: none) and the period after the second (0: none); the
 # last reset and the period in effect, which a candidate's schedule is computed from
 C_RESET_AT, C_RESET_NEXT, C_RESET_EVERY, C_RESET_LAST, C_RESET_IN_EFFECT,
 # ticks from an engine instant to slurmctld's clock: Slurm's second of instant x is
 # (x + C_CLOCK_PHASE) // (ticks a second) (``slurm_timing``; 0 in whole seconds); the
 # shortest run whose end the backfill cycle of its last second sees (0: none)
 C_CLOCK_PHASE, C_CYCLE_SEES_END) = range(42)
CONFIG_SIZE = 42

#: a job's need of a resource on a node that is all the node has of it (memory, when no
#: default is set or the job is exclusive [slurm.conf(5) DefMemPerNode])
WHOLE_NODE = 1 << 50
PRIO_MAX = 4294967295  # priorities are uint32 [src: priority_multifactor.c]
TIER_SCALE = 8589934592.0  # 2^33 > PRIO_MAX: a tier outranks any priority (F1)


@njit(cache=True, inline="always")
def slurm_floor(cfg, x, step):
    """Instant x rounded down to a multiple of ``step`` ticks on Slurm's clock (its
    epoch seconds' multiples: bf_resolution's slots, the will-run batches)."""
    return x - (x + cfg[C_CLOCK_PHASE]) % step


@njit(cache=True, inline="always")
def slurm_second(cfg, x):
    """The engine instant at which Slurm's whole second holding instant x began: the
    time Slurm stores (``time(NULL)``) read back in ticks."""
    return slurm_floor(cfg, x, 1_000_000 // cfg[C_TICK_US])


@njit(cache=True)
def priority(r, t, jobs, rec_job, rec_static, w_age, max_age, w_fs, fs_factor, job_assoc):
    """The integer priority of record r at time t (§1.1): the weighted factors summed as
    doubles, truncated once, floored at 1 (0 means held) and capped at 2^32-1
    [src: priority_multifactor.c _get_priority_internal()]. An explicitly set priority is
    kept as it is (direct_set_prio). ``w_fs`` > 0: fair share is played, the job's
    association's factor now (``slurm_fairshare``) weighted by it."""
    j = rec_job[r]
    if jobs[FIXED_PRIO, j] >= 0:
        return jobs[FIXED_PRIO, j]
    p = rec_static[r]
    if w_age > 0.0:
        # age counts from the eligible (accrue) time, capped at PriorityMaxAge
        # [slurm.conf(5) PriorityMaxAge; src: set_priority_factors()]
        p += w_age * min(max(t - jobs[ELIGIBLE, j], 0) / max_age, 1.0)
    if w_fs > 0.0 and job_assoc[j] >= 0:
        p += w_fs * fs_factor[job_assoc[j]]
    if p < 1.0:
        return 1
    if p > PRIO_MAX:
        return PRIO_MAX
    return np.int64(p)


@njit(cache=True)
def record_key(r, prio, rec_part, part_tier):
    """F1: PriorityTier (descending), then priority (descending), as one ascending key; the
    record index, in (submit, job id) order, breaks ties [src: job_scheduler.c
    sort_job_queue2()]."""
    return -(float(part_tier[rec_part[r]]) * TIER_SCALE + float(prio[r]))


@njit(cache=True)
def sort_queue(queue, nq, key, prio, rec_part, part_tier):
    for a in range(nq):
        key[queue[a]] = record_key(queue[a], prio, rec_part, part_tier)
    sort_by_key(queue, nq, key)
