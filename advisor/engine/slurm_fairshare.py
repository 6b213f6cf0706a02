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

import calendar
import datetime as dt
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from numba import njit

from advisor.engine.core_state import NEVER
from advisor.engine.slurm_layout import (C_RESET_AT, C_RESET_EVERY, C_RESET_IN_EFFECT,
                                         C_RESET_LAST, C_RESET_NEXT)
from advisor.model import RESET_PERIODS, Accounting, Job, SchedulingConfig

#: PriorityFlags that switch Fair Tree off (the classic algorithm is not played)
CLASSIC = "NO_FAIR_TREE"
#: the periods of fixed length, in seconds (the others follow the calendar)
FIXED_PERIODS = {"DAILY": 86400, "WEEKLY": 7 * 86400}


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


def fair_tree_factors(accounting: Accounting) -> dict[tuple[str, str], float]:
    """Each user association's Fair Tree factor from its usage now, by (account, user):
    what slurmctld's decay thread gives it at a pass."""
    assocs = accounting.associations
    order, parent, shares, is_user, children, first, counts, _ = _tree(
        tuple((a.account, a.user, a.parent, a.shares) for a in assocs))
    usage = np.array([assocs[old].raw_usage for old in order], np.float64)
    lf, factor = np.zeros(len(order)), np.zeros(len(order))
    fair_tree(parent, shares, is_user, usage, children.copy(), first, counts, lf, factor)
    return {(assocs[old].account, assocs[old].user): float(factor[new])
            for new, old in enumerate(order) if assocs[old].user}


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


def next_reset(period: str, last: int, now: int, utc_offset: int = 0) -> int:
    """When usage is next reset after one at ``last``, seen at ``now`` (epoch seconds), as
    slurmctld computes it in local time (``utc_offset`` seconds east of UTC) [src:
    priority_multifactor.c _next_reset()]: midnight of ``last``'s day, then a day later;
    the Sunday after; the first of the next month, quarter (January, April, July,
    October) or year. A daily or weekly reset long overdue comes at the last boundary
    before ``now`` (its loop skips the ones a period or more before it)."""
    day = dt.datetime.fromtimestamp(last + utc_offset, dt.timezone.utc).replace(
        hour=0, minute=0, second=0, microsecond=0)
    if period in FIXED_PERIODS:
        every = FIXED_PERIODS[period]
        days = 1 if period == "DAILY" else 7 - (day.weekday() + 1) % 7   # (tm_wday: Sun 0)
        t = calendar.timegm(day.timetuple()) - utc_offset + days * 86400
        if t + every < now:
            t += (now - t - 1) // every * every
        return t
    if period == "MONTHLY":
        day = day.replace(day=1, month=day.month % 12 + 1,
                          year=day.year + (day.month == 12))
    elif period == "QUARTERLY":
        month = next((m for m in (4, 7, 10) if m > day.month), 1)
        day = day.replace(day=1, month=month, year=day.year + (month == 1))
    elif period == "YEARLY":
        day = day.replace(day=1, month=1, year=day.year + 1)
    else:
        return NEVER
    return calendar.timegm(day.timetuple()) - utc_offset


def last_boundary(period: str, now: int, utc_offset: int = 0) -> int:
    """The last reset instant of ``period`` at or before ``now`` (a site resetting on
    schedule)."""
    t = next_reset(period, now - 400 * 86400, now, utc_offset)
    while True:
        after = next_reset(period, t, now, utc_offset)
        if after > now:
            return t
        t = after


def reset_schedule(period: str, now: int, last_reset: int,
                   utc_offset: int = 0) -> tuple[int, int, int]:
    """(the first reset after ``now``, the second, the period after it; NEVER and 0:
    none) under ``period`` with the last reset at ``last_reset`` [src: _decay_thread()]:
    NOW resets at the first pass; a periodic reset whose boundary after ``last_reset``
    is already past resets then too. (Slurm then resets at each pass until its boundary
    has caught up with the clock, one a pass: played as the first alone, the further ones
    dropping only a pass's usage each.)"""
    if period == "NOW":
        return now, NEVER, 0
    if period not in RESET_PERIODS[2:]:
        return NEVER, NEVER, 0
    first = next_reset(period, last_reset, now, utc_offset)
    if first <= now:
        first, last_reset = now, last_boundary(period, now, utc_offset)
    else:
        last_reset = first
    return first, next_reset(period, last_reset, now, utc_offset), FIXED_PERIODS.get(period, 0)


def set_resets(cfg: np.ndarray, config: SchedulingConfig, now: int, last_reset: int | None,
               in_effect: str) -> None:
    """``cfg``'s PriorityUsageResetPeriod entries for ``config`` played from ``now``
    (``slurm_fairshare.reset_schedule``), the period ``in_effect`` the site's and its last
    reset at ``last_reset``. Where that is not known: at the last boundary of the period in
    effect (a site resetting on schedule), else long ago (slurmctld's first start), so that
    a candidate that brings a reset in resets at once, as slurmctld does on its
    reconfigure. NOW in effect has reset already, at the reconfigure that set it."""
    if last_reset is None:
        last_reset = (last_boundary(in_effect, now, config.utc_offset)
                      if in_effect in RESET_PERIODS[2:] else 0)
    cfg[C_RESET_LAST] = last_reset
    cfg[C_RESET_IN_EFFECT] = RESET_PERIODS.index(in_effect) if in_effect in RESET_PERIODS \
        else 0
    period = config.priority_usage_reset_period
    if period == "NONE" or (period == "NOW" and in_effect == "NOW"):
        cfg[C_RESET_AT] = cfg[C_RESET_NEXT] = NEVER
        cfg[C_RESET_EVERY] = 0
        return
    cfg[C_RESET_AT], cfg[C_RESET_NEXT], cfg[C_RESET_EVERY] = reset_schedule(
        period, now, last_reset, config.utc_offset)
