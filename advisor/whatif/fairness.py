"""Fairness as a site's admins guard it: what each account received against its shares,
and how long its jobs waited, under each candidate.

Each job counts for its account (sacct's Account; on a site with no accounts, its user
stands in for one, every user with an equal share). An account's *normalized share* is
Slurm's: its shares over its siblings', times its parent's, down from root [sshare(1)
NormShares]. Over a sampled future, an account's *received share* is the CPU-time its jobs
had within the horizon (running ones included) over all the CPU-time delivered. The
**fair-share deviation** is half the sum over the accounts of |received - normalized|
(0: every account received its share, 1: all went to accounts owed none), the
normalized shares taken over the accounts that had work in the future (a running,
pending or arriving job): an account with nothing to run cannot take its share, and a
scheduler is not to blame for it.

The **account wait** of a candidate is, over the accounts with at least
``MIN_ACCOUNT_JOBS`` jobs pending or arriving in the future, the largest ratio of the
account's mean wait (from submission) to its mean under the reference, each plus the
mean wait of all jobs under the reference (at least ``WAIT_SLACK``): an account whose
jobs waited nothing and now wait as long as everyone's did is not starved, one whose
mean doubles from the common mean is.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from advisor.model import Accounting, Job

#: an account with fewer jobs in a future says too little for its mean wait to judge
MIN_ACCOUNT_JOBS = 5
#: the least added to both mean waits of the account-wait ratio (seconds)
WAIT_SLACK = 600.0


def account_of(job: Job) -> str:
    """The account a job counts for: its own, else its user (``user:NAME``)."""
    return job.account or f"user:{job.user}"


def normalized_shares(accounting: Accounting, names: Sequence[str]) -> np.ndarray:
    """Each named account's normalized share (root's children's shares over their sum,
    times down the tree); equal shares for names the associations do not hold (users
    standing in for accounts, or a site with no associations)."""
    accounts = {a.account: a for a in accounting.associations if not a.user}
    level: dict[str, int] = {}          # each parent's children's shares, summed
    for a in accounts.values():
        level[a.parent] = level.get(a.parent, 0) + a.shares
    memo: dict[str, float] = {}

    def norm(name: str) -> float:
        a = accounts.get(name)
        if a is None or not a.parent:
            return 1.0
        if name not in memo:
            siblings = level[a.parent]
            memo[name] = (a.shares / siblings if siblings > 0 else 0.0) * norm(a.parent)
        return memo[name]

    known = [n for n in names if n in accounts and accounts[n].parent]
    if not known:
        return np.full(len(names), 1.0 / max(len(names), 1))
    return np.array([norm(n) if n in accounts else 0.0 for n in names])


def numbered_accounts(accounting: Accounting, names: Sequence[str]
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Each job's account (``names``, one per job) numbered, and each numbered account's
    normalized share (``normalized_shares``)."""
    unique, index = np.unique(np.asarray(names), return_inverse=True)
    return index.astype(np.int64), normalized_shares(accounting, unique.tolist())


def share_deviation(cpu_seconds: np.ndarray, accounts: np.ndarray,
                    shares: np.ndarray) -> float:
    """Half the sum of |received - normalized| over the accounts (``accounts``: each job's,
    numbered; ``shares``: the normalized share of each, taken here over them all: the
    accounts with work in the future); 0 when nothing ran."""
    received = np.bincount(accounts, weights=cpu_seconds, minlength=len(shares))
    total, owed = received.sum(), shares.sum()
    if total <= 0 or owed <= 0:
        return 0.0
    return 0.5 * float(np.abs(received / total - shares / owed).sum())


def account_wait(waits: np.ndarray, accounts: np.ndarray, ref: int) -> np.ndarray:
    """Per candidate (rows of one future's ``waits`` from submission, NaN: never
    started), its account wait against candidate ``ref`` (``accounts``: each job's,
    numbered; see the module docstring); 1 when no account has ``MIN_ACCOUNT_JOBS``
    jobs."""
    out = np.ones(waits.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # none started: NaN
        common = max(float(np.nan_to_num(np.nanmean(waits[ref]))), WAIT_SLACK)
        for a in np.flatnonzero(np.bincount(accounts) >= MIN_ACCOUNT_JOBS):
            means = np.nanmean(waits[:, accounts == a], axis=1)
            if not np.isnan(means[ref]):
                out = np.fmax(out, (means + common) / (means[ref] + common))
    return out
