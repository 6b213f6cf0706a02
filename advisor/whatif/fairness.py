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


def numbered_accounts(accounting: Accounting, names: Sequence[str] | np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Each job's account (``names``, one per job) numbered, each numbered account's
    normalized share (``normalized_shares``), and its name."""
    unique, index = np.unique(np.asarray(names), return_inverse=True)
    return (index.astype(np.int64), normalized_shares(accounting, unique.tolist()),
            tuple(unique.tolist()))


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
    n = int(accounts.max()) + 1 if accounts.size else 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)       # none started: NaN
        common = float(np.nan_to_num(np.nanmean(waits[ref]))) if waits.size else 0.0
    return worst_account_ratio(account_means(waits, accounts, n),
                               np.bincount(accounts, minlength=n) >= MIN_ACCOUNT_JOBS,
                               ref, common)


def account_means(waits: np.ndarray, accounts: np.ndarray, n: int) -> np.ndarray:
    """(rows, ``n``): each row's mean wait of each numbered account's started jobs (rows
    of ``waits``, NaN: never started; NaN where none started)."""
    out = np.full((waits.shape[0], n), np.nan)
    for r, row in enumerate(waits):
        ran = ~np.isnan(row)
        count = np.bincount(accounts[ran], minlength=n)
        summed = np.bincount(accounts[ran], weights=row[ran], minlength=n)
        out[r] = np.where(count > 0, summed / np.maximum(count, 1), np.nan)
    return out


def worst_account_ratio(means: np.ndarray, judged: np.ndarray, ref: int,
                        common: float) -> np.ndarray:
    """Per row of ``means`` (``account_means``), the largest ratio over the ``judged``
    accounts of its mean to row ``ref``'s, both plus ``common`` (at least
    ``WAIT_SLACK``); 1 when none is judged."""
    common = max(common, WAIT_SLACK)
    out = np.ones(means.shape[0])
    for a in np.flatnonzero(judged & ~np.isnan(means[ref])):
        out = np.fmax(out, (means[:, a] + common) / (means[ref, a] + common))
    return out


class AccountTally:
    """Each account's figures under each candidate, over the futures it was sampled on:
    its jobs started (pending or arriving), their mean wait from submission, the part of
    the CPU-time delivered within the horizon that it received, and its normalized share
    (over the accounts with work in each future), the last two averaged over the futures
    it had work in. The accounts reported are those the account wait judges (at least
    ``MIN_ACCOUNT_JOBS`` jobs in a future)."""

    def __init__(self, candidates: int):
        # per candidate: {account: [jobs, summed wait, summed received part, summed share,
        # futures, futures judged]}
        self.rows: list[dict[str, list[float]]] = [{} for _ in range(candidates)]

    def add(self, candidate: int, names: Sequence[str], accounts: np.ndarray,
            waits: np.ndarray, received: np.ndarray, shares: np.ndarray) -> None:
        """One future of ``candidate``: ``waits`` of its pending jobs from submission
        (NaN: never started) and their ``accounts`` (numbered as ``names``), and the
        CPU-seconds ``received`` by each numbered account and its normalized ``shares``."""
        started = ~np.isnan(waits)
        jobs = np.bincount(accounts[started], minlength=len(names))
        summed = np.bincount(accounts[started], weights=waits[started], minlength=len(names))
        judged = np.bincount(accounts, minlength=len(names)) >= MIN_ACCOUNT_JOBS
        total, owed = float(received.sum()), float(shares.sum())
        row = self.rows[candidate]
        for k, name in enumerate(names):
            t = row.setdefault(name, [0, 0.0, 0.0, 0.0, 0, 0])
            t[0] += int(jobs[k])
            t[1] += float(summed[k])
            t[2] += float(received[k]) / total if total > 0 else 0.0
            t[3] += float(shares[k]) / owed if owed > 0 else 0.0
            t[4] += 1
            t[5] += int(judged[k])

    def figures(self, candidate: int) -> dict[str, dict[str, float | None]]:
        """``candidate``'s judged accounts: {account: {"jobs", "mean_wait" (s; None when
        none of its jobs started), "received", "share"}}, most jobs first."""
        out: dict[str, dict[str, float | None]] = {}
        for name, (jobs, waited, got, owed, futures, judged) in sorted(
                self.rows[candidate].items(), key=lambda kv: (-kv[1][0], kv[0])):
            if judged:
                out[name] = {"jobs": int(jobs),
                             "mean_wait": round(waited / jobs, 1) if jobs else None,
                             "received": round(got / futures, 4),
                             "share": round(owed / futures, 4)}
        return out
