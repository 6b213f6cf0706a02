"""The slurm mode's backfill cycle (F3-F6) [src: backfill.c _attempt_backfill()].

Each step takes the run's state (``slurm_state``).
"""
from __future__ import annotations

from numba import njit

from advisor.engine.core import NEVER, QUEUED
from advisor.engine.node_bits import NONZERO, word_cpus
from advisor.engine.slurm_layout import (C_BF_COST_CYCLE, C_BF_COST_JOB, C_BF_MAX_TIME,
                                         C_BF_MIN_AGE, C_BF_MIN_PRIO, C_BF_ONE_RESV,
                                         C_BF_WINDOW, C_BF_YIELD_INTERVAL, C_BF_YIELD_SLEEP,
                                         C_TICK_US, CPUS, ELIGIBLE, MIN_NODES, USER)
from advisor.engine.slurm_queue import drop_started, nothing_fits
from advisor.engine.slurm_reserve import (add_reservation, count_allows, held_max,
                                          mark_reserved, reserved_now)
from advisor.engine.slurm_running import pick, start_job, within_limits
from advisor.engine.slurm_state import (S_ARRIVED, S_BF_EL, S_BF_NQ, S_BF_POS,
                                        S_BF_RELEASE, S_BF_RESOUT, S_BF_STARTED, S_BF_T,
                                        S_BF_TESTED, S_BF_VER, S_CYCLE, S_FREEVER, S_NEV,
                                        S_NQ, S_NRES, S_NRL, S_QH)
from advisor.engine.slurm_willrun import earliest


@njit(cache=True, inline="always")
def next_startable(st, t, a, tested):
    """Once no reservation is left to make, only a job that fits now can start: the first
    queue position from a whose record might, within bf_max_job_test. A record cannot if
    it wants more CPUs than any partition has free or (one partition) runs into the
    earliest reservation wanting more CPUs than are free outside it."""
    part_free, res_b, sc, queue = st.part_free, st.res_b, st.sc, st.queue
    free_max = 0
    for q in range(st.npart):
        free_max = max(free_max, part_free[q])
    first_b, first, outside = NEVER, 0, free_max
    if st.npart == 1 and not st.count_mode:
        for i in range(sc[S_NRES]):
            if res_b[i] < first_b:
                first_b, first = res_b[i], i
        if first_b != NEVER:
            res_bits, part_bits, free_bits = st.res_bits, st.part_bits, st.free_bits
            for w in range(st.res_w0[first], st.res_w1[first]):
                outside -= word_cpus(res_bits[first, w] & part_bits[0, w]
                                     & free_bits[NONZERO, w], w, st.node_free, st.unit)
    max_test = st.max_test
    end = sc[S_NQ] if max_test <= 0 else min(sc[S_NQ], a + max_test - tested)
    while a < end:
        c = st.rec_cpus[queue[a]]
        if c <= outside or (c <= free_max and t + st.rec_limit[queue[a]] < first_b):
            break
        a += 1
    return a


@njit(cache=True, inline="always")
def surely_reserves(st, j, t):
    """With one-CPU nodes and nothing reserved yet, job j gets a reservation when the last
    running job is released within bf_window, if p holds enough nodes: the search's last
    step frees them all."""
    nrl = st.sc[S_NRL]
    last = t + 1 if nrl == 0 else max(st.exp_end[st.rl[nrl - 1]], t + 1)
    return (max(st.jobs[CPUS, j], st.jobs[MIN_NODES, j]) <= st.part_cpus[0]
            and last <= t + st.cfg[C_BF_WINDOW])


@njit(cache=True, inline="always")
def _starts_now(st, j, p, t, d, at):
    """Whether job j fits now in p on nodes no reservation holds over [t, t + d]; if so it
    starts, at ``at`` [src: backfill.c _attempt_backfill()]."""
    cpus, part_free, nres = st.jobs[CPUS, j], st.part_free, st.sc[S_NRES]
    fits = cpus <= part_free[p]  # cheap test first: most jobs fail it
    if fits:
        st.excl[:] = 0
    if fits and st.sized and nres > 0:
        fits = cpus <= part_free[p] - held_max(st, t, t)
    if fits and nres > 0:
        if st.count_mode:
            fits = count_allows(st, cpus, t, t + d, False)
        else:
            fits = cpus <= part_free[p] - reserved_now(st, p, t, t + d)
            if fits:
                mark_reserved(st, t, t + d, p, st.node_free, st.free_bits)  # the nodes
    if fits:
        k = pick(st, j, p, st.node_free, st.free_bits, False, st.tres_free)
        if k > 0:
            if st.count_mode:
                count_allows(st, cpus, t, t + d, True)
            start_job(st, j, p, at, k, True)
            return True
    return False


@njit(cache=True, inline="always")
def _may_reserve(st, r, j, p, t):
    """Who may reserve: bf_job_part_count_reserve counts, per partition, the records that
    got a reservation [src: backfill.c _check_bf_usage()]; bf_min_prio_reserve,
    bf_min_age_reserve, bf_one_resv_per_job [slurm.conf(5)]."""
    cfg = st.cfg
    if st.part_reserve > 0 and st.part_count[p] >= st.part_reserve:
        return False
    if cfg[C_BF_MIN_PRIO] > 0 and st.prio[r] < cfg[C_BF_MIN_PRIO]:
        return False
    if cfg[C_BF_MIN_AGE] > 0 and t - st.jobs[ELIGIBLE, j] < cfg[C_BF_MIN_AGE]:
        return False
    return not (cfg[C_BF_ONE_RESV] != 0 and st.got_resv[j] == st.sc[S_CYCLE])


#: what ``backfill`` returns, as bits: a job started in the cycle (it ended); the cycle
#: yielded its locks and is under way
STARTED, YIELDED = 1, 2


@njit(cache=True, inline="always")
def _begin(st, t):
    """A new cycle at t: the plan is rebuilt from scratch; slurmctld's setup of it costs
    C_BF_COST_CYCLE."""
    sc = st.sc
    sc[S_CYCLE] += 1
    st.cache[0] = -1  # reservations are rebuilt: cached counts are void
    sc[S_NRES] = 0
    sc[S_NEV] = 0
    st.part_count[:] = 0
    st.part_tested[:] = 0
    sc[S_BF_TESTED] = 0
    sc[S_BF_RESOUT] = 0
    sc[S_BF_STARTED] = 0
    sc[S_BF_T] = t
    sc[S_BF_EL] = st.cfg[C_BF_COST_CYCLE]


@njit(cache=True, inline="always")
def _suspend(st, a, end, resumed, tested, reserved_out, started):
    """The cycle yields its locks before record a: what it has left to test is kept as it
    was when the cycle began (slurmctld walks the job list it built then [src: backfill.c
    _attempt_backfill()]), with its counters and the versions it will compare."""
    sc = st.sc
    if resumed:
        sc[S_BF_POS] = a
    else:
        m = end - a
        st.cycq[:m] = st.queue[a:end]
        sc[S_BF_NQ] = m
        sc[S_BF_POS] = 0
    sc[S_BF_TESTED] = tested
    sc[S_BF_RESOUT] = reserved_out
    sc[S_BF_STARTED] = started
    sc[S_BF_VER] = sc[S_FREEVER] + sc[S_ARRIVED]


@njit(cache=True)
def backfill(st, t):
    """F3-F6: the plan is rebuilt from scratch in queue order. A job starts if it fits now
    on nodes no earlier reservation holds over its limit; otherwise it may reserve whole
    nodes [src: backfill.c _attempt_backfill(), _add_reservation()]. Returns ``STARTED``
    and ``YIELDED`` bits.

    With a cost (``cost_on``) the cycle takes time [src: backfill.c _attempt_backfill(),
    _yield_locks()]: C_BF_COST_JOB per record tested; a job it starts starts when its test
    ends; before each record, the cycle ends once bf_max_time is spent (sleeps included),
    and yields its locks once it has held them bf_yield_interval: it stops for
    bf_yield_sleep, during which the rest of slurmctld runs, and the caller calls again to
    resume it (``S_BF_POS`` >= 0) or ends it (``S_BF_POS`` = -1) when something changed and
    bf_continue is off. Its plan stays the one made from its start; the nodes free now are
    those free when it tests a job. ``S_BF_RELEASE`` is when it lets the locks go."""
    sc, rec_job, rec_part, state, jobs = st.sc, st.rec_job, st.rec_part, st.state, st.jobs
    part_count, part_tested, user_tested, user_cycle = st.part_count, st.part_tested, \
        st.user_tested, st.user_cycle
    npart, max_test, max_part, max_user = st.npart, st.max_test, st.max_part, st.max_user
    cfg, cost_on = st.cfg, st.cost_on
    resumed = sc[S_BF_POS] >= 0
    if resumed:
        src, end, a = st.cycq, sc[S_BF_NQ], sc[S_BF_POS] - 1
        sc[S_BF_EL] += cfg[C_BF_YIELD_SLEEP]
    else:
        _begin(st, t)
        src, end, a = st.queue, sc[S_NQ], sc[S_QH] - 1
    # microseconds the locks are held since the cycle took them, counted from its first
    # test: the fixed part fitted to sdiag's cycles grows with the queue, and on the test
    # cluster a cycle yielded after its first job, never before it (docs/slurm-mapping.md)
    held = 0
    t_c, el, cost_job = sc[S_BF_T], sc[S_BF_EL], cfg[C_BF_COST_JOB]
    tested, reserved_out, started = sc[S_BF_TESTED], sc[S_BF_RESOUT], sc[S_BF_STARTED]
    yielded = False
    while True:
        a += 1
        if not resumed and reserved_out == npart and st.can_skip and a < end:
            b = next_startable(st, t_c, a, tested)  # the records passed over count as tested
            tested += b - a
            el += (b - a) * cost_job
            held += (b - a) * cost_job
            a = b
        if a >= end:
            break
        r = src[a]
        j = rec_job[r]
        if state[j] != QUEUED:
            continue  # started in another partition (or while the locks were yielded)
        if cost_on and el >= cfg[C_BF_MAX_TIME]:
            break
        if cost_on and held >= cfg[C_BF_YIELD_INTERVAL]:
            yielded = True
            break
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
        # a job count over a limit skips the record before it counts as tested, a TRES one
        # after, and neither reserves [src: backfill.c _attempt_backfill():
        # acct_policy_job_runnable_pre_select(), _post_select()]
        if st.limits_on and not within_limits(st, j, 0, 1):
            continue
        tested += 1
        el += cost_job
        held += cost_job
        part_tested[p] += 1
        user_tested[u] += 1
        if st.limits_on and not within_limits(st, j, 1, st.lim_cap.shape[1]):
            continue
        d = st.rec_limit[r]
        if _starts_now(st, j, p, t_c, d, t_c + el // cfg[C_TICK_US] if cost_on else t_c):
            started = 1
            continue
        if not _may_reserve(st, r, j, p, t_c):
            continue
        if not resumed and st.one_reservation and st.first_resv[j] >= 0 and \
                surely_reserves(st, j, t_c) and nothing_fits(st, a + 1):
            # the reservation would change nothing seen: no record can start; the records
            # left are still tested, for their time
            left = end - a - 1 if max_test <= 0 else min(end - a - 1, max_test - tested)
            el = max(el, min(el + left * cost_job, cfg[C_BF_MAX_TIME]))
            break
        s = earliest(st, j, p, t_c, d)
        if s == NEVER:
            continue
        add_reservation(st, s, d, t_c)
        part_count[p] += 1
        if part_count[p] == st.part_reserve:
            reserved_out += 1
        st.got_resv[j] = sc[S_CYCLE]
        if st.first_resv[j] < 0:
            st.first_resv[j] = s
    if yielded:
        _suspend(st, a, end, resumed, tested, reserved_out, started)
    else:
        sc[S_BF_POS] = -1
    sc[S_BF_EL] = el
    sc[S_BF_RELEASE] = t_c + el // cfg[C_TICK_US] if cost_on else t
    if started:
        drop_started(st, sc[S_NQ])
    return YIELDED if yielded else started * STARTED
