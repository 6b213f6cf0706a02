"""The slurm mode's running jobs: a job's nodes chosen, taken and given back, its limits
charged, its usage accrued for fair share.

Each step takes the run's state (``slurm_state``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine.core import DONE, NEVER, QUEUED, RUNNING
from advisor.engine.node_bits import (FULL, NONZERO, avail_bits_of, note_free, popcount,
                                      trailing_zeros)
from advisor.engine.slurm_fairshare import add_usage
from advisor.engine.slurm_layout import (C_CYCLE_SEES_END, C_END_LATENCY, C_OVER_TIME,
                                         C_RESET_EVERY, C_RESET_NEXT, CPUS, EXCLUSIVE, LIMIT,
                                         MIN_NODES, NREC, REC0, RUNTIME, WHOLE_NODE,
                                         slurm_second)
from advisor.engine.slurm_nodes import select_nodes
from advisor.engine.slurm_state import (S_FREEVER, S_HN, S_NRL, S_NSLOTS, S_NTAKEN,
                                        S_RESET, S_RESETS)
from advisor.engine.structures import heap_push, running_insert, running_remove


@njit(cache=True, inline="always")
def within_limits(st, j, first, last):
    """Whether job j starting keeps every QOS/association counter covering it within its
    caps on resources first..last-1 (0: running jobs; 1..: TRES) (``slurm_limits``)."""
    job_lim, lim_cap, lim_used, job_use = st.job_lim, st.lim_cap, st.lim_used, st.job_use
    for slot in range(job_lim.shape[0]):
        g = job_lim[slot, j]
        if g < 0:
            break
        for q in range(first, last):
            cap = lim_cap[g, q]
            if cap >= 0 and lim_used[g, q] + job_use[q, j] > cap:
                return False
    return True


@njit(cache=True, inline="always")
def charge(st, j, sign):
    """Add (sign 1) or remove (-1) job j's use to every counter covering it."""
    job_lim, lim_used, job_use = st.job_lim, st.lim_used, st.job_use
    for slot in range(job_lim.shape[0]):
        g = job_lim[slot, j]
        if g < 0:
            break
        for q in range(st.lim_cap.shape[1]):
            lim_used[g, q] += sign * job_use[q, j]


@njit(cache=True, inline="always")
def accrue_usage(st, t):
    """Fair-share usage brought up to t, a PriorityCalcPeriod at most at a time: all of it
    decays by decay ** dt, and each running job adds dt * decay ** dt times its CPUs to its
    association and those above it [src: priority_multifactor.c _decay_thread(),
    _apply_new_usage()]. A reset (PriorityUsageResetPeriod) zeroes it all at the first
    pass at or after its instant, before that pass adds the running jobs' usage of the
    period before it [src: _decay_thread(), _reset_usage()]: so the usage is zeroed at the
    pass before, the step cut there."""
    fs_last, fs_usage, rl, start, jobs = st.fs_last, st.fs_usage, st.rl, st.start, st.jobs
    job_assoc, decay, sc = st.job_assoc, st.decay, st.sc
    step = max(st.calc, 1)
    while fs_last[0] < t:
        b = fs_last[0]
        zero = _usage_zeroed_at(st)
        if b >= zero:
            for a in range(st.na):
                fs_usage[a] = 0.0
            _next_reset(st)
            zero = _usage_zeroed_at(st)
        e = min(b + step, t)
        if b < zero < e:
            e = zero
        real = decay ** (e - b)
        for a in range(st.na):
            fs_usage[a] *= real
        for i in range(sc[S_NRL]):
            j = rl[i]
            if job_assoc[j] >= 0:
                run = e - max(start[j], b)
                if run > 0:
                    add_usage(job_assoc[j], run * decay ** run * jobs[CPUS, j],
                              st.fs_parent, fs_usage)
        fs_last[0] = e


@njit(cache=True, inline="always")
def _usage_zeroed_at(st):
    """The pass before the first decay-thread pass at or after the next reset (NEVER:
    none): from there the usage starts anew."""
    reset = st.sc[S_RESET]
    if reset == NEVER:
        return NEVER
    calc = st.calc
    if calc <= 0:
        return reset
    phase = st.phase
    first = phase + -((phase - reset) // calc) * calc
    return first - calc


@njit(cache=True, inline="always")
def _next_reset(st):
    """The reset after the one just done: the schedule's second, then one a period."""
    sc, cfg = st.sc, st.cfg
    sc[S_RESETS] += 1
    if sc[S_RESETS] == 1:
        sc[S_RESET] = cfg[C_RESET_NEXT]
    elif cfg[C_RESET_EVERY] > 0 and sc[S_RESET] != NEVER:
        sc[S_RESET] += cfg[C_RESET_EVERY]
    else:
        sc[S_RESET] = NEVER


@njit(cache=True, inline="always")
def _take_unit_nodes(st, j):
    """On one-CPU nodes: job j's nodes (pick_bits) into a bitmap slot of its own, a word at
    a time."""
    sc, free_slots, job_slot, slot_w0, slot_w1 = st.sc, st.free_slots, st.job_slot, \
        st.slot_w0, st.slot_w1
    pick_bits, job_bits, free_bits, part_free, part_bits = st.pick_bits, st.job_bits, \
        st.free_bits, st.part_free, st.part_bits
    sc[S_NSLOTS] -= 1
    sl = free_slots[sc[S_NSLOTS]]
    job_slot[j] = sl
    slot_w0[sl], slot_w1[sl] = st.nw, 0
    for w in range(st.nw):
        x = pick_bits[w]
        if x == 0:
            continue
        slot_w0[sl] = min(slot_w0[sl], w)
        slot_w1[sl] = w + 1
        job_bits[sl, w] = x
        free_bits[NONZERO, w] &= ~x
        free_bits[FULL, w] &= ~x
        for q in range(st.npart):
            part_free[q] -= np.int64(popcount(x & part_bits[q, w]))


@njit(cache=True, inline="always")
def _take_nodes(st, j, k):
    """Job j's k nodes (pick_bits, CPUs taken on each in pick_cpus) and their other
    resources into the allocation pool."""
    sc, pick_bits, pick_cpus, alloc_node, alloc_cpus = st.sc, st.pick_bits, st.pick_cpus, \
        st.alloc_node, st.alloc_cpus
    job_tres, node_tres, tres_free, alloc_tres = st.job_tres, st.node_tres, st.tres_free, \
        st.alloc_tres
    node_free, node_cpus, free_bits, part_nodes, part_free = st.node_free, st.node_cpus, \
        st.free_bits, st.part_nodes, st.part_free
    a0 = sc[S_NTAKEN]
    st.alloc0[j] = a0
    st.nalloc[j] = k
    sc[S_NTAKEN] = a0 + k
    for w in range(st.nw):
        x = pick_bits[w]
        while x != 0:
            nd = w * 64 + np.int64(trailing_zeros(x))
            x &= x - np.uint64(1)
            c = pick_cpus[nd]
            alloc_node[a0] = nd
            alloc_cpus[a0] = c
            if st.tres_on:
                for q in range(st.nt):
                    need = job_tres[q, j]
                    amount = node_tres[q, nd] if need >= WHOLE_NODE else \
                        need if need >= 0 else -need * c
                    tres_free[q, nd] -= amount
                    alloc_tres[q, a0] = amount
            a0 += 1
            node_free[nd] -= c
            note_free(free_bits, nd, node_free[nd], node_cpus[nd])
            for q in range(st.npart):
                if part_nodes[q, nd]:
                    part_free[q] -= c


@njit(cache=True, inline="always")
def start_job(st, j, p, t, k, by_cycle):
    """Give job j the k nodes picked (pick_bits, pick_cpus) in partition p, at t, by a
    backfill cycle if ``by_cycle``. It is killed at its limit plus OverTimeLimit
    [slurm.conf(5) OverTimeLimit]; planning assumes the limit (F6)."""
    jobs, sc, state, cnt, low = st.jobs, st.sc, st.state, st.cnt, st.low
    if st.unit:
        _take_unit_nodes(st, j)
    else:
        _take_nodes(st, j, k)
    sc[S_FREEVER] += 1
    if st.limits_on:
        charge(st, j, 1)
    limit = min(jobs[LIMIT, j], st.part_max[p])
    if state[j] == QUEUED:
        for r in range(jobs[REC0, j], jobs[REC0, j] + jobs[NREC, j]):
            q, v = st.rec_part[r], st.rec_rank[r]
            cnt[q, v] -= 1
            while low[q] < st.nvals and cnt[q, low[q]] == 0:
                low[q] += 1
    state[j] = RUNNING
    st.start[j] = t
    # the end Slurm plans with: its start's whole second plus the limit [src: job_mgr.c
    # job_ptr->end_time = start_time + time_limit * 60]
    st.exp_end[j] = slurm_second(st.cfg, t) + limit
    # its nodes are free again C_END_LATENCY after it ends (slurm_timing's epilog), or,
    # started by a cycle and running long enough, a tick before the cycle of its last
    # second, which the backfill thread's drift has carried past its end (slurm_timing)
    run = min(jobs[RUNTIME, j], limit + st.cfg[C_OVER_TIME])
    sees = st.cfg[C_CYCLE_SEES_END]
    if by_cycle and 0 < sees <= run and st.bf_interval > 0 and \
            run % st.bf_interval == 0:
        end = t + run - 1
    else:
        end = t + run + st.cfg[C_END_LATENCY]
    sc[S_HN] = heap_push(st.ht, st.hj, sc[S_HN], end, j)
    sc[S_NRL] = running_insert(st.rl, sc[S_NRL], j, st.exp_end, st.rl_cpus)


@njit(cache=True, inline="always")
def give_back(st, j, free, free_bits, tres, now):
    """Running job j's CPUs and other resources added to ``free`` and ``tres`` (free
    ``now``, then to the partitions' free CPUs too, or at a future time in planning) and
    their bitmap (not on one-CPU nodes)."""
    alloc_node, alloc_cpus, alloc_tres = st.alloc_node, st.alloc_cpus, st.alloc_tres
    part_nodes, part_free = st.part_nodes, st.part_free
    for i in range(st.alloc0[j], st.alloc0[j] + st.nalloc[j]):
        nd = alloc_node[i]
        free[nd] += alloc_cpus[i]
        for q in range(st.nt if st.tres_on else 0):
            tres[q, nd] += alloc_tres[q, i]
        note_free(free_bits, nd, free[nd], st.node_cpus[nd])
        for q in range(st.npart if now else 0):
            if part_nodes[q, nd]:
                part_free[q] += alloc_cpus[i]


@njit(cache=True, inline="always")
def finish_job(st, j):
    """Job j ends: its nodes and resources are free again."""
    sc, free_bits, part_free, part_bits = st.sc, st.free_bits, st.part_free, st.part_bits
    st.state[j] = DONE
    if st.unit:
        sl = st.job_slot[j]
        job_bits = st.job_bits
        for w in range(st.slot_w0[sl], st.slot_w1[sl]):
            x = job_bits[sl, w]
            job_bits[sl, w] = 0  # (the slot is clean for its next job)
            free_bits[NONZERO, w] |= x
            free_bits[FULL, w] |= x
            for q in range(st.npart):
                part_free[q] += np.int64(popcount(x & part_bits[q, w]))
        st.free_slots[sc[S_NSLOTS]] = sl
        sc[S_NSLOTS] += 1
    else:
        give_back(st, j, st.node_free, free_bits, st.tres_free, True)
    sc[S_NRL] = running_remove(st.rl, sc[S_NRL], j)
    sc[S_FREEVER] += 1
    if st.limits_on:
        charge(st, j, -1)


@njit(cache=True, inline="always")
def offered(st, j, avail, atres):
    """job_av: the CPUs each node offers job j, its other resources counted: none where one
    falls short, and with memory per CPU no more than that memory covers
    [src: cons_tres job_test.c _can_job_run_on_node()]."""
    job_tres, node_tres, job_av = st.job_tres, st.node_tres, st.job_av
    for nd in range(st.nn):
        c = avail[nd]
        for q in range(st.nt):
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
    avail_bits_of(job_av, st.node_cpus, st.job_av_bits)


@njit(cache=True, inline="always")
def pick(st, j, p, avail, avail_bits, busy, atres):
    """Nodes for job j in p, avoiding the excluded ones (``excl``), into pick_bits and
    pick_cpus; ``avail`` and ``avail_bits`` are the CPUs free, ``atres`` the other
    resources free where they are. Returns the count of nodes, 0 if it does not fit."""
    jobs = st.jobs
    if st.tres_on and st.needs[j]:
        offered(st, j, avail, atres)
        avail, avail_bits = st.job_av, st.job_av_bits
    # (a one-CPU job is one task, so on one node; the model does not know the tasks of a
    # wider job, which Slurm may spread up to one node per task)
    return select_nodes(jobs[CPUS, j], jobs[MIN_NODES, j], jobs[EXCLUSIVE, j] != 0,
                        st.part_bits[p], st.excl, avail, avail_bits, st.unit, busy,
                        st.one_node_first and jobs[CPUS, j] == 1, st.free_bits[FULL],
                        st.usable, st.scratch, st.pick_bits, st.pick_cpus)


@njit(cache=True, inline="always")
def held_in(st, j, p):
    """CPUs running job j holds on nodes of p (cached: an allocation does not change)."""
    held_for, held = st.held_for, st.held
    if held_for[j] != p + 1:
        held_for[j] = p + 1
        held[j] = 0
        if st.unit:
            sl = st.job_slot[j]
            job_bits, part_bits = st.job_bits, st.part_bits
            for w in range(st.slot_w0[sl], st.slot_w1[sl]):
                held[j] += np.int64(popcount(job_bits[sl, w] & part_bits[p, w]))
        else:
            alloc_node, alloc_cpus, part_nodes = st.alloc_node, st.alloc_cpus, st.part_nodes
            for i in range(st.alloc0[j], st.alloc0[j] + st.nalloc[j]):
                if part_nodes[p, alloc_node[i]]:
                    held[j] += alloc_cpus[i]
    return held[j]


@njit(cache=True, inline="always")
def holds_picked(st, j):
    """Whether running job j holds a node of pick_bits."""
    pick_bits = st.pick_bits
    if st.unit:
        sl = st.job_slot[j]
        job_bits = st.job_bits
        for w in range(st.slot_w0[sl], st.slot_w1[sl]):
            if job_bits[sl, w] & pick_bits[w] != 0:
                return True
        return False
    alloc_node = st.alloc_node
    for i in range(st.alloc0[j], st.alloc0[j] + st.nalloc[j]):
        nd = alloc_node[i]
        if (pick_bits[nd // 64] >> np.uint64(nd % 64)) & np.uint64(1) != 0:
            return True
    return False
