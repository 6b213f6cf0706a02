"""Time sharing in the slurm mode: a gang-scheduled partition beside space-shared ones.

A layout with ``PreemptMode=GANG`` and one partition with ``OverSubscribe=FORCE:N`` (N > 1)
time-slices that partition: Slurm suspends and resumes its jobs whole every
``SchedulerTimeSlice``, up to N of them on each CPU. The slurm mode plays it in two parts,
which the layout keeps apart (the partition's nodes belong to no other partition):

* the space-shared partitions, with every job that is not the gang partition's, in the
  slurm mode as any layout (``advisor.engine.slurm``);
* the gang partition, at job level (``kernel_gang``, CPUs as its units): a job
  sharing CPUs with k - 1 others progresses at (1 - switch / slice) / k of full speed.
  Its queue is FCFS by submit time with EASY backfilling, a job's reservation counting
  its limit times N. Jobs already running there at the snapshot go on sharing, with their
  elapsed time as the work done; jobs of another partition still running on its nodes
  (the layout just changed) hold their CPUs alone until they end.

A time-shared job's *wait*, as every metric counts it, is its response time less its
runtime alone: the delay a user sees, comparable with a dedicated job's wait (it starts
sooner but runs slower). A job goes to the gang partition when it is the first partition
its route gives it.

``PLAYER`` is the family's player (``advisor.plugins.contract``): the slurm mode asks it
whether a candidate's layout holds a partition it plays, and then lets it play the
candidate's starts.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from advisor.errors import BadInput
from advisor.model import UNLIMITED_SECONDS, Cluster, Job, SchedulingConfig, Snapshot, job_limit
from advisor.policies.timeshare.kernel_gang import run_gang

#: progress lost at each switch of a shared CPU (s): suspending and resuming whole jobs
SWITCH_S = 0.5


@dataclass(frozen=True)
class GangPartition:
    name: str
    nodes: frozenset[str]
    cpus: int
    mpl: int                 # jobs per CPU (OverSubscribe=FORCE:mpl)
    slice_s: int             # SchedulerTimeSlice


def gang_partition(machine: Cluster, config: SchedulingConfig) -> GangPartition | None:
    """The layout's time-sliced partition, or None when no job shares CPUs. BadInput for
    sharing the slurm mode does not simulate (said which, and what it does simulate)."""
    up = [p for p in machine.partitions if p.state == "UP"] or list(machine.partitions)
    shared = [p for p in up if p.sharing > 1]
    if not shared:
        return None
    if len(shared) > 1:
        raise BadInput(f"partitions {', '.join(p.name for p in shared)} share CPUs: the slurm "
                       "mode simulates one time-sliced partition")
    part = shared[0]
    mode = (part.preempt_mode or config.preempt_mode).upper()
    if part.oversubscribe.upper().startswith("YES"):
        raise BadInput(f"partition {part.name} has OverSubscribe={part.oversubscribe}, which "
                       "shares only jobs that ask to; the slurm mode simulates FORCE:N")
    if "GANG" not in mode:
        raise BadInput(f"partition {part.name} shares CPUs without PreemptMode=GANG (jobs "
                       "run concurrently on one CPU), which the slurm mode does not simulate")
    others = {n for p in up if p is not part for n in p.nodes}
    if others & set(part.nodes):
        raise BadInput(f"partition {part.name} shares nodes with other partitions: the slurm "
                       "mode simulates a time-sliced partition on nodes of its own")
    held = set(part.nodes)
    cpus = sum(n.cpus for n in machine.nodes if n.name in held)
    return GangPartition(part.name, frozenset(held), cpus, part.sharing,
                         max(int(config.scheduler_time_slice), 1))


@dataclass(frozen=True)
class Split:
    """A snapshot's jobs on both sides of a gang partition."""

    dedicated: Snapshot              # without the gang partition and its jobs
    arrivals: tuple[Job, ...]        # arriving jobs for the space-shared partitions
    shared: tuple[Job, ...]          # pending and arriving jobs of the gang partition
    running: tuple[Job, ...]         # jobs running on the gang partition's nodes


def split(snap: Snapshot, arrivals: Sequence[Job], gang: GangPartition) -> Split:
    """``snap`` (on the layout, its jobs routed) and ``arrivals`` (routed) by side."""
    def on_gang(job: Job) -> bool:
        if job.state == "RUNNING":
            return job.partition == gang.name or bool(job.node_list) and \
                job.node_list[0] in gang.nodes
        return job.asked[0] == gang.name

    machine = replace(snap.machine, partitions=tuple(
        p for p in snap.machine.partitions if p.name != gang.name))
    keep = tuple(j for j in snap.running if not on_gang(j))
    pending = tuple(j for j in snap.pending if not on_gang(j))
    dedicated = replace(snap, machine=machine, running=keep, pending=tuple(
        replace(j, partitions=tuple(p for p in j.asked if p != gang.name)) for j in pending))
    return Split(dedicated, tuple(j for j in arrivals if not on_gang(j)),
                 tuple(j for j in (*snap.pending, *arrivals)
                       if on_gang(j) and not j.held and not j.dependency),
                 tuple(j for j in snap.running if on_gang(j)))


def shared_ends(part: Split, gang: GangPartition, snap: Snapshot,
                runtimes: Mapping[int, int]) -> dict[int, tuple[float, float]]:
    """Each pending or arriving gang job's (end, work) by id (end -1: never starts), the
    work being its runtime alone, at most its limit (suspended time does not count)."""
    now = snap.time
    rows = []                        # (submit, rank, tie, id, work, limit, cpus, alone)
    for j in part.running:
        elapsed = now - (j.start_time if j.start_time is not None else now)
        total = max(runtimes.get(j.job_id, elapsed + 1), elapsed + 1)
        limit = job_limit(j, snap.machine)
        alone = j.partition != gang.name
        rows.append((now, 0 if alone else 1, j.submit_time, j.job_id, total - elapsed,
                     max(limit - elapsed, 1) if limit < UNLIMITED_SECONDS else limit,
                     min(j.cpus, gang.cpus), alone))
    for j in part.shared:
        limit = job_limit(j, snap.machine)
        ready = max(j.submit_time, j.eligible_time or j.submit_time, now)
        rows.append((ready, 2, j.submit_time, j.job_id, min(runtimes[j.job_id], limit),
                     limit, j.cpus, False))
    rows.sort(key=lambda r: r[:4])
    if not rows:
        return {}
    submit, _, _, ids, work, limit, need, alone = (np.array(c) for c in zip(*rows))
    _, end = run_gang(submit, work, limit, need, gang.cpus, gang.mpl, float(gang.slice_s),
                      min(SWITCH_S, gang.slice_s / 2), alone)
    waiting = {j.job_id for j in part.shared}
    return {int(i): (float(e), float(w)) for i, e, w in zip(ids, end, work)
            if int(i) in waiting}


class GangPlayer:
    """The time-sliced partition's play in the slurm mode (see the module docstring)."""

    def claims(self, machine: Cluster, config: SchedulingConfig) -> bool:
        """Whether the layout has a time-sliced partition; BadInput for sharing it does not
        play (said which, and what it plays)."""
        return gang_partition(machine, config) is not None

    def starts(self, inp, cand, snap: Snapshot, runtimes: Mapping[int, int],
               arrivals: Sequence[Job], slurm) -> np.ndarray:
        """Each job's start under ``cand`` (``inp``: its slurm-mode input, in its order;
        ``slurm``: the slurm mode's play, ``advisor.whatif.scenario.SlurmPlay``). In the
        time-sliced partition, a job's start is its end less its runtime alone, so that
        its wait is the delay it sees."""
        gang = gang_partition(snap.machine.with_layout(cand.enactment.partitions),
                              cand.config)
        on_layout = slurm.routed(snap, cand)
        part = split(on_layout, slurm.route(arrivals, snap, cand), gang)
        starts = slurm.starts(part.dedicated, runtimes, part.arrivals, cand, snap)
        for job_id, (end, work) in shared_ends(part, gang, on_layout, runtimes).items():
            starts[job_id] = -1 if end < 0 else int(np.ceil(end - work - 1e-6))
        return slurm.in_order(inp, starts)


PLAYER = GangPlayer()
