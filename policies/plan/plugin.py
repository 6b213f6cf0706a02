"""plan/sa: plan-based scheduling by simulated annealing, Zheng et al.'s PLAN 1, 2 and 3.

A plan gives every waiting job a start time, found by simulated annealing over the
permutations of the queue (``kernel``): PLAN 1 minimises the mean wait,
PLAN 2 the mean squared wait, PLAN 3 the time at which all running and queued jobs are
done. A plan replaces the queue ordering and the backfilling: a policy holding it has
neither (``plan2`` alone is the whole policy).

Textbook (``configure``): the replay re-plans at every arrival, start and end, and starts
each job when its planned start arrives (the paper's §III).

In Slurm (``enact``; docs/slurm-mapping.md, "Plans") a plan is an order for the current
queue: ``scontrol update JobId=.. SiteFactor=..`` gives each pending job a site factor
that sorts it in plan order above anything the configuration in effect can add, and
leaves that configuration as it is (a priority/basic one becomes priority/multifactor
with every weight 0, since only multifactor reads site factors). Slurm then runs the plan
with its own scheduler: the slurm mode simulates exactly that, so the gain shown is what
Slurm would realise. The plan stays fixed until the next advisor run. Grid: PLAN 1, 2
and 3 with a 1-day threshold (``GRID_T``), alone, unless the queue is long; every planned
job queues ahead of every later one, so each job's wait is bounded by the queue ahead of
it at the run (``bounds_wait``).

``T``, a starvation threshold as the orderings have (Lelong et al. §6): jobs that have waited
longer than T lead every plan in submit order. The paper's plans have none: re-planned
daily, they can put an old wide job behind each new day's jobs again and again, while
each day's futures, which hold the plan until its jobs start, see one day's delay only.
With the risk limits floored by the recent past, that let the paper's plans take waits
past 1.5 times the baseline's MaxWait; the grid's plans have T = 1 day (docs/advice.md).
In Slurm it is read when the plan is made: the jobs past T get the highest site factors.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.plugins import (NEUTRAL_WEIGHTS, Context, Enactment, EngineConfig, JobColumns,
                             LuaFragment, NoSlurmForm, PluginBase, format_duration, param)
from advisor.policies.plan.kernel import COSTS as KERNEL_COSTS
from advisor.policies.plan.kernel import Annealing
from advisor.policies.plan.kernel import plan as plan_jobs
from advisor.policies.plan.inputs import queue_state
from advisor.policies.plan.mechanic import Plans, compile_kernels

#: what a plan may minimise: the kernel's objectives, by name
COSTS = tuple(KERNEL_COSTS)
#: the paper's names; a label says PLAN1 for plan/sa:cost=wait
ALIASES = {"plan1": {"cost": "wait"}, "plan2": {"cost": "squared"},
           "plan3": {"cost": "makespan"}}
DEFAULT_N = 100
#: the grid's plans' threshold (s)
GRID_T = 86400
#: Slurm keeps a site factor in a signed 32-bit field: the planned order must fit below
SITE_FACTOR_MAX = 2**31 - 2


@dataclass(frozen=True)
class Params:
    cost: str = param("squared", "what the plan minimises: wait (PLAN 1: mean wait), "
                      "squared (PLAN 2: mean squared wait), makespan (PLAN 3: when all "
                      "running and queued jobs are done)", choices=COSTS)
    N: int = param(DEFAULT_N, "moves the annealing tries at each temperature (more: better "
                   "plans, slower; it starts at temperature 1 and cools by 0.9 to 0.0001)",
                   min=1)
    seed: int = param(0, "seed of the annealing's moves", min=0)
    T: int = param(0, "wait after which a job leads every plan, in submit order (e.g. 1d); "
                   "0: none, every job is placed by the plan alone", kind="duration", min=0)


def priority_span(context: Context) -> int:
    """More than any priority the configuration in effect can give a job besides its site
    factor: the step between two planned places."""
    c = context.config
    if c.priority_type != "priority/multifactor":
        return 1
    weights = (c.priority_weight_age, c.priority_weight_assoc, c.priority_weight_fairshare,
               c.priority_weight_job_size, c.priority_weight_partition,
               c.priority_weight_qos)
    tres = sum(abs(w) for w in c.priority_weight_tres.values())
    if "NO_NORMAL_TRES" in c.priority_flags:
        tres *= max(context.cluster.cpus, 1)
    return int(sum(abs(w) for w in weights) + tres) + 1


@dataclass(frozen=True)
class PlanOrder:
    """A site factor per planned job (a ``JobRule`` that job_submit.lua does nothing for:
    jobs submitted later get none); ``starts``: the plan's start of each, for reports."""

    name: str
    factors: tuple[tuple[int, int], ...]      # (job id, site factor), in plan order
    starts: tuple[int, ...] = ()

    @property
    def lua(self) -> LuaFragment:
        return LuaFragment(f"{self.name} (set by scontrol on pending jobs only)")

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        if jobs.job_id is None:
            return np.zeros(len(jobs.submit), np.int64)
        factor = dict(self.factors)
        return np.array([factor.get(int(j), 0) for j in jobs.job_id], np.int64)


class SimulatedAnnealingPlan(PluginBase):
    family = "plan"
    name = "sa"
    summary = "a plan of the whole queue by simulated annealing (Zheng et al.)"
    Params = Params
    rank = 50
    bounds_wait = True
    replaces = ("backfill", "ordering")
    aliases = ALIASES

    bench = "advisor.policies.plan.bench:main"   # advisor bench --family plan -- OPTIONS

    def compile_kernels(self) -> None:
        compile_kernels()

    def candidates(self, context: Context) -> tuple:
        """PLAN 1-3 with a 1-day threshold (docs/advice.md measures the grid without and
        with it); none on a long queue, where one plan takes seconds to minutes."""
        return () if context.queue_is_long else tuple(Params(cost=c, T=GRID_T)
                                                     for c in COSTS)

    def in_grid(self, params: Params, policy) -> bool:
        return len(policy.choices) == 1

    def configure(self, config: EngineConfig, params: Params) -> EngineConfig:
        return replace(config, mechanic=Plans(params.cost, Annealing(moves=params.N),
                                              params.seed), threshold=params.T or None)

    def enact(self, params: Params, context: Context) -> Enactment:
        name = next(a for a, v in ALIASES.items() if v["cost"] == params.cost).upper()
        if params.T:
            name += f", T={format_duration(params.T)}"
        order = PlanOrder(f"plan order ({name})", ())
        q = None if context.snapshot is None else \
            context.derived("plan.queue", lambda: queue_state(context.snapshot))
        if q is not None and len(q.job_id):
            perm, starts, *_ = plan_jobs(q.now, q.run_end, q.run_cpus, q.cpus, q.submit,
                                         q.limit, q.job_cpus, params.cost,
                                         Annealing(moves=params.N), params.seed,
                                         params.T or None)
            step = priority_span(context)
            if len(perm) * step > SITE_FACTOR_MAX:
                raise NoSlurmForm(f"{len(perm)} pending jobs at {step} priority points a "
                                  "place do not fit in Slurm's site factor range")
            # the jobs past T first, in submit order (they lead the permutation); then
            # the plan's order by planned start (the paper's execution queue): its
            # permutation may list a job that backfills a hole after a later one
            old = q.now - q.submit > params.T if params.T else np.zeros(len(perm), bool)
            place = {int(k): i for i, k in enumerate(perm)}
            ranked = sorted(place, key=lambda k: (0, place[k], 0) if old[k]
                            else (1, starts[k], place[k]))
            factors = tuple((int(q.job_id[k]), (len(ranked) - i) * step)
                            for i, k in enumerate(ranked))
            order = PlanOrder(order.name, factors, tuple(int(starts[k]) for k in ranked))
        basic = context.config.priority_type != "priority/multifactor"
        return Enactment(
            sets={"priority_type": "priority/multifactor"} if basic else {},
            clears=NEUTRAL_WEIGHTS if basic else {}, site_factor=order,
            fidelity="approximate", replayable=False,
            caveats=CAVEATS + ((THRESHOLD_CAVEAT,) if params.T else ()))


CAVEATS = (
    "an order for the jobs pending now, by site factor: it stays until the next advisor "
    "run; jobs submitted meanwhile get none and queue behind every planned job",
    "Slurm's backfill fills the holes a plan leaves on purpose: a later job may start "
    "earlier when it fits without delaying a reservation (bf_max_job_test and the "
    "backfill window bound how many planned jobs reserve; larger keeps closer to the plan)",
    "planned on time limits over the cluster's CPUs as one pool: node boundaries, "
    "partitions and jobs ending early are Slurm's, and the next run re-plans",
    "nice values and a site's own site factors are overwritten or may reorder the plan")
THRESHOLD_CAVEAT = ("T is read when the plan is made: a job that passes T before the next "
                    "advisor run leads the plan from that run on")

SA = SimulatedAnnealingPlan()
