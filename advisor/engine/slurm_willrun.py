"""The slurm mode's reservation search: the earliest time a pending job may start, once
running jobs are released at their expected ends, tested against the cycle's other
reservations as Slurm's backfill tests it (F5, F6) [src: backfill.c _attempt_backfill(),
cons_tres _will_run_test()].

Each step takes the run's state (``slurm_state``).
"""
from __future__ import annotations

from numba import njit

from advisor.engine.core import NEVER
from advisor.engine.node_bits import NONZERO
from advisor.engine.slurm_layout import (C_BF_WINDOW, C_WILL_RUN_WINDOW, CPUS, MIN_NODES,
                                         slurm_floor)
from advisor.engine.slurm_reserve import (count_allows, held_max, mark_reserved,
                                          overlaps_reserved)
from advisor.engine.slurm_running import give_back, held_in, holds_picked, pick
from advisor.engine.slurm_state import S_FREEVER, S_NRES, S_NRL, S_PICKED

# a will-run window this wide takes in every running job (2**40 s: 35,000 years)
MAX_WINDOW = 1 << 40


@njit(cache=True, inline="always")
def planned_start(st, s, ri, t, anchor):
    """When a job found to fit at s, once rl[:ri] are released, is planned to start: s;
    from 25.05.1 the end of the last of them holding a node it was given, so that running
    jobs on other nodes no longer delay it, and never before the anchor
    [src: cons_tres job_test.c _get_last_relevant_job(); backfill.c start_res]."""
    if not st.relevant_end:
        return s
    rl = st.rl
    for i in range(ri - 1, -1, -1):
        if holds_picked(st, rl[i]):
            return max(anchor, st.exp_end[rl[i]], t + 1)
    return max(anchor, t)


@njit(cache=True, inline="always")
def next_batch(st, ri, p, t, window, batch_end):
    """Running jobs are released in batches, and a job may start when a batch's last one
    ends: the first batch ends `window` after the first job's end rounded up to a multiple
    of the window, each later one after the window has doubled until it takes in the next
    job [src: cons_tres _will_run_test()]. Jobs without a node in p neither open nor close
    one. The batch from rl[ri]: returns (when its last job with nodes in p ends, or NEVER;
    the position after it; the CPUs of p it frees; the new window and batch end).

    Called again from the same ri with a wider window, the batch takes in at least what it
    did: the walk resumes where it stopped (``walk``: ri, position, last, gain)."""
    rl, exp_end, walk, nrl = st.rl, st.exp_end, st.walk, st.sc[S_NRL]
    q, last, gain = ri, -1, 0
    if walk[0] == ri:
        q, last, gain = walk[1], walk[2], walk[3]
    while q < nrl:
        if last >= 0 and exp_end[rl[q]] > batch_end + window:
            break
        rj = rl[q]
        h = held_in(st, rj, p)
        if h > 0:
            if batch_end < 0:
                batch_end = slurm_floor(st.cfg, exp_end[rj], window) + window
            last = exp_end[rj]
            gain += h
        q += 1
    walk[0], walk[1], walk[2], walk[3] = ri, q, last, gain
    while True:
        window = min(2 * window, MAX_WINDOW)  # (doubled on, it would overflow)
        if q >= nrl or exp_end[rl[q]] <= batch_end + window or window == MAX_WINDOW:
            break
    return (NEVER if last < 0 else max(last, t + 1)), q, gain, window, batch_end


@njit(cache=True, inline="always")
def nodes_at(st, j, p, s, ri):
    """On one-CPU nodes with nothing reserved: job j's nodes at s, once rl[:ri] are
    released. Every node is up, so a node is free at s unless a job still running then
    holds it: when the last plan was for the same job at the same s with the same jobs
    still running then, its nodes are the answer again (what started or ended since is
    released by s)."""
    plan, plan_running, rl, sc = st.plan, st.plan_running, st.rl, st.sc
    still = sc[S_NRL] - ri
    # (bf_busy_nodes looks at the nodes in use now)
    same = (plan[0] == j and plan[2] == p and plan[4] == s and plan[7] == still
            and not st.busy_first)
    for i in range(still if same else 0):
        if plan_running[i] != rl[ri + i]:
            same = False
            break
    if same:
        st.pick_bits[:] = st.plan_bits
        sc[S_PICKED] = plan[5]
        return
    fut_bits, job_bits, job_slot = st.fut_bits, st.job_bits, st.job_slot
    fut_bits[NONZERO] = st.free_bits[NONZERO]
    for i in range(ri):
        sl = job_slot[rl[i]]
        for w in range(st.slot_w0[sl], st.slot_w1[sl]):
            fut_bits[NONZERO, w] |= job_bits[sl, w]
    st.excl[:] = 0
    sc[S_PICKED] = pick(st, j, p, st.node_cpus, fut_bits, st.busy_first, st.node_tres)
    plan[7] = still
    plan_running[:still] = rl[ri:sc[S_NRL]]


@njit(cache=True, inline="always")
def _release(st, p, s, t, ri, tot, by_count):
    """Running jobs from rl[ri] expected to end by s released into what is free at s (fut
    and fut_bits, or with one CPU per node fut_bits alone; counting alone, ``by_count``,
    nodes_at() gathers them at the end). Returns the new ri and the CPUs of p free."""
    rl, exp_end, nrl = st.rl, st.exp_end, st.sc[S_NRL]
    fut, fut_bits, fut_tres = st.fut, st.fut_bits, st.fut_tres
    while ri < nrl and max(exp_end[rl[ri]], t + 1) <= s:
        rj = rl[ri]
        tot += held_in(st, rj, p)
        if not st.unit:
            give_back(st, rj, fut, fut_bits, fut_tres, False)
        elif not by_count:
            sl = st.job_slot[rj]
            job_bits = st.job_bits
            for w in range(st.slot_w0[sl], st.slot_w1[sl]):
                fut_bits[NONZERO, w] |= job_bits[sl, w]  # (FULL: not read)
        ri += 1
    return ri, tot


@njit(cache=True, inline="always")
def _start_on_nodes(st, j, p, t, s, d, ri, anchor, tot, at_end):
    """Slurm's test at s: the nodes no reservation holds over [anchor, anchor + d] (its
    start_res: moved on to where a reservation ends, or to a start whose reservation
    overlapped another), the job's start on them, then its reservation [s, s + d], rounded
    to bf_resolution, must overlap none on its nodes [src: backfill.c _attempt_backfill()
    TRY_LATER, _test_resv_overlap()]. Returns (the start, or NEVER; the anchor)."""
    cpus = st.jobs[CPUS, j]
    avail = st.node_cpus if st.unit else st.fut
    retry = True
    while retry:
        retry = False
        begin = s
        # (sized) the nodes reservations hold at any instant from the anchor on up to s
        # and within its window are free at s and ruled out: a count that says no spares
        # the bitmaps
        if st.sized and cpus + held_max(st, anchor, min(anchor + d, s)) > tot:
            ok = False
        else:
            st.excl[:] = 0
            ok = cpus <= tot - mark_reserved(st, anchor, anchor + d, p, avail, st.fut_bits)
        if ok:
            st.sc[S_PICKED] = pick(st, j, p, avail, st.fut_bits, st.busy_first, st.fut_tres)
            if st.sc[S_PICKED] > 0:
                begin = planned_start(st, s, ri, t, anchor)
                if begin == t or not overlaps_reserved(st, begin, d):
                    return begin, anchor
                retry = anchor != begin
        else:
            retry = at_end and anchor != s
        if retry:
            anchor = begin
    return NEVER, anchor


@njit(cache=True, inline="always")
def earliest_search(st, j, p, t, d):
    """F5-F6: the earliest time at which job j may start in p for d seconds, tested
    against the other reservations as Slurm tests it (``_start_on_nodes``), running jobs
    ending at start + limit; fills pick_bits. Returns NEVER if that is beyond bf_window (no
    reservation).

    On one-CPU nodes with nothing reserved yet (a cycle's first reservation) the job fits
    at s exactly when p has enough free nodes then: the count is followed alone, and the
    nodes free at s are gathered once, at the answer (nodes_at())."""
    jobs, sc, rl, exp_end, ends, cfg = st.jobs, st.sc, st.rl, st.exp_end, st.ends, st.cfg
    by_count = st.unit and sc[S_NRES] == 0 and not st.count_mode
    need = max(jobs[CPUS, j], jobs[MIN_NODES, j])
    if not st.unit:
        st.fut[:] = st.node_free
        st.fut_tres[:] = st.tres_free
    if not by_count:
        st.fut_bits[:] = st.free_bits
    tot = st.part_free[p]
    horizon = t + cfg[C_BF_WINDOW]
    ri, s, window, batch_end = 0, t, cfg[C_WILL_RUN_WINDOW], -1
    e_next = 0    # ends[e_next] is the first reservation end after s
    st.walk[0] = -1
    anchor = t     # Slurm's start_res (_start_on_nodes)
    while s <= horizon:
        ri, tot = _release(st, p, s, t, ri, tot, by_count)
        if by_count:
            if need <= tot:
                nodes_at(st, j, p, s, ri)
                return planned_start(st, s, ri, t, t)
        elif st.count_mode:
            if jobs[CPUS, j] <= tot and count_allows(st, jobs[CPUS, j], s, s + d, False):
                sc[S_PICKED] = 0
                st.res_spare[sc[S_NRES]] = tot - jobs[CPUS, j]  # free at s, beyond the need
                return s
        elif jobs[CPUS, j] <= tot:
            at_end = e_next < sc[S_NRES] and ends[e_next] <= s
            begin, anchor = _start_on_nodes(st, j, p, t, s, d, ri, anchor, tot, at_end)
            if begin != NEVER:
                return begin
        s_next = NEVER
        if ri < sc[S_NRL] and (st.count_mode or window <= 0):
            s_next = max(exp_end[rl[ri]], t + 1)
        elif ri < sc[S_NRL]:
            s_next, q, gain, window, batch_end = next_batch(st, ri, p, t, window, batch_end)
            if by_count:
                # the batch's jobs are released at its end at once: the ones with nodes in
                # p end by then, the others free none of p's
                tot += gain
                ri = q
        while e_next < sc[S_NRES] and ends[e_next] <= s:
            e_next += 1
        if e_next < sc[S_NRES]:
            s_next = min(s_next, ends[e_next])
        s = s_next
    return NEVER


@njit(cache=True, inline="always")
def earliest(st, j, p, t, d):
    """earliest_search(), except that a cycle's first reservation is the one made first in
    an earlier cycle when no job started or ended since and it still lies ahead: the
    candidate times up to it and what is free at each are unchanged (busy queues reserve
    for the same job cycle after cycle). Later ones are searched anew: Slurm tests them
    against the others from the cycle's own time on, so the same reservations can place
    them differently a cycle later."""
    plan, sc = st.plan, st.sc
    first = sc[S_NRES] == 0
    if (first and plan[0] == j and plan[1] == sc[S_FREEVER] and plan[2] == p
            and plan[3] == d and plan[4] > t):
        st.pick_bits[:] = st.plan_bits
        sc[S_PICKED] = plan[5]
        st.res_spare[0] = plan[6]
        return plan[4]
    s = earliest_search(st, j, p, t, d)
    if first and s != NEVER:
        plan[0], plan[1], plan[2], plan[3] = j, sc[S_FREEVER], p, d
        plan[4], plan[5], plan[6] = s, sc[S_PICKED], st.res_spare[0]
        st.plan_bits[:] = st.pick_bits
    return s
