"""The slurm mode's queue and its main scheduler: arrivals, the priority recalculation,
the main scheduler's pass [src: job_scheduler.c schedule()].

Each step takes the run's state (``slurm_state``).
"""
from __future__ import annotations

from numba import njit

from advisor.engine.core import QUEUED
from advisor.engine.slurm_layout import (C_BF_MIN_AGE, C_BF_MIN_PRIO, CPUS, ELIGIBLE, NREC,
                                         REC0, priority, record_key, sort_queue)
from advisor.engine.slurm_fairshare import fair_tree
from advisor.engine.slurm_running import pick, start_job, within_limits
from advisor.engine.slurm_state import S_NQ, S_QH


@njit(cache=True, inline="always")
def enqueue(st, j, t):
    """Job j joins the queue in F1 order; queued records keep their keys until the next
    recalculation, so an insertion from the back keeps the queue sorted."""
    jobs, prio, key, queue, sc, cnt, low = st.jobs, st.prio, st.key, st.queue, st.sc, \
        st.cnt, st.low
    rec_part, rec_rank = st.rec_part, st.rec_rank
    st.state[j] = QUEUED
    for r in range(jobs[REC0, j], jobs[REC0, j] + jobs[NREC, j]):
        # a job's priority is set at submission [src: priority_p_set()]
        prio[r] = priority(r, t, jobs, st.rec_job, st.rec_static, st.w_age, st.max_age,
                           st.w_fs, st.fs_factor, st.job_assoc)
        key[r] = record_key(r, prio, rec_part, st.part_tier)
        cnt[rec_part[r], rec_rank[r]] += 1
        low[rec_part[r]] = min(low[rec_part[r]], rec_rank[r])
        b = sc[S_NQ] - 1
        while b >= sc[S_QH] and (key[queue[b]] > key[r] or (key[queue[b]] == key[r]
                                                        and queue[b] > r)):
            queue[b + 1] = queue[b]
            b -= 1
        queue[b + 1] = r
        sc[S_NQ] += 1


@njit(cache=True, inline="always")
def sort_pending(st):
    """The queue in F1 order, after its priorities changed."""
    sc = st.sc
    sort_queue(st.queue[sc[S_QH]:sc[S_NQ]], sc[S_NQ] - sc[S_QH], st.key, st.prio,
               st.rec_part, st.part_tier)


@njit(cache=True, inline="always")
def drop_started(st, upto):
    """Remove started jobs' records from queue[S_QH:upto], keeping the survivors' order at
    the end of that range, so only the visited part moves (records further on are skipped
    while their job is not pending)."""
    queue, state, rec_job, sc = st.queue, st.state, st.rec_job, st.sc
    m = upto
    for a in range(upto - 1, sc[S_QH] - 1, -1):
        r = queue[a]
        if state[rec_job[r]] == QUEUED:
            m -= 1
            queue[m] = r
    sc[S_QH] = m


@njit(cache=True)
def recalculate(st, t):
    """F7: all pending jobs' priorities recomputed together every PriorityCalcPeriod, fair
    share's factors first [src: priority_multifactor.c _decay_thread()]. Returns whether a
    priority changed."""
    if st.fs_on:
        fair_tree(st.fs_parent, st.fs_shares, st.fs_user, st.fs_usage, st.fs_kids,
                  st.fs_first, st.fs_counts, st.fs_lf, st.fs_factor)
    queue, prio, sc = st.queue, st.prio, st.sc
    changed = False
    for a in range(sc[S_QH], sc[S_NQ]):
        r = queue[a]
        p_new = priority(r, t, st.jobs, st.rec_job, st.rec_static, st.w_age, st.max_age,
                         st.w_fs, st.fs_factor, st.job_assoc)
        if p_new != prio[r]:
            prio[r] = p_new
            changed = True
    return changed


@njit(cache=True)
def main_pass(st, t):
    """F2: in queue order; once a job cannot start, no lower job of its partition starts,
    nor any job on that partition's nodes [src: job_scheduler.c schedule()]."""
    queue, rec_job, rec_part, state, jobs, sc = st.queue, st.rec_job, st.rec_part, \
        st.state, st.jobs, st.sc
    failed, excl, part_free, part_bits, cfg = st.failed, st.excl, st.part_free, \
        st.part_bits, st.cfg
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
        if st.limits_on and not within_limits(st, j, 0, st.lim_cap.shape[1]):
            continue
        k = 0
        if nfailed > 0 or jobs[CPUS, j] <= part_free[p]:
            k = pick(st, j, p, st.node_free, st.free_bits, False, st.tres_free)
        if k > 0:
            start_job(st, j, p, t, k, False)
            started = True
            continue
        # jobs below bf_min_prio_reserve or younger than bf_min_age_reserve do not block
        # [slurm.conf(5) SchedulerParameters]
        if cfg[C_BF_MIN_PRIO] > 0 and st.prio[r] < cfg[C_BF_MIN_PRIO]:
            continue
        if cfg[C_BF_MIN_AGE] > 0 and t - jobs[ELIGIBLE, j] < cfg[C_BF_MIN_AGE]:
            continue
        failed[p] = 1
        nfailed += 1
        if nfailed == st.npart:
            break
        for w in range(st.nw):
            excl[w] |= part_bits[p, w]
    if started:
        drop_started(st, last)


@njit(cache=True, inline="always")
def nothing_fits(st, a):
    """Every pending record from queue position a wants more CPUs than its partition has
    free: none of them can start now. Only the shorter side of position a is walked:
    after it, for a record that fits; before it, counting those that do, to be compared
    with how many fit in all (``cnt``)."""
    queue, state, rec_job, rec_cpus, rec_part, part_free, sc = st.queue, st.state, \
        st.rec_job, st.rec_cpus, st.rec_part, st.part_free, st.sc
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
    low, cnt, cpu_vals = st.low, st.cnt, st.cpu_vals
    for q in range(st.npart):
        v = low[q]
        while v < st.nvals and cpu_vals[v] <= part_free[q] and total <= before:
            total += cnt[q, v]
            v += 1
    return total <= before
