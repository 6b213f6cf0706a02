"""The simulation engine: what it needs (``JobArrays``, ``EngineConfig``), what it returns.

``run`` is pure: the same arrays, configuration and seed give the same start times.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, Union, runtime_checkable

import numpy as np

from advisor.engine import cache

cache.drop_stale(cache.cache_folder(), cache.source_fingerprint())

from advisor.engine import core  # noqa: E402  (after the cache is checked)
from advisor.engine.structures import (EXP, FCFS, KEYED, KEYED_OTHER, LCFS, LPF, LQF, SPF,
                                       SQF, order_key)
from advisor.errors import BadInput
from advisor.model import Workload

#: the orderings the compiled core knows by name (Lelong et al. §3.2)
ORDERINGS = {"FCFS": FCFS, "LCFS": LCFS, "SPF": SPF, "LPF": LPF, "SQF": SQF, "LQF": LQF,
             "EXP": EXP}
BACKFILL_MODES = {"none": core.NO_BACKFILL, "easy": core.EASY, "depth": core.DEPTH,
                  "conservative": core.CONSERVATIVE}
SHADOW_RULES = {"all": core.SHADOW_ALL, "first": core.SHADOW_FIRST}


@dataclass(frozen=True)
class SortKey:
    """An ordering the core does not know by name: ``key(arrays)`` gives each job's static
    sort key (smaller first; ties by submit time, then job id). ``key`` must be a function
    of a module, so that a configuration can travel to worker processes."""

    name: str
    key: Callable[[JobArrays], np.ndarray]


Order = Union[str, SortKey]


@runtime_checkable
class Mechanic(Protocol):
    """A scheduler a policy family brings to the textbook engine, run instead of the
    compiled core (a plan's annealing, runtime-class queues). It must be a frozen
    dataclass of a module, so that a configuration can travel to worker processes; ``run``
    refuses the settings it does not play (``BadInput``), never approximates them."""

    def run(self, arrays: JobArrays, config: EngineConfig
            ) -> tuple[np.ndarray, np.ndarray]:
        """(start time of each job, its first reservation or -1), as ``run``."""


@dataclass(frozen=True)
class EngineConfig:
    """Everything the compiled core is told about a policy (see ``core.simulate``).
    ``primary`` and ``secondary`` (the backfill queue's order; None: the primary's) are an
    ordering's name in ``ORDERINGS`` or a ``SortKey``. ``mechanic``: a family's own
    scheduler, which ``run`` plays instead of the core (None: the core)."""

    backfill: str = "easy"
    depth: int = 1
    primary: Order = "FCFS"
    secondary: Order | None = None
    threshold: int | None = None
    shadow: str = "all"
    batch: bool = True
    mechanic: Mechanic | None = None


@dataclass(frozen=True)
class Estimates:
    """Runtime-estimate model: ``user`` (the trace's request), ``exact`` (the actual runtime),
    or ``badness`` (Mu'alem and Feitelson §3.3: uniform in [r, f*r], drawn with ``seed``)."""

    kind: str = "user"
    factor: float = 1.0
    seed: int = 0

    @property
    def label(self) -> str:
        return f"f={self.factor:g}" if self.kind == "badness" else self.kind


@dataclass(frozen=True)
class JobArrays:
    """The engine's input: int64 arrays in (submit, job id) order and the machine size.

    To resume from a snapshot taken at ``t0``: ``fixed`` holds the start time of each job
    already running then (-1 for the others), and ``first_pass`` says whether the scheduler
    runs at ``t0`` itself (see ``core.simulate``).
    """

    submit: np.ndarray
    runtime: np.ndarray
    estimate: np.ndarray
    procs: np.ndarray
    machine: int
    t0: int | None = None
    fixed: np.ndarray | None = None
    first_pass: bool = False

    def __len__(self) -> int:
        return int(self.submit.shape[0])

    def take(self, index: np.ndarray) -> JobArrays:
        """The jobs at ``index`` (a boolean mask or positions), on the same machine."""
        fixed = None if self.fixed is None else self.fixed[index]
        return JobArrays(self.submit[index], self.runtime[index], self.estimate[index],
                         self.procs[index], self.machine, self.t0, fixed, self.first_pass)


def job_arrays(workload: Workload, estimates: Estimates = Estimates()) -> JobArrays:
    jobs = workload.jobs
    runtime = jobs["runtime"].to_numpy(np.int64)
    if estimates.kind == "user":
        estimate = jobs["estimate"].to_numpy(np.int64)
    elif estimates.kind == "exact":
        estimate = runtime.copy()
    elif estimates.kind == "badness":
        if estimates.factor < 1:
            raise BadInput(f"badness factor f={estimates.factor} is below 1; use f >= 1")
        u = np.random.default_rng(estimates.seed).random(len(runtime))
        estimate = np.rint(runtime * (1.0 + u * (estimates.factor - 1.0))).astype(np.int64)
    else:
        raise BadInput(f"unknown estimate model '{estimates.kind}'; use user, exact or f=N")
    arrays = make_arrays(jobs["submit"], runtime, estimate, jobs["procs"], workload.machine.procs)
    check(arrays)
    return arrays


def make_arrays(submit, runtime, estimate, procs, machine: int, t0: int | None = None,
                fixed=None, first_pass: bool = False) -> JobArrays:
    """Fresh, writable, contiguous int64 arrays: one type signature, so one compiled engine
    (a read-only view from pandas would make numba compile a second specialisation)."""
    def as_i64(x):
        return np.array(x, dtype=np.int64, copy=True, order="C")

    return JobArrays(as_i64(submit), as_i64(runtime), as_i64(estimate), as_i64(procs),
                     int(machine), None if t0 is None else int(t0),
                     None if fixed is None else as_i64(fixed), bool(first_pass))


def check(arrays: JobArrays) -> None:
    """Refuse input the simulator cannot play (a job that could never start, for one)."""
    if len(arrays) == 0:
        return
    if (arrays.procs <= 0).any() or (arrays.runtime < 0).any() or (arrays.estimate < 0).any():
        raise BadInput("some jobs have no processors or a negative runtime or estimate; "
                       "drop them with the default cleaning (do not pass --keep-invalid)")
    wide = int(arrays.procs.max())
    if wide > arrays.machine:
        raise BadInput(f"a job needs {wide} processors but the machine has {arrays.machine}; "
                       "pass --drop-oversize or a larger --procs")
    if (np.diff(arrays.submit) < 0).any():
        raise BadInput("jobs are not in submit order")
    if arrays.fixed is not None:
        if arrays.t0 is None:
            raise BadInput("fixed start times need the snapshot time t0")
        running = arrays.fixed >= 0
        if (running & ((arrays.fixed > arrays.t0) | (arrays.submit > arrays.fixed))).any():
            raise BadInput("a running job starts after the snapshot or before its submission")
        if (running & (arrays.fixed + arrays.runtime <= arrays.t0)).any():
            raise BadInput("a running job's runtime ends it before the snapshot time; "
                           "runtimes of running jobs must exceed their elapsed time")
        if int(arrays.procs[running].sum()) > arrays.machine:
            raise BadInput("the running jobs use more processors than the machine has")


def run(arrays: JobArrays, config: EngineConfig) -> tuple[np.ndarray, np.ndarray]:
    """Simulate; returns (start time of each job, its first reservation or -1)."""
    if config.mechanic is not None:
        return config.mechanic.run(arrays, config)
    try:
        mode = BACKFILL_MODES[config.backfill]
        shadow = SHADOW_RULES[config.shadow]
    except KeyError as e:
        raise BadInput(f"unknown engine setting {e}") from None
    (primary, pkey), (secondary, skey) = _orders(arrays, config)
    if config.backfill == "depth" and config.depth < 1:
        raise BadInput("reservation depth k must be at least 1")
    threshold = -1 if config.threshold is None else int(config.threshold)
    t0 = core.NO_RESUME if arrays.t0 is None else arrays.t0
    fixed = arrays.fixed if arrays.fixed is not None else _NO_FIXED
    return core.simulate(arrays.submit, arrays.runtime, arrays.estimate, arrays.procs,
                         arrays.machine, mode, int(config.depth), primary, secondary,
                         threshold, shadow, bool(config.batch), t0, fixed,
                         bool(arrays.first_pass), pkey, skey)


def _order(arrays: JobArrays, order: Order) -> tuple[int, np.ndarray]:
    """An ordering's code for the core, and its per-job keys (read only when KEYED)."""
    if isinstance(order, SortKey):
        key = np.ascontiguousarray(order.key(arrays), dtype=np.float64)
        if key.shape != (len(arrays),):
            raise BadInput(f"ordering {order.name}: its key gives {key.shape[0]} values for "
                           f"{len(arrays)} jobs")
        return KEYED, key
    if order not in ORDERINGS:
        raise BadInput(f"unknown engine setting '{order}'")
    return ORDERINGS[order], _NO_KEYS


def _orders(arrays: JobArrays, config: EngineConfig):
    """(code, keys) of the primary and the backfill queue's order. A backfill queue keyed
    otherwise than the primary one is KEYED_OTHER, so that the core sorts it apart."""
    primary = _order(arrays, config.primary)
    if config.secondary is None or config.secondary == config.primary:
        return primary, primary
    code, key = _order(arrays, config.secondary)
    if code == KEYED and primary[0] == KEYED:
        code = KEYED_OTHER
    return primary, (code, key)


def queue_rank(arrays: JobArrays, queued: np.ndarray, time: int,
               config: EngineConfig) -> np.ndarray:
    """Each queued job's place (0 = head) in the primary order at ``time``: over-threshold
    jobs first by submit time (Lelong et al. §6), then the ordering's key, then arrival."""
    (kind, given), _ = _orders(arrays, config)
    over = np.zeros(len(queued), bool)
    if config.threshold is not None:
        over = time - arrays.submit[queued] > config.threshold
    keys = given[queued] if kind >= KEYED else np.array(
        [order_key(kind, int(i), time, arrays.submit, arrays.estimate, arrays.procs)
         for i in queued], dtype=float)
    keys = np.where(over, arrays.submit[queued].astype(float), keys)
    order = np.lexsort((queued, keys, ~over))
    rank = np.empty(len(queued), np.int64)
    rank[order] = np.arange(len(queued))
    return rank


# Read only when resuming (t0 given), so an empty array stands for "no job is running"; and
# only when an order is KEYED (float64: one compiled signature whatever the orders).
_NO_FIXED = np.empty(0, np.int64)
_NO_KEYS = np.empty(0, np.float64)
