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
    # (set_a/set_b: first and last node; set_c/set_m: their CPUs and nodes)
    nsets = 0
    inrun = False
    for n in range(nn):
        a = usable_cpus(n, exclusive, prow, excl, stamp, avail, node_cpus)
        av[n] = a
        if a > 0:
            if not inrun:
                set_a[nsets] = n
                set_c[nsets] = 0
                set_m[nsets] = 0
                nsets += 1
                inrun = True
            set_b[nsets - 1] = n
            set_c[nsets - 1] += a
            set_m[nsets - 1] += 1
        else:
            inrun = False
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
        single = -1
        if rem_nodes <= 1:  # best fit single node
            size = 0
            for n in range(set_a[best], set_b[best] + 1):
                a = av[n]
                if a >= rem_cpus and (single < 0 or a < size):
                    single, size = n, a
                    if a == rem_cpus:
                        break
        if single >= 0:
            return _take(single, av[single], exclusive, rem_cpus, rem_nodes, out_nodes,
                         out_cpus, k)[0]
        for n in range(set_a[best], set_b[best] + 1):
            if rem_cpus <= 0 and rem_nodes <= 0:
                break
            a = av[n]
            if a <= 0:
                continue
            k, rem_cpus, rem_nodes = _take(n, a, exclusive, rem_cpus, rem_nodes, out_nodes,
                                           out_cpus, k)
        if rem_cpus <= 0 and rem_nodes <= 0:
            return k
        set_m[best] = 0
    return 0
