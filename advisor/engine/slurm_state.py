"""The slurm mode's state: one structure that every step of a cycle reads and changes.

``new_state`` builds it from the core's inputs (``simulate_slurm``'s arguments) as two
views of the same arrays: ``StateArrays``, a named tuple that owns them (a caller keeps it
alive, and Python can read it), and a ``kernel_state.KernelState`` of it, whose array
fields own nothing, so that a step reads a field for the cost of a load, never an atomic
reference count. A step takes the state and nothing else of the simulation; a test builds
one on a few nodes and jobs and calls the step alone.

The fields, by what they hold (scalars are the settings a run keeps; ``sc`` holds the
scalars a run changes, indexed by ``S_*``):

* the inputs: the job table and its records, the nodes, partitions, resources beside
  CPUs, QOS/association limits and the fair-share tree (``simulate_slurm``);
* jobs: start and first reservation (the output), expected end, state;
* the queue: records' priorities and keys, the queue itself (``queue[S_QH:S_NQ]``), a
  backfill cycle's own copy of what it has left to test while it yields (``cycq``), the
  queued records counted per partition and CPU count (``cnt``, ``low``);
* running jobs: by expected end (``rl``), the completion heap (``ht``, ``hj``), their
  allocations (``alloc*``, or one bitmap slot each on one-CPU nodes: ``job_bits``);
* nodes: free CPUs and resources, as counts and bitmaps (``node_bits``), per partition;
* node selection's scratch and its answer (``pick_bits``, ``pick_cpus``);
* a backfill cycle's planning: what is free at a future time (``fut*``), the cycle's
  reservations (``res_*``, ``ends``, the held-node step function ``ev_*``), its counters,
  and the cached first reservation (``plan``);
* limits in use (``lim_used``) and fair share (``fs_*``).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from advisor.engine.core_state import NO_RESUME
from advisor.engine.kernel_state import state_of
from advisor.engine.node_bits import avail_bits_of, mask_bits, set_range, words
from advisor.engine.slurm_fairshare import decay_per_second
from advisor.engine.slurm_layout import (
    C_BACKFILL, C_BF_BUSY_NODES, C_BF_COST_CYCLE, C_BF_COST_JOB, C_BF_INTERVAL,
    C_BF_MAX_JOB_PART, C_BF_MAX_JOB_TEST, C_BF_MAX_JOB_USER, C_BF_PART_RESERVE,
    C_BF_RESOLUTION, C_CALC_PERIOD, C_CALC_PHASE,
    C_COUNT_RESV, C_DECAY_HALF_LIFE, C_ONE_NODE_FIRST, C_RELEVANT_END, C_RESET_AT,
    C_RESV_END_UP,
    C_SCHED_INTERVAL, C_STARTS_ONLY, C_T0, C_W_FAIRSHARE, CPUS, EXCLUSIVE, LIMIT, NREC,
    USER)

# the scalars a run changes, in ``sc``: the queue is queue[S_QH:S_NQ]; counts of the
# running list, heap, allocation pool, reservations, free node-set slots; the backfill
# cycle; nodes picked; a version of the free CPUs; the count of held-node events (``sized``);
# arrivals seen; and a backfill cycle's place while it yields its locks (``slurm_backfill``:
# the next of ``cycq[:S_BF_NQ]`` to test, or -1 when no cycle is under way; its counters,
# start, microseconds spent, and the versions at the yield; when it releases the locks)
(S_NQ, S_NRL, S_HN, S_NTAKEN, S_NRES, S_NSLOTS, S_CYCLE, S_PICKED, S_FREEVER, S_QH,
 S_NEV, S_ARRIVED, S_BF_POS, S_BF_NQ, S_BF_TESTED, S_BF_RESOUT, S_BF_STARTED, S_BF_T,
 S_BF_EL, S_BF_VER, S_BF_RELEASE,
 # the next instant at which fair-share usage is reset (NEVER: none), resets done
 S_RESET, S_RESETS) = range(23)
SCALARS = 23

INPUTS = ("jobs rec_job rec_part rec_static node_cpus part_nodes part_tier part_max cfg "
          "node_tres job_tres lim_cap job_lim job_use job_assoc w_age max_age")
SETTINGS = ("n nr nn npart nt nw na nvals w_fs fs_on decay calc phase tres_on limits_on "
            "unit count_mode one_reservation sized can_skip backfill_on bf_interval res "
            "end_round relevant_end one_node_first sched_interval busy_first max_part "
            "max_user part_reserve max_test t0 starts_only cost_on")
ARRAYS = ("start first_resv exp_end state prio key queue cycq rl rl_cpus ht hj sc "
          "rec_cpus rec_limit rec_rank cpu_vals cnt low "
          "alloc0 nalloc alloc_node alloc_cpus node_free tres_free alloc_tres part_free "
          "part_cpus part_bits everywhere free_bits job_bits job_slot slot_w0 slot_w1 "
          "free_slots "
          "needs job_av job_av_bits excl usable scratch pick_bits pick_cpus "
          "fut fut_tres fut_bits held_for held res_b res_e res_bits res_w0 res_w1 res_spare "
          "res_s ends ev_t ev_sum cache walk plan plan_bits plan_running "
          "failed part_count part_tested user_tested user_cycle got_resv "
          "lim_used fs_parent fs_first fs_counts fs_user fs_kids fs_shares fs_usage fs_now "
          "fs_factor fs_lf fs_last")
#: the arrays and settings of a run, owned (what ``new_state`` returns beside the state)
StateArrays = namedtuple("StateArrays", f"{INPUTS} {SETTINGS} {ARRAYS}")  # type: ignore[misc]


@njit(cache=True)
def _queue_counts(jobs, rec_job, rec_part, part_max, npart):
    """Each record's CPUs, time limit in its partition and rank among the distinct CPU
    counts (``cpu_vals``), so that whether any queued record fits its partition's free CPUs
    is read from ``cnt``/``low`` without a walk of the queue (a sort of every record would
    cost more)."""
    nr = rec_job.shape[0]
    rec_cpus = np.empty(nr, np.int64)
    rec_limit = np.empty(nr, np.int64)
    for r in range(nr):
        rec_cpus[r] = jobs[CPUS, rec_job[r]]
        rec_limit[r] = min(jobs[LIMIT, rec_job[r]], part_max[rec_part[r]])
    present = np.zeros(max(rec_cpus.max(), 0) + 1 if nr else 1, np.bool_)
    for r in range(nr):
        present[rec_cpus[r]] = True
    cpu_vals = np.flatnonzero(present)
    rank_of = np.cumsum(present) - 1
    rec_rank = np.empty(nr, np.int64)
    for r in range(nr):
        rec_rank[r] = rank_of[rec_cpus[r]]
    nvals = cpu_vals.shape[0]
    cnt = np.zeros((npart, max(nvals, 1)), np.int64)
    low = np.full(npart, nvals, np.int64)
    return rec_cpus, rec_limit, rec_rank, cpu_vals, cnt, low


@njit(cache=True)
def _machine(jobs, node_cpus, part_nodes, node_tres, job_tres):
    """What the machine's shape decides: which jobs need resources beside CPUs, whether
    every node has one CPU (``unit``: a node is free or not, and its bit says which), the
    allocation pool's size, the partitions' CPUs and node bitmaps."""
    n, nn, npart, nt = jobs.shape[1], node_cpus.shape[0], part_nodes.shape[0], \
        node_tres.shape[0]
    needs = np.zeros(n, np.bool_)
    for k in range(nt):
        for j in range(n):
            needs[j] = needs[j] or job_tres[k, j] != 0
    unit = not needs.any()
    for nd in range(nn):
        unit = unit and node_cpus[nd] == 1
    cap = 1
    for j in range(n if not unit else 0):
        cap += nn if jobs[EXCLUSIVE, j] else min(nn, jobs[CPUS, j])
    part_free = np.zeros(npart, np.int64)
    for p in range(npart):
        for nd in range(nn):
            if part_nodes[p, nd]:
                part_free[p] += node_cpus[nd]
    part_bits = np.zeros((npart, words(nn)), np.uint64)
    for p in range(npart):
        mask_bits(part_nodes[p], part_bits[p])
    return needs, unit, cap, part_free, part_bits


@njit(cache=True)
def _reservation_arrays(nr, nw, max_test):
    """A cycle's reservations: whole nodes (res_bits, in words [res_w0, res_w1)) over
    [res_b, res_e) (F4, F5), the count-mode spare CPUs, the begin before rounding, the ends
    sorted, and the held-node step function (``sized``: at ev_t[k] the count held becomes
    ev_sum[k]); a cycle tests at most bf_max_job_test records."""
    m = nr + 1 if max_test <= 0 else min(nr, max_test) + 1
    return (np.empty(m, np.int64), np.empty(m, np.int64), np.zeros((m, nw), np.uint64),
            np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64),
            np.zeros(m, np.int64), np.empty(m, np.int64), np.empty(2 * m, np.int64),
            np.empty(2 * m, np.int64))


@njit(cache=True)
def new_state(jobs, rec_job, rec_part, rec_static, node_cpus, part_nodes, part_tier,
              part_max, cfg, w_age, max_age, node_tres, job_tres, lim_cap, job_lim,
              job_use, fs_tree, fs_children, fs_values, job_assoc):
    """(StateArrays, KernelState) at the start of a run: nothing queued or running yet."""
    n, nr, nn, npart = jobs.shape[1], rec_job.shape[0], node_cpus.shape[0], \
        part_tier.shape[0]
    nt, na, nw = node_tres.shape[0], fs_tree.shape[1], words(nn)
    needs, unit, cap, part_free, part_bits = _machine(jobs, node_cpus, part_nodes,
                                                      node_tres, job_tres)
    tres_on = needs.any()
    rec_cpus, rec_limit, rec_rank, cpu_vals, cnt, low = _queue_counts(
        jobs, rec_job, rec_part, part_max, npart)
    w_fs = float(cfg[C_W_FAIRSHARE]) if na > 0 else 0.0
    nusers = 1
    for j in range(n):
        nusers = max(nusers, jobs[USER, j] + 1)
    max_part, max_user = cfg[C_BF_MAX_JOB_PART], cfg[C_BF_MAX_JOB_USER]
    can_skip = max_part <= 0 and max_user <= 0 and lim_cap.shape[0] == 0
    for r in range(nr):
        can_skip = can_skip and jobs[NREC, rec_job[r]] == 1
    count_mode = cfg[C_COUNT_RESV] != 0
    res = max(cfg[C_BF_RESOLUTION], 1)
    slots = nn if unit else 1
    everywhere = np.zeros(nw, np.uint64)
    set_range(everywhere, 0, nn)
    free_bits = np.zeros((2, nw), np.uint64)
    avail_bits_of(node_cpus, node_cpus, free_bits)
    sc = np.zeros(SCALARS, np.int64)
    sc[S_NSLOTS] = slots
    sc[S_BF_POS] = -1
    sc[S_BF_RELEASE] = NO_RESUME  # (no cycle has held the locks)
    sc[S_RESET] = cfg[C_RESET_AT]
    res_b, res_e, res_bits, res_w0, res_w1, res_spare, res_s, ends, ev_t, ev_sum = \
        _reservation_arrays(nr, nw, cfg[C_BF_MAX_JOB_TEST])
    # (values computed here, not inside the call: numba reads a call of this many arguments
    # only without control flow in them)
    fs_on = w_fs > 0.0
    calc_phase = max(cfg[C_CALC_PHASE], 0)
    limits_on = lim_cap.shape[0] > 0
    # EASY-like on one partition of one-CPU nodes: a cycle's only reservation ends it
    one_reservation = unit and npart == 1 and not count_mode and \
        cfg[C_BF_PART_RESERVE] == 1
    # ``sized``: on one partition of one-CPU nodes, the nodes reservations hold at an
    # instant s were free at their begin, so they are among those free at s, and no node
    # is held twice at once: free(s) - held(s) bounds what a job starting at s can have,
    # with no bitmaps
    sized = unit and npart == 1 and not count_mode
    backfill_on = cfg[C_BACKFILL] != 0
    end_round = res - 1 if cfg[C_RESV_END_UP] != 0 else 0
    relevant_end = cfg[C_RELEVANT_END] != 0
    one_node_first = cfg[C_ONE_NODE_FIRST] != 0
    sched_interval = max(cfg[C_SCHED_INTERVAL], 1)
    busy_first = cfg[C_BF_BUSY_NODES] != 0
    starts_only = cfg[C_STARTS_ONLY] != 0
    cost_on = cfg[C_BF_COST_CYCLE] > 0 or cfg[C_BF_COST_JOB] > 0
    cycle_records = nr if cost_on else 0
    tres_nodes = nn if tres_on else 0
    tres_words = nw if tres_on else 0
    tres_cap = cap if tres_on else 0
    unit_nodes = nn if unit else 0
    fs_user = fs_tree[3] != 0
    arrays = StateArrays(
        jobs, rec_job, rec_part, rec_static, node_cpus, part_nodes, part_tier, part_max,
        cfg, node_tres, job_tres, lim_cap, job_lim, job_use, job_assoc, w_age, max_age,
        # settings
        n, nr, nn, npart, nt, nw, na, cpu_vals.shape[0], w_fs, fs_on,
        decay_per_second(cfg[C_DECAY_HALF_LIFE]), cfg[C_CALC_PERIOD], calc_phase,
        tres_on, limits_on, unit, count_mode, one_reservation, sized, can_skip,
        backfill_on, cfg[C_BF_INTERVAL], res, end_round, relevant_end, one_node_first,
        sched_interval, busy_first, max_part, max_user, cfg[C_BF_PART_RESERVE],
        cfg[C_BF_MAX_JOB_TEST], cfg[C_T0], starts_only, cost_on,
        # jobs, the queue, running jobs
        np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.zeros(n, np.int64),
        np.zeros(n, np.int8), np.zeros(nr, np.int64), np.zeros(nr, np.float64),
        np.empty(nr, np.int64), np.empty(cycle_records, np.int64),
        np.empty(n, np.int64), jobs[CPUS].copy(),
        np.empty(n, np.int64), np.empty(n, np.int64), sc,
        rec_cpus, rec_limit, rec_rank, cpu_vals, cnt, low,
        # nodes
        np.zeros(n, np.int64), np.zeros(n, np.int64), np.empty(cap, np.int64),
        np.empty(cap, np.int64), node_cpus.copy(), node_tres.copy(),
        np.zeros((nt, tres_cap), np.int64), part_free, part_free.copy(),
        part_bits, everywhere, free_bits, np.zeros((slots, nw), np.uint64),
        np.zeros(n, np.int64), np.zeros(slots, np.int64), np.zeros(slots, np.int64),
        np.arange(slots),
        # node selection
        needs, np.empty(tres_nodes, np.int64), np.zeros((2, tres_words), np.uint64),
        np.zeros(nw, np.uint64), np.zeros(nw, np.uint64), np.empty((4, nn), np.int64),
        np.zeros(nw, np.uint64), np.ones(nn, np.int64),
        # backfill planning
        np.empty(nn, np.int64), node_tres.copy(), np.zeros((2, nw), np.uint64),
        np.zeros(n, np.int64), np.zeros(n, np.int64), res_b, res_e, res_bits, res_w0,
        res_w1, res_spare, res_s, ends, ev_t, ev_sum, np.full(4, -1, np.int64),
        np.full(4, -1, np.int64), np.full(8, -1, np.int64), np.zeros(nw, np.uint64),
        np.empty(unit_nodes, np.int64),
        np.zeros(npart, np.int8), np.zeros(npart, np.int64), np.zeros(npart, np.int64),
        np.zeros(nusers, np.int64), np.zeros(nusers, np.int64), np.zeros(n, np.int64),
        # limits, fair share
        np.zeros(lim_cap.shape, np.int64), fs_tree[0].copy(), fs_tree[1].copy(),
        fs_tree[2].copy(), fs_user, fs_children.copy(), fs_values[0].copy(),
        fs_values[1].copy(), fs_values[2].copy(), np.zeros(na, np.float64),
        np.zeros(na, np.float64), np.zeros(1, np.int64))
    return arrays, state_of(arrays)
