"""timeshare/gang: a time-sliced partition for the jobs that idle CPUs (Frachtenberg et al.).

Frachtenberg et al. lets processes that do not need coscheduling fill the holes others leave.
What a Slurm site can run of it is gang scheduling at job level: a partition with
``OverSubscribe=FORCE:mpl`` under ``PreemptMode=GANG``, whose jobs, up to ``mpl`` per CPU,
are suspended and resumed whole every ``SchedulerTimeSlice`` (GS of the paper with a slice
of seconds, not 0.1 s; SB and FCS have no Slurm form). Which jobs share is a job-level
heuristic, labelled so: the users whose jobs' median CPU efficiency (sacct TotalCPU over
Elapsed x AllocCPUS; ``inputs.history_classes``) is "idle" (below 0.5), or "idle" and
"mixed" (below 0.9), and any job of the QOS ``qos``, for a site that knows its codes.

In Slurm (``enact``): the default partition keeps its name and the first ``1 - share`` of
its CPUs (in node order), and ``<name>_ts`` takes the rest, with OverSubscribe=FORCE:mpl
(other partitions lose those nodes: the model needs them to be the partition's alone);
the cluster's PreemptMode gains GANG and SchedulerTimeSlice is set (both need a restart of
slurmctld, which ``--apply`` refuses, as for any restart). job_submit.lua sends the routed
users' jobs that fit to ``<name>_ts`` and the others to the default partition (a job too
wide for its side goes to the other when it fits there); pending jobs are moved by scontrol
update; jobs asking for another partition are left alone. ``share=0`` undoes the layout.

Textbook (``configure``): time sharing needs each job's user class, which the textbook
engine's jobs do not carry; ``advisor timeshare`` plays it over a trace, and the slurm mode
from a snapshot (``player``: the slurm mode does not play a time-sliced partition itself).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from advisor.plugins import (ROUTE_LUA, Context, Enactment, EngineConfig, JobColumns,
                             LuaFragment, NoSlurmForm, PluginBase, asked_names, param)
from advisor.policies.timeshare.inputs import history_classes
from advisor.policies.timeshare.player import PLAYER

DEFAULT_SHARE, DEFAULT_MPL, DEFAULT_SLICE = 0.25, 2, 30
#: Slurm's SchedulerTimeSlice bounds (seconds)
MIN_SLICE, MAX_SLICE = 5, 65533
#: the points the grid proposes
GRID_SHARE, GRID_MPL = (0.25, 0.5), (2, 4)
#: which heuristic classes a route sends to the time-sliced partition
ROUTES = {"idle": ("idle",), "idle,mixed": ("idle", "mixed")}
#: the routes' names before they were the classes' own (the paper's DC and F)
RENAMED_ROUTES = {"DC": "idle", "DC,F": "idle,mixed"}
SUFFIX = "_ts"


@dataclass(frozen=True)
class Params:
    share: float = param(DEFAULT_SHARE, "fraction of the default partition's CPUs that "
                         "becomes the time-sliced partition; 0 undoes it", min=0.0, max=0.75)
    mpl: int = param(DEFAULT_MPL, "jobs per CPU in the time-sliced partition "
                     "(OverSubscribe=FORCE:mpl)", min=2, max=8)
    slice: int = param(DEFAULT_SLICE, "SchedulerTimeSlice (5 s to 65533 s)", kind="duration",
                       min=MIN_SLICE, max=MAX_SLICE)
    route: str = param("idle", "the users sent there, by their jobs' CPU efficiency: idle "
                       "(below 0.5) or idle,mixed (below 0.9)", choices=tuple(ROUTES),
                       renamed=RENAMED_ROUTES)
    qos: str = param("", "a QOS whose jobs are sent there too (a site that knows its codes)")


@dataclass(frozen=True)
class ShareRoute:
    """job_submit.lua's routing (a ``JobRule``): a job asking for no partition or only for
    ``own`` goes to ``shared`` (name, CPUs) when its user is one of ``users`` or its QOS is
    ``qos`` and it fits there, else to ``dedicated`` (name, CPUs) when it fits, else to the
    side it fits; the others keep theirs."""

    users: tuple[str, ...]
    qos: str
    shared: tuple[str, int]
    dedicated: tuple[str, int]
    own: tuple[str, ...]
    name: str = "time sharing by user class"

    def values(self, jobs: JobColumns, now: int) -> np.ndarray:
        out = np.empty(len(jobs.limit), object)
        users = jobs.user if jobs.user is not None else [""] * len(out)
        qos = jobs.qos if jobs.qos is not None else [""] * len(out)
        routed = set(self.users)
        for i, (cpus, names, user, q) in enumerate(zip(jobs.cpus, asked_names(jobs), users,
                                                       qos)):
            if names and not set(names) <= set(self.own):
                out[i] = ",".join(names)
                continue
            wants = str(user) in routed or bool(self.qos) and str(q) == self.qos
            first, other = (self.shared, self.dedicated) if wants else \
                (self.dedicated, self.shared)
            out[i] = first[0] if cpus <= first[1] or cpus > other[1] else other[0]
        return out

    @property
    def lua(self) -> LuaFragment:
        users = "".join(f'   ["{u}"] = true,\n' for u in self.users)
        own = ", ".join(f'["{n}"] = true' for n in self.own)
        qos = f'"{self.qos}"' if self.qos else "nil"
        (shared, s_cpus), (dedicated, d_cpus) = self.shared, self.dedicated
        helpers = ROUTE_LUA + (
            "-- time sharing: the users whose jobs leave their CPUs idle (CPU efficiency)\n"
            f"local ADVISOR_SHARE_USERS = {{\n{users}}}\n"
            f"local ADVISOR_SHARE_QOS = {qos}\n"
            f"local ADVISOR_OWN = {{ {own} }}\n"
            "local function advisor_share(job_desc)\n"
            "   if not asks_only(job_desc, ADVISOR_OWN) then return end\n"
            "   local cpus = job_cpus(job_desc)\n"
            "   local wants = (job_desc.user_name ~= nil and\n"
            "                  ADVISOR_SHARE_USERS[job_desc.user_name] ~= nil) or\n"
            "                 (ADVISOR_SHARE_QOS ~= nil and job_desc.qos == ADVISOR_SHARE_QOS)\n"
            f'   local first, room, other, wide = "{dedicated}", {d_cpus}, "{shared}", '
            f"{s_cpus}\n"
            "   if wants then\n"
            f'      first, room, other, wide = "{shared}", {s_cpus}, "{dedicated}", '
            f"{d_cpus}\n"
            "   end\n"
            "   if cpus > room and cpus <= wide then first = other end\n"
            "   job_desc.partition = first\n"
            "end\n")
        return LuaFragment("send the jobs that leave CPUs idle to the time-sliced partition",
                           helpers, "   advisor_share(job_desc)\n")


def _classes(context: Context) -> tuple[tuple[str, str], ...]:
    return context.derived("timeshare.classes", lambda: history_classes(context.history))


def _layout(context: Context):
    """The default partition, the earlier time-sliced partition (or None), and the nodes
    both hold, in the cluster's node order."""
    base = context.cluster.default_partition
    if base.name.endswith(SUFFIX):
        raise NoSlurmForm(f"the default partition {base.name} is a time-sliced one")
    earlier = context.cluster.partition(base.name + SUFFIX)
    held = set(base.nodes) | set(earlier.nodes if earlier else ())
    return base, earlier, [n for n in context.cluster.nodes if n.name in held]


def _sliced(nodes, share: float) -> int:
    """How many of ``nodes`` (from the end) hold ``share`` of their CPUs: at least one,
    leaving at least one."""
    total = sum(n.cpus for n in nodes)
    taken, count = 0, 0
    for n in reversed(nodes):
        if count and taken >= share * total:
            break
        taken += n.cpus
        count += 1
    return min(count, len(nodes) - 1)


class GangTimeShare(PluginBase):
    family = "timeshare"
    name = "gang"
    summary = "a gang-scheduled partition for the users whose jobs idle their CPUs"
    Params = Params
    rank = 45

    player = PLAYER

    bench = "advisor.policies.timeshare.bench:main"   # advisor bench --family timeshare -- OPTIONS

    def compile_kernels(self) -> None:
        """The job-level gang partition's kernel and the process-level model's, each on a
        few jobs."""
        from advisor.policies.timeshare.kernel_cosched import simulate
        from advisor.policies.timeshare.kernel_gang import run_gang
        simulate(np.ones((2, 2)), [3, 3], [True, True], "FCS")
        ones = np.ones(4, np.int64)
        run_gang(np.arange(4) * 10, ones * 30, ones * 60, ones, 2, 2)

    def candidates(self, context: Context) -> tuple:
        base, earlier, _ = _layout(context)
        out = [Params(share=0.0)] if earlier is not None else []
        if any(c == "idle" for _, c in _classes(context)):
            out += [Params(share=s, mpl=m) for s in GRID_SHARE for m in GRID_MPL]
        return tuple(out)

    def in_grid(self, params: Params, policy) -> bool:
        """Beside the baseline's other choices only (EASY-FCFS): Slurm's gang partition
        beside its usual queue, a few candidates rather than one per ordering."""
        return policy.default_but(self.family)

    def configure(self, config: EngineConfig, params: Params) -> EngineConfig:
        raise NoSlurmForm("time sharing needs each job's user class, which the textbook "
                          "engine does not have: `advisor timeshare TRACE` plays it over a "
                          "trace, and `advisor recommend` from a snapshot")

    def enact(self, params: Params, context: Context) -> Enactment:
        base, earlier, nodes = _layout(context)
        own = (base.name, base.name + SUFFIX)
        if params.share == 0:
            if earlier is None:
                return Enactment()
            whole = replace(base, nodes=tuple(n.name for n in nodes))
            kept = tuple(whole if p is base else p for p in context.cluster.partitions
                         if p is not earlier)
            cpus = sum(n.cpus for n in nodes)          # every job back to the default
            return Enactment(partitions=kept, route=ShareRoute((), "", (base.name, cpus),
                                                               (base.name, cpus), own))
        if len(nodes) < 2:
            raise NoSlurmForm(f"a time-sliced partition beside {base.name} needs two nodes; "
                              f"it has {len(nodes)}")
        count = _sliced(nodes, params.share)
        mine, rest = nodes[-count:], nodes[:-count]
        taken = {n.name for n in mine}
        lose = [p for p in context.cluster.partitions if p.name not in own and
                taken & set(p.nodes)]
        if any(set(p.nodes) <= taken for p in lose):
            emptied = next(p.name for p in lose if set(p.nodes) <= taken)
            raise NoSlurmForm(f"partition {emptied} has only nodes the time-sliced partition "
                              "would take: give it a smaller share")
        users = tuple(sorted(u for u, c in _classes(context) if c in ROUTES[params.route]))
        shared = replace(base, name=base.name + SUFFIX, nodes=tuple(n.name for n in mine),
                         oversubscribe=f"FORCE:{params.mpl}", default=False, state="UP",
                         preempt_mode=None)
        dedicated = replace(base, nodes=tuple(n.name for n in rest))
        kept = tuple(dedicated if p is base else
                     replace(p, nodes=tuple(n for n in p.nodes if n not in taken))
                     if p in lose else p
                     for p in context.cluster.partitions if p is not earlier)
        route = ShareRoute(users, params.qos, (shared.name, sum(n.cpus for n in mine)),
                           (base.name, sum(n.cpus for n in rest)),
                           (base.name, shared.name))
        mode = context.config.preempt_mode.upper()
        if "GANG" not in mode:
            mode = "GANG" if mode in ("", "OFF") else f"{mode},GANG"
        caveats = CAVEATS
        if lose:
            caveats += (f"partition(s) {', '.join(p.name for p in lose)} lose the nodes "
                        f"given to {shared.name} (a time-sliced partition needs nodes of "
                        "its own); undoing the layout gives them back to "
                        f"{base.name} only",)
        return Enactment(sets={"preempt_mode": mode, "scheduler_time_slice": params.slice},
                         partitions=kept + (shared,), route=route, fidelity="approximate",
                         caveats=caveats)


CAVEATS = (
    "which jobs share is a job-level heuristic (users by their jobs' CPU efficiency in "
    "sacct), not Frachtenberg et al.'s classes of processes by communication granularity",
    "gang scheduling suspends and resumes whole jobs every SchedulerTimeSlice (seconds, "
    "not the 0.1 s of Frachtenberg et al.): a job sharing CPUs with k - 1 others runs at "
    "about 1/k of its speed, less the switch, and its idle CPUs are not lent to the others "
    "(flexible coscheduling's gain has no Slurm form)",
    "PreemptMode and SchedulerTimeSlice take effect only when slurmctld restarts: "
    "--apply refuses the change; install the --write files and restart slurmctld",
    "job_submit.lua routes by user at submission; pending jobs are moved by scontrol "
    "update; a user's class is refreshed only when the advisor runs again",
    "jobs running on the nodes given to the time-sliced partition keep them until they end",
)

GANG = GangTimeShare()
