"""Coscheduling at process level (Frachtenberg et al., Frachtenberg et al.), compiled.

The model behind the paper's §3 tables. A job is bulk-synchronous: each of its processes
computes for its own time per iteration, then exchanges one message with each ring
neighbour (blocking; back-to-back sends and receives count as one communication, §2.6). A
message takes ``latency`` to arrive once sent; a process's exchange completes when it has
sent and both neighbours' messages have arrived. A job's processes sit one per CPU on
contiguous CPUs of one row of an Ousterhout matrix (advisor.policies.timeshare.kernel_matrix, which
admits arriving jobs); a CPU hosts the processes of every row. In §3's scenarios every job
spans the machine in a row of its own.

Schedulers (times in ms):

- FCFS: batch, the matrix's one row: jobs run on dedicated CPUs; a waiting process polls.
- GS: every ``slice`` all CPUs switch to the next row holding jobs (costing
  ``global_switch``); a waiting process polls (busy-waits).
- SB: no global coordination; a waiting process spins ``spin``, then blocks and yields.
- FCS: GS's matrix. At each switch a CPU whose next process is CS runs it alone for the
  slot, polling (Algorithm 1); otherwise it resumes the DC and F processes it hosts under the
  local scheduler with spin-blocking, and the slot's own process, if F, comes first. At the
  end of its slot each process is reclassified (Algorithm 2, Table 2's constants); every job
  starts as CS. Each blocking communication costs ``monitor`` under FCS (the MPI layer's
  bookkeeping, §2.6).

The local OS policy is not in the paper; this model's choice: round-robin with quantum
``quantum`` (each quantum's length drawn uniformly in [0.5, 1.5] x quantum: the noise that
keeps CPUs from running in lockstep), a woken process queued at the tail, and a switch
between processes costing ``local_switch``. Under FCS the local choice also reads the
classes (the paper's §2.2, item 2): F processes are queued ahead of DC ones. CS processes
never run in another job's slot (§2.2: "CS processes are no longer allowed to run in the F
slots"; this model reads it for DC slots too).

Pure and deterministic: the seed is an argument. Here: the entry points and the event
loop; its state and event heap are ``kernel_cosched_state``'s, a CPU's local scheduler
``kernel_cosched_cpu``'s, what each event does ``kernel_cosched_events``' (each step can
be called alone on a small state: tests/unit/policies/timeshare/test_cosched_steps.py).
"""
from __future__ import annotations

from dataclasses import astuple, dataclass

import numpy as np
from numba import njit

from advisor.engine import cache
from advisor.engine.kernel_state import view_of
from advisor.policies.timeshare.kernel_cosched_cpu import dispatch_idle, schedule
from advisor.policies.timeshare.kernel_cosched_events import (IDLE, admit_queued, cpu_due,
                                                              exchanged, job_ended, switch)
from advisor.policies.timeshare.kernel_cosched_state import (ARRIVE, CPU, CS, DC, FCFS, FCS, GS,
                                                             PENDING, QUEUED, REMAINING, SB, SLOT,
                                                             SLOT_ROW, SLOT_VERSION, F, grow_heap,
                                                             heap_short, new_state, outcome, pop)

cache.guard(__file__)   # before any kernel of this folder is loaded

SCHEDULERS = {"FCFS": FCFS, "GS": GS, "SB": SB, "FCS": FCS}
CLASSES = ("CS", "F", "DC")
__all__ = ["CS", "DC", "F", "SCHEDULERS", "CLASSES", "Costs", "Constants", "Outcome",
           "simulate", "simulate_jobs"]


@dataclass(frozen=True)
class Costs:
    """Times in ms. ``latency``, ``spin`` and ``slice`` are the paper's; the rest are
    overheads the paper does not give, fitted once for all four §3 scenarios
    (docs/coscheduling.md): the defaults."""
    latency: float = 0.03        # one ring exchange: "a few tens of µs" (§3)
    spin: float = 0.12           # T_spin (Table 2)
    slice: float = 100.0         # T_slice (Table 2)
    quantum: float = 0.5         # the local OS's round-robin quantum
    global_switch: float = 3.0   # a CPU's loss at a global multi-context switch
    local_switch: float = 0.005  # a CPU's loss at a local context switch
    monitor: float = 0.015       # FCS's cost per blocking communication


@dataclass(frozen=True)
class Constants:
    """Table 2 (times in ms)."""
    cslots_min: int = 20
    dc_thresh: float = 1000.0
    cs_thresh: float = 2.0
    f_thresh: float = 0.85 * 2.0
    tslots_max: int = 32768


@dataclass(frozen=True)
class Outcome:
    """Per job: its end and its admission (ms); per (job, CPU): the class of its process
    there at the end."""
    end: np.ndarray
    classes: np.ndarray
    events: int
    start: np.ndarray | None = None


def simulate(work: np.ndarray, iterations: np.ndarray, sync: np.ndarray, scheduler: str,
             costs: Costs = Costs(), constants: Constants = Constants(),
             seed: int = 0) -> Outcome:
    """Play jobs that all arrive at 0 and each span every CPU (Frachtenberg et al.'s §3) under
    ``scheduler`` (FCFS, GS, SB or FCS): one matrix row per job (FCFS: one row).

    ``work[j, c]`` is the computation (ms) per iteration of job j's process on CPU c (0 for
    a CPU where the job has nothing to do), ``iterations[j]`` its iterations and ``sync[j]``
    whether its processes exchange with their ring neighbours after each one."""
    jobs, cpus = np.shape(work)
    return simulate_jobs(work, np.full(jobs, cpus), iterations, sync, np.zeros(jobs),
                         np.ones(jobs), cpus, 1 if scheduler == "FCFS" else jobs, scheduler,
                         costs, constants, seed)


def simulate_jobs(work: np.ndarray, size: np.ndarray, iterations: np.ndarray,
                  sync: np.ndarray, arrival: np.ndarray, estimate: np.ndarray, cpus: int,
                  rows: int, scheduler: str, costs: Costs = Costs(),
                  constants: Constants = Constants(), seed: int = 0) -> Outcome:
    """Jobs arriving over time (``arrival``, ms) on ``cpus`` CPUs: job j has ``size[j]``
    processes, process p computing ``work[j, p]`` ms per iteration; it is admitted FCFS
    with EASY backfilling (``estimate``: its expected run time alone, ms) into a matrix of
    ``rows`` rows (the multiprogramming level; 1 for batch), on contiguous CPUs of one row
    (advisor.policies.timeshare.kernel_matrix)."""
    work = np.ascontiguousarray(work, np.float64)
    size = np.asarray(size, np.int64)
    if (size < 1).any() or (size > cpus).any() or work.shape[1] < size.max():
        raise ValueError("every job needs 1 to cpus processes, with work for each")
    if rows < 1:
        raise ValueError("the matrix needs at least one row")
    end, start, classes, events = _simulate(
        work, size, np.asarray(iterations, np.int64), np.asarray(sync, np.bool_),
        np.asarray(arrival, np.float64), np.asarray(estimate, np.float64), int(cpus),
        int(rows), SCHEDULERS[scheduler], np.array(astuple(costs), np.float64),
        np.array(astuple(constants), np.float64), np.int64(seed))
    if events < 0:
        raise RuntimeError("coscheduling model: no event left before every job ended")
    return Outcome(end=end, classes=classes, events=int(events), start=start)


@njit(cache=True)
def _simulate(work, size, iters, sync, arrival, estimate, n_cpus, rows, mode, costs, consts,
              seed):
    """The event loop: (ends, starts, classes, events; -1 events if the heap ran dry
    before every job ended)."""
    arrays, state = new_state(work, size, iters, sync, arrival, estimate, n_cpus, rows,
                              mode, costs, consts, seed)
    s = view_of(state)   # (``arrays`` and ``state`` outlive it: the return reads them)
    events = 0
    while s.sc[REMAINING] > 0:
        if s.sc[PENDING] == 0:
            return outcome(arrays, state, -1)
        if heap_short(s):
            grow_heap(state)
        t, kind, a, b, v = pop(s)
        events += 1
        if kind == SLOT:
            if b == s.sc[SLOT_VERSION]:
                switch(s, t, a == 1)
            continue
        ended = -1
        own = -1                               # the CPU this event is about
        if kind == ARRIVE:
            s.queue[s.sc[QUEUED]] = a
            s.sc[QUEUED] += 1
        elif kind == CPU:
            if b != s.cver[a]:
                continue                       # stale: the CPU was rescheduled
            ended = cpu_due(s, a, t)
            if ended == IDLE:
                continue
            own = a
        else:
            ended = exchanged(s, a, b, t)
            own = b
        if ended >= 0:
            job_ended(s, ended, t)
        placing = (kind == ARRIVE or ended >= 0) and s.sc[QUEUED] > 0 \
            and admit_queued(s, t)
        dispatch(s, own, placing, t)
    return outcome(arrays, state, events)


@njit(cache=True, inline="always")
def dispatch(s, own, placing, t):
    """After an event, an idle CPU gains work only from it: on its own CPU ``own`` (-1:
    none), or by a placement; then ``own``'s next step is due."""
    slot = s.sc[SLOT_ROW]
    if placing:
        if own >= 0:
            s.touched[own] = True
        for q in range(s.n_cpus):
            if s.touched[q]:
                dispatch_idle(s, q, t, slot)
        s.touched[:] = False
    elif own >= 0:
        dispatch_idle(s, own, t, slot)
    if own >= 0:
        schedule(s, own, t)
