"""The textbook core's state: its inputs, settings and working arrays in one structure
(``kernel_state``), which ``core.simulate`` passes to its passes (``core_passes``).

The scalars a pass changes (free processors, the heap's size, the running count, the
lengths of the queue's lists) stay in the kernel's own variables, passed in and returned:
kept in registers, not memory, for an EASY pass starts a job in a few nanoseconds.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from advisor.engine.kernel_state import state_of
from advisor.engine.structures import FCFS

QUEUED, RUNNING, DONE = 1, 2, 3  # job states; 0: not submitted yet
NEVER = np.iinfo(np.int64).max
NO_RESUME = np.iinfo(np.int64).min
# Backfilling modes.
NO_BACKFILL, EASY, DEPTH, CONSERVATIVE = 0, 1, 2, 3
# Shadow-time ties in EASY (see ``core_passes.shadow_of``).
SHADOW_ALL, SHADOW_FIRST = 0, 1

INPUTS = "submit runtime estimate procs fixed pkey skey"
SETTINGS = ("n machine mode depth primary secondary threshold shadow_rule batch t0 "
            "first_pass sort_pr sort_pb profile_mode by_primary arrival_order can_settle")
ARRAYS = ("start first_resv resv exp_end state kpr kb q qp opr opb po fit rl ht hj mark pt "
          "pf")
#: a run's arrays and settings, owned (what ``new_core_state`` returns beside the state)
CoreArrays = namedtuple("CoreArrays", f"{INPUTS} {SETTINGS} {ARRAYS}")  # type: ignore[misc]


@njit(cache=True)
def new_core_state(submit, runtime, estimate, procs, machine, mode, depth, primary,
                   secondary, threshold, shadow_rule, batch, t0, fixed, first_pass, pkey,
                   skey):
    """(CoreArrays, KernelState) of a run before its first instant (``core.simulate``'s
    arguments).

    The working arrays: start and first reservation (the output); the promise kept between
    passes (conservative); expected ends; states; the primary and backfill orders' keys; the
    queue in arrival order (q, and each job's processors, qp, read in turn by the backfill
    scan), in primary order (opr), in backfill order (opb), this pass's primary order with
    the threshold applied (po); the jobs that fit (EASY under an EXP backfill order); the
    running jobs by (expected end, processors, id); the completion heap (ht, hj); the jobs
    deferred to backfill (depth); the free-processor profile (pt, pf)."""
    n = submit.shape[0]
    sort_pr = primary != FCFS
    sort_pb = secondary != FCFS and secondary != primary and (mode == EASY or mode == DEPTH)
    profile_mode = mode == DEPTH or mode == CONSERVATIVE
    # the backfill queue: opb (an order of its own), opr (the primary's), or q (arrival)
    by_primary = secondary == primary and sort_pr
    arrival_order = not (sort_pb or by_primary)
    # An EASY pass is settled when its head stays blocked behind a shadow time that a
    # running job sets (``core.simulate``): only with ties by every job ending at the
    # shadow, one pass per instant and no threshold
    can_settle = mode == EASY and batch and threshold < 0 and shadow_rule == SHADOW_ALL
    cap = 3 * n + 8
    arrays = CoreArrays(
        submit, runtime, estimate, procs, fixed, pkey, skey,
        n, machine, mode, depth, primary, secondary, threshold, shadow_rule, batch, t0,
        first_pass, sort_pr, sort_pb, profile_mode, by_primary, arrival_order, can_settle,
        np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int64),
        np.zeros(n, np.int64), np.zeros(n, np.int8), np.zeros(n, np.float64),
        np.zeros(n, np.float64), np.empty(n, np.int64), np.empty(n, np.int64),
        np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
        np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64),
        np.empty(n, np.int64), np.zeros(n, np.int8), np.empty(cap, np.int64),
        np.empty(cap, np.int64))
    return arrays, state_of(arrays)
