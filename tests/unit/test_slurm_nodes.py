"""The compiled node choice against the cons_tres rule written plainly.

``select_nodes`` finds runs of consecutive usable nodes once and, on a fragmented machine,
takes runs from a heap; the reference below re-scans every run at every step, as
cons_tres ``_eval_nodes()`` does. Hypothesis draws machines (node sizes, free CPUs, a
partition mask, excluded nodes) and requests; both must choose the same nodes and CPUs.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.slurm_nodes import select_nodes


def reference(cpus, min_nodes, exclusive, prow, excluded, avail, node_cpus):
    """[(node, CPUs taken)] or [] when the job does not fit."""
    def offers(n):
        if not prow[n] or excluded[n]:
            return 0
        if exclusive:
            return node_cpus[n] if avail[n] == node_cpus[n] else 0
        return avail[n]

    av = [offers(n) for n in range(len(avail))]
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


machines = st.integers(1, 48).flatmap(lambda nn: st.tuples(
    st.lists(st.sampled_from([1, 2, 4, 16]), min_size=nn, max_size=nn),
    st.lists(st.floats(0, 1), min_size=nn, max_size=nn),
    st.lists(st.booleans(), min_size=nn, max_size=nn),
    st.lists(st.integers(0, 9), min_size=nn, max_size=nn)))


@settings(max_examples=400, deadline=None)
@given(machines, st.integers(1, 200), st.sampled_from([0, 0, 1, 2, 3]), st.booleans())
def test_select_nodes_matches_the_plain_rule(machine, cpus, min_nodes, exclusive):
    sizes, fill, inside, excl_draw = machine
    node_cpus = np.array(sizes, np.int64)
    avail = np.array([round(c * f) for c, f in zip(sizes, fill)], np.int64)
    prow = np.array([1 if x else 0 for x in inside], np.uint8)
    excl = np.array([7 if d == 0 else 0 for d in excl_draw], np.int64)  # stamp 7: excluded
    nn = len(sizes)
    out_n, out_c = np.zeros(nn, np.int64), np.zeros(nn, np.int64)
    k = select_nodes(cpus, min_nodes, exclusive, prow, excl, 7, avail, node_cpus, False,
                     avail, np.zeros((5, nn), np.int64), out_n, out_c)
    got = list(zip(out_n[:k].tolist(), out_c[:k].tolist()))
    assert got == reference(cpus, min_nodes, exclusive, prow, excl == 7, avail, node_cpus)
