"""Compiled data structures of the engine: a completion heap, ordered job lists, and the
free-processor profile used by reservation-based backfilling. All work on preallocated
arrays, so the simulation loop allocates nothing per event.

They are ``register_jitable``, not ``njit``: compiled into each compiled caller, so that
the arrays they are given are not reference-counted (atomic operations) at every call,
which took a third of a textbook EASY run (docs/performance.md).
"""
from __future__ import annotations

from numba.extending import register_jitable

# Queue orderings (Lelong et al. §3.2). Each sorts by its key, then by submit time, then job id:
# job indices are in (submit, job id) order, so the index is the tie-break. KEYED and
# KEYED_OTHER sort by static keys given per job (a plugin's ``SortKey``: a new ordering needs
# no engine edit; the core reads them itself, so that ``order_key`` stays small enough to be
# inlined); KEYED_OTHER is a backfill queue keyed otherwise than the primary one.
FCFS, LCFS, SPF, LPF, SQF, LQF, EXP, KEYED, KEYED_OTHER = 0, 1, 2, 3, 4, 5, 6, 7, 8


@register_jitable
def heap_push(ht, hj, n, t, j):
    """Push (t, j) on a binary min-heap stored in ht/hj of size n; returns the new size."""
    i = n
    ht[i] = t
    hj[i] = j
    while i > 0:
        p = (i - 1) >> 1
        if ht[p] < ht[i] or (ht[p] == ht[i] and hj[p] < hj[i]):
            break
        ht[p], ht[i] = ht[i], ht[p]
        hj[p], hj[i] = hj[i], hj[p]
        i = p
    return n + 1


@register_jitable
def heap_pop(ht, hj, n):
    """Remove the smallest (t, j); returns (j, new size)."""
    j = hj[0]
    n -= 1
    ht[0] = ht[n]
    hj[0] = hj[n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and (ht[c + 1] < ht[c] or (ht[c + 1] == ht[c] and hj[c + 1] < hj[c])):
            c += 1
        if ht[i] < ht[c] or (ht[i] == ht[c] and hj[i] < hj[c]):
            break
        ht[i], ht[c] = ht[c], ht[i]
        hj[i], hj[c] = hj[c], hj[i]
        i = c
    return j, n


@register_jitable
def order_key(order, j, t, submit, estimate, procs):
    """The sort key of job j under a built-in ordering at time t (smaller runs first)."""
    if order == FCFS:
        return float(submit[j])
    if order == LCFS:
        return -float(submit[j])
    if order == SPF:
        return float(estimate[j])
    if order == LPF:
        return -float(estimate[j])
    if order == SQF:
        return float(procs[j])
    if order == LQF:
        return -float(procs[j])
    # EXP: largest expansion factor (wait + p~)/p~ first (Lelong et al. eq. 1). p~ is floored at
    # 1 s so that a zero request does not divide by zero.
    e = max(estimate[j], 1)
    return -float(t - submit[j] + e) / e


@register_jitable
def sort_by_key(buf, n, key, a0=1):
    """Stable insertion sort of buf[:n] by (key[j], j), buf[:a0] being sorted already.
    Buffers stay nearly sorted between passes (static keys change only by arrivals, put
    at the end), so this is close to linear."""
    for a in range(max(a0, 1), n):
        j = buf[a]
        kj = key[j]
        b = a - 1
        while b >= 0 and (key[buf[b]] > kj or (key[buf[b]] == kj and buf[b] > j)):
            buf[b + 1] = buf[b]
            b -= 1
        buf[b + 1] = j


@register_jitable
def keep_queued(buf, n, state, queued):
    """Drop from buf[:n] the jobs that are no longer queued; returns the new length."""
    m = 0
    for a in range(n):
        j = buf[a]
        if state[j] == queued:
            buf[m] = j
            m += 1
    return m


@register_jitable
def count_started(buf, n, state, queued):
    """How many of buf[:n] are no longer queued."""
    c = 0
    for a in range(n):
        c += state[buf[a]] != queued
    return c


@register_jitable
def running_insert(rl, n, j, exp_end, procs):
    """Insert j into rl[:n], kept sorted by (expected end, processors, job)."""
    a = n
    while a > 0:
        k = rl[a - 1]
        if exp_end[k] < exp_end[j] or (exp_end[k] == exp_end[j] and (
                procs[k] < procs[j] or (procs[k] == procs[j] and k < j))):
            break
        rl[a] = k
        a -= 1
    rl[a] = j
    return n + 1


@register_jitable
def running_remove(rl, n, j):
    a = 0
    while rl[a] != j:
        a += 1
    for b in range(a, n - 1):
        rl[b] = rl[b + 1]
    return n - 1


# ---- free-processor profile: pf[i] processors are free in [pt[i], pt[i+1]); the last segment
# ---- runs to infinity. Mu'alem and Feitelson §2.1 keep it as a linked list; arrays serve
# ---- the same.

@register_jitable
def profile_of_running(t, free, rl, nrl, exp_end, procs, pt, pf):
    """The profile from t on of the running jobs ``rl`` (by expected end), each releasing
    its processors at its expected end, or one second from now once overdue; returns its
    size."""
    pt[0] = t
    pf[0] = free
    m = 1
    for r in range(nrl):
        e = max(exp_end[rl[r]], t + 1)
        if e == pt[m - 1]:
            pf[m - 1] += procs[rl[r]]
        else:
            pt[m] = e
            pf[m] = pf[m - 1] + procs[rl[r]]
            m += 1
    return m


@register_jitable
def profile_split(pt, pf, m, x):
    """Ensure a breakpoint at time x (>= pt[0]); returns (its index, new m)."""
    i = m - 1
    while pt[i] > x:
        i -= 1
    if pt[i] == x:
        return i, m
    for b in range(m, i + 1, -1):
        pt[b] = pt[b - 1]
        pf[b] = pf[b - 1]
    pt[i + 1] = x
    pf[i + 1] = pf[i]
    return i + 1, m + 1


@register_jitable
def profile_add(pt, pf, m, s, e, delta):
    """Add delta free processors over [s, e); returns the new m."""
    if e <= s:
        return m
    i, m = profile_split(pt, pf, m, s)
    k, m = profile_split(pt, pf, m, e)
    for b in range(i, k):
        pf[b] += delta
    return m


@register_jitable
def profile_anchor(pt, pf, m, need, dur):
    """Earliest time (the 'anchor point' of Mu'alem and Feitelson, Fig. 1) from which `need`
    processors stay free for `dur` seconds."""
    i = 0
    while i < m:
        if pf[i] >= need:
            end = pt[i] + dur
            k = i + 1
            ok = True
            while k < m and pt[k] < end:
                if pf[k] < need:
                    ok = False
                    break
                k += 1
            if ok:
                return pt[i]
            i = k + 1
        else:
            i += 1
    return pt[m - 1]  # unreachable when need <= machine size: the last segment is all free
