"""The slurm mode of the engine: what slurmctld does with a configuration, compiled.

Pure and deterministic, like ``core``. The facts modelled are numbered as in
docs/slurm-mapping.md (F1-F9); each rule cites Slurm's man page or source.

Per instant: completions, then arrivals (each gets its priority at once), then the priority
recalculation when PriorityCalcPeriod falls due, then the main scheduler (after completions
and arrivals, or at the next sched_interval after the queue order changed), then the backfill
scheduler when its tick falls due and something changed since its last cycle (Slurm skips a
cycle when nothing changed [src: backfill.c _more_work()]; a cycle on an unchanged state
would find the same plan).

Inputs (built by ``advisor.engine.slurm``): ``jobs`` is an int64 table, one row per field
(``SUBMIT``...), jobs in (submit, job id) order. A pending job appears once per partition it
asked for, as a *record* (F9); ``rec_static`` is its priority without the age term. Nodes
carry CPU counts; partitions are node masks with a PriorityTier and a MaxTime (seconds).
Other resources a node has and a job asks for on each node (memory, GPUs: ``node_tres``,
``job_tres``, a row per resource) must fit too: a node offers a job only the CPUs it can
use there, none when another resource falls short, as cons_tres counts what each node can
give a job [src: cons_tres job_test.c _can_job_run_on_node()]. Without them (rows: none,
a trace's case) nothing of this runs. QOS and association limits are counters of running
work (``slurm_limits``: ``lim_cap``, ``job_lim``, ``job_use``): a job over one is passed
over by both schedulers, neither starting nor blocking nor reserving. Fair share, when
played (``cfg[C_W_FAIRSHARE]`` > 0), moves: usage accrues and decays, and the factors are
recomputed by Fair Tree at each PriorityCalcPeriod (``slurm_fairshare``; the association
tree in ``fs_tree``, ``fs_children``, ``fs_values``; each job's in ``job_assoc``).

Node sets (a partition's nodes, the free ones, a reservation's, a job's pick) are bitmaps
(``node_bits``), so each start and reservation costs a few word operations per 64 nodes.
On a machine of one-CPU nodes (a trace's) a node is free or not: the bitmaps are the whole
state, and a running job's nodes are a bitmap in a slot of its own. There a cycle's first
reservation is found by counting free nodes, and its nodes are chosen once, at its start
(or reused from the last cycle when the same jobs still run then); with EASY-like settings
a cycle whose reservation could change nothing seen (no record can start, the job has
had its first reservation) ends early. With one partition too, the nodes reservations
hold are also kept as a count over time, and a start time is tested on the bitmaps only
when the count does not rule it out (``held_max``). ``tests/unit/engine/test_slurm_engine.py``
checks these shortcuts against the general path on a real trace.

The schedulers share their state as closures inside one compiled function: with the node
bookkeeping moved into separate compiled functions a CTC-SP2 run was 20-50% slower (starts
and ends only) and 5x slower (planning's per-job helpers too), the array arguments costing
more than the work. That is why this module is longer than the others.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine.borrow import borrowed
from advisor.engine.core import DONE, NEVER, NO_RESUME, QUEUED, RUNNING
from advisor.engine.slurm_layout import (
    WHOLE_NODE, C_BACKFILL, C_BF_INTERVAL, C_BF_MAX_JOB_PART, C_BF_MAX_JOB_TEST, C_BF_MAX_JOB_USER,
    C_BF_MIN_AGE, C_BF_MIN_PRIO, C_BF_ONE_RESV, C_BF_PART_RESERVE, C_BF_RESOLUTION,
    C_BF_WINDOW, C_BF_BUSY_NODES, C_CALC_PERIOD, C_COUNT_RESV,
    C_END_LATENCY, C_FIRST_PASS, C_OVER_TIME, C_SCHED_INTERVAL, C_STARTS_ONLY, C_T0,
    C_WILL_RUN_WINDOW, C_CALC_PHASE, C_DECAY_HALF_LIFE, C_W_FAIRSHARE, C_RESV_END_UP,
    C_RELEVANT_END, C_ONE_NODE_FIRST, CPUS, ELIGIBLE, EXCLUSIVE, FIXED, LIMIT, MIN_NODES,
    NREC, REC0, RUNTIME, SUBMIT, USER,
    priority, record_key, sort_queue)
from advisor.engine.node_bits import (FULL, NONZERO, avail_bits_of, mask_bits, note_free,
                                      popcount, set_range, trailing_zeros, word_cpus, words)
from advisor.engine.slurm_fairshare import add_usage, decay_per_second, fair_tree
from advisor.engine.slurm_nodes import select_nodes
from advisor.engine.structures import heap_pop, heap_push, running_insert, running_remove

# scalar state shared by the inner functions: the queue is queue[S_QH:S_NQ]; counts of the
# running list, heap, allocation pool, reservations, free node-set slots; the backfill cycle;
# nodes picked; a version of the free CPUs; the count of held-node events (``sized``)
(S_NQ, S_NRL, S_HN, S_NTAKEN, S_NRES, S_NSLOTS, S_CYCLE, S_PICKED, S_FREEVER, S_QH,
 S_NEV) = range(11)
# a will-run window this wide takes in every running job (2**40 s: 35,000 years)
MAX_WINDOW = 1 << 40


@njit(cache=True)
def simulate_slurm(jobs, rec_job, rec_part, rec_static, node_cpus, part_nodes, part_tier,
                   part_max, cfg, w_age, max_age, node_tres, job_tres, lim_cap, job_lim,
                   job_use, fs_tree, fs_children, fs_values, job_assoc):
    """Returns (start time of each job, its first backfill reservation or -1). With
    cfg[C_STARTS_ONLY] the second is left incomplete: a backfill cycle in which no pending
    record fits in its partition's free CPUs is skipped, as it can start nothing."""
    n = jobs.shape[1]
    nr = rec_job.shape[0]
    nn = node_cpus.shape[0]
    npart = part_tier.shape[0]
    nt = node_tres.shape[0]
    # a job's per-node need of each resource: > 0 a count (WHOLE_NODE: all the node has),
    # < 0 per CPU taken there, 0 none
    needs = np.zeros(n, np.bool_)
    for k in range(nt):
        for j in range(n):
            needs[j] = needs[j] or job_tres[k, j] != 0
    tres_on = needs.any()
    limits_on = lim_cap.shape[0] > 0
    lim_used = np.zeros(lim_cap.shape, np.int64)  # what running jobs use of each counter
    # fair share: the tree (parent, first child, child count, user?), its children (sorted
    # by each Fair Tree pass), shares, usage now, each user association's factor
    na = fs_tree.shape[1]
    w_fs = float(cfg[C_W_FAIRSHARE]) if na > 0 else 0.0
    fs_on = w_fs > 0.0
    fs_parent = fs_tree[0].copy()
    fs_first = fs_tree[1].copy()
    fs_counts = fs_tree[2].copy()
    fs_user = fs_tree[3] != 0
    fs_kids = fs_children.copy()
    fs_shares = fs_values[0].copy()
    fs_usage = fs_values[1].copy()
    fs_now = fs_values[2].copy()
    fs_factor = np.zeros(na, np.float64)
    fs_lf = np.zeros(na, np.float64)
    fs_last = np.zeros(1, np.int64)  # when usage was last brought up to date
    half_life = cfg[C_DECAY_HALF_LIFE]
    decay = decay_per_second(half_life)
    unit = not tres_on  # one CPU per node: a node is free or not, and its bit says which
    for nd in range(nn):
        unit = unit and node_cpus[nd] == 1
    nusers = 1
    cap = 1
    for j in range(n):
        nusers = max(nusers, jobs[USER, j] + 1)
        if not unit:
            cap += nn if jobs[EXCLUSIVE, j] else min(nn, jobs[CPUS, j])
    start = np.full(n, -1, np.int64)
    first_resv = np.full(n, -1, np.int64)
    exp_end = np.zeros(n, np.int64)
    state = np.zeros(n, np.int8)
    prio = np.zeros(nr, np.int64)
    key = np.zeros(nr, np.float64)
    queue = np.empty(nr, np.int64)
    rl = np.empty(n, np.int64)          # running jobs by expected end (F6)
    rl_cpus = jobs[CPUS].copy()         # running_insert's tie-break
    ht = np.empty(n, np.int64)          # completion heap
    hj = np.empty(n, np.int64)
    # job j holds alloc_node/cpus[alloc0[j]:+nalloc[j]], and node n has node_free[n] CPUs
    # free; with one CPU per node, job_bits and free_bits (below) say it all, and are kept
    # instead
    alloc0 = np.zeros(n, np.int64)
    nalloc = np.zeros(n, np.int64)
    alloc_node = np.empty(cap, np.int64)
    alloc_cpus = np.empty(cap, np.int64)
    node_free = node_cpus.copy()
    tres_free = node_tres.copy()        # each resource's free amount per node
    fut_tres = node_tres.copy()         # ... at a future time (backfill planning)
    alloc_tres = np.zeros((nt, cap if tres_on else 0), np.int64)  # per allocation entry
    job_av = np.empty(nn if tres_on else 0, np.int64)  # CPUs a node offers the job tested
    job_av_bits = np.zeros((2, words(nn) if tres_on else 0), np.uint64)
    part_free = np.zeros(npart, np.int64)  # free CPUs per partition, kept up to date
    for p in range(npart):
        for nd in range(nn):
            if part_nodes[p, nd]:
                part_free[p] += node_cpus[nd]
    part_cpus = part_free.copy()
    fut = np.empty(nn, np.int64)        # free CPUs at a future time (backfill planning)
    held_for = np.zeros(n, np.int64)    # == p + 1: held[j] counts job j's CPUs in p
    held = np.zeros(n, np.int64)
    # node sets as bitmaps (node_bits): partitions, what node_free and fut offer, the nodes
    # excluded for the current test (blocked by the main scheduler, or reserved)
    nw = words(nn)
    part_bits = np.zeros((npart, nw), np.uint64)
    for p in range(npart):
        mask_bits(part_nodes[p], part_bits[p])
    everywhere = np.zeros(nw, np.uint64)
    set_range(everywhere, 0, nn)
    free_bits = np.zeros((2, nw), np.uint64)
    avail_bits_of(node_free, node_cpus, free_bits)
    fut_bits = np.zeros((2, nw), np.uint64)
    excl = np.zeros(nw, np.uint64)
    usable = np.zeros(nw, np.uint64)
    # with one CPU per node a running job's nodes are also kept as a bitmap, in a slot of its
    # own, so planning frees them a word at a time (fut is then not needed)
    slots = nn if unit else 1
    job_bits = np.zeros((slots, nw), np.uint64)
    job_slot = np.zeros(n, np.int64)
    slot_w0 = np.zeros(slots, np.int64)  # a slot's bits lie in words [slot_w0, slot_w1)
    slot_w1 = np.zeros(slots, np.int64)
    free_slots = np.arange(slots)
    scratch = np.empty((4, nn), np.int64)
    pick_bits = np.zeros(nw, np.uint64)  # the nodes chosen last, and CPUs taken on each
    pick_cpus = np.ones(nn, np.int64)    # (select_nodes leaves it at 1 when unit)
    # this cycle's backfill reservations: whole nodes (res_bits) over [res_b, res_e) (F4,
    # F5); a cycle tests at most bf_max_job_test records
    max_test = cfg[C_BF_MAX_JOB_TEST]
    max_res = nr + 1 if max_test <= 0 else min(nr, max_test) + 1
    res_b = np.empty(max_res, np.int64)
    res_e = np.empty(max_res, np.int64)
    res_bits = np.zeros((max_res, nw), np.uint64)
    res_w0 = np.zeros(max_res, np.int64)     # its nodes lie in words [res_w0, res_w1)
    res_w1 = np.zeros(max_res, np.int64)
    res_spare = np.zeros(max_res, np.int64)  # count mode: CPUs free at the start, unneeded
    res_s = np.zeros(max_res, np.int64)      # its begin before rounding: nodes free from it
    ends = np.empty(max_res, np.int64)       # the res_e, sorted
    # (``sized``) the nodes reservations hold as a step function: at ev_t[k] the count held
    # becomes ev_sum[k] (events sorted by time; +nodes at res_s, -nodes at res_e)
    ev_t = np.empty(2 * max_res, np.int64)
    ev_sum = np.empty(2 * max_res, np.int64)
    failed = np.zeros(npart, np.int8)
    part_count = np.zeros(npart, np.int64)
    part_tested = np.zeros(npart, np.int64)
    user_tested = np.zeros(nusers, np.int64)
    user_cycle = np.zeros(nusers, np.int64)  # user_tested[u] counts for cycle user_cycle[u]
    got_resv = np.zeros(n, np.int64)    # == cycle number: reserved in this cycle
    sc = np.zeros(11, np.int64)
    sc[S_NSLOTS] = slots
    cache = np.full(4, -1, np.int64)  # (overlap mask, free version, partition, CPUs)
    walk = np.full(4, -1, np.int64)   # next_batch's last walk
    # the last first reservation of a cycle: (job, free version, partition, duration,
    # start, nodes, count-mode spare, running jobs still running at start) and its nodes;
    # on one-CPU nodes also the running jobs then
    plan = np.full(8, -1, np.int64)
    plan_bits = np.zeros(nw, np.uint64)
    plan_running = np.empty(nn if unit else 0, np.int64)

    bf_interval = cfg[C_BF_INTERVAL]
    res = max(cfg[C_BF_RESOLUTION], 1)
    # a reservation's end is rounded down to bf_resolution, from 24.11 up (F5)
    end_round = res - 1 if cfg[C_RESV_END_UP] != 0 else 0
    relevant_end = cfg[C_RELEVANT_END] != 0
    one_node_first = cfg[C_ONE_NODE_FIRST] != 0   # 26.05's one-node jobs (F4)
    calc = cfg[C_CALC_PERIOD]
    phase = max(cfg[C_CALC_PHASE], 0)  # an instant PriorityCalcPeriod ticks fall on
    sched_interval = max(cfg[C_SCHED_INTERVAL], 1)
    busy_first = cfg[C_BF_BUSY_NODES] != 0
    max_part = cfg[C_BF_MAX_JOB_PART]
    max_user = cfg[C_BF_MAX_JOB_USER]
    part_reserve = cfg[C_BF_PART_RESERVE]
    # a record's CPUs and its time limit in its partition; the backfill walk may pass over
    # records in bulk when every record is counted as tested (no per-partition or per-user
    # limit) and all of them are pending (one per job)
    rec_cpus = np.empty(nr, np.int64)
    rec_limit = np.empty(nr, np.int64)
    can_skip = max_part <= 0 and max_user <= 0 and not limits_on
    for r in range(nr):
        rec_cpus[r] = jobs[CPUS, rec_job[r]]
        rec_limit[r] = min(jobs[LIMIT, rec_job[r]], part_max[rec_part[r]])
        can_skip = can_skip and jobs[NREC, rec_job[r]] == 1
    # the queued records' CPUs per partition, counted by rank among the distinct CPU counts
    # (cnt), and the smallest rank counted (low; nvals: none), so that whether any queued
    # record fits its partition's free CPUs is known without a walk of the queue
    present = np.zeros(max(rec_cpus.max(), 0) + 1 if nr else 1, np.bool_)
    for r in range(nr):
        present[rec_cpus[r]] = True  # (a sort of every record would cost more)
    cpu_vals = np.flatnonzero(present)
    nvals = cpu_vals.shape[0]
    rank_of = np.cumsum(present) - 1
    rec_rank = np.empty(nr, np.int64)
    for r in range(nr):
        rec_rank[r] = rank_of[rec_cpus[r]]
    cnt = np.zeros((npart, max(nvals, 1)), np.int64)
    low = np.full(npart, nvals, np.int64)
    # Count mode is the textbook's idealisation, not a Slurm setting: a reservation holds a
    # CPU count, not nodes, and a job may end exactly when it begins (as in Mu'alem and
    # Feitelson's EASY).
    count_mode = cfg[C_COUNT_RESV] != 0
    # EASY-like on one partition of one-CPU nodes: a cycle's only reservation ends it
    one_reservation = unit and npart == 1 and not count_mode and part_reserve == 1
    # on one partition of one-CPU nodes, the nodes reservations hold at an instant s were
    # free at their begin, so they are among those free at s, and no node is held twice
    # at once: free(s) - held(s) bounds what a job starting at s can have, with no bitmaps
    sized = unit and npart == 1 and not count_mode
    t0 = cfg[C_T0]
    starts_only = cfg[C_STARTS_ONLY] != 0
    # the simulation works on views of these that own nothing (engine.borrow); ``owners``
    # keeps the arrays themselves alive until it returns
    owners = (start, first_resv, exp_end, state, prio, key, queue, rl, rl_cpus, ht, hj,
              alloc0, nalloc, alloc_node, alloc_cpus, node_free, part_free, part_cpus, fut,
              held_for, held, part_bits, everywhere, free_bits, fut_bits, excl, usable,
              job_bits, job_slot, slot_w0, slot_w1, free_slots, scratch, pick_bits,
              pick_cpus, res_b, res_e, res_bits, res_w0, res_w1, res_spare, res_s, ends,
              ev_t, ev_sum, failed, part_count, part_tested, user_tested, user_cycle,
              got_resv, sc, cache, walk, plan, plan_bits, plan_running, rec_cpus, rec_limit,
              rec_rank, cnt, low, tres_free, fut_tres, alloc_tres, job_av, job_av_bits, needs,
              lim_used, fs_parent, fs_first, fs_counts, fs_user, fs_kids, fs_shares, fs_usage,
              fs_factor, fs_lf, fs_last, fs_now)
    start = borrowed(start)
    first_resv = borrowed(first_resv)
    exp_end = borrowed(exp_end)
    state = borrowed(state)
    prio = borrowed(prio)
    key = borrowed(key)
    queue = borrowed(queue)
    rl = borrowed(rl)
    rl_cpus = borrowed(rl_cpus)
    ht = borrowed(ht)
    hj = borrowed(hj)
    alloc0 = borrowed(alloc0)
    nalloc = borrowed(nalloc)
    alloc_node = borrowed(alloc_node)
    alloc_cpus = borrowed(alloc_cpus)
    node_free = borrowed(node_free)
    part_free = borrowed(part_free)
    part_cpus = borrowed(part_cpus)
    fut = borrowed(fut)
    held_for = borrowed(held_for)
    held = borrowed(held)
    part_bits = borrowed(part_bits)
    everywhere = borrowed(everywhere)
    free_bits = borrowed(free_bits)
    fut_bits = borrowed(fut_bits)
    excl = borrowed(excl)
    usable = borrowed(usable)
    job_bits = borrowed(job_bits)
    job_slot = borrowed(job_slot)
    slot_w0 = borrowed(slot_w0)
    slot_w1 = borrowed(slot_w1)
    free_slots = borrowed(free_slots)
    scratch = borrowed(scratch)
    pick_bits = borrowed(pick_bits)
    pick_cpus = borrowed(pick_cpus)
    res_b = borrowed(res_b)
    res_e = borrowed(res_e)
    res_bits = borrowed(res_bits)
    res_w0 = borrowed(res_w0)
    res_w1 = borrowed(res_w1)
    res_spare = borrowed(res_spare)
    res_s = borrowed(res_s)
    ends = borrowed(ends)
    ev_t = borrowed(ev_t)
    ev_sum = borrowed(ev_sum)
    failed = borrowed(failed)
    part_count = borrowed(part_count)
    part_tested = borrowed(part_tested)
    user_tested = borrowed(user_tested)
    user_cycle = borrowed(user_cycle)
    got_resv = borrowed(got_resv)
    sc = borrowed(sc)
    cache = borrowed(cache)
    walk = borrowed(walk)
    plan = borrowed(plan)
    plan_bits = borrowed(plan_bits)
    plan_running = borrowed(plan_running)
    rec_cpus = borrowed(rec_cpus)
    rec_limit = borrowed(rec_limit)
    rec_rank = borrowed(rec_rank)
    cnt = borrowed(cnt)
    low = borrowed(low)
    jobs = borrowed(jobs)
    rec_job = borrowed(rec_job)
    rec_part = borrowed(rec_part)
    rec_static = borrowed(rec_static)
    node_cpus = borrowed(node_cpus)
    part_nodes = borrowed(part_nodes)
    part_tier = borrowed(part_tier)
    part_max = borrowed(part_max)
    cfg = borrowed(cfg)
    node_tres = borrowed(node_tres)
    job_tres = borrowed(job_tres)
    tres_free = borrowed(tres_free)
    fut_tres = borrowed(fut_tres)
    alloc_tres = borrowed(alloc_tres)
    job_av = borrowed(job_av)
    job_av_bits = borrowed(job_av_bits)
    needs = borrowed(needs)
    lim_cap = borrowed(lim_cap)
    job_lim = borrowed(job_lim)
    job_use = borrowed(job_use)
    lim_used = borrowed(lim_used)
    fs_parent = borrowed(fs_parent)
    fs_first = borrowed(fs_first)
    fs_counts = borrowed(fs_counts)
    fs_user = borrowed(fs_user)
    fs_kids = borrowed(fs_kids)
    fs_shares = borrowed(fs_shares)
    fs_usage = borrowed(fs_usage)
    fs_factor = borrowed(fs_factor)
    fs_lf = borrowed(fs_lf)
    fs_last = borrowed(fs_last)
    fs_now = borrowed(fs_now)
    job_assoc = borrowed(job_assoc)

    def fs_accrue(t):
        """Usage brought up to t, a PriorityCalcPeriod at most at a time: all of it decays
        by decay ** dt, and each running job adds dt * decay ** dt times its CPUs to its
        association and those above it [src: priority_multifactor.c _decay_thread(),
        _apply_new_usage()]."""
        step = max(calc, 1)
        while fs_last[0] < t:
            b = fs_last[0]
            e = min(b + step, t)
            real = decay ** (e - b)
            for a in range(na):
                fs_usage[a] *= real
            for i in range(sc[S_NRL]):
                j = rl[i]
                if job_assoc[j] >= 0:
                    run = e - max(start[j], b)
                    if run > 0:
                        add_usage(job_assoc[j], run * decay ** run * jobs[CPUS, j],
                                  fs_parent, fs_usage)
            fs_last[0] = e

    def within_limits(j, first, last):
        """Whether job j starting keeps every counter covering it within its caps on
        resources first..last-1 (0: running jobs; 1..: TRES)."""
        for slot in range(job_lim.shape[0]):
            g = job_lim[slot, j]
            if g < 0:
                break
            for q in range(first, last):
                cap = lim_cap[g, q]
                if cap >= 0 and lim_used[g, q] + job_use[q, j] > cap:
                    return False
        return True

    def charge(j, sign):
        for slot in range(job_lim.shape[0]):
            g = job_lim[slot, j]
            if g < 0:
                break
            for q in range(lim_cap.shape[1]):
                lim_used[g, q] += sign * job_use[q, j]

    def start_job(j, p, t, k):
        """Give job j the k nodes picked (pick_bits, pick_cpus) in partition p. It is killed
        at its limit plus OverTimeLimit [slurm.conf(5) OverTimeLimit]; planning assumes the
        limit (F6)."""
        if unit:  # a word at a time
            sc[S_NSLOTS] -= 1
            sl = free_slots[sc[S_NSLOTS]]
            job_slot[j] = sl
            slot_w0[sl], slot_w1[sl] = nw, 0
            for w in range(nw):
                x = pick_bits[w]
                if x == 0:
                    continue
                slot_w0[sl] = min(slot_w0[sl], w)
                slot_w1[sl] = w + 1
                job_bits[sl, w] = x
                free_bits[NONZERO, w] &= ~x
                free_bits[FULL, w] &= ~x
                for q in range(npart):
                    part_free[q] -= np.int64(popcount(x & part_bits[q, w]))
        else:
            a0 = sc[S_NTAKEN]
            alloc0[j] = a0
            nalloc[j] = k
            sc[S_NTAKEN] = a0 + k
            for w in range(nw):
                x = pick_bits[w]
                while x != 0:
                    nd = w * 64 + np.int64(trailing_zeros(x))
                    x &= x - np.uint64(1)
                    c = pick_cpus[nd]
                    alloc_node[a0] = nd
                    alloc_cpus[a0] = c
                    if tres_on:
                        for q in range(nt):
                            need = job_tres[q, j]
                            amount = node_tres[q, nd] if need >= WHOLE_NODE else \
                                need if need >= 0 else -need * c
                            tres_free[q, nd] -= amount
                            alloc_tres[q, a0] = amount
                    a0 += 1
                    node_free[nd] -= c
                    note_free(free_bits, nd, node_free[nd], node_cpus[nd])
                    for q in range(npart):
                        if part_nodes[q, nd]:
                            part_free[q] -= c
        sc[S_FREEVER] += 1
        if limits_on:
            charge(j, 1)
        limit = min(jobs[LIMIT, j], part_max[p])
        if state[j] == QUEUED:
            for r in range(jobs[REC0, j], jobs[REC0, j] + jobs[NREC, j]):
                q, v = rec_part[r], rec_rank[r]
                cnt[q, v] -= 1
                while low[q] < nvals and cnt[q, low[q]] == 0:
                    low[q] += 1
        state[j] = RUNNING
        start[j] = t
        exp_end[j] = t + limit
        # its nodes are free again C_END_LATENCY after it ends (slurm_timing's epilog)
        end = t + min(jobs[RUNTIME, j], limit + cfg[C_OVER_TIME]) + cfg[C_END_LATENCY]
        sc[S_HN] = heap_push(ht, hj, sc[S_HN], end, j)
        sc[S_NRL] = running_insert(rl, sc[S_NRL], j, exp_end, rl_cpus)

    def finish_job(j):
        state[j] = DONE
        if unit:
            sl = job_slot[j]
            for w in range(slot_w0[sl], slot_w1[sl]):
                x = job_bits[sl, w]
                job_bits[sl, w] = 0  # (the slot is clean for its next job)
                free_bits[NONZERO, w] |= x
                free_bits[FULL, w] |= x
                for q in range(npart):
                    part_free[q] += np.int64(popcount(x & part_bits[q, w]))
            free_slots[sc[S_NSLOTS]] = sl
            sc[S_NSLOTS] += 1
        else:
            for i in range(alloc0[j], alloc0[j] + nalloc[j]):
                nd = alloc_node[i]
                node_free[nd] += alloc_cpus[i]
                for q in range(nt if tres_on else 0):
                    tres_free[q, nd] += alloc_tres[q, i]
                note_free(free_bits, nd, node_free[nd], node_cpus[nd])
                for q in range(npart):
                    if part_nodes[q, nd]:
                        part_free[q] += alloc_cpus[i]
        sc[S_NRL] = running_remove(rl, sc[S_NRL], j)
        sc[S_FREEVER] += 1
        if limits_on:
            charge(j, -1)

    def offered(j, avail, atres):
        """job_av: the CPUs each node offers job j, its other resources counted: none
        where one falls short, and with memory per CPU no more than that memory covers
        [src: cons_tres job_test.c _can_job_run_on_node()]."""
        for nd in range(nn):
            c = avail[nd]
            for q in range(nt):
                need = job_tres[q, j]
                if c == 0 or need == 0:
                    continue
                if need >= WHOLE_NODE:
                    c = c if atres[q, nd] == node_tres[q, nd] else 0
                elif need > 0:
                    c = c if atres[q, nd] >= need else 0
                else:
                    c = min(c, atres[q, nd] // -need)
            job_av[nd] = c
        avail_bits_of(job_av, node_cpus, job_av_bits)

    def pick(j, p, avail, avail_bits, busy, atres):
        """Nodes for job j in p, avoiding the excluded ones, into pick_bits/pick_cpus;
        ``atres`` is what is free of the other resources where ``avail`` CPUs are."""
        if tres_on and needs[j]:
            offered(j, avail, atres)
            avail, avail_bits = job_av, job_av_bits
        # (a one-CPU job is one task, so on one node; the model does not know the tasks
        # of a wider job, which Slurm may spread up to one node per task)
        return select_nodes(jobs[CPUS, j], jobs[MIN_NODES, j], jobs[EXCLUSIVE, j] != 0,
                            part_bits[p], excl, avail, avail_bits, unit, busy,
                            one_node_first and jobs[CPUS, j] == 1, free_bits[FULL],
                            usable, scratch, pick_bits, pick_cpus)

    def enqueue(j, t):
        """Job j joins the queue in F1 order; queued records keep their keys until the next
        recalculation, so an insertion from the back keeps the queue sorted."""
        state[j] = QUEUED
        for r in range(jobs[REC0, j], jobs[REC0, j] + jobs[NREC, j]):
            # a job's priority is set at submission [src: priority_p_set()]
            prio[r] = priority(r, t, jobs, rec_job, rec_static, w_age, max_age, w_fs,
                               fs_factor, job_assoc)
            key[r] = record_key(r, prio, rec_part, part_tier)
            cnt[rec_part[r], rec_rank[r]] += 1
            low[rec_part[r]] = min(low[rec_part[r]], rec_rank[r])
            b = sc[S_NQ] - 1
            while b >= sc[S_QH] and (key[queue[b]] > key[r] or (key[queue[b]] == key[r]
                                                           and queue[b] > r)):
                queue[b + 1] = queue[b]
                b -= 1
            queue[b + 1] = r
            sc[S_NQ] += 1

    def drop_started(upto):
        """Remove started jobs' records from queue[S_QH:upto], keeping the survivors' order
        at the end of that range, so only the visited part moves (records further on are
        skipped while their job is not pending)."""
        m = upto
        for a in range(upto - 1, sc[S_QH] - 1, -1):
            r = queue[a]
            if state[rec_job[r]] == QUEUED:
                m -= 1
                queue[m] = r
        sc[S_QH] = m

    def held_max(a, b):
        """(``sized``) The most nodes the reservations hold at one instant of [a, b]
        (a reservation holds its nodes over res_s <= instant < res_e)."""
        ne = sc[S_NEV]
        k = np.searchsorted(ev_t[:ne], a, side="right")
        m = 0 if k == 0 else ev_sum[k - 1]
        while k < ne and ev_t[k] <= b:
            m = max(m, ev_sum[k])
            k += 1
        return m

    def hold_event(time, delta):
        """Add ``delta`` nodes held from ``time`` on to the step function (held_max)."""
        ne = sc[S_NEV]
        k = np.searchsorted(ev_t[:ne], time, side="right")
        for m in range(ne, k, -1):
            ev_t[m] = ev_t[m - 1]
            ev_sum[m] = ev_sum[m - 1] + delta
        ev_t[k] = time
        ev_sum[k] = (0 if k == 0 else ev_sum[k - 1]) + delta
        sc[S_NEV] = ne + 1

    def mark_reserved(s, e, p, avail, avail_bits):
        """Exclude the nodes of every reservation overlapping [s, e] (Slurm's test is end > s
        and begin <= e, inclusive at e [src: backfill.c _attempt_backfill()]); returns the
        free CPUs of p they take away, each node counted once."""
        c = 0
        for i in range(sc[S_NRES]):
            if res_e[i] > s and res_b[i] <= e:
                for w in range(res_w0[i], res_w1[i]):
                    new = res_bits[i, w] & ~excl[w]
                    if new != 0:
                        excl[w] |= new
                        c += word_cpus(new & part_bits[p, w] & avail_bits[NONZERO, w], w,
                                       avail, unit)
        return c

    def held_in(j, p):
        """CPUs running job j holds on nodes of p (cached: an allocation does not change)."""
        if held_for[j] != p + 1:
            held_for[j] = p + 1
            held[j] = 0
            if unit:
                sl = job_slot[j]
                for w in range(slot_w0[sl], slot_w1[sl]):
                    held[j] += np.int64(popcount(job_bits[sl, w] & part_bits[p, w]))
            else:
                for i in range(alloc0[j], alloc0[j] + nalloc[j]):
                    if part_nodes[p, alloc_node[i]]:
                        held[j] += alloc_cpus[i]
        return held[j]

    def holds_picked(j):
        """Whether running job j holds a node of pick_bits."""
        if unit:
            sl = job_slot[j]
            for w in range(slot_w0[sl], slot_w1[sl]):
                if job_bits[sl, w] & pick_bits[w] != 0:
                    return True
            return False
        for i in range(alloc0[j], alloc0[j] + nalloc[j]):
            nd = alloc_node[i]
            if (pick_bits[nd // 64] >> np.uint64(nd % 64)) & np.uint64(1) != 0:
                return True
        return False

    def planned_start(s, ri, t, anchor):
        """When a job found to fit at s, once rl[:ri] are released, is planned to start:
        s; from 25.05.1 the end of the last of them holding a node it was given, so that
        running jobs on other nodes no longer delay it, and never before the anchor
        [src: cons_tres job_test.c _get_last_relevant_job(); backfill.c start_res]."""
        if not relevant_end:
            return s
        for i in range(ri - 1, -1, -1):
            if holds_picked(rl[i]):
                return max(anchor, exp_end[rl[i]], t + 1)
        return max(anchor, t)

    def overlaps_reserved(s, d):
        """Whether a reservation of the picked nodes over [s, s + d], rounded to
        bf_resolution (its begin down, its end by ``end_round``), overlaps an existing one
        on any of them (end excluded) [src: backfill.c _test_resv_overlap()]."""
        b, e = s // res * res, (s + d + end_round) // res * res
        for i in range(sc[S_NRES]):
            if res_e[i] > b and res_b[i] < e:
                for w in range(res_w0[i], res_w1[i]):
                    if res_bits[i, w] & pick_bits[w] != 0:
                        return True
        return False

    def count_allows(cpus, s, e, take):
        """Count mode: a job over [s, e) overlapping a reservation must fit in its spare
        CPUs; ``take`` books them."""
        for i in range(sc[S_NRES]):
            if res_e[i] > s and res_b[i] < e and cpus > res_spare[i]:
                return False
        if take:
            for i in range(sc[S_NRES]):
                if res_e[i] > s and res_b[i] < e:
                    res_spare[i] -= cpus
        return True

    def reserved_now(p, s, e):
        """Free CPUs of p on nodes held by reservations overlapping [s, e]. With few
        reservations the count is cached per overlap set until a job starts or ends (most
        queued jobs in a cycle see the same set); on a cache hit the nodes are not marked."""
        mask = 0
        if sc[S_NRES] <= 62:
            for i in range(sc[S_NRES]):
                if res_e[i] > s and res_b[i] <= e:
                    mask |= 1 << i
            if mask == 0:
                return 0
        if mask > 0 and cache[0] == mask and cache[1] == sc[S_FREEVER] and cache[2] == p:
            return cache[3]
        c = mark_reserved(s, e, p, node_free, free_bits)
        cache[0], cache[1], cache[2], cache[3] = mask, sc[S_FREEVER], p, c
        return c

    def main_pass(t):
        """F2: in queue order; once a job cannot start, no lower job of its partition starts,
        nor any job on that partition's nodes [src: job_scheduler.c schedule()]."""
        failed[:] = 0
        excl[:] = 0
        nfailed = 0
        started = False
        last = sc[S_QH]
        for a in range(sc[S_QH], sc[S_NQ]):
            last = a + 1
            r = queue[a]
            j = rec_job[r]
            if state[j] != QUEUED:
                continue
            p = rec_part[r]
            if failed[p]:
                continue
            # over a limit: passed over, blocking nothing [src: job_scheduler.c schedule(),
            # acct_policy_job_runnable_pre_select() and _post_select()]
            if limits_on and not within_limits(j, 0, lim_cap.shape[1]):
                continue
            k = 0
            if nfailed > 0 or jobs[CPUS, j] <= part_free[p]:
                k = pick(j, p, node_free, free_bits, False, tres_free)
            if k > 0:
                start_job(j, p, t, k)
                started = True
                continue
            # jobs below bf_min_prio_reserve or younger than bf_min_age_reserve do not block
            # [slurm.conf(5) SchedulerParameters]
            if cfg[C_BF_MIN_PRIO] > 0 and prio[r] < cfg[C_BF_MIN_PRIO]:
                continue
            if cfg[C_BF_MIN_AGE] > 0 and t - jobs[ELIGIBLE, j] < cfg[C_BF_MIN_AGE]:
                continue
            failed[p] = 1
            nfailed += 1
            if nfailed == npart:
                break
            for w in range(nw):
                excl[w] |= part_bits[p, w]
        if started:
            drop_started(last)

    def next_batch(ri, p, t, window, batch_end):
        """Running jobs are released in batches, and a job may start when a batch's last one
        ends: the first batch ends `window` after the first job's end rounded up to a
        multiple of the window, each later one after the window has doubled until it takes
        in the next job [src: cons_tres _will_run_test()]. Jobs without a node in p neither
        open nor close one. The batch from rl[ri]: returns (when its last job with nodes in
        p ends, or NEVER; the position after it; the CPUs of p it frees; the new window and
        batch end).

        Called again from the same ri with a wider window, the batch takes in at least what
        it did: the walk resumes where it stopped (``walk``: ri, position, last, gain)."""
        q, last, gain = ri, -1, 0
        if walk[0] == ri:
            q, last, gain = walk[1], walk[2], walk[3]
        while q < sc[S_NRL]:
            if last >= 0 and exp_end[rl[q]] > batch_end + window:
                break
            rj = rl[q]
            h = held_in(rj, p)
            if h > 0:
                if batch_end < 0:
                    batch_end = exp_end[rj] + window - exp_end[rj] % window
                last = exp_end[rj]
                gain += h
            q += 1
        walk[0], walk[1], walk[2], walk[3] = ri, q, last, gain
        while True:
            window = min(2 * window, MAX_WINDOW)  # (doubled on, it would overflow)
            if q >= sc[S_NRL] or exp_end[rl[q]] <= batch_end + window or \
                    window == MAX_WINDOW:
                break
        return (NEVER if last < 0 else max(last, t + 1)), q, gain, window, batch_end

    def nodes_at(j, p, s, ri):
        """On one-CPU nodes with nothing reserved: job j's nodes at s, once rl[:ri] are
        released. Every node is up, so a node is free at s unless a job still running then
        holds it: when the last plan was for the same job at the same s with the same jobs
        still running then, its nodes are the answer again (what started or ended since is
        released by s)."""
        still = sc[S_NRL] - ri
        # (bf_busy_nodes looks at the nodes in use now)
        same = (plan[0] == j and plan[2] == p and plan[4] == s and plan[7] == still
                and not busy_first)
        for i in range(still if same else 0):
            if plan_running[i] != rl[ri + i]:
                same = False
                break
        if same:
            pick_bits[:] = plan_bits
            sc[S_PICKED] = plan[5]
            return
        fut_bits[NONZERO] = free_bits[NONZERO]
        for i in range(ri):
            sl = job_slot[rl[i]]
            for w in range(slot_w0[sl], slot_w1[sl]):
                fut_bits[NONZERO, w] |= job_bits[sl, w]
        excl[:] = 0
        sc[S_PICKED] = pick(j, p, node_cpus, fut_bits, busy_first, node_tres)
        plan[7] = still
        plan_running[:still] = rl[ri:sc[S_NRL]]

    def earliest_search(j, p, t, d):
        """F5-F6: the earliest time at which job j may start in p for d seconds, tested
        against the other reservations as Slurm tests it (below), running jobs ending at
        start + limit; fills pick_bits. Returns NEVER if that is beyond bf_window (no
        reservation).

        On one-CPU nodes with nothing reserved yet (a cycle's first reservation) the job
        fits at s exactly when p has enough free nodes then: the count is followed alone,
        and the nodes free at s are gathered once, at the answer (nodes_at())."""
        by_count = unit and sc[S_NRES] == 0 and not count_mode
        need = max(jobs[CPUS, j], jobs[MIN_NODES, j])
        # what is free at s: fut and fut_bits, or with one CPU per node fut_bits alone
        avail = node_cpus if unit else fut
        if not unit:
            fut[:] = node_free
            fut_tres[:] = tres_free
        if not by_count:
            fut_bits[:] = free_bits
        tot = part_free[p]
        horizon = t + cfg[C_BF_WINDOW]
        ri = 0
        s = t
        window = cfg[C_WILL_RUN_WINDOW]
        batch_end = -1
        e_next = 0    # ends[e_next] is the first reservation end after s
        walk[0] = -1
        anchor = t     # Slurm's start_res (below)
        while s <= horizon:
            while ri < sc[S_NRL] and max(exp_end[rl[ri]], t + 1) <= s:
                rj = rl[ri]
                tot += held_in(rj, p)
                if not unit:
                    for i in range(alloc0[rj], alloc0[rj] + nalloc[rj]):
                        nd = alloc_node[i]
                        fut[nd] += alloc_cpus[i]
                        for q in range(nt if tres_on else 0):
                            fut_tres[q, nd] += alloc_tres[q, i]
                        note_free(fut_bits, nd, fut[nd], node_cpus[nd])
                elif not by_count:  # (counting alone: nodes_at() gathers them at the end)
                    sl = job_slot[rj]
                    for w in range(slot_w0[sl], slot_w1[sl]):
                        fut_bits[NONZERO, w] |= job_bits[sl, w]  # (FULL: not read)
                ri += 1
            if by_count:
                if need <= tot:
                    nodes_at(j, p, s, ri)
                    return planned_start(s, ri, t, t)
            elif count_mode:
                if jobs[CPUS, j] <= tot and count_allows(jobs[CPUS, j], s, s + d, False):
                    sc[S_PICKED] = 0
                    res_spare[sc[S_NRES]] = tot - jobs[CPUS, j]  # free at s, beyond the need
                    return s
            elif jobs[CPUS, j] <= tot:
                # Slurm's test: the nodes no reservation holds over [anchor, anchor + d]
                # (its start_res: moved on to where a reservation ends, or to a start whose
                # reservation overlapped another), the job's start on them, then its
                # reservation [s, s + d], rounded to bf_resolution, must overlap none on
                # its nodes [src: backfill.c _attempt_backfill() TRY_LATER,
                # _test_resv_overlap()]
                at_end = e_next < sc[S_NRES] and ends[e_next] <= s
                retry = True
                while retry:
                    retry = False
                    start = s
                    # (sized) the nodes reservations hold at any instant from the anchor on
                    # up to s and within its window are free at s and ruled out: a count
                    # that says no spares the bitmaps
                    if sized and jobs[CPUS, j] + held_max(anchor, min(anchor + d, s)) > tot:
                        ok = False
                    else:
                        excl[:] = 0
                        ok = jobs[CPUS, j] <= tot - mark_reserved(anchor, anchor + d, p,
                                                                  avail, fut_bits)
                    if ok:
                        sc[S_PICKED] = pick(j, p, avail, fut_bits, busy_first, fut_tres)
                        if sc[S_PICKED] > 0:
                            start = planned_start(s, ri, t, anchor)
                            if start == t or not overlaps_reserved(start, d):
                                return start
                            retry = anchor != start
                    else:
                        retry = at_end and anchor != s
                    if retry:
                        anchor = start
            s_next = NEVER
            if ri < sc[S_NRL] and (count_mode or window <= 0):
                s_next = max(exp_end[rl[ri]], t + 1)
            elif ri < sc[S_NRL]:
                s_next, q, gain, window, batch_end = next_batch(ri, p, t, window, batch_end)
                if by_count:
                    # the batch's jobs are released at its end at once: the ones with nodes
                    # in p end by then, the others free none of p's
                    tot += gain
                    ri = q
            while e_next < sc[S_NRES] and ends[e_next] <= s:
                e_next += 1
            if e_next < sc[S_NRES]:
                s_next = min(s_next, ends[e_next])
            s = s_next
        return NEVER

    def earliest(j, p, t, d):
        """earliest_search(), except that a cycle's first reservation is the one made first
        in an earlier cycle when no job started or ended since and it still lies ahead: the
        candidate times up to it and what is free at each are unchanged (busy queues
        reserve for the same job cycle after cycle). Later ones are searched anew: Slurm
        tests them against the others from the cycle's own time on, so the same
        reservations can place them differently a cycle later."""
        first = sc[S_NRES] == 0
        if (first and plan[0] == j and plan[1] == sc[S_FREEVER] and plan[2] == p
                and plan[3] == d and plan[4] > t):
            pick_bits[:] = plan_bits
            sc[S_PICKED] = plan[5]
            res_spare[0] = plan[6]
            return plan[4]
        s = earliest_search(j, p, t, d)
        if first and s != NEVER:
            plan[0], plan[1], plan[2], plan[3] = j, sc[S_FREEVER], p, d
            plan[4], plan[5], plan[6] = s, sc[S_PICKED], res_spare[0]
            plan_bits[:] = pick_bits
        return s

    def next_startable(t, a, tested):
        """Once no reservation is left to make, only a job that fits now can start: the
        first queue position from a whose record might, within bf_max_job_test. A record
        cannot if it wants more CPUs than any partition has free or (one partition) runs
        into the earliest reservation wanting more CPUs than are free outside it."""
        free_max = 0
        for q in range(npart):
            free_max = max(free_max, part_free[q])
        first_b, first, outside = NEVER, 0, free_max
        if npart == 1 and not count_mode:
            for i in range(sc[S_NRES]):
                if res_b[i] < first_b:
                    first_b, first = res_b[i], i
            if first_b != NEVER:
                for w in range(res_w0[first], res_w1[first]):
                    outside -= word_cpus(res_bits[first, w] & part_bits[0, w]
                                         & free_bits[NONZERO, w], w, node_free, unit)
        end = sc[S_NQ] if max_test <= 0 else min(sc[S_NQ], a + max_test - tested)
        while a < end:
            c = rec_cpus[queue[a]]
            if c <= outside or (c <= free_max and t + rec_limit[queue[a]] < first_b):
                break
            a += 1
        return a

    def surely_reserves(j, t):
        """With one-CPU nodes and nothing reserved yet, job j gets a reservation when the
        last running job is released within bf_window, if p holds enough nodes: the
        search's last step frees them all."""
        last = t + 1 if sc[S_NRL] == 0 else max(exp_end[rl[sc[S_NRL] - 1]], t + 1)
        return (max(jobs[CPUS, j], jobs[MIN_NODES, j]) <= part_cpus[0]
                and last <= t + cfg[C_BF_WINDOW])

    def nothing_fits(a):
        """Every pending record from queue position a wants more CPUs than its partition
        has free: none of them can start now. Only the shorter side of position a is
        walked: after it, for a record that fits; before it, counting those that do, to
        be compared with how many fit in all (cnt)."""
        after = sc[S_NQ] - a <= a - sc[S_QH]
        lo, hi = (a, sc[S_NQ]) if after else (sc[S_QH], a)
        before = 0
        for b in range(lo, hi):
            r = queue[b]
            if state[rec_job[r]] == QUEUED and rec_cpus[r] <= part_free[rec_part[r]]:
                if after:
                    return False
                before += 1
        if after:
            return True
        total = 0  # fitting records, counted until they outnumber those before a
        for q in range(npart):
            v = low[q]
            while v < nvals and cpu_vals[v] <= part_free[q] and total <= before:
                total += cnt[q, v]
                v += 1
        return total <= before

    def backfill(t):
        """F3-F6: the plan is rebuilt from scratch in queue order. A job starts if it fits
        now on nodes no earlier reservation holds over its limit; otherwise it may reserve
        whole nodes [src: backfill.c _attempt_backfill(), _add_reservation()]."""
        sc[S_CYCLE] += 1
        cache[0] = -1  # reservations are rebuilt: cached counts are void
        sc[S_NRES] = 0
        sc[S_NEV] = 0
        part_count[:] = 0
        part_tested[:] = 0
        tested = 0
        started = False
        reserved_out = 0  # partitions whose bf_job_part_count_reserve is used up
        a = sc[S_QH] - 1
        while True:
            a += 1
            if reserved_out == npart and can_skip and a < sc[S_NQ]:
                b = next_startable(t, a, tested)  # the records passed over count as tested
                tested += b - a
                a = b
            if a >= sc[S_NQ]:
                break
            r = queue[a]
            j = rec_job[r]
            if state[j] != QUEUED:
                continue  # started in another partition
            p = rec_part[r]
            u = jobs[USER, j]
            if user_cycle[u] != sc[S_CYCLE]:  # a reset per user seen, not per user known
                user_cycle[u] = sc[S_CYCLE]
                user_tested[u] = 0
            if max_test > 0 and tested >= max_test:
                break
            # records beyond bf_max_job_part / bf_max_job_user are skipped entirely
            if max_part > 0 and part_tested[p] >= max_part:
                continue
            if max_user > 0 and user_tested[u] >= max_user:
                continue
            # a job count over a limit skips the record before it counts as tested, a TRES
            # one after, and neither reserves [src: backfill.c _attempt_backfill():
            # acct_policy_job_runnable_pre_select(), _post_select()]
            if limits_on and not within_limits(j, 0, 1):
                continue
            tested += 1
            part_tested[p] += 1
            user_tested[u] += 1
            if limits_on and not within_limits(j, 1, lim_cap.shape[1]):
                continue
            d = rec_limit[r]
            fits = jobs[CPUS, j] <= part_free[p]  # cheap test first: most jobs fail it
            if fits:
                excl[:] = 0
            if fits and sized and sc[S_NRES] > 0:
                fits = jobs[CPUS, j] <= part_free[p] - held_max(t, t)
            if fits and sc[S_NRES] > 0:
                if count_mode:
                    fits = count_allows(jobs[CPUS, j], t, t + d, False)
                else:
                    fits = jobs[CPUS, j] <= part_free[p] - reserved_now(p, t, t + d)
                    if fits:
                        mark_reserved(t, t + d, p, node_free, free_bits)  # the nodes
            if fits:
                k = pick(j, p, node_free, free_bits, False, tres_free)
                if k > 0:
                    if count_mode:
                        count_allows(jobs[CPUS, j], t, t + d, True)
                    start_job(j, p, t, k)
                    started = True
                    continue
            # who may reserve: bf_job_part_count_reserve counts, per partition, the records
            # that got a reservation [src: backfill.c _check_bf_usage()]; bf_min_prio_reserve,
            # bf_min_age_reserve, bf_one_resv_per_job [slurm.conf(5)]
            if part_reserve > 0 and part_count[p] >= part_reserve:
                continue
            if cfg[C_BF_MIN_PRIO] > 0 and prio[r] < cfg[C_BF_MIN_PRIO]:
                continue
            if cfg[C_BF_MIN_AGE] > 0 and t - jobs[ELIGIBLE, j] < cfg[C_BF_MIN_AGE]:
                continue
            if cfg[C_BF_ONE_RESV] and got_resv[j] == sc[S_CYCLE]:
                continue
            if one_reservation and first_resv[j] >= 0 and surely_reserves(j, t) and \
                    nothing_fits(a + 1):
                break  # the reservation would change nothing seen: no record can start
            s = earliest(j, p, t, d)
            if s == NEVER:
                continue
            # F5: times quantised to bf_resolution, the end down (up from 24.11: Slurm
            # overestimates a reservation rather than underestimate it); at least one slot
            # [src: backfill.c end_reserve rounding, _set_slot_time(), _add_reservation()]
            i = sc[S_NRES]
            res_b[i] = s // res * res
            res_e[i] = max((s + d + end_round) // res * res, res_b[i] + res)
            res_bits[i] = pick_bits
            res_w0[i], res_w1[i] = nw, 0
            for w in range(nw):
                if pick_bits[w] != 0:
                    res_w0[i] = min(res_w0[i], w)
                    res_w1[i] = w + 1
            res_s[i] = s
            b = i
            while b > 0 and ends[b - 1] > res_e[i]:
                ends[b] = ends[b - 1]
                b -= 1
            ends[b] = res_e[i]
            if sized:
                hold_event(s, sc[S_PICKED])
                hold_event(res_e[i], -sc[S_PICKED])
            sc[S_NRES] = i + 1
            part_count[p] += 1
            if part_count[p] == part_reserve:
                reserved_out += 1
            got_resv[j] = sc[S_CYCLE]
            if first_resv[j] < 0:
                first_resv[j] = s
        if started:
            drop_started(sc[S_NQ])
        return started

    # ------------------------------------------------------------ a snapshot's state at t0
    nxt = 0
    if fs_on:
        fs_last[0] = t0 if t0 != NO_RESUME else (jobs[SUBMIT, 0] if n else 0)
        fair_tree(fs_parent, fs_shares, fs_user, fs_usage, fs_kids, fs_first, fs_counts,
                  fs_lf, fs_factor)
        for a in range(na):  # until the first tick, the factors slurmctld uses now
            if fs_now[a] >= 0.0:
                fs_factor[a] = fs_now[a]
    if t0 != NO_RESUME:
        # running jobs in start order; their nodes are chosen by the rule above (a snapshot
        # from a trace has no node list; a live one's is not used yet)
        for j in np.argsort(jobs[FIXED], kind="mergesort"):
            if jobs[FIXED, j] < 0 or jobs[SUBMIT, j] > t0:
                continue
            p = rec_part[jobs[REC0, j]]
            excl[:] = 0
            k = pick(j, p, node_free, free_bits, False, tres_free)
            if k == 0:
                k = select_nodes(jobs[CPUS, j], 0, False, everywhere, excl, node_free,
                                 free_bits, unit, False, False, free_bits[FULL], usable,
                                 scratch, pick_bits, pick_cpus)
            start_job(j, p, jobs[FIXED, j], k)
        while nxt < n and jobs[SUBMIT, nxt] <= t0:
            if state[nxt] == 0:
                enqueue(nxt, t0)
            nxt += 1
        sort_queue(queue[sc[S_QH]:sc[S_NQ]], sc[S_NQ] - sc[S_QH], key, prio, rec_part, part_tier)

    t_wake = t0 if (t0 != NO_RESUME and cfg[C_FIRST_PASS] != 0) else NEVER
    t_bf = NEVER
    t_calc = NEVER
    t_sched = NEVER
    while True:
        t_arr = jobs[SUBMIT, nxt] if nxt < n else NEVER
        t_end = ht[0] if sc[S_HN] > 0 else NEVER
        t = min(t_arr, t_end, t_wake, t_bf, t_calc, t_sched)
        if t == NEVER:
            break
        events = t == t_wake
        t_wake = NEVER
        if fs_on:
            fs_accrue(t)  # (before the jobs ending now leave the running list)
        while sc[S_HN] > 0 and ht[0] == t:
            j, sc[S_HN] = heap_pop(ht, hj, sc[S_HN])
            finish_job(j)
            events = True
        reorder = False
        while nxt < n and jobs[SUBMIT, nxt] == t:
            enqueue(nxt, t)
            nxt += 1
            events = True
        if t == t_calc:
            # F7: all pending jobs are recomputed together every PriorityCalcPeriod
            # [src: priority_multifactor.c _decay_thread()]
            t_calc = NEVER
            changed_prio = False
            if fs_on:
                fair_tree(fs_parent, fs_shares, fs_user, fs_usage, fs_kids, fs_first,
                          fs_counts, fs_lf, fs_factor)
            for a in range(sc[S_QH], sc[S_NQ]):
                r = queue[a]
                p_new = priority(r, t, jobs, rec_job, rec_static, w_age, max_age, w_fs,
                                 fs_factor, job_assoc)
                if p_new != prio[r]:
                    prio[r] = p_new
                    changed_prio = True
            if changed_prio:
                reorder = True
                # the main scheduler sees the new order on its next periodic pass
                # [slurm.conf(5) SchedulerParameters sched_interval]
                if t_sched == NEVER:
                    t_sched = (t // sched_interval + 1) * sched_interval
        if reorder:
            sort_queue(queue[sc[S_QH]:sc[S_NQ]], sc[S_NQ] - sc[S_QH], key, prio, rec_part,
                       part_tier)
        if t == t_sched:
            t_sched = NEVER
            events = True
        changed = events or reorder
        if events and sc[S_NQ] > sc[S_QH]:
            main_pass(t)
        if cfg[C_BACKFILL] != 0 and sc[S_NQ] > sc[S_QH]:
            if changed and t_bf == NEVER:
                # the next cycle [slurm.conf(5) bf_interval]
                t_bf = t if bf_interval <= 0 else (t // bf_interval + 1) * bf_interval
            if t == t_bf:
                t_bf = NEVER
                if starts_only and nothing_fits(sc[S_QH]):
                    pass  # (its reservations would be rebuilt by the next cycle anyway)
                elif backfill(t) and bf_interval > 0:
                    t_bf = t + bf_interval  # what it started is a change for the next cycle
        elif t == t_bf:
            t_bf = NEVER
        if sc[S_NQ] > sc[S_QH] and calc > 0 and (w_age > 0.0 or fs_on) and t_calc == NEVER:
            # at the phase of slurmctld's decay thread when known, else at multiples
            t_calc = phase + ((t - phase) // calc + 1) * calc
    return owners[0], owners[1]
