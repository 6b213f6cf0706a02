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

Pure and deterministic: the seed is an argument.
"""
from __future__ import annotations

import heapq
from dataclasses import astuple, dataclass

import numpy as np
from numba import njit

from advisor.engine import cache
from advisor.engine.rng import seed_state, uniform
from advisor.policies.timeshare.kernel_matrix import admit, release

cache.guard(__file__)   # before any kernel of this folder is loaded

FCFS, GS, SB, FCS = 0, 1, 2, 3
SCHEDULERS = {"FCFS": FCFS, "GS": GS, "SB": SB, "FCS": FCS}
CS, F, DC = 0, 1, 2
CLASSES = ("CS", "F", "DC")

_CPU, _WAKE, _SLOT, _ARRIVE = 0, 1, 2, 3
_EPS = 1e-9


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
    n_jobs = size.shape[0]
    lat, spin, tslice, quantum, gsw, lsw, mon = costs
    cslots_min, dc_t, cs_t, f_t, tslots_max = consts
    state = np.array([seed_state(np.uint64(seed), np.uint64(mode))], np.uint64)
    inf = np.inf

    # per (job, CPU): the job's process there, if it has one (done until it is placed)
    it = np.zeros((n_jobs, n_cpus), np.int64)
    rem = np.zeros((n_jobs, n_cpus))
    incomm = np.zeros((n_jobs, n_cpus), np.bool_)
    blocked = np.zeros((n_jobs, n_cpus), np.bool_)
    waking = np.zeros((n_jobs, n_cpus), np.bool_)
    done = np.ones((n_jobs, n_cpus), np.bool_)
    reach = np.zeros((n_jobs, n_cpus))
    sent = np.zeros((n_jobs, n_cpus, 2))
    seq = np.zeros((n_jobs, n_cpus), np.int64)
    cls = np.zeros((n_jobs, n_cpus), np.int64)
    cslots = np.zeros((n_jobs, n_cpus), np.int64)
    tslots = np.zeros((n_jobs, n_cpus), np.int64)
    tcpu = np.zeros((n_jobs, n_cpus))
    tcomm = np.zeros((n_jobs, n_cpus))
    ccomm = np.zeros((n_jobs, n_cpus), np.int64)
    left = np.zeros(n_jobs, np.int64)          # processes not done
    end = np.full(n_jobs, -1.0)
    start = np.full(n_jobs, -1.0)
    # the matrix: row_cpu[r, c] is the job of row r on CPU c (-1: none)
    row_cpu = np.full((rows, n_cpus), -1, np.int64)
    row_jobs = np.zeros(rows, np.int64)
    job_row = np.full(n_jobs, -1, np.int64)
    job_first = np.zeros(n_jobs, np.int64)
    queue = np.empty(n_jobs, np.int64)
    qn = 0
    running = np.empty(n_jobs, np.int64)
    nrun = 0
    placed = np.empty(n_jobs, np.int64)
    touched = np.zeros(n_cpus, np.bool_)       # CPUs of the jobs placed by this event

    cur = np.full(n_cpus, -1, np.int64)
    last = np.full(n_cpus, -1, np.int64)
    ready = np.zeros(n_cpus)                   # end of the switch in progress
    upd = np.zeros(n_cpus)
    spin_end = np.full(n_cpus, inf)
    qend = np.full(n_cpus, inf)
    cver = np.zeros(n_cpus, np.int64)
    csmode = np.zeros(n_cpus, np.bool_)
    slot = 0                                   # the matrix row in its time slot
    slot_ver = 0
    slot_live = False                          # a switch is due (some row holds a job)
    counter = n_jobs

    heap = [(0.0, -1, 0, 0, 0)]
    heapq.heappop(heap)
    for j in range(n_jobs):
        heapq.heappush(heap, (arrival[j], _ARRIVE, j, 0, 0))

    def polling(c):
        return mode == FCFS or mode == GS or (mode == FCS and csmode[c])

    def eligible(j, c, slot):
        if done[j, c]:
            return False
        if mode == FCFS or mode == GS:
            return job_row[j] == slot
        if mode == SB:
            return True
        if csmode[c]:
            return j == row_cpu[slot, c]
        return cls[j, c] != CS

    def prio(j, c, slot):
        if mode != FCS or cls[j, c] == DC:
            return 2
        return 0 if job_row[j] == slot else 1

    def pick(c, slot):
        best, bp, bs = -1, 9, 0
        for r in range(rows):
            j = row_cpu[r, c]
            if j < 0 or j == cur[c] or blocked[j, c] or not eligible(j, c, slot):
                continue
            p = prio(j, c, slot)
            if best < 0 or p < bp or (p == bp and seq[j, c] < bs):
                best, bp, bs = j, p, seq[j, c]
        return best

    def set_csmode(c, slot):
        j = row_cpu[slot, c]
        csmode[c] = mode == FCS and j >= 0 and cls[j, c] == CS and not done[j, c]

    def account(c, t):
        j = cur[c]
        if j >= 0 and not incomm[j, c]:
            s = max(upd[c], ready[c])
            if t > s:
                rem[j, c] -= t - s
                tcpu[j, c] += t - s
        upd[c] = t

    def run(c, j, t, cost):
        if last[c] >= 0 and last[c] != j:
            ready[c] = max(ready[c], t) + cost
        cur[c] = j
        last[c] = j
        start = max(t, ready[c])
        qend[c] = start + quantum * (0.5 + uniform(state))
        spin_end[c] = start + spin if incomm[j, c] else inf

    def schedule(c, t):
        cver[c] += 1
        j = cur[c]
        if j < 0:
            return
        start = max(t, ready[c])
        nxt = inf
        if not incomm[j, c]:
            nxt = start + max(rem[j, c], 0.0)
        elif not polling(c):
            nxt = max(spin_end[c], start)
        if not polling(c):
            nxt = min(nxt, max(qend[c], start))
        if nxt < inf:
            heapq.heappush(heap, (nxt, _CPU, c, cver[c], 0))

    def dispatch_idle(q, t, slot):
        """An idle CPU takes what it may run."""
        if cur[q] < 0:
            account(q, t)
            nq = pick(q, slot)
            if nq >= 0:
                run(q, nq, t, 0.0 if mode == FCFS or mode == GS else lsw)
                schedule(q, t)

    def nb(j, c, d):                           # the ring neighbour d = -1 / +1 of (j, c)
        return job_first[j] + (c - job_first[j] + d + size[j]) % size[j]

    def sent_at(j, q, k):
        if it[j, q] > k or (it[j, q] == k and incomm[j, q]):
            return sent[j, q, k & 1]
        return -1.0

    def check_comm(j, c):
        if not incomm[j, c] or waking[j, c]:
            return
        k = it[j, c]
        tl = sent_at(j, nb(j, c, -1), k)
        tr = sent_at(j, nb(j, c, 1), k)
        if tl < 0 or tr < 0:
            return
        waking[j, c] = True
        heapq.heappush(heap, (max(reach[j, c], tl + lat, tr + lat), _WAKE, j, c, k))

    def finish(j, c, t):
        done[j, c] = True
        left[j] -= 1
        if left[j] == 0:
            end[j] = t
            return True
        return False

    events = 0
    remaining = n_jobs
    while remaining > 0:
        if len(heap) == 0:
            return end, start, cls, -1
        t, kind, a, b, v = heapq.heappop(heap)
        events += 1
        ended = -1
        admitting = False
        placing = False
        if kind == _ARRIVE:
            queue[qn] = a
            qn += 1
            admitting = True
        elif kind == _CPU:
            c = a
            if b != cver[c]:
                continue
            account(c, t)
            j = cur[c]
            if j < 0:
                continue
            # done computing; past ~10^7 ms a remainder above _EPS may still be below
            # what t can add (t + rem == t): counted as done, or time would stand still
            if not incomm[j, c] and (rem[j, c] <= _EPS or t + rem[j, c] <= t):
                if not sync[j]:                 # no exchange: the next iteration at once
                    it[j, c] += 1
                    rem[j, c] = work[j, c - job_first[j]]
                    if it[j, c] >= iters[j] and finish(j, c, t):
                        ended = j
                else:                           # the exchange point: send, then wait
                    incomm[j, c] = True
                    reach[j, c] = t
                    sent[j, c, it[j, c] & 1] = t
                    ccomm[j, c] += 1
                    spin_end[c] = t + spin
                    check_comm(j, nb(j, c, -1))
                    check_comm(j, c)
                    check_comm(j, nb(j, c, 1))
            spun_out = incomm[j, c] and not polling(c) and t >= spin_end[c] - _EPS
            if done[j, c] or spun_out:
                blocked[j, c] = spun_out
                cur[c] = -1
            elif not polling(c) and t >= qend[c] - _EPS and t >= ready[c]:
                nj = pick(c, slot)              # the quantum is over: round robin
                if nj >= 0:
                    seq[j, c] = counter
                    counter += 1
                    run(c, nj, t, lsw)
                else:
                    qend[c] = t + quantum * (0.5 + uniform(state))
        elif kind == _WAKE:                     # the exchange of iteration v completed
            j, c = a, b
            waking[j, c] = False
            if cur[c] == j:
                account(c, t)
            tcomm[j, c] += t - reach[j, c]
            incomm[j, c] = False
            it[j, c] += 1
            rem[j, c] = work[j, c - job_first[j]] + (mon if mode == FCS else 0.0)
            if it[j, c] >= iters[j] and finish(j, c, t):
                ended = j
            if cur[c] == j:
                spin_end[c] = inf
                if done[j, c]:
                    cur[c] = -1
            elif blocked[j, c]:
                blocked[j, c] = False
                seq[j, c] = counter
                counter += 1
                q = cur[c]
                if q >= 0 and not done[j, c] and eligible(j, c, slot) \
                        and prio(j, c, slot) == 0 and prio(q, c, slot) > 0:
                    account(c, t)               # the slot's F process preempts
                    seq[q, c] = counter
                    counter += 1
                    run(c, j, t, lsw)
        else:                                   # a global context switch
            if b != slot_ver:
                continue
            if mode == FCS and a == 0:
                for c in range(n_cpus):         # Algorithm 2 at the end of the slot
                    j = row_cpu[slot, c]
                    if j >= 0 and not done[j, c]:
                        _reclassify(j, c, cls, cslots, tslots, tcpu, tcomm, ccomm,
                                    cslots_min, dc_t, cs_t, f_t, tslots_max)
            nxt = -1
            for step in range(1, rows + 1):
                cand = (slot + step) % rows
                if row_jobs[cand] > 0:
                    nxt = cand
                    break
            if nxt < 0:
                slot_live = False
                continue
            slot = nxt
            slot_ver += 1
            heapq.heappush(heap, (t + tslice, _SLOT, 0, slot_ver, 0))
            for c in range(n_cpus):
                account(c, t)
                set_csmode(c, slot)
                q = cur[c]
                sj = row_cpu[slot, c]
                if q >= 0 and not eligible(q, c, slot):
                    cur[c] = -1                 # suspended until its next turn
                elif q >= 0 and sj >= 0 and q != sj and eligible(sj, c, slot) \
                        and not blocked[sj, c] and prio(sj, c, slot) == 0:
                    seq[q, c] = counter         # the slot's F process comes first
                    counter += 1
                    cur[c] = -1
                if cur[c] < 0:
                    nj = pick(c, slot)
                    if nj >= 0:
                        run(c, nj, t, gsw)
                elif incomm[cur[c], c] and not polling(c):
                    spin_end[c] = max(t, ready[c]) + spin
                schedule(c, t)
            continue
        if ended >= 0:                          # its CPUs leave the matrix
            remaining -= 1
            r = job_row[ended]
            nrun = release(ended, row_cpu, row_jobs, job_row, job_first, size, running, nrun)
            admitting = True
            if (mode == GS or mode == FCS) and r == slot and row_jobs[r] == 0:
                slot_ver += 1                   # an empty row's slot ends now
                heapq.heappush(heap, (t, _SLOT, 1, slot_ver, 0))
        if admitting and qn > 0:
            n, qn = admit(t, queue, qn, row_cpu, running, nrun, start, estimate, job_row,
                          job_first, size, placed)
            placing = n > 0
            for i in range(n):
                j = placed[i]
                start[j] = t
                touched[job_first[j]:job_first[j] + size[j]] = True
                running[nrun] = j
                nrun += 1
                row_jobs[job_row[j]] += 1
                for c in range(job_first[j], job_first[j] + size[j]):
                    w = work[j, c - job_first[j]]
                    if iters[j] > 0 and (w > 0.0 or sync[j]):
                        done[j, c] = False
                        rem[j, c] = w
                        seq[j, c] = counter
                        counter += 1
                        left[j] += 1
                if left[j] == 0:                # nothing to do: done at once
                    end[j] = t
                    remaining -= 1
                    nrun = release(j, row_cpu, row_jobs, job_row, job_first, size, running,
                                    nrun)
                    continue
                if (mode == GS or mode == FCS) and not slot_live:
                    slot = job_row[j]           # the first job of an idle machine
                    slot_live = True
                    slot_ver += 1
                    heapq.heappush(heap, (t + tslice, _SLOT, 0, slot_ver, 0))
                    for c in range(n_cpus):
                        set_csmode(c, slot)
        # an idle CPU gains work only from this event: on its own CPU, or by a placement
        own = b if kind == _WAKE else (a if kind == _CPU else -1)
        if placing:
            if own >= 0:
                touched[own] = True
            for q in range(n_cpus):
                if touched[q]:
                    dispatch_idle(q, t, slot)
            touched[:] = False
        elif own >= 0:
            dispatch_idle(own, t, slot)
        if own >= 0:
            schedule(own, t)
    return end, start, cls, events


@njit(cache=True)
def _reclassify(j, c, cls, cslots, tslots, tcpu, tcomm, ccomm,
                cslots_min, dc_t, cs_t, f_t, tslots_max):
    """Algorithm 2 for process (j, c) at the end of its assigned slot."""
    tslots[j, c] += 1
    cslots[j, c] += 1
    if cslots[j, c] < cslots_min:
        return
    if ccomm[j, c] > 0:
        g = (tcpu[j, c] + tcomm[j, c]) / ccomm[j, c]
        avg_cpu = tcpu[j, c] / ccomm[j, c]
    else:
        g = np.inf
        avg_cpu = np.inf
    if tslots[j, c] % int(tslots_max) == 0 or g < cs_t:
        new = CS
    elif g < dc_t and avg_cpu < f_t:
        new = F
    else:
        new = DC
    if new != cls[j, c]:
        cls[j, c] = new
        cslots[j, c] = 0
        tcpu[j, c] = 0.0
        tcomm[j, c] = 0.0
        ccomm[j, c] = 0
