"""A trace's users and groups as Slurm accounts, so that a replay plays fair share.

SWF gives each job a user and a group number and nothing about shares. With fair share
asked for (``--fair-share``), each group becomes an account under root (``g12``; jobs
with no group: ``nogroup``) holding its users, each user association with one share (as
``sacctmgr add user`` gives), each account with the shares a shares file names or one
(equal shares). The site's configuration then is priority/multifactor with a fair-share
weight over an age weight, the common production setting; usage at a moment is what the
jobs played until then used, decayed with PriorityDecayHalfLife as sshare would report it.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from advisor.engine.slurm_fairshare import decay_per_second, last_boundary
from advisor.errors import BadInput
from advisor.model import RESET_PERIODS, Accounting, Association, SchedulingConfig, Workload
from advisor.plugins.spec import BASELINE

#: the account of jobs whose group is not known (SWF -1)
NO_GROUP = "nogroup"
#: the site's weights when fair share is in effect on a trace: fair share ten times age,
#: as many sites set them (Slurm's documentation example weighs them alike at 1000s)
FAIRSHARE_WEIGHT = 10000
AGE_WEIGHT = 1000
#: the baseline of a trace with accounts: EASY under the site's own priority (FCFS added at
#: scale 1 adds nothing to it), where plain EASY-FCFS-FCFS would zero its fair share
SITE_BASELINE = "easy:FCFS:FCFS:scale=1"


def account_names(groups: np.ndarray) -> np.ndarray:
    """The account each of a trace's group numbers stands for: ``g12``, or ``nogroup``."""
    groups = np.asarray(groups, np.int64)
    return np.where(groups >= 0, np.char.add("g", groups.astype(str)), NO_GROUP)


def memory_per_cpu(req_mem: np.ndarray) -> np.ndarray:
    """SWF field 10 (requested kB per processor; -1 none) as MB per CPU, rounded up (0:
    none), as ``--mem-per-cpu`` takes it."""
    kb = np.asarray(req_mem, np.float64)
    return np.where(kb > 0, np.ceil(kb / 1024.0), 0).astype(np.int64)


def with_accounts(workload: Workload, shares: Mapping[str, int] | None = None) -> Workload:
    """``workload`` with its groups as accounts under root and its users in them, each
    account with ``shares[account]`` (by account name, ``g12``) or 1. BadInput when the
    file names no account the trace has."""
    jobs = workload.jobs
    accounts = account_names(jobs["group"].to_numpy())
    users = jobs["user"].astype(str).to_numpy()
    shares = dict(shares or {})
    present = set(accounts.tolist())
    if shares and not present & set(shares):
        raise BadInput(f"the shares file names none of the trace's {len(present)} accounts "
                       f"(e.g. {sorted(present)[0]}): name them by group, g12 or 12")
    assocs = [Association(account="root")]
    assocs += [Association(account=a, parent="root", shares=int(shares.get(a, 1)))
               for a in sorted(present)]
    pairs = sorted(set(zip(accounts.tolist(), users.tolist())))
    assocs += [Association(account=a, user=u, parent=a) for a, u in pairs]
    return replace(workload, accounts=Accounting(associations=tuple(assocs)))


def baseline_spec(workload: Workload) -> str:
    """The policy a trace is played under when none is named."""
    return BASELINE if workload.accounts is None else SITE_BASELINE


def site_config(workload: Workload) -> SchedulingConfig:
    """The configuration a trace's site runs: Slurm's defaults, or with accounts, fair
    share in effect (priority/multifactor, the weights above, slurmdbd accounting)."""
    if workload.accounts is None:
        return SchedulingConfig()
    return replace(SchedulingConfig(), priority_type="priority/multifactor",
                   priority_weight_fairshare=FAIRSHARE_WEIGHT,
                   priority_weight_age=AGE_WEIGHT,
                   accounting_storage_type="accounting_storage/slurmdbd")


def association_rows(accounts: Accounting, account: np.ndarray,
                     user: np.ndarray) -> np.ndarray:
    """Each job's user association and account association, as rows of
    ``accounts.associations`` (-1: none): ``usage_at``'s index, made once per trace."""
    at = {(a.account, a.user): i for i, a in enumerate(accounts.associations)}
    return np.array([[at.get((a, u), -1) for a, u in zip(account.tolist(), user.tolist())],
                     [at.get((a, ""), -1) for a in account.tolist()]], np.int64)


def usage_at(accounts: Accounting, t: int, half_life: int, rows: np.ndarray,
             cpus: np.ndarray, start: np.ndarray, end: np.ndarray,
             reset_period: str = "NONE") -> Accounting:
    """``accounts`` with each association's raw usage at ``t``: the CPU-seconds of the
    jobs run before ``t`` (``start`` >= 0, until ``end`` or ``t``), each second decayed by
    ``f ** (t - s)``, ``f`` the decay thread's (``slurm_fairshare.decay_per_second``),
    summed up the tree (an account's usage holds its users'; the root's, all); ``rows``:
    each job's associations (``association_rows``). Under a periodic
    PriorityUsageResetPeriod only the seconds since its last boundary count (the trace's
    clock read as UTC, the period as if in effect throughout), and that boundary is the
    accounting's ``last_reset``."""
    since = last_boundary(reset_period, t) if reset_period in RESET_PERIODS[2:] else None
    ran = (start >= 0) & (start < t)
    if since is not None:
        ran &= end > since
    a = np.minimum(np.maximum(start[ran], since or 0), t).astype(np.float64)
    b = np.minimum(end[ran], t).astype(np.float64)
    log_f = np.log(decay_per_second(half_life))
    # the integral of f ** (t - s) over [a, b] (b - a without decay)
    used = cpus[ran] * ((np.exp(log_f * (t - b)) - np.exp(log_f * (t - a))) / -log_f
                        if log_f < 0 else b - a)
    n = len(accounts.associations)
    own = np.zeros(n)
    for which in rows[:, ran]:  # users' rows, then accounts': neither overlaps the other
        known = which >= 0
        own += np.bincount(which[known], weights=used[known], minlength=n)
    total = float(used.sum())
    # (an association kept as it is when its usage is: most of a trace's users have
    # none at a given moment, and a copy costs more than the rest of this)
    new = [total if not x.user and not x.parent else float(own[i])
           for i, x in enumerate(accounts.associations)]
    return replace(accounts, last_reset=since, associations=tuple(
        x if v == x.raw_usage else x.with_usage(v)
        for x, v in zip(accounts.associations, new)))
