"""The process-level model's state (``kernel_cosched``): its inputs, settings and working
arrays in one structure (``advisor.engine.kernel_state``) that its steps share, the local
scheduler's (``kernel_cosched_cpu``) and the events' (``kernel_cosched_events``).

The scalars the steps change (the matrix row in its slot, its version, the tie-break
counter, the queue's length, the running count, the jobs not ended, the events pending)
sit in ``sc``. The events wait on a binary min-heap of arrays in the state (``push``,
``pop``), not a list: numba reference-counts a list, atomically, wherever it is passed
(docs/coscheduling.md gives the cost).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.extending import register_jitable

from advisor.engine import cache
from advisor.engine.kernel_state import state_of, view_of
from advisor.engine.rng import seed_state

cache.guard(__file__)   # before any kernel of this folder is loaded

FCFS, GS, SB, FCS = 0, 1, 2, 3           # the schedulers
CS, F, DC = 0, 1, 2                      # a process's class under FCS (Algorithm 2)
# Events: (time, kind, a, b, v) on one heap, earliest first (ties: by kind, a, b, v).
#   CPU     CPU a's next step is due, if its version is still b
#   WAKE    process (a, b)'s exchange of iteration v completes
#   SLOT    a global context switch, if the slot's version is still b (a: 1 when the
#           slot ends early, its row emptied)
#   ARRIVE  job a arrives
CPU, WAKE, SLOT, ARRIVE = 0, 1, 2, 3
EPS = 1e-9
# ``sc``: the scalars
SLOT_ROW, SLOT_VERSION, SLOT_LIVE, COUNTER, QUEUED, NRUN, REMAINING, PENDING = range(8)

INPUTS = "work size iters sync arrival estimate"
SETTINGS = ("n_cpus rows mode lat spin tslice quantum gsw lsw mon cslots_min dc_t cs_t f_t "
            "tslots_max")
PROCESSES = ("it rem incomm blocked waking done reach sent seq cls cslots tslots tcpu tcomm "
             "ccomm")
JOBS = "left end start"
MATRIX = "row_cpu row_jobs job_row job_first queue running placed touched"
CPUS = "cur last ready upd spin_end qend cver csmode"
HEAP = "event_time event_key"           # (time), (kind, a, b, v)
#: a run's arrays and settings, owned (what ``new_state`` returns beside the state)
CoschedArrays = namedtuple(  # type: ignore[misc]
    "CoschedArrays", f"{INPUTS} {SETTINGS} {PROCESSES} {JOBS} {MATRIX} {CPUS} {HEAP} rng sc")


@njit(cache=True)
def new_state(work, size, iters, sync, arrival, estimate, n_cpus, rows, mode, costs, consts,
              seed):
    """(CoschedArrays, KernelState) of a run before its first event
    (``kernel_cosched._simulate``'s arguments).

    Per (job, CPU), the job's process there if it has one (done until the job is placed):
    its iteration, computation left, whether it is in its exchange, blocked, being woken
    and done; when it reached the exchange and when it sent (by iteration parity); its
    round-robin rank; its class and Algorithm 2's counts. Per job: its processes not done,
    its end and its start. The matrix: row_cpu[r, c] is the job of row r on CPU c (-1:
    none), the jobs per row, each job's row and first CPU, the queue, the running jobs, the
    jobs just placed and their CPUs. Per CPU: the process it runs and ran last, the end of
    the switch in progress, when its time was last counted, the end of the spin and of the
    quantum, its version (a due step of an older one is stale) and whether it runs its
    slot's CS process alone. The event heap, first holding the arrivals."""
    n_jobs = size.shape[0]
    lat, spin, tslice, quantum, gsw, lsw, mon = costs
    cslots_min, dc_t, cs_t, f_t, tslots_max = consts
    shape = (n_jobs, n_cpus)
    room = heap_room(n_jobs, n_cpus)
    sc = np.zeros(8, np.int64)
    sc[COUNTER] = n_jobs
    sc[REMAINING] = n_jobs
    arrays = CoschedArrays(
        work, size, iters, sync, arrival, estimate,
        n_cpus, rows, mode, lat, spin, tslice, quantum, gsw, lsw, mon, cslots_min, dc_t,
        cs_t, f_t, tslots_max,
        np.zeros(shape, np.int64), np.zeros(shape), np.zeros(shape, np.bool_),
        np.zeros(shape, np.bool_), np.zeros(shape, np.bool_), np.ones(shape, np.bool_),
        np.zeros(shape), np.zeros((n_jobs, n_cpus, 2)), np.zeros(shape, np.int64),
        np.zeros(shape, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.int64),
        np.zeros(shape), np.zeros(shape), np.zeros(shape, np.int64),
        np.zeros(n_jobs, np.int64), np.full(n_jobs, -1.0), np.full(n_jobs, -1.0),
        np.full((rows, n_cpus), -1, np.int64), np.zeros(rows, np.int64),
        np.full(n_jobs, -1, np.int64), np.zeros(n_jobs, np.int64),
        np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64), np.empty(n_jobs, np.int64),
        np.zeros(n_cpus, np.bool_),
        np.full(n_cpus, -1, np.int64), np.full(n_cpus, -1, np.int64), np.zeros(n_cpus),
        np.zeros(n_cpus), np.full(n_cpus, np.inf), np.full(n_cpus, np.inf),
        np.zeros(n_cpus, np.int64), np.zeros(n_cpus, np.bool_),
        np.empty(room), np.empty((room, 4), np.int64),
        np.array([seed_state(np.uint64(seed), np.uint64(mode))], np.uint64), sc)
    state = state_of(arrays)
    for j in range(n_jobs):
        push(view_of(state), arrival[j], ARRIVE, j, 0, 0)
    return arrays, state


@register_jitable
def heap_room(n_jobs, n_cpus):
    """The events a run's heap holds at first: the arrivals and what one event pushes.
    It grows as it fills (every run of a few jobs exercises that path)."""
    return n_jobs + event_margin(n_cpus)


@register_jitable
def event_margin(n_cpus):
    """The most events one event can push: a step due on every CPU, a slot, a few
    wake-ups."""
    return 2 * n_cpus + 8


@njit(cache=True, inline="always")
def heap_short(s):
    """Whether the event heap may lack room for what one event pushes."""
    return s.sc[PENDING] + event_margin(s.n_cpus) > s.event_time.shape[0]


@njit(cache=True)
def grow_heap(state):
    """Double the event heap (owned by ``state`` from then on)."""
    s = view_of(state)
    n = s.sc[PENDING]
    size = max(n + event_margin(s.n_cpus), 2 * s.event_time.shape[0])
    times, keys = np.empty(size), np.empty((size, 4), np.int64)
    times[:n] = s.event_time[:n]
    keys[:n] = s.event_key[:n]
    state.event_time = times
    state.event_key = keys


@register_jitable
def _earlier(times, keys, i, k):
    """Whether event i of the heap comes before event k: by time, then kind, a, b, v."""
    if times[i] != times[k]:
        return times[i] < times[k]
    for f in range(4):
        if keys[i, f] != keys[k, f]:
            return keys[i, f] < keys[k, f]
    return False


@register_jitable
def _swap(times, keys, i, k):
    times[i], times[k] = times[k], times[i]
    for f in range(4):
        keys[i, f], keys[k, f] = keys[k, f], keys[i, f]


@njit(cache=True, inline="always")
def push(s, t, kind, a, b, v):
    """Queue event (t, kind, a, b, v) (the heap has room: ``heap_short``)."""
    times, keys = s.event_time, s.event_key
    i = s.sc[PENDING]
    s.sc[PENDING] = i + 1
    times[i] = t
    keys[i, 0], keys[i, 1], keys[i, 2], keys[i, 3] = kind, a, b, v
    while i > 0:
        parent = (i - 1) >> 1
        if not _earlier(times, keys, i, parent):
            break
        _swap(times, keys, i, parent)
        i = parent


@njit(cache=True, inline="always")
def pop(s):
    """The earliest event (t, kind, a, b, v), removed from the heap (not empty)."""
    times, keys = s.event_time, s.event_key
    t, kind, a, b, v = times[0], keys[0, 0], keys[0, 1], keys[0, 2], keys[0, 3]
    n = s.sc[PENDING] - 1
    s.sc[PENDING] = n
    times[0] = times[n]
    keys[0] = keys[n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and _earlier(times, keys, child + 1, child):
            child += 1
        if not _earlier(times, keys, child, i):
            break
        _swap(times, keys, i, child)
        i = child
    return t, kind, a, b, v


@njit(cache=True)
def outcome(arrays, state, events):
    """(ends, starts, classes, events) of a run from its owned ``arrays``. Taking
    ``state`` keeps it alive until the run ends: the steps read it through a view."""
    return arrays.end, arrays.start, arrays.cls, events
