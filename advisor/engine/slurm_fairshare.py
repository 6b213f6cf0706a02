"""Fair share as the slurm core plays it: usage that accrues and decays, and Fair Tree.

Slurm's decay thread runs every PriorityCalcPeriod [src: priority_multifactor.c
_decay_thread()]: all usage decays by ``f ** dt`` (``f = 1 - 0.693 / PriorityDecayHalfLife``,
``dt`` the seconds since its last run), each running job adds ``dt * f ** dt`` times its
billable TRES (its CPUs without TRESBillingWeights) to its association and every one above
it [src: _apply_new_usage()], and a job that ends adds the rest of its time at once. Then
Fair Tree ranks the user associations [src: fair_tree.c _calc_tree_fs()]: at each level
the siblings are sorted by their level fair share ``LF = S / U`` (S their shares over the
level's, U their usage over the parent's; infinite with no usage, 0 with no shares), users
before accounts on a tie, and walked depth first; the n-th user reached (counting from
the number of user associations down, tied siblings sharing a rank) gets the factor
``rank / user associations``. Slurm 22.05 merges no tied accounts (its
``_count_tied_accounts()`` stops at the first account after one), and neither does this.

``build`` turns a snapshot's associations into arrays; the compiled functions below are
called by ``slurm_core`` at each of its PriorityCalcPeriod ticks. Until the first, the
factors are sshare's: what slurmctld uses now (an account added since its last pass has
no normalised shares yet, and its users a factor of 0, which Fair Tree over the shares
would not give). The ticks fall where Slurm's own thread runs, a PriorityCalcPeriod after
its last run, when its state file could be read (``Accounting.decay_ran``); else at
multiples of the period, as no command prints that phase.
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numba import njit

from advisor.model import Accounting, Job, SchedulingConfig

#: PriorityFlags that switch Fair Tree off (the classic algorithm is not played)
CLASSIC = "NO_FAIR_TREE"


def played(config: SchedulingConfig, accounting: Accounting) -> bool:
    """Whether fair share moves in the simulation: a fair-share weight under
    priority/multifactor, Fair Tree in effect, and the associations known."""
    return (config.priority_type == "priority/multifactor"
            and config.priority_weight_fairshare > 0
            and CLASSIC not in config.priority_flags
            and any(a.user for a in accounting.associations))


def build(accounting: Accounting, jobs: Sequence[Job]):
    """(parent, S (``level_shares``), is_user, usage, factor now, children, first
    child, child count, each job's association) of the association tree, root first (-1:
    no parent; a job with no association: -1; the factor now, sshare's, -1 where not
    known)."""
    assocs = accounting.associations
    order, parent, shares, is_user, children, first, counts, user_at = _tree(
        tuple((a.account, a.user, a.parent, a.shares) for a in assocs))
    usage = np.array([assocs[old].raw_usage for old in order], np.float64)
    factor = np.array([assocs[old].fairshare if assocs[old].user else -1.0
                       for old in order], np.float64)
    job_assoc = np.array([user_at.get((j.account, j.user), -1) for j in jobs], np.int64)
    # (copies: the cached arrays are shared by every call that hits the cache)
    return (parent.copy(), shares.copy(), is_user.copy(), usage, factor, children.copy(),
            first.copy(), counts.copy(), job_assoc)


@lru_cache(maxsize=8)
def _tree(assocs: tuple[tuple[str, str, str, int], ...]):
    """``build``'s tree of (account, user, parent, shares) associations, which is the same
    at each moment of a replay while their usage moves: the order of the associations
    (root first), parent, S, is_user, children, first child, child count, and each
    (account, user)'s position."""
    accounts = {a[0]: i for i, a in enumerate(assocs) if not a[1]}
    root = next((i for i, a in enumerate(assocs) if not a[1] and not a[2]), None)
    order = [root] if root is not None else []
    order += [i for i in range(len(assocs)) if i != root]
    at = {old: new for new, old in enumerate(order)}
    n = len(order)
    parent = np.full(n, -1, np.int64)
    shares = np.zeros(n, np.float64)
    is_user = np.zeros(n, np.bool_)
    for new, old in enumerate(order):
        account, user, up_account, raw_shares = assocs[old]
        up = account if user else up_account
        parent[new] = at[accounts[up]] if up in accounts and new != 0 else -1
        shares[new] = raw_shares
        is_user[new] = bool(user)
    counts = np.bincount(parent[parent >= 0], minlength=n).astype(np.int64)
    first = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64)
    children = np.empty(int(counts.sum()), np.int64)
    fill = first.copy()
    for a in range(n):
        if parent[a] >= 0:
            children[fill[parent[a]]] = a
            fill[parent[a]] += 1
    user_at = {(assocs[old][0], assocs[old][1]): at[old] for old in order if assocs[old][1]}
    return (order, parent, level_shares(parent, shares), is_user, children, first,
            counts, user_at)


@njit(cache=True)
def decay_per_second(half_life):
    """What usage keeps of itself per second: ``1 - 0.693 / PriorityDecayHalfLife``, 1 (no
    decay) when the half-life is 0 [src: priority_multifactor.c _decay_thread()]."""
    return 1.0 - 0.693 / half_life if half_life > 0 else 1.0


def level_shares(parent: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """S of each association: its shares over its siblings' and its own, 0 for the root
    or where the level has none [src: fair_tree.c _calc_assoc_fs()]. Fixed for a run, so
    summed once, not at each pass."""
    level = np.bincount(parent[parent >= 0], weights=shares[parent >= 0],
                        minlength=len(parent))
    below = np.where(parent >= 0, level[np.maximum(parent, 0)], 0.0)
    return np.divide(shares, below, out=np.zeros(len(shares)), where=below > 0)


@njit(cache=True)
def fair_tree(parent, norm_shares, is_user, usage, children, first, counts, lf, factor):
    """Each user association's fair-share factor into ``factor`` (``norm_shares``: S, as
    ``level_shares`` gives it; ``lf``: scratch, one per association). The children
    of each account are sorted in place."""
    n = parent.shape[0]
    users = 0
    for a in range(n):  # LF = S / U, U = usage over the parent's [src: _calc_assoc_fs()]
        users += is_user[a]
        p = parent[a]
        if p < 0:
            continue
        if norm_shares[a] == 0.0:
            lf[a] = 0.0
        elif usage[a] == 0.0 or usage[p] <= 0.0:
            lf[a] = np.inf
        else:  # (as Slurm divides, so that the same ties fall)
            lf[a] = norm_shares[a] / (usage[a] / usage[p])
    if n == 0 or users == 0:
        return
    for p in range(n):  # each account's children: LF descending, users first on a tie
        lo = first[p]
        for k in range(lo + 1, lo + counts[p]):
            c = children[k]
            b = k - 1
            while b >= lo and (lf[children[b]] < lf[c] or (
                    lf[children[b]] == lf[c] and is_user[c] and not is_user[children[b]])):
                children[b + 1] = children[b]
                b -= 1
            children[b + 1] = c
    # depth first from the root, a stack of (account, next child, LF of the last one,
    # whether it started tied)
    stack = np.empty(n + 1, np.int64)
    pos = np.empty(n + 1, np.int64)
    prev = np.empty(n + 1, np.float64)
    tied_in = np.empty(n + 1, np.bool_)
    stack[0], pos[0], prev[0], tied_in[0], depth = 0, 0, -1.0, False, 1
    rank = rnt = users
    while depth > 0:
        top = depth - 1
        acc = stack[top]
        if pos[top] == counts[acc]:
            depth -= 1
            continue
        c = children[first[acc] + pos[top]]
        tied = tied_in[top] if pos[top] == 0 else prev[top] == lf[c]
        pos[top] += 1
        prev[top] = lf[c]
        if is_user[c]:
            if not tied:
                rank = rnt
            factor[c] = rank / users
            rnt -= 1
        else:
            stack[depth], pos[depth], prev[depth], tied_in[depth] = c, 0, -1.0, tied
            depth += 1


@njit(cache=True)
def add_usage(a, amount, parent, usage):
    """``amount`` to association a and every association above it."""
    while a >= 0:
        usage[a] += amount
        a = parent[a]
