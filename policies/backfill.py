"""backfill/*: how jobs may start ahead of the primary order.

* none: strict order, no backfilling (start in order until one does not fit);
* easy: Mu'alem and Feitelson Fig. 2 / Lelong et al. Algorithm 1, one reservation for the first
  blocked job (the family's default);
* depth: the first k blocked jobs (primary order) hold reservations, the rest backfill;
* conservative: Mu'alem and Feitelson §2.1, every queued job holds a reservation, with
  compression.

EASY and depth backfill in their own queue's order (``order``: Lelong et al.'s secondary
ordering, default the primary one). In Slurm (``enact``; docs/slurm-mapping.md,
"Backfilling") the depth is ``bf_job_part_count_reserve`` (EASY 1, depth k, conservative 0
= every job), no backfilling is ``SchedulerType=sched/builtin``, and backfill walks the one
priority order: a separate backfill order has no Slurm form.

The grid proposes EASY, depth 2 and 4, and conservative while the queue is not long: Slurm
re-plans every pending job every cycle, which costs up to seconds per simulation on a wide
machine with a long queue, against tens of milliseconds for EASY and depth-k
(docs/performance.md).
No backfilling only idles processors that backfilling fills without delaying a
reservation; it stays available by name.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from advisor.plugins import (Context, Enactment, EngineConfig, NoParams, NoSlurmForm,
                             PluginBase, param)
from advisor.plugins.registry import plugin

SHADOWS = ("all", "first")
DEFAULT_SHADOW = "all"
DEFAULT_K, MIN_K = 2, 1
#: the depths the grid proposes
GRID_DEPTHS = (2, 4)


def _order():
    return param("", "the backfill queue's ordering (default: the primary one)",
                 kind="plugin", family="ordering")


@dataclass(frozen=True)
class EasyParams:
    shadow: str = param(DEFAULT_SHADOW, "running jobs ending exactly at the shadow time: "
                        "'all' count toward the extra processors (textbook), or only those "
                        "up to the first that frees enough for the head job ('first')",
                        choices=SHADOWS)
    order: str = _order()


@dataclass(frozen=True)
class DepthParams:
    k: int = param(DEFAULT_K, "reservations held (k=1 is EASY)", min=MIN_K)
    order: str = _order()


class Backfill(PluginBase):
    """What the members share: the engine's mode, a backfill queue's order, the Slurm form
    through the reservations each partition may hold (``reserve``)."""

    family = "backfill"
    engine = ""
    short_slot = 0          # the first word of a spec's short form (easy:SPF)

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        config = replace(config, backfill=self.engine)
        order = getattr(params, "order", "")
        if order:
            ordering = plugin("ordering", order)
            secondary = ordering.configure(EngineConfig(), ordering.Params()).primary
            config = replace(config, secondary=secondary)
        return config

    def reserve(self, params) -> int:
        raise NotImplementedError

    def enact(self, params, context: Context) -> Enactment:
        order = getattr(params, "order", "")
        primary = context.chosen("ordering")
        if order and (primary is None or order != primary.plugin.name):
            raise NoSlurmForm("Slurm backfills in its one priority order, so the backfill "
                              "ordering must equal the primary one (docs/slurm-mapping.md, "
                              "Backfilling)")
        reserve = self.reserve(params)
        caveats = ["backfill reserves whole nodes, plans every bf_interval in bf_resolution "
                   "steps, and gives no reservation beyond bf_window (simulated)"]
        if reserve:
            caveats.append(f"{reserve} reservation(s) per partition, not per machine")
        else:
            caveats.append("re-planned every cycle (conservative with compression); jobs "
                           "past bf_max_job_test get no reservation")
        return Enactment(sets={"scheduler_type": "sched/backfill",
                               "backfill.bf_job_part_count_reserve": reserve},
                         fidelity="approximate", caveats=tuple(caveats))


class NoBackfill(Backfill):
    name, engine, rank, Params = "none", "none", 23, NoParams
    summary = "no backfilling: start in primary order until a job does not fit"

    def candidates(self, context: Context) -> tuple:
        return ()

    def enact(self, params, context: Context) -> Enactment:
        return Enactment(sets={"scheduler_type": "sched/builtin"}, caveats=(
            "the main scheduler alone: per partition, no job starts past a blocked one",))


class Easy(Backfill):
    name, engine, rank, Params, default = "easy", "easy", 20, EasyParams, True
    short_extra = "order"   # easy:SPF:FCFS backfills in FCFS order
    summary = "EASY: backfill without delaying the first blocked job's reservation"

    def candidates(self, context: Context) -> tuple:
        return (EasyParams(),)

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        return replace(super().configure(config, params), shadow=params.shadow)

    def reserve(self, params) -> int:
        return 1


class Depth(Backfill):
    name, engine, rank, Params = "depth", "depth", 21, DepthParams
    short_extra = "order"
    summary = "reservations for the first k blocked jobs, backfill the others"

    def candidates(self, context: Context) -> tuple:
        return tuple(DepthParams(k=k) for k in GRID_DEPTHS)

    def configure(self, config: EngineConfig, params) -> EngineConfig:
        return replace(super().configure(config, params), depth=params.k)

    def reserve(self, params) -> int:
        return params.k


class Conservative(Backfill):
    name, engine, rank, Params = "conservative", "conservative", 22, NoParams
    summary = "conservative: every job keeps a reservation; compressed on early ends"

    def candidates(self, context: Context) -> tuple:
        return () if context.queue_is_long else (NoParams(),)

    def reserve(self, params) -> int:
        return 0


NONE, EASY, DEPTH, CONSERVATIVE = NoBackfill(), Easy(), Depth(), Conservative()
