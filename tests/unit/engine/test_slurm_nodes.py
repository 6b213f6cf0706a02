"""The compiled node choice against the cons_tres rule written plainly.

``select_nodes`` finds runs of consecutive usable nodes a bitmap word at a time and, on a
fragmented machine, takes runs from a heap; the reference below re-scans every run at every
step, as cons_tres ``_eval_nodes()`` does. Hypothesis draws machines (node sizes, free CPUs,
a partition mask, excluded nodes; up to 150 nodes, so runs cross 64-node words; all 1-CPU
nodes often enough for the one-CPU path) and requests; both must choose the same nodes and
CPUs. A one-node job of 26.05 on takes the first node in node order that fits instead.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.node_bits import FULL, avail_bits_of, mask_bits, words
from advisor.engine.slurm_nodes import select_nodes


def reference(cpus, min_nodes, exclusive, prow, excluded, avail, node_cpus,
              first_node=False):
    """[(node, CPUs taken)] or [] when the job does not fit; ``first_node``: a one-node job
    of 26.05 on, on the first node in node order that fits."""
    def offers(n):
        if not prow[n] or excluded[n]:
            return 0
        if exclusive:
            return node_cpus[n] if avail[n] == node_cpus[n] else 0
        return avail[n]

    av = [offers(n) for n in range(len(avail))]
    if first_node:
        first = next((n for n, a in enumerate(av) if a > 0 and a >= cpus), None)
        return [] if first is None else [(first, av[first] if exclusive else cpus)]
    runs, start = [], None
    for n, a in enumerate(av + [0]):
        if a > 0 and start is None:
            start = n
        elif a <= 0 and start is not None:
            runs.append(list(range(start, n)))
            start = None
    rem_cpus, rem_nodes, out = cpus, max(min_nodes, 1), []

    def take(n):
        nonlocal rem_cpus, rem_nodes
        a = av[n] if exclusive else min(av[n], max(rem_cpus - max(rem_nodes - 1, 0), 1))
        out.append((n, a))
        rem_cpus -= a
        rem_nodes -= 1

    while runs:
        def size(r):
            return sum(av[n] for n in r)
        best = None
        for r in runs:  # first sufficient, else tightest sufficient, else largest
            ok = size(r) >= rem_cpus and len(r) >= rem_nodes
            if best is None:
                best, best_ok = r, ok
            elif (ok and not best_ok) or (ok and size(r) < size(best)) or (
                    not ok and not best_ok and size(r) > size(best)):
                best, best_ok = r, ok
        single = None
        if rem_nodes <= 1:  # best fit single node
            fitting = [n for n in best if av[n] >= rem_cpus]
            single = min(fitting, key=lambda n: (av[n], n)) if fitting else None
        if single is not None:
            take(single)
            return out
        for n in best:
            if rem_cpus <= 0 and rem_nodes <= 0:
                break
            take(n)
        if rem_cpus <= 0 and rem_nodes <= 0:
            return out
        runs.remove(best)
    return []


def machine(nn, sizes):
    def per_node(values):
        return st.lists(values, min_size=nn, max_size=nn)
    # mostly free and inside the partition: long runs, some across a word boundary
    return st.tuples(per_node(st.sampled_from(sizes)),
                     per_node(st.one_of(st.just(1.0), st.floats(0, 1))),
                     per_node(st.integers(0, 9).map(bool)), per_node(st.integers(0, 9)))


machines = st.tuples(st.integers(1, 150), st.sampled_from([[1], [1], [1, 2, 4, 16]])).flatmap(
    lambda m: machine(*m))


@settings(max_examples=400, deadline=None)
@given(machines, st.one_of(st.integers(1, 8), st.integers(1, 200)),
       st.sampled_from([0, 0, 1, 2, 3]), st.booleans(), st.booleans())
def test_select_nodes_matches_the_plain_rule(machine, cpus, min_nodes, exclusive, first):
    first_node = first and min_nodes <= 1    # (only a job on one node at most is)
    sizes, fill, inside, excl_draw = machine
    node_cpus = np.array(sizes, np.int64)
    avail = np.array([round(c * f) for c, f in zip(sizes, fill)], np.int64)
    prow = np.array([1 if x else 0 for x in inside], np.uint8)
    nn = len(sizes)
    bits = np.zeros((3, words(nn)), np.uint64)  # the partition, excluded nodes, free nodes
    mask_bits(prow, bits[0])
    mask_bits(np.array([d == 0 for d in excl_draw], np.uint8), bits[1])
    avail_bits = np.zeros((2, words(nn)), np.uint64)
    avail_bits_of(avail, node_cpus, avail_bits)
    unit = bool((node_cpus == 1).all())
    out_bits, out_cpus = np.zeros(words(nn), np.uint64), np.ones(nn, np.int64)
    k = select_nodes(cpus, min_nodes, exclusive, bits[0], bits[1], avail, avail_bits,
                     unit, False, first_node, avail_bits[FULL], bits[2],
                     np.zeros((4, nn), np.int64), out_bits, out_cpus)
    chosen = [n for n in range(nn) if (int(out_bits[n // 64]) >> (n % 64)) & 1]
    assert k == 0 or len(chosen) == k  # on 0 (no fit) the bits are left over
    got = [(n, int(out_cpus[n])) for n in chosen] if k else []
    excluded = [d == 0 for d in excl_draw]
    assert got == sorted(reference(cpus, min_nodes, exclusive, prow, excluded, avail,
                                   node_cpus, first_node))
