"""Node selection as Slurm's select/cons_tres does it (CR_Core), compiled.

A job asks for ``cpus`` CPUs on at least ``min_nodes`` nodes (``--exclusive``: whole nodes).
Which nodes it gets matters in the slurm mode: backfill reserves *whole nodes* (F4 of
docs/slurm-mapping.md), so the nodes a reservation picks decide what may backfill.

Default rule, after cons_tres ``_eval_nodes()`` [src: src/plugins/select/cons_tres/job_test.c
_eval_nodes()]: usable nodes form runs of consecutive node indices; the first run that is
large enough wins, unless a later sufficient run holds fewer CPUs (tightest fit); with no
sufficient run the largest is taken whole and the search goes on. Inside the run a job that
fits on one node takes the node with the fewest free CPUs that suffice ("best fit single
node"); otherwise nodes are taken in index order.

``bf_busy_nodes`` [slurm.conf(5) SchedulerParameters]: reservations for future jobs take
nodes already in use first, leaving idle nodes to backfill (``_eval_nodes_busy()``).

Node sets are bitmaps (``node_bits``): the usable nodes are partition & ~excluded & free, a
word at a time; runs start and end where a bit differs from its neighbour, and the tightest
sufficient run is kept as they are found (a run of exactly the CPUs wanted ends the scan);
the choice is returned as a bitmap (with the CPUs taken per node), and with one-CPU nodes a
run is taken as a bit range.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from advisor.engine.node_bits import FULL, NONZERO, bit_on, set_range, trailing_zeros

_BITS, _BITMAP = types.uint64[::1], types.uint64[:, ::1]
_COUNTS, _TABLE = types.int64[::1], types.int64[:, ::1]
#: select_nodes' one signature. Its callers pass literal constants and flags numba types
#: now as literals, now as bools: left to infer, it compiled six copies of this function.
SELECT_NODES = types.int64(types.int64, types.int64, types.boolean, _BITS, _BITS, _COUNTS,
                           _BITMAP, types.boolean, types.boolean, types.boolean, _BITS, _BITS,
                           _TABLE, _BITS, _COUNTS)


@njit(cache=True, inline="always")
def _take(n, a, exclusive, rem_cpus, rem_nodes, out_bits, out_cpus, k):
    """Take node n offering a CPUs; returns (new k, CPUs and nodes still wanted). A node
    keeps back at least one CPU for each node still to be found (cons_tres _cpus_to_use())."""
    take = a if exclusive else min(a, max(rem_cpus - max(rem_nodes - 1, 0), 1))
    bit_on(out_bits, n)
    out_cpus[n] = take
    return k + 1, rem_cpus - take, rem_nodes - 1


@njit(cache=True, inline="always")
def _take_run(run_a, run_b, av, exclusive, unit, rem_cpus, rem_nodes, out_bits, out_cpus, k):
    """Take CPUs from the run of nodes run_a..run_b: the best-fit single node when one
    suffices and one node is wanted, else nodes in index order until nothing more is wanted.
    Returns (new k, CPUs and nodes still wanted)."""
    if unit:
        # every node offers one CPU and gives it: the best-fit single node is the run's
        # first, and nodes in index order are a range from it (out_cpus is not written)
        m = min(run_b - run_a + 1, max(rem_cpus, rem_nodes, 0))
        set_range(out_bits, run_a, run_a + m)
        return k + m, rem_cpus - m, rem_nodes - m
    if rem_nodes <= 1:
        single, size = -1, 0
        for n in range(run_a, run_b + 1):
            a = av[n]
            if a >= rem_cpus and (single < 0 or a < size):
                single, size = n, a
                if a == rem_cpus:
                    break
        if single >= 0:
            return _take(single, av[single], exclusive, rem_cpus, rem_nodes, out_bits,
                         out_cpus, k)
    for n in range(run_a, run_b + 1):
        if rem_cpus <= 0 and rem_nodes <= 0:
            break
        a = av[n]
        if a > 0:
            k, rem_cpus, rem_nodes = _take(n, a, exclusive, rem_cpus, rem_nodes, out_bits,
                                           out_cpus, k)
    return k, rem_cpus, rem_nodes


@njit(cache=True, inline="always")
def _before(i, k, set_c):
    """Run i is taken before run k: more CPUs, then the lower index."""
    return set_c[i] > set_c[k] or (set_c[i] == set_c[k] and i < k)


@njit(cache=True, inline="always")
def _sift_down(heap, size, x, set_c):
    while True:
        top, left = x, 2 * x + 1
        if left < size and _before(heap[left], heap[top], set_c):
            top = left
        if left + 1 < size and _before(heap[left + 1], heap[top], set_c):
            top = left + 1
        if top == x:
            return
        heap[x], heap[top] = heap[top], heap[x]
        x = top


@njit(cache=True, inline="always")
def _from_runs(nsets, set_a, set_b, set_c, heap, av, exclusive, unit, rem_cpus, out_bits,
               out_cpus):
    """The run rule for a job that wants no particular node count when no single run
    suffices: the largest run is taken whole and the rule applied again to the remainder
    (the tightest run that suffices, the lower index among equals). A heap of the runs (in
    ``heap``, scratch) keeps a fragmented machine at O(runs + taken x log runs) per
    choice."""
    for x in range(nsets):
        heap[x] = x
    for x in range(nsets // 2 - 1, -1, -1):
        _sift_down(heap, nsets, x, set_c)
    size, k, rem_nodes = nsets, 0, 1
    while size > 0:
        if set_c[heap[0]] >= rem_cpus:
            best = -1
            for x in range(size):
                i = heap[x]
                if set_c[i] >= rem_cpus and (best < 0 or set_c[i] < set_c[best] or (
                        set_c[i] == set_c[best] and i < best)):
                    best = i
            k, rem_cpus, rem_nodes = _take_run(set_a[best], set_b[best], av, exclusive, unit,
                                               rem_cpus, rem_nodes, out_bits, out_cpus, k)
            return k
        i = heap[0]
        size -= 1
        heap[0] = heap[size]
        _sift_down(heap, size, 0, set_c)
        # the run falls short: all of it is taken
        k, rem_cpus, rem_nodes = _take_run(set_a[i], set_b[i], av, exclusive, unit,
                                           rem_cpus, rem_nodes, out_bits, out_cpus, k)
    return 0


@njit(SELECT_NODES, cache=True)
def select_nodes(cpus, min_nodes, exclusive, part_bits, excl_bits, avail, avail_bits,
                 unit, busy_first, first_node, free_full, usable, scratch, out_bits,
                 out_cpus):
    """Choose nodes for a job; returns how many were chosen (0: it does not fit). The
    chosen nodes are the bits of out_bits, the CPUs taken on node n out_cpus[n] (one on
    every node when unit, and then not written).

    part_bits: the partition's nodes; excl_bits: nodes excluded for this test (blocked by
    the main scheduler or reserved by backfill); avail: free CPUs per node at the time
    tested, avail_bits its availability bitmap (``node_bits``); unit: every node has one
    CPU; first_node: a one-node job of Slurm 26.05 on, which takes the first node in node
    order that fits (cons_tres _get_one_res()); free_full: the nodes entirely free now (for
    bf_busy_nodes); usable: a bitmap work area; scratch: a (4, nodes) int64 work area.
    """
    set_a, set_b, set_c, set_m = scratch[0], scratch[1], scratch[2], scratch[3]
    # with one CPU per node, a node with a free CPU is entirely free (FULL is not read)
    offered = avail_bits[FULL] if exclusive and not unit else avail_bits[NONZERO]
    for w in range(usable.shape[0]):
        usable[w] = part_bits[w] & ~excl_bits[w] & offered[w]
        out_bits[w] = 0
    rem_cpus = cpus
    rem_nodes = max(min_nodes, 1)
    k = 0
    if first_node:
        for w in range(usable.shape[0]):
            x = usable[w]
            while x != 0:
                n = w * 64 + np.int64(trailing_zeros(x))
                x &= x - np.uint64(1)
                if avail[n] >= rem_cpus:
                    return _take(n, avail[n], exclusive, rem_cpus, 1, out_bits, out_cpus,
                                 0)[0]
        return 0
    if busy_first:  # nodes in use now first, then idle ones, each in index order
        for phase in range(2):
            for w in range(usable.shape[0]):
                x = usable[w] & (free_full[w] if phase == 1 else ~free_full[w])
                while x != 0:
                    n = w * 64 + np.int64(trailing_zeros(x))
                    x &= x - np.uint64(1)
                    k, rem_cpus, rem_nodes = _take(n, avail[n], exclusive, rem_cpus,
                                                   rem_nodes, out_bits, out_cpus, k)
                    if rem_cpus <= 0 and rem_nodes <= 0:
                        return k
        return 0
    # runs of consecutive usable nodes (set_a/set_b: first and last node; set_c/set_m: their
    # CPUs and nodes); inside a run every node offers avail[n] (all of it when exclusive).
    # For a job that wants no node count the tightest sufficient run (the first among
    # equals) is found on the way: one of exactly the CPUs wanted ends the search.
    nsets = 0
    total = 0
    best = -1
    nw = usable.shape[0]
    run_a = -1  # the open run's first node
    for w in range(nw):
        x = usable[w]
        if x == 0:
            continue
        # a run starts where a bit is set and the one below is not, and ends where the one
        # above is not, across word boundaries; starts and ends alternate
        below = usable[w - 1] >> np.uint64(63) if w > 0 else np.uint64(0)
        above = (usable[w + 1] & np.uint64(1)) << np.uint64(63) if w + 1 < nw else np.uint64(0)
        starts = x & ~((x << np.uint64(1)) | below)
        ends = x & ~((x >> np.uint64(1)) | above)
        while starts != 0 or (ends != 0 and run_a >= 0):
            if run_a < 0:
                run_a = w * 64 + np.int64(trailing_zeros(starts))
                starts &= starts - np.uint64(1)
                continue
            b = w * 64 + np.int64(trailing_zeros(ends))
            ends &= ends - np.uint64(1)
            m = b - run_a + 1
            c = m
            if not unit:
                c = 0
                for n in range(run_a, b + 1):
                    c += avail[n]
            set_a[nsets], set_b[nsets], set_c[nsets], set_m[nsets] = run_a, b, c, m
            run_a = -1
            total += c
            if rem_nodes <= 1 and c >= rem_cpus and (best < 0 or c < set_c[best]):
                best = nsets
            nsets += 1
            if best == nsets - 1 and c == rem_cpus:
                break
        if best >= 0 and set_c[best] == rem_cpus:
            break
    if rem_nodes <= 1:
        if best >= 0:
            return _take_run(set_a[best], set_b[best], avail, exclusive, unit, rem_cpus, 1,
                             out_bits, out_cpus, 0)[0]
        if total < rem_cpus:
            return 0
        return _from_runs(nsets, set_a, set_b, set_c, set_m, avail, exclusive, unit,
                          rem_cpus, out_bits, out_cpus)
    while nsets > 0:
        best = -1
        best_cpus = 0
        best_ok = False
        for i in range(nsets):
            c = set_c[i]
            if set_m[i] == 0:
                continue
            ok = c >= rem_cpus and set_m[i] >= rem_nodes
            if best < 0 or (ok and not best_ok) or (ok and c < best_cpus) or (
                    not ok and not best_ok and c > best_cpus):
                best, best_cpus, best_ok = i, c, ok
        if best < 0:
            return 0
        k, rem_cpus, rem_nodes = _take_run(set_a[best], set_b[best], avail, exclusive, unit,
                                           rem_cpus, rem_nodes, out_bits, out_cpus, k)
        if rem_cpus <= 0 and rem_nodes <= 0:
            return k
        set_m[best] = 0
    return 0
