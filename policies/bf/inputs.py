"""What the bf family reads of a snapshot: how far its limits reach, how deep its queue
is, and who holds the depth backfill tries."""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from advisor.model import UNLIMITED_SECONDS, Job, Snapshot, job_limit


def reach(snapshot: Snapshot) -> int:
    """The longest of: a pending job's limit, what a running job's limit has left, a
    partition's MaxTime (seconds; unlimited ones left out, 0: none)."""
    machine = snapshot.machine
    limits = [job_limit(j, machine) for j in snapshot.pending]
    limits += [j.start_time + job_limit(j, machine) - snapshot.time for j in snapshot.running
               if j.start_time is not None]
    limits += [p.max_time or 0 for p in machine.partitions]
    return max((t for t in limits if t < UNLIMITED_SECONDS), default=0)


def held_within(snapshot: Snapshot, depth: int, key: Callable[[Job], str]) -> float:
    """The largest share of the first ``depth`` pending jobs (submit order) that one value
    of ``key(job)`` holds (a user, a partition)."""
    first = sorted(snapshot.pending, key=lambda j: (j.submit_time, j.job_id))[:depth]
    counts = Counter(key(j) for j in first)
    return max(counts.values(), default=0) / max(len(first), 1)
