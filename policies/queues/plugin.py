"""queues/runtime: P runtime-class queues, Lawson and Smirni's multiple-queue backfilling.

The machine is split into P partitions, one queue each, and a job goes to the class of its
time limit: class k holds the jobs whose limit is below the k-th boundary, the last class
everything above (the paper's footnote 8); in Slurm, the jobs whose limit does not exceed
the class's MaxTime. ``cuts`` gives the P - 1 boundaries; empty, they balance job counts:
in the textbook engine from the previous week's completed jobs, every week (§2.1; the paper's
Fig. 3 as ``kernel`` reconstructs it), and in Slurm from the limits of the
history's last week at the time of the advice (``history_cuts``).

Textbook (``configure``): ``mechanic.RuntimeClasses``, EASY-FCFS in each queue, a pivot
per queue, borrowing across partitions without delaying any pivot; P = 1 is plain EASY.

In Slurm (``enact``; docs/slurm-mapping.md, "Runtime-class queues") the site's default
partition gains P partitions ``<name>1`` .. ``<name>P`` that split its nodes (evenly by
CPUs, in node order), class k with MaxTime = its boundary and the last with the default
partition's own MaxTime and DefaultTime; the default partition itself stays, over all its
nodes. job_submit.lua sends a job to its class *and every longer one* (``<name>2,<name>3``):
Slurm starts it in the first that has room, which is how a short job borrows a longer
class's idle nodes. A job wider than all of those goes to the default partition, whose
reservation spans the whole machine (the paper's pivot never starves a whole-machine job).
A job with no limit is given its partition's DefaultTime explicitly, so that the class it
starts in cannot change it. Each partition holds one reservation
(``bf_job_part_count_reserve=1``), its pivot. Pending jobs are moved with ``scontrol update
JobId=.. Partition=..``, since the script acts only at submission. Jobs asking for another
of the site's partitions are left alone.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from advisor.plugins import (LIMIT_MINUTES_LUA, ROUTE_LUA, Context, Enactment, EngineConfig,
                             JobColumns, LuaFragment, NoSlurmForm, PluginBase, asked_names,
                             format_duration, param, parse_duration)
from advisor.plugins.enactment import YEAR_MINUTES
from advisor.policies.queues.inputs import history_limits
from advisor.policies.queues.mechanic import RuntimeClasses, compile_kernels

DEFAULT_P, MIN_P, MAX_P = 2, 1, 8
#: the counts of classes the grid proposes (one class: only to undo an earlier layout)
GRID_P = (1, 2, 3, 4)
#: boundaries when no history says otherwise: an hour, four hours, half a day
FALLBACK_CUTS = {2: (4 * 3600,), 3: (3600, 12 * 3600), 4: (3600, 4 * 3600, 12 * 3600)}
#: Slurm counts limits in minutes: boundaries are rounded up to whole ones
MINUTE = 60


def parse_cuts(text: str) -> tuple[int, ...]:
    """``1h/12h`` as seconds, ascending; () for ""."""
    if not text.strip():
        return ()
    cuts = tuple(parse_duration(t) for t in text.split("/"))
    if any(b <= a for a, b in zip(cuts, cuts[1:])) or cuts[0] <= 0:
        raise ValueError(f"cuts={text}: boundaries must be positive and ascending")
    return cuts


def write_cuts(cuts) -> str:
    return "/".join(format_duration(int(c)) for c in cuts)


@dataclass(frozen=True)
class Params:
    P: int = param(DEFAULT_P, "runtime classes (queues, partitions); 1 is a single queue",
                   min=MIN_P, max=MAX_P)
    cuts: str = param("", "the P-1 class boundaries, ascending (e.g. 1h/12h); empty: "
                      "balanced job counts, every week from the previous week's jobs "
                      "(textbook) or from the history's last week (Slurm)")

    def __post_init__(self):
        cuts = parse_cuts(self.cuts)
        if cuts and len(cuts) != self.P - 1:
            raise ValueError(f"P={self.P} needs {self.P - 1} boundaries in cuts, not "
                             f"{len(cuts)}")


def history_cuts(limits, parts: int) -> tuple[int, ...]:
    """Boundaries balancing the counts of ``limits`` (seconds) over ``parts`` classes, a job
    in the first class whose boundary it does not exceed (Slurm's MaxTime): boundary k is
    the limit at or below which the count is nearest to k/P of all (limits cluster on round
    values, so ties decide); in whole minutes; () when too few distinct limits."""
    values = np.sort(np.asarray([v for v in limits if v > 0], np.int64))
    n = len(values)
    if parts == 1 or n < parts:
        return ()
    cuts = []
    for k in range(1, parts):
        want = -(-k * n // parts)
        value = values[want - 1]
        upto = int(np.searchsorted(values, value, "right"))     # jobs <= value
        below = int(np.searchsorted(values, value, "left"))     # jobs < value
        if below and want - below < upto - want:
            value = values[below - 1]
        cuts.append(-(-int(value) // MINUTE) * MINUTE)
    return tuple(cuts) if all(b > a for a, b in zip(cuts, cuts[1:])) else ()


@dataclass(frozen=True)
class ClassRoute:
    """job_submit.lua's routing (a ``JobRule``). A job asking for no partition or for one of
    ``own`` goes to every class (``classes``: name, MaxTime in seconds or None, CPUs) whose
    MaxTime its limit does not exceed and that has its CPUs, or, when none has, to the
    whole-machine partition ``wide``; the others keep theirs."""

    classes: tuple[tuple[str, int | None, int], ...]
    wide: str
    own: tuple[str, ...]
    name: str = "runtime classes"

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        out = np.empty(len(jobs.limit), object)
        for i, (limit, cpus, names) in enumerate(zip(jobs.limit, jobs.cpus,
                                                     asked_names(jobs))):
            if names and not set(names) <= set(self.own):
                out[i] = ",".join(names)
                continue
            fits = [n for n, top, room in self.classes
                    if (top is None or limit <= top) and cpus <= room]
            out[i] = ",".join(fits) or self.wide
        return out

    @property
    def lua(self) -> LuaFragment:
        rows = "".join(f'   {{"{n}", {"nil" if top is None else top // MINUTE}, {room}}},\n'
                       for n, top, room in self.classes)
        own = ", ".join(f'["{n}"] = true' for n in self.own)
        helpers = LIMIT_MINUTES_LUA + ROUTE_LUA + (
            "-- runtime classes, shortest first: partition, MaxTime in minutes (nil: none), "
            "CPUs\n"
            f"local ADVISOR_CLASSES = {{\n{rows}}}\n"
            f"local ADVISOR_OWN = {{ {own} }}\n"
            "local function advisor_route(job_desc, part_list)\n"
            "   if not asks_only(job_desc, ADVISOR_OWN) then return end\n"
            "   local limit = limit_minutes(job_desc, part_list)\n"
            "   if (job_desc.time_limit == nil or job_desc.time_limit == slurm.NO_VAL)\n"
            f"      and limit < {YEAR_MINUTES} then\n"
            "      job_desc.time_limit = limit\n"
            "   end\n"
            "   local cpus = job_cpus(job_desc)\n"
            "   local names = {}\n"
            "   for _, c in ipairs(ADVISOR_CLASSES) do\n"
            "      if (c[2] == nil or limit <= c[2]) and cpus <= c[3] then\n"
            "         table.insert(names, c[1])\n"
            "      end\n"
            "   end\n"
            f'   if #names == 0 then names = {{"{self.wide}"}} end\n'
            "   job_desc.partition = table.concat(names, \",\")\n"
            "end\n")
        return LuaFragment("route jobs to runtime classes by time limit", helpers,
                           "   advisor_route(job_desc, part_list)\n")


def base_of(context: Context) -> tuple[str, tuple]:
    """The default partition's name and the partitions of the layout: itself, and the
    classes ``<name>1`` .. of an earlier one."""
    base = context.cluster.default_partition.name
    names = {base, *(f"{base}{k}" for k in range(1, MAX_P + 1))}
    return base, tuple(p for p in context.cluster.partitions if p.name in names)


def _limits(context: Context) -> tuple[int, ...]:
    return context.derived("queues.limits", lambda: history_limits(context.history))


@lru_cache(maxsize=32)     # (each decision enacts every candidate with P classes twice)
def _split(nodes: tuple[str, ...], cpus: tuple[int, ...], parts: int
           ) -> tuple[tuple[tuple[str, ...], int], ...]:
    """``nodes`` (with their ``cpus``) in ``parts`` consecutive groups of nearly equal
    CPUs: each group's nodes and CPUs."""
    total = sum(cpus)
    groups, sums, seen, at = [[] for _ in range(parts)], [0] * parts, 0, 0
    for i, (n, c) in enumerate(zip(nodes, cpus)):
        left = len(nodes) - i
        if at < parts - 1 and groups[at] and (seen >= total * (at + 1) / parts
                                              or left == parts - 1 - at):
            at += 1
        groups[at].append(n)
        sums[at] += c
        seen += c
    return tuple((tuple(g), c) for g, c in zip(groups, sums))


class RuntimeQueues(PluginBase):
    family = "queues"
    name = "runtime"
    summary = "P runtime-class queues with borrowing (Lawson and Smirni)"
    Params = Params
    rank = 40

    bench = "advisor.policies.queues.bench:main"   # advisor bench --family queues -- OPTIONS

    def compile_kernels(self) -> None:
        compile_kernels()

    def candidates(self, context: Context) -> tuple:
        _, own = base_of(context)
        out = []
        for parts in GRID_P:
            if parts == 1:
                if len(own) > 1:        # undo an earlier layout
                    out.append(Params(P=1))
                continue
            limits = _limits(context)
            cuts = history_cuts(limits, parts) if limits else FALLBACK_CUTS[parts]
            if cuts:
                out.append(Params(P=parts, cuts=write_cuts(cuts)))
        return tuple(out)

    def in_grid(self, params: Params, policy) -> bool:
        """In the default grid beside the baseline's other choices only (EASY-FCFS): the
        paper's policy, and a few candidates rather than one per ordering."""
        return policy.default_but(self.family)

    def configure(self, config: EngineConfig, params: Params) -> EngineConfig:
        if params.P == 1 and not params.cuts:
            return config        # one queue: the policy as it is
        return replace(config, mechanic=RuntimeClasses(params.P, parse_cuts(params.cuts)))

    def enact(self, params: Params, context: Context) -> Enactment:
        base, own = base_of(context)
        template = context.cluster.default_partition
        sets = {"scheduler_type": "sched/backfill", "backfill.bf_job_part_count_reserve": 1}
        kept = tuple(p for p in context.cluster.partitions if p not in own or p is template)
        if params.P == 1:            # one queue: the default partition alone, as it was
            if len(own) == 1:
                return Enactment(sets=sets)
            names = tuple(sorted(p.name for p in own))     # its jobs go back to it
            return Enactment(sets=sets, partitions=kept, route=ClassRoute((), base, names),
                             fidelity="exact")
        cuts = parse_cuts(params.cuts) or history_cuts(_limits(context), params.P) or \
            FALLBACK_CUTS.get(params.P, ())
        if len(cuts) != params.P - 1:
            raise NoSlurmForm(f"{params.P} runtime classes need {params.P - 1} boundaries: "
                              "give them as cuts=1h/12h")
        top = template.max_time
        if top is not None and cuts[-1] >= top:
            raise NoSlurmForm(f"the boundary {format_duration(cuts[-1])} is not below "
                              f"partition {base}'s MaxTime {format_duration(top)}")
        held, cpus = set(template.nodes), context.cluster.node_cpus
        if held.issuperset(cpus):       # (a trace's one partition: every node, as is)
            nodes, counts = tuple(cpus), tuple(cpus.values())
        else:                           # in the cluster's order
            nodes = tuple(n for n in cpus if n in held)
            counts = tuple(cpus[n] for n in nodes)
        if len(nodes) < params.P:
            raise NoSlurmForm(f"{params.P} runtime classes need {params.P} nodes; "
                              f"partition {base} has {len(nodes)}")
        maxes = [-(-c // MINUTE) * MINUTE for c in cuts] + [top]
        groups = _split(nodes, counts, params.P)
        classes = tuple(
            replace(template, name=f"{base}{k + 1}", nodes=group, max_time=maxes[k],
                    default_time=template.default_time if k == params.P - 1 else None,
                    default=False, state="UP")
            for k, (group, _) in enumerate(groups))
        names = tuple(sorted({base, *(p.name for p in own), *(p.name for p in classes)}))
        route = ClassRoute(tuple((p.name, p.max_time, size)
                                 for p, (_, size) in zip(classes, groups)), base, names)
        return Enactment(sets=sets, partitions=kept + classes, route=route,
                         fidelity="approximate", caveats=CAVEATS)


CAVEATS = (
    "a job wider than every class it may run in goes to the whole default partition, "
    "which overlaps the classes (the simulated model's pivot counts every partition)",
    "a job may run in its class or any longer one: short jobs borrow the longer classes' "
    "idle nodes, long jobs never borrow the short ones' (the simulated model lets any job "
    "borrow without delaying a pivot)",
    "a borrowing job holds the lent nodes until it ends: nodes are not recalled, and each "
    "partition keeps its node set (the simulated model's partitions drift as processors "
    "move)",
    "one reservation per partition (bf_job_part_count_reserve=1): a pivot plans on its "
    "partitions' nodes only, while the simulated model's pivot counts the whole machine",
    "job_submit.lua routes by time limit at submission (an unset limit becomes the default "
    "partition's DefaultTime); pending jobs are moved by scontrol update; a limit changed "
    "later does not move the job",
    "the boundaries stay until the advisor changes them (the simulated model recomputes "
    "them weekly)",
)

RUNTIME = RuntimeQueues()
