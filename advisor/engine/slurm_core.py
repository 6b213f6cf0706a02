"""The slurm mode of the engine: what slurmctld does with a configuration, compiled.

Pure and deterministic, like ``core``. The facts modelled are numbered as in
docs/slurm-mapping.md (F1-F13); each rule cites Slurm's man page or source.

Per instant: completions, then arrivals (each gets its priority at once), then the priority
recalculation when PriorityCalcPeriod falls due, then the main scheduler (after completions
and arrivals, or at the next sched_interval after the queue order changed), then the backfill
scheduler when its tick falls due and something changed since its last cycle (Slurm skips a
cycle when nothing changed [src: backfill.c _more_work()]; a cycle on an unchanged state
would find the same plan). A cycle with a cost (F13, ``BackfillCost``) holds slurmctld's
locks while it tests: what comes meanwhile waits for them, and a cycle that yields them
is resumed or ended at its yield's end (``backfill_step``).

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

The steps share one state (``slurm_state``), each in the module of what it
does: ``slurm_running`` (nodes taken and given back, limits, usage), ``slurm_queue``
(arrivals, the priority recalculation, the main scheduler), ``slurm_backfill`` (the
backfill cycle), ``slurm_reserve`` (a reservation) and ``slurm_willrun`` (the search for a
reservation's start); node selection is ``slurm_nodes``. This module restores a snapshot's
state and runs the clock.

Steps are compiled functions a test can call alone on a small state
(``slurm.state_for``). All but the four this module calls (``restore``, ``main_pass``,
``recalculate``, ``backfill``) are inlined into their callers (``inline="always"``): kept
as calls, a CTC-SP2 run was about 7% slower, inlined 4% (docs/performance.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine.core import NEVER, NO_RESUME
from advisor.engine.slurm_backfill import STARTED, YIELDED, backfill
from advisor.engine.slurm_fairshare import fair_tree
from advisor.engine.node_bits import FULL, bit_off, set_range
from advisor.engine.slurm_layout import (C_BF_CONTINUE, C_BF_YIELD_SLEEP, C_FIRST_PASS,
                                         C_TICK_US, C_UNTIL, CPUS, FIXED, REC0, SUBMIT)
from advisor.engine.slurm_nodes import select_nodes
from advisor.engine.slurm_queue import (enqueue, main_pass, nothing_fits, recalculate,
                                        sort_pending)
from advisor.engine.slurm_running import accrue_usage, finish_job, pick, start_job
from advisor.engine.kernel_state import results, view_of
from advisor.engine.slurm_state import (S_ARRIVED, S_BF_EL, S_BF_POS, S_BF_RELEASE,
                                        S_BF_T, S_BF_VER, S_FREEVER, S_HN, S_NQ, S_QH,
                                        new_state)
from advisor.engine.structures import heap_pop


@njit(cache=True)
def restore(st, place, placed):
    """A snapshot's state at t0: its running jobs started, in start order, on the nodes
    they hold where ``place`` gives them (job j's are ``placed[place[0, j]:][:place[1,
    j]]``; a count of 0: none given) and the job fits there, else on nodes chosen by the
    rule of a start; its pending jobs queued with their priorities at t0; fair share's
    factors those slurmctld uses now until the first recalculation. Returns the next job
    to arrive."""
    jobs, t0, n = st.jobs, st.t0, st.n
    if st.fs_on:
        st.fs_last[0] = t0 if t0 != NO_RESUME else (jobs[SUBMIT, 0] if n else 0)
        fair_tree(st.fs_parent, st.fs_shares, st.fs_user, st.fs_usage, st.fs_kids,
                  st.fs_first, st.fs_counts, st.fs_lf, st.fs_factor)
        for a in range(st.na):
            if st.fs_now[a] >= 0.0:
                st.fs_factor[a] = st.fs_now[a]
    nxt = 0
    if t0 == NO_RESUME:
        return nxt
    for j in np.argsort(jobs[FIXED], kind="mergesort"):
        if jobs[FIXED, j] < 0 or jobs[SUBMIT, j] > t0:
            continue
        p = st.rec_part[jobs[REC0, j]]
        k = 0
        if place[1, j] > 0:   # only its own nodes: every other excluded
            st.excl[:] = 0
            set_range(st.excl, 0, st.nn)
            for i in range(place[0, j], place[0, j] + place[1, j]):
                bit_off(st.excl, placed[i])
            k = pick(st, j, p, st.node_free, st.free_bits, False, st.tres_free)
        st.excl[:] = 0
        if k == 0:
            k = pick(st, j, p, st.node_free, st.free_bits, False, st.tres_free)
        if k == 0:
            k = select_nodes(jobs[CPUS, j], 0, False, st.everywhere, st.excl,
                             st.node_free, st.free_bits, st.unit, False, False,
                             st.free_bits[FULL], st.usable, st.scratch, st.pick_bits,
                             st.pick_cpus)
        start_job(st, j, p, jobs[FIXED, j], k, False)
    while nxt < n and jobs[SUBMIT, nxt] <= t0:
        if st.state[nxt] == 0:
            enqueue(st, nxt, t0)
        nxt += 1
    sort_pending(st)
    return nxt


@njit(cache=True, inline="always")
def next_cycle(t, bf_interval, bf_next):
    """When the cycle after a change at t is due: at the next multiple of bf_interval
    [slurm.conf(5) bf_interval], no sooner than ``bf_next``."""
    return max(t if bf_interval <= 0 else (t // bf_interval + 1) * bf_interval, bf_next)


@njit(cache=True, inline="always")
def backfill_step(st, t, bf_next):
    """The backfill cycle due at t run, resumed or ended: returns when the next is due
    (NEVER: at the next change) and the earliest a new one may begin. A cycle that yielded
    its locks resumes bf_yield_sleep after it let them go, or ends when a job started,
    ended or arrived meanwhile and bf_continue is off [src: backfill.c _yield_locks()];
    with a cost, the next cycle begins no sooner than bf_interval after one ends
    [src: backfill.c backfill_agent()]."""
    sc, cfg, bf_interval = st.sc, st.cfg, st.bf_interval
    if sc[S_BF_POS] >= 0 and cfg[C_BF_CONTINUE] == 0 and \
            sc[S_BF_VER] != sc[S_FREEVER] + sc[S_ARRIVED]:
        sc[S_BF_POS] = -1  # "system state changed, breaking out"
        bf_next = t + bf_interval
        return next_cycle(t, bf_interval, bf_next), bf_next
    out = backfill(st, t)
    if out == YIELDED:
        return sc[S_BF_T] + (sc[S_BF_EL] + cfg[C_BF_YIELD_SLEEP]) // cfg[C_TICK_US], bf_next
    if st.cost_on:
        bf_next = sc[S_BF_RELEASE] + bf_interval
    if out == STARTED and bf_interval > 0:
        return max(t + bf_interval, bf_next), bf_next  # what it started is a change
    return NEVER, bf_next


@njit(cache=True)
def simulate_slurm(jobs, rec_job, rec_part, rec_static, node_cpus, part_nodes, part_tier,
                   part_max, cfg, w_age, max_age, node_tres, job_tres, lim_cap, job_lim,
                   job_use, fs_tree, fs_children, fs_values, job_assoc, place, placed):
    """Returns (start time of each job, its first backfill reservation or -1); the
    running jobs restored on the nodes ``place`` and ``placed`` give (``restore``). With
    cfg[C_STARTS_ONLY] the second is left incomplete: a backfill cycle in which no pending
    record fits in its partition's free CPUs is skipped, as it can start nothing. The run
    ends after instant cfg[C_UNTIL] (NEVER: when every job has started); a job not
    started by then keeps -1."""
    arrays, state = new_state(jobs, rec_job, rec_part, rec_static, node_cpus, part_nodes,
                           part_tier, part_max, cfg, w_age, max_age, node_tres, job_tres,
                           lim_cap, job_lim, job_use, fs_tree, fs_children, fs_values,
                           job_assoc)
    st = view_of(state)  # (``arrays`` and ``state`` outlive it: the return reads them)
    nxt = restore(st, place, placed)
    n, t0, sc, ht = st.n, st.t0, st.sc, st.ht
    calc, phase, sched_interval, bf_interval = st.calc, st.phase, st.sched_interval, \
        st.bf_interval
    fs_on, backfill_on, starts_only = st.fs_on, st.backfill_on, st.starts_only
    recalculates = calc > 0 and (st.w_age > 0.0 or fs_on)
    until = cfg[C_UNTIL]  # (NEVER: until every job has started)
    t_wake = t0 if (t0 != NO_RESUME and cfg[C_FIRST_PASS] != 0) else NEVER
    t_bf = NEVER
    t_calc = NEVER
    t_sched = NEVER
    bf_next = -1  # (with a cost) no cycle before bf_interval after the last one ended
    while True:
        t_arr = jobs[SUBMIT, nxt] if nxt < n else NEVER
        t_end = ht[0] if sc[S_HN] > 0 else NEVER
        t = min(t_arr, t_end, t_wake, t_bf, t_calc, t_sched)
        # what comes while a backfill cycle holds slurmctld's locks waits for them
        t = max(t, sc[S_BF_RELEASE])
        if t == NEVER or t > until:
            break
        events = t_wake <= t
        t_wake = NEVER
        if fs_on:
            accrue_usage(st, t)  # (before the jobs ending now leave the running list)
        while sc[S_HN] > 0 and ht[0] <= t:
            j, sc[S_HN] = heap_pop(ht, st.hj, sc[S_HN])
            finish_job(st, j)
            events = True
        while nxt < n and jobs[SUBMIT, nxt] <= t:
            enqueue(st, nxt, t)
            nxt += 1
            sc[S_ARRIVED] += 1
            events = True
        reorder = False
        if t_calc <= t:
            t_calc = NEVER
            reorder = recalculate(st, t)
            # the main scheduler sees the new order on its next periodic pass
            # [slurm.conf(5) SchedulerParameters sched_interval]
            if reorder and t_sched == NEVER:
                t_sched = (t // sched_interval + 1) * sched_interval
        if reorder:
            sort_pending(st)
        if t_sched <= t:
            t_sched = NEVER
            events = True
        changed = events or reorder
        if events and sc[S_NQ] > sc[S_QH]:
            main_pass(st, t)
        if backfill_on and sc[S_NQ] > sc[S_QH]:
            if changed and t_bf == NEVER:
                t_bf = next_cycle(t, bf_interval, bf_next)
            if t_bf <= t:
                if starts_only and sc[S_BF_POS] < 0 and nothing_fits(st, sc[S_QH]):
                    t_bf = NEVER  # (its reservations would be rebuilt by the next cycle)
                else:
                    t_bf, bf_next = backfill_step(st, t, bf_next)
        elif t_bf <= t:
            t_bf = NEVER
            sc[S_BF_POS] = -1
        if sc[S_NQ] > sc[S_QH] and recalculates and t_calc == NEVER:
            # at the phase of slurmctld's decay thread when known, else at multiples
            t_calc = phase + ((t - phase) // calc + 1) * calc
    return results(arrays, state)
