"""How the slurm mode reads a live cluster's whole seconds: in tenths, at expected fractions.

Slurm reports times in whole seconds while slurmctld acts at sub-second instants: a job
submitted at 12.9 s and one at 12.1 s both read 12, a job's nodes are free again a fraction
of a second after it ends (once its epilog completes), and backfill cycles come at a phase
set when slurmctld started. Whether a start lands in the same second as the end or
submission that allowed it, or the next, depends on fractions the records do not carry:
in the test cluster's recordings (tests/fixtures/sim-to-real) it was the next second after
a third of the ends or more. Reading every such step as a whole second, early or late,
adds a second per step to a queue many steps deep.

``LIVE`` simulates in tenths of a second instead and puts each unknown fraction at its
expected value: a reported time is read at the middle of its second, an ended job's nodes
are free 0.3 s later (the epilog's completion on the test cluster), and backfill cycles
come at the middle of a second. A start is reported back as the whole second it falls in,
as sacct would. ``None`` (a trace's reading) keeps whole seconds and exact instants.

The backfill thread drifts: it sleeps bf_interval after a cycle ends [src: backfill.c
backfill_agent()], so each cycle comes later in the second by the last one's length
(about a millisecond and a half a second on the test cluster), while a job outlives its
whole seconds by some 20-40 ms. A job a cycle started and that runs long enough has ended
when the cycle of its last second begins, and that cycle, not the main scheduler after
the epilog, starts what follows. ``cycle_sees_end`` is that length: 25 s, chosen on
22.05's recorded plays and judged on 24.11's and 26.05's (docs/simulation.md, "A cycle
sees an end").

What Slurm computes in whole seconds is computed on its clock (``C_CLOCK_PHASE``,
``slurm_layout.slurm_second``): a running job's planned end is its start's whole second
plus its limit, and bf_resolution's slots and the will-run batches' 30-s barriers fall on
multiples of Slurm's epoch seconds. Read in tenths instead, two planned ends Slurm holds
equal (a batch barrier and the end it takes in) could fall a tick apart, and a
reservation move a whole slot: a cycle's cost of one tick did that to a play of 41 jobs
(docs/simulation.md, "Slurm's clock in planning").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.engine.core import NEVER, NO_RESUME
from advisor.engine.slurm_layout import (C_BF_INTERVAL, C_BF_MIN_AGE, C_BF_RESOLUTION,
                                         C_BF_WINDOW, C_CALC_PERIOD, C_CLOCK_PHASE,
                                         C_CYCLE_SEES_END,
                                         C_END_LATENCY, C_CALC_PHASE, C_DECAY_HALF_LIFE,
                                         C_OVER_TIME, C_RESET_AT, C_RESET_EVERY,
                                         C_RESET_NEXT, C_SCHED_INTERVAL, C_T0, C_TICK_US,
                                         C_UNTIL,
                                         C_WILL_RUN_WINDOW, ELIGIBLE, FIXED, LIMIT, RUNTIME,
                                         SUBMIT)


@dataclass(frozen=True)
class Timing:
    """Sub-second reading of whole-second times: ``tick`` units per second; a reported
    second is read ``at`` ticks into it; an ended job's nodes are free ``end_latency`` ticks
    later; backfill cycles come ``bf_phase`` ticks into a second; a job a cycle started
    that runs ``cycle_sees_end`` seconds or more (0: none), a multiple of bf_interval, is
    seen ended by the cycle of its last second."""

    tick: int
    at: int
    end_latency: int
    bf_phase: int
    cycle_sees_end: int = 0


#: the reading for predicting a live cluster (see the module's docstring)
LIVE = Timing(tick=10, at=5, end_latency=3, bf_phase=5, cycle_sees_end=25)

# configuration entries that are durations in seconds
_DURATIONS = (C_BF_INTERVAL, C_BF_WINDOW, C_BF_RESOLUTION, C_BF_MIN_AGE, C_CALC_PERIOD,
              C_SCHED_INTERVAL, C_OVER_TIME, C_WILL_RUN_WINDOW, C_DECAY_HALF_LIFE,
              C_RESET_EVERY)


def in_ticks(jobs: np.ndarray, part_max: np.ndarray, cfg: np.ndarray, max_age: float,
             timing: Timing) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The core's time arguments (job table, partition MaxTime, configuration, PriorityMaxAge)
    in ticks, with the engine's clock shifted by ``bf_phase`` so that its cycles (at
    multiples of bf_interval) fall at that phase of a second."""
    k, shift = timing.tick, timing.at - timing.bf_phase
    jobs = jobs.copy()
    for row in (SUBMIT, ELIGIBLE):
        jobs[row] = jobs[row] * k + shift
    jobs[RUNTIME] *= k
    jobs[LIMIT] *= k
    fixed = jobs[FIXED] >= 0
    jobs[FIXED, fixed] = jobs[FIXED, fixed] * k + shift
    cfg = cfg.copy()
    cfg[list(_DURATIONS)] *= k
    if cfg[C_T0] != NO_RESUME:
        cfg[C_T0] = cfg[C_T0] * k + shift
    if cfg[C_CALC_PHASE] > 0:  # (an instant)
        cfg[C_CALC_PHASE] = cfg[C_CALC_PHASE] * k + shift
    for instant in (C_RESET_AT, C_RESET_NEXT):
        if cfg[instant] != NEVER:
            cfg[instant] = cfg[instant] * k + shift
    if cfg[C_UNTIL] != NEVER:  # (the last tick of that second)
        cfg[C_UNTIL] = cfg[C_UNTIL] * k + shift + k - 1
    cfg[C_END_LATENCY] = timing.end_latency
    cfg[C_CLOCK_PHASE] = timing.bf_phase
    cfg[C_CYCLE_SEES_END] = timing.cycle_sees_end * k
    cfg[C_TICK_US] = cfg[C_TICK_US] // k
    return jobs, part_max * k, cfg, max_age * k


def to_seconds(times: np.ndarray, timing: Timing) -> np.ndarray:
    """Engine instants in ticks as the whole seconds they fall in (negative: none)."""
    out = (times + timing.bf_phase) // timing.tick
    return np.where(times < 0, times, out)
