"""bf/*: the backfill scheduler's SchedulerParameters, one at a time (slurm.conf(5)).

The grid proposes, from the site's configuration and its queue:
* bf_window, when a running job's limit, a pending job's or a partition's MaxTime reaches
  past it (a job whose earliest start by those limits lies past the window gets no
  reservation, and jobs backfilled meanwhile can keep it waiting for good): the longest
  of them, in whole hours, at most Slurm's 30 days;
* bf_max_job_test, when more jobs are pending than it lets backfill try: the queue's
  length, rounded up to hundreds;
* bf_max_job_user, when the queue is deeper than bf_max_job_test and one user holds more
  than half of the jobs within that depth (in submit order): a tenth of bf_max_job_test;
* bf_max_job_part, likewise for one partition among several: bf_max_job_test over the
  partitions' count;
* bf_busy_nodes: not yet (see ``BusyNodes.propose``);
* bf_continue, when a cycle over the queue (its cost: ``BackfillCost``, from sdiag) holds
  the locks past bf_yield_interval, so that it yields and, without it, ends at the first
  change seen meanwhile;
* bf_max_time, when such a cycle would run past it: the cycle's estimate, in whole
  seconds.

bf_resolution and bf_interval trade how well backfill plans against how often: the grid
does not propose them (a spec may name them).
"""
from __future__ import annotations

from dataclasses import dataclass

from advisor.plugins import Context, Knob, param
from advisor.policies.bf.inputs import held_within, reach

#: Slurm's largest bf_window, in minutes [slurm.conf(5)]
MAX_BF_WINDOW = 43200
#: how the simulation plays every backfill setting
CYCLE_COST = ("a backfill cycle is played with its cost as the cluster's sdiag shows it (a "
              "trace's replay: free), and a cycle's effect on the RPCs slurmctld answers "
              "meanwhile is not played",)


def _count(default: int, what: str, low: int = 0):
    return param(default, f"{what} (SchedulerParameters; Slurm's default {default})",
                 min=low)


def _deep(context: Context) -> bool:
    """Whether more jobs are pending than backfill tries in a cycle."""
    return len(context.snapshot.pending) > context.config.backfill.bf_max_job_test


def cycle_us(context: Context) -> int:
    """What a backfill cycle over the pending queue costs, in microseconds (its fixed part
    and a test per job, up to bf_max_job_test; 0 where cycles are free)."""
    cost, bf = context.config.backfill_cost, context.config.backfill
    tested = len(context.snapshot.pending)
    if bf.bf_max_job_test > 0:
        tested = min(tested, bf.bf_max_job_test)
    return cost.cycle_us + cost.job_us * tested if cost.job_us or cost.cycle_us else 0


class BfKnob(Knob):
    """A SchedulerParameters setting: it stands for the ordering and the backfilling the
    configuration in effect has."""

    family = "bf"
    replaces = ("backfill", "ordering")
    CAVEATS = CYCLE_COST


class HolderCap(BfKnob):
    """A cap on the jobs of one holder (a user, a partition) that backfill tries, proposed
    where the queue is deeper than bf_max_job_test, none is set and one holder has over
    half of that depth (submit order): bf_max_job_test over ``split`` (0: not here)."""

    def holder(self, job) -> str:
        raise NotImplementedError

    def split(self, context: Context) -> int:
        raise NotImplementedError

    def propose(self, context: Context) -> list[dict]:
        depth, split = context.config.backfill.bf_max_job_test, self.split(context)
        if self.current(context) or not split or not _deep(context) or \
                held_within(context.snapshot, depth, self.holder) <= 0.5:
            return []
        return [{next(iter(self.SETS)): max(depth // split, 1)}]


@dataclass(frozen=True)
class WindowParams:
    bf_window: int = _count(1440, "how far ahead backfill plans, minutes; a job whose "
                            "limit reaches past it gets no reservation", low=1)


class Window(BfKnob):
    name, rank, Params = "window", 70, WindowParams
    summary = "bf_window: how far ahead backfill plans (reservations past it: none)"
    SETS = {"bf_window": "backfill.bf_window"}

    def propose(self, context: Context) -> list[dict]:
        longest = reach(context.snapshot)
        if longest <= context.config.backfill.bf_window * 60:
            return []
        hours = -(-longest // 3600)
        return [{"bf_window": min(hours * 60, MAX_BF_WINDOW)}]


@dataclass(frozen=True)
class MaxJobTestParams:
    bf_max_job_test: int = _count(500, "the most pending jobs backfill tries per cycle, "
                                  "in priority order", low=1)


class MaxJobTest(BfKnob):
    name, rank, Params = "max_job_test", 71, MaxJobTestParams
    summary = "bf_max_job_test: how deep in the queue backfill tries"
    SETS = {"bf_max_job_test": "backfill.bf_max_job_test"}

    def propose(self, context: Context) -> list[dict]:
        if not _deep(context):
            return []
        return [{"bf_max_job_test": -(-len(context.snapshot.pending) // 100) * 100}]


@dataclass(frozen=True)
class MaxJobUserParams:
    bf_max_job_user: int = _count(0, "the most jobs of one user backfill tries per cycle "
                                  "(0: no limit)")


class MaxJobUser(HolderCap):
    name, rank, Params = "max_job_user", 72, MaxJobUserParams
    summary = "bf_max_job_user: how many of one user's jobs backfill tries"
    SETS = {"bf_max_job_user": "backfill.bf_max_job_user"}

    def holder(self, job) -> str:
        return job.user

    def split(self, context: Context) -> int:
        return 10                       # a tenth of the depth


@dataclass(frozen=True)
class MaxJobPartParams:
    bf_max_job_part: int = _count(0, "the most jobs of one partition backfill tries per "
                                  "cycle (0: no limit)")


class MaxJobPart(HolderCap):
    name, rank, Params = "max_job_part", 73, MaxJobPartParams
    summary = "bf_max_job_part: how many of one partition's jobs backfill tries"
    SETS = {"bf_max_job_part": "backfill.bf_max_job_part"}

    def holder(self, job) -> str:
        return job.partition

    def split(self, context: Context) -> int:
        """The UP partitions' count, among which the depth is split (0: one alone)."""
        parts = sum(p.state == "UP" for p in context.cluster.partitions)
        return parts if parts >= 2 else 0


@dataclass(frozen=True)
class BusyNodesParams:
    bf_busy_nodes: bool = param(False, "yes: reservations go to the nodes that are busy "
                                "now, leaving idle ones to backfill (Slurm's default no)")


class BusyNodes(BfKnob):
    name, rank, Params = "busy_nodes", 74, BusyNodesParams
    summary = "bf_busy_nodes: reserve on busy nodes, backfill on idle ones"
    SETS = {"bf_busy_nodes": "backfill.bf_busy_nodes"}

    def propose(self, context: Context) -> list[dict]:
        """None yet: proposed only when off, it was a one-way change (the advice turned it
        on and never off again), and on the validation windows the two that did worst
        ended with it in effect (docs/native.md). A spec may name it."""
        return []


@dataclass(frozen=True)
class ResolutionParams:
    bf_resolution: int = _count(60, "the step of backfill's plan, seconds", low=1)


class Resolution(BfKnob):
    name, rank, Params = "resolution", 75, ResolutionParams
    summary = "bf_resolution: the time step of backfill's plan"
    SETS = {"bf_resolution": "backfill.bf_resolution"}


@dataclass(frozen=True)
class IntervalParams:
    bf_interval: int = _count(30, "seconds between backfill cycles", low=1)


class Interval(BfKnob):
    name, rank, Params = "interval", 76, IntervalParams
    summary = "bf_interval: how often backfill runs"
    SETS = {"bf_interval": "backfill.bf_interval"}


@dataclass(frozen=True)
class ContinueParams:
    bf_continue: bool = param(False, "yes: a cycle that yielded its locks goes on down its "
                              "list though jobs changed meanwhile (Slurm's default no: "
                              "it ends, and the next starts again from the top)")


class Continue(BfKnob):
    name, rank, Params = "continue", 77, ContinueParams
    summary = "bf_continue: a cycle goes on after yielding though jobs changed"
    SETS = {"bf_continue": "backfill.bf_continue"}

    def propose(self, context: Context) -> list[dict]:
        if self.current(context) or \
                cycle_us(context) <= context.config.backfill.bf_yield_interval:
            return []
        return [{"bf_continue": True}]


@dataclass(frozen=True)
class MaxTimeParams:
    bf_max_time: int = param(0, "the most seconds a backfill cycle may take, sleeps "
                             "included (SchedulerParameters; Slurm's default 0: "
                             "bf_interval's)", min=0)


class MaxTime(BfKnob):
    name, rank, Params = "max_time", 78, MaxTimeParams
    summary = "bf_max_time: how long a backfill cycle may run"
    SETS = {"bf_max_time": "backfill.bf_max_time"}

    def propose(self, context: Context) -> list[dict]:
        bf = context.config.backfill
        need = cycle_us(context)
        # (each yield sleeps: they count against bf_max_time too)
        need += need // max(bf.bf_yield_interval, 1) * bf.bf_yield_sleep
        if need <= (bf.bf_max_time or bf.bf_interval) * 1_000_000:
            return []
        return [{"bf_max_time": -(-need // 1_000_000)}]


WINDOW, MAX_JOB_TEST, MAX_JOB_USER, MAX_JOB_PART, BUSY_NODES = (
    Window(), MaxJobTest(), MaxJobUser(), MaxJobPart(), BusyNodes())
RESOLUTION, INTERVAL, CONTINUE, MAX_TIME = Resolution(), Interval(), Continue(), MaxTime()
