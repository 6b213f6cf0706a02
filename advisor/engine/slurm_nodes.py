"""Node selection as Slurm's select/cons_tres does it (CR_Core), compiled.

A job asks for ``cpus`` CPUs on at least ``min_nodes`` nodes (``--exclusive``: whole nodes).
Which nodes it gets matters in the slurm mode: backfill reserves *whole nodes* (F4 of
../shared/slurm/MAPPING.md), so the nodes a reservation picks decide what may backfill.

Default rule, after cons_tres ``_eval_nodes()`` [src: src/plugins/select/cons_tres/job_test.c
_eval_nodes()]: usable nodes form runs of consecutive node indices; the first run that is
large enough wins, unless a later sufficient run holds fewer CPUs (tightest fit); with no
sufficient run the largest is taken whole and the search goes on. Inside the run a job that
fits on one node takes the node with the fewest free CPUs that suffice ("best fit single
node"); otherwise nodes are taken in index order.

``bf_busy_nodes`` [slurm.conf(5) SchedulerParameters]: reservations for future jobs take
nodes already in use first, leaving idle nodes to backfill (``_eval_nodes_busy()``).
"""
from __future__ import annotations

from numba import njit


@njit(cache=True)
def usable_cpus(n, exclusive, prow, excl, stamp, avail, node_cpus):
    """CPUs node n offers this job: 0 if outside the partition, excluded or (for an
    exclusive job) not entirely free."""
    if prow[n] == 0 or excl[n] == stamp:
        return 0
    a = avail[n]
    if exclusive:
        return node_cpus[n] if a == node_cpus[n] else 0
    return a


@njit(cache=True)
def _take(n, a, exclusive, rem_cpus, rem_nodes, out_nodes, out_cpus, k):
    """Take node n offering a CPUs; returns (new k, CPUs and nodes still wanted). A node
    keeps back at least one CPU for each node still to be found (cons_tres _cpus_to_use())."""
    take = a if exclusive else min(a, max(rem_cpus - max(rem_nodes - 1, 0), 1))
    out_nodes[k] = n
    out_cpus[k] = take
    return k + 1, rem_cpus - take, rem_nodes - 1


@njit(cache=True)
def _take_run(run_a, run_b, av, exclusive, rem_cpus, rem_nodes, out_nodes, out_cpus, k):
    """Take CPUs from the run of nodes run_a..run_b: the best-fit single node when one
    suffices and one node is wanted, else nodes in index order until nothing more is wanted.
    Returns (new k, CPUs and nodes still wanted)."""
    if rem_nodes <= 1:
        single, size = -1, 0
        for n in range(run_a, run_b + 1):
            a = av[n]
            if a >= rem_cpus and (single < 0 or a < size):
                single, size = n, a
                if a == rem_cpus:
                    break
        if single >= 0:
            return _take(single, av[single], exclusive, rem_cpus, rem_nodes, out_nodes,
                         out_cpus, k)
    for n in range(run_a, run_b + 1):
        if rem_cpus <= 0 and rem_nodes <= 0:
            break
        a = av[n]
        if a > 0:
            k, rem_cpus, rem_nodes = _take(n, a, exclusive, rem_cpus, rem_nodes, out_nodes,
                                           out_cpus, k)
    return k, rem_cpus, rem_nodes


@njit(cache=True, inline="always")
def _before(i, k, set_c):
    """Run i is taken before run k: more CPUs, then the lower index."""
    return set_c[i] > set_c[k] or (set_c[i] == set_c[k] and i < k)


@njit(cache=True)
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


@njit(cache=True)
def _from_runs(nsets, set_a, set_b, set_c, heap, av, exclusive, rem_cpus, out_nodes, out_cpus):
    """The run rule for a job that wants no particular node count: the tightest run that
    suffices (the lower index among equals); failing that, the largest run is taken whole
    and the rule applied again to the remainder. A heap of the runs (in ``heap``, scratch)
    keeps a fragmented machine at O(runs + taken x log runs) per choice."""
    best = -1
    for i in range(nsets):  # most choices end here, without the heap
        if set_c[i] >= rem_cpus and (best < 0 or set_c[i] < set_c[best]):
            best = i
    if best >= 0:
        return _take_run(set_a[best], set_b[best], av, exclusive, rem_cpus, 1, out_nodes,
                         out_cpus, 0)[0]
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
            k, rem_cpus, rem_nodes = _take_run(set_a[best], set_b[best], av, exclusive,
                                               rem_cpus, rem_nodes, out_nodes, out_cpus, k)
            return k
        i = heap[0]
        size -= 1
        heap[0] = heap[size]
        _sift_down(heap, size, 0, set_c)
        # the run falls short: all of it is taken
        k, rem_cpus, rem_nodes = _take_run(set_a[i], set_b[i], av, exclusive, rem_cpus,
                                           rem_nodes, out_nodes, out_cpus, k)
    return 0


@njit(cache=True)
def select_nodes(cpus, min_nodes, exclusive, prow, excl, stamp, avail, node_cpus,
                 busy_first, node_free, scratch, out_nodes, out_cpus):
    """Choose nodes for a job; returns how many were chosen (0: it does not fit).

    prow: the partition's node mask; excl[n] == stamp excludes node n (blocked by the main
    scheduler or reserved by backfill); avail: free CPUs per node at the time tested;
    scratch: a (5, nodes) int64 work area.
    """
    av, set_a, set_b, set_c, set_m = scratch[0], scratch[1], scratch[2], scratch[3], scratch[4]
    nn = node_cpus.shape[0]
    rem_cpus = cpus
    rem_nodes = max(min_nodes, 1)
    k = 0
    if busy_first:  # nodes in use now first, then idle ones, each in index order
        for phase in range(2):
            for n in range(nn):
                busy = node_free[n] < node_cpus[n]
                if busy != (phase == 0):
                    continue
                a = usable_cpus(n, exclusive, prow, excl, stamp, avail, node_cpus)
                if a <= 0:
                    continue
                k, rem_cpus, rem_nodes = _take(n, a, exclusive, rem_cpus, rem_nodes, out_nodes,
                                               out_cpus, k)
                if rem_cpus <= 0 and rem_nodes <= 0:
                    return k
        return 0
    # one pass: what each node offers (av), and runs of consecutive usable nodes
    # (set_a/set_b: first and last node; set_c/set_m: their CPUs and nodes); the open run
    # is kept in scalars, written once when it closes (aliased stores are slow)
    nsets = 0
    run_c = 0
    run_m = 0
    for n in range(nn):
        a = 0  # usable_cpus(), written out: the call costs 10x the test here
        if prow[n] != 0 and excl[n] != stamp:
            a = avail[n]
            if exclusive and a != node_cpus[n]:
                a = 0
        av[n] = a
        if a > 0:
            if run_m == 0:
                set_a[nsets] = n
            run_c += a
            run_m += 1
        elif run_m > 0:
            set_b[nsets], set_c[nsets], set_m[nsets] = n - 1, run_c, run_m
            nsets += 1
            run_c = 0
            run_m = 0
    if run_m > 0:
        set_b[nsets], set_c[nsets], set_m[nsets] = nn - 1, run_c, run_m
        nsets += 1
    if rem_nodes <= 1:
        return _from_runs(nsets, set_a, set_b, set_c, set_m, av, exclusive, rem_cpus,
                          out_nodes, out_cpus)
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
        k, rem_cpus, rem_nodes = _take_run(set_a[best], set_b[best], av, exclusive, rem_cpus,
                                           rem_nodes, out_nodes, out_cpus, k)
        if rem_cpus <= 0 and rem_nodes <= 0:
            return k
        set_m[best] = 0
    return 0
