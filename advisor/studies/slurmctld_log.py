"""A play's sub-second times, read from slurmctld's log.

sacct reports whole seconds; slurmctld's log stamps each line in milliseconds
(LogTimeFormat's default, iso8601_ms). At ``SlurmctldDebug=verbose`` with
``DebugFlags=Backfill,Priority`` (``bench/sim_to_real.py --log-backfill``) it logs each
backfill cycle's beginning [src: backfill.c _attempt_backfill()], each submission
(``_slurm_rpc_submit_batch_job``), each start (the backfill scheduler's ``Started JobId``,
the main scheduler's ``Allocate JobId``; 26.05 logs no backfill start there, and its
first ``BillingWeight`` line, written as a job is given its resources, stands for it) and
each end (``_job_complete: JobId=N done``). What the study learns from them
(docs/simulation.md, "Knob plays"): when a job ended within its second, and where the
backfill thread's cycles fell.
"""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Iterable

_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$")
_JOB = re.compile(r"JobId=(\d+)\b")
_EVENTS = (("_slurm_rpc_submit_batch_job", "submit"), ("Started JobId", "start"),
           ("Allocate JobId", "start"), ("BillingWeight", "billed"))


def _ms(stamp: str) -> int:
    """A log stamp as milliseconds since the epoch (the test cluster logs in UTC)."""
    when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return round(when.timestamp() * 1000)


def play_times(lines: Iterable[str], job_ids: Iterable[int]) -> dict:
    """The jobs' times and the backfill cycles of one play, in milliseconds since the
    epoch: ``{"jobs": {id: [submit, start, end]}, "cycles": [...]}``, the cycles those
    that began between the first submission and the last end. A job the log does not
    carry whole is left out."""
    wanted = set(job_ids)
    events: dict[int, dict[str, int]] = {}
    cycles = []
    for line in lines:
        m = _LINE.match(line)
        if m is None:
            continue
        text = m.group(2)
        if "_attempt_backfill: beginning" in text:
            cycles.append(_ms(m.group(1)))
            continue
        job = _JOB.search(text)
        if job is None or int(job.group(1)) not in wanted:
            continue
        kind = next((k for marker, k in _EVENTS if marker in text), None)
        if kind is None and "_job_complete" in text and text.rstrip().endswith("done"):
            kind = "end"
        if kind is not None:
            events.setdefault(int(job.group(1)), {}).setdefault(kind, _ms(m.group(1)))
    jobs = {j: [e["submit"], e.get("start", e.get("billed")), e["end"]]
            for j, e in sorted(events.items())
            if {"submit", "end"} <= e.keys() and ({"start", "billed"} & e.keys())}
    if not jobs:
        return {"jobs": {}, "cycles": []}
    first = min(t[0] for t in jobs.values())
    last = max(t[2] for t in jobs.values())
    return {"jobs": jobs, "cycles": [c for c in cycles if first <= c <= last]}
