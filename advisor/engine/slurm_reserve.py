"""The slurm mode's backfill reservations: made, and tested against a job's start
[src: backfill.c _add_reservation(), _test_resv_overlap()].

A cycle's reservations hold whole nodes (``res_bits``, in words [res_w0, res_w1)) over
[res_b, res_e) (F4, F5). In count mode, the textbook's idealisation and no Slurm setting, a
reservation holds a CPU count instead (``res_spare``: CPUs free at its start beyond its
need). Each step takes the run's state (``slurm_state``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from advisor.engine.node_bits import NONZERO, word_cpus
from advisor.engine.slurm_layout import C_BF_WINDOW, slurm_floor
from advisor.engine.slurm_state import S_FREEVER, S_NEV, S_NRES, S_PICKED


@njit(cache=True, inline="always")
def held_max(st, a, b):
    """(``sized``) The most nodes the reservations hold at one instant of [a, b] (a
    reservation holds its nodes over res_s <= instant < res_e)."""
    ev_t, ev_sum = st.ev_t, st.ev_sum
    ne = st.sc[S_NEV]
    k = np.searchsorted(ev_t[:ne], a, side="right")
    m = 0 if k == 0 else ev_sum[k - 1]
    while k < ne and ev_t[k] <= b:
        m = max(m, ev_sum[k])
        k += 1
    return m


@njit(cache=True, inline="always")
def hold_event(st, time, delta):
    """Add ``delta`` nodes held from ``time`` on to the step function (held_max)."""
    ev_t, ev_sum, sc = st.ev_t, st.ev_sum, st.sc
    ne = sc[S_NEV]
    k = np.searchsorted(ev_t[:ne], time, side="right")
    for m in range(ne, k, -1):
        ev_t[m] = ev_t[m - 1]
        ev_sum[m] = ev_sum[m - 1] + delta
    ev_t[k] = time
    ev_sum[k] = (0 if k == 0 else ev_sum[k - 1]) + delta
    sc[S_NEV] = ne + 1


@njit(cache=True, inline="always")
def mark_reserved(st, s, e, p, avail, avail_bits):
    """Exclude the nodes of every reservation overlapping [s, e] (Slurm's test is end > s
    and begin <= e, inclusive at e [src: backfill.c _attempt_backfill()]); returns the free
    CPUs of p they take away, each node counted once."""
    res_b, res_e, res_w0, res_w1, res_bits, excl, part_bits = st.res_b, st.res_e, \
        st.res_w0, st.res_w1, st.res_bits, st.excl, st.part_bits
    c = 0
    for i in range(st.sc[S_NRES]):
        if res_e[i] > s and res_b[i] <= e:
            for w in range(res_w0[i], res_w1[i]):
                new = res_bits[i, w] & ~excl[w]
                if new != 0:
                    excl[w] |= new
                    c += word_cpus(new & part_bits[p, w] & avail_bits[NONZERO, w], w,
                                   avail, st.unit)
    return c


@njit(cache=True, inline="always")
def overlaps_reserved(st, s, d):
    """Whether a reservation of the picked nodes over [s, s + d], rounded to bf_resolution
    (its begin down, its end by ``end_round``), overlaps an existing one on any of them
    (end excluded) [src: backfill.c _test_resv_overlap()]."""
    res_b, res_e, res_w0, res_w1, res_bits, pick_bits = st.res_b, st.res_e, st.res_w0, \
        st.res_w1, st.res_bits, st.pick_bits
    res = st.res
    b, e = slurm_floor(st.cfg, s, res), slurm_floor(st.cfg, s + d + st.end_round, res)
    for i in range(st.sc[S_NRES]):
        if res_e[i] > b and res_b[i] < e:
            for w in range(res_w0[i], res_w1[i]):
                if res_bits[i, w] & pick_bits[w] != 0:
                    return True
    return False


@njit(cache=True, inline="always")
def count_allows(st, cpus, s, e, take):
    """Count mode: a job over [s, e) overlapping a reservation must fit in its spare CPUs;
    ``take`` books them."""
    res_b, res_e, res_spare = st.res_b, st.res_e, st.res_spare
    nres = st.sc[S_NRES]
    for i in range(nres):
        if res_e[i] > s and res_b[i] < e and cpus > res_spare[i]:
            return False
    if take:
        for i in range(nres):
            if res_e[i] > s and res_b[i] < e:
                res_spare[i] -= cpus
    return True


@njit(cache=True, inline="always")
def reserved_now(st, p, s, e):
    """Free CPUs of p on nodes held by reservations overlapping [s, e]. With few
    reservations the count is cached per overlap set until a job starts or ends (most
    queued jobs in a cycle see the same set); on a cache hit the nodes are not marked."""
    res_b, res_e, cache, sc = st.res_b, st.res_e, st.cache, st.sc
    mask = 0
    if sc[S_NRES] <= 62:
        for i in range(sc[S_NRES]):
            if res_e[i] > s and res_b[i] <= e:
                mask |= 1 << i
        if mask == 0:
            return 0
    if mask > 0 and cache[0] == mask and cache[1] == sc[S_FREEVER] and cache[2] == p:
        return cache[3]
    c = mark_reserved(st, s, e, p, st.node_free, st.free_bits)
    cache[0], cache[1], cache[2], cache[3] = mask, sc[S_FREEVER], p, c
    return c


@njit(cache=True, inline="always")
def add_reservation(st, s, d, t):
    """F5: the picked nodes reserved from s for d seconds, times quantised to
    bf_resolution, the end down (up from 24.11: Slurm overestimates a reservation rather
    than underestimate it); at least one slot. The cycle's map of reservations ends at
    the window's end (t + bf_window, down to bf_resolution): a reservation is held up to
    there, and one that begins there or later holds nothing [src: backfill.c
    _attempt_backfill() window_end, _set_slot_time(), _add_reservation()]."""
    sc, res_b, res_e, res_w0, res_w1, ends = st.sc, st.res_b, st.res_e, st.res_w0, \
        st.res_w1, st.ends
    pick_bits, res = st.pick_bits, st.res
    window_end = slurm_floor(st.cfg, t + st.cfg[C_BF_WINDOW], res)
    i = sc[S_NRES]
    res_b[i] = slurm_floor(st.cfg, s, res)
    if res_b[i] >= window_end:
        return
    res_e[i] = min(max(slurm_floor(st.cfg, s + d + st.end_round, res), res_b[i] + res),
                   window_end)
    st.res_bits[i] = pick_bits
    res_w0[i], res_w1[i] = st.nw, 0
    for w in range(st.nw):
        if pick_bits[w] != 0:
            res_w0[i] = min(res_w0[i], w)
            res_w1[i] = w + 1
    st.res_s[i] = s
    b = i
    while b > 0 and ends[b - 1] > res_e[i]:
        ends[b] = ends[b - 1]
        b -= 1
    ends[b] = res_e[i]
    if st.sized:
        hold_event(st, s, sc[S_PICKED])
        hold_event(st, res_e[i], -sc[S_PICKED])
    sc[S_NRES] = i + 1
