"""Play a scaled workload on a real Slurm cluster: sbatch sleep jobs at their offsets, wait for
them, and read what happened from sacct. Used by the sim-to-real harness
(advisor.studies.validate); it submits jobs, so point it only at a test cluster.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from advisor.adapters import slurm_json
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.errors import SourceUnavailable
from advisor.model import ScaledJob


def submit_all(jobs: list[ScaledJob], commands: SlurmCommands,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> dict[int, int]:
    """Submit each job ``offset`` seconds after the first; returns {trace key: Slurm id}."""
    ids = {}
    origin = clock()
    for job in sorted(jobs, key=lambda j: (j.offset, j.key)):
        wait = origin + job.offset - clock()
        if wait > 0:
            sleep(wait)
        asks = ((["--mem", f"{job.memory}M"] if job.memory > 0 else []) +
                (["--gres", f"gpu:{job.gpus}"] if job.gpus > 0 else []) +
                (["--account", job.account] if job.account else []) +
                (["--qos", job.qos] if job.qos else []))
        out = commands.run("sbatch", "--parsable", "--job-name", f"sim2real-{job.key}",
                           "--ntasks", str(job.cpus), "--time", str(job.limit),
                           "--partition", job.partition, "--output", "/dev/null", *asks,
                           "--wrap", f"sleep {job.runtime}")
        ids[job.key] = int(out.strip().split(";")[0])
    return ids


def wait_done(ids: list[int], commands: SlurmCommands, timeout: float,
              poll: float = 2.0) -> None:
    """Until none of ``ids`` is pending or running (SourceUnavailable after ``timeout``)."""
    deadline = time.monotonic() + timeout
    wanted = ",".join(str(i) for i in ids)
    while time.monotonic() < deadline:
        if not commands.run("squeue", "-h", "-j", wanted, "-o", "%i").strip():
            return
        time.sleep(poll)
    raise SourceUnavailable(f"jobs still queued after {timeout:.0f} s; the cluster is stuck "
                            f"or too small for the workload")


def finished(ids: list[int], commands: SlurmCommands, attempts: int = 10) -> list[dict]:
    """sacct's records of ``ids`` once all have an end time (slurmdbd may lag a moment)."""
    wanted = ",".join(str(i) for i in ids)
    records: list[dict] = []
    for _ in range(attempts):
        doc = slurm_json.load(commands.run("sacct", "--json", "-X", "-j", wanted),
                              "sacct --json")
        records = slurm_json.sacct_records(doc)
        if len(records) == len(ids) and all(r["end"] and r["start"] for r in records):
            return records
        time.sleep(1)
    raise SourceUnavailable(f"sacct knows {len(records)} of {len(ids)} jobs with end times; "
                            "is slurmdbd running?")


def play(jobs: list[ScaledJob], commands: SlurmCommands, timeout: float) -> tuple:
    """Snapshot the (idle) cluster, play ``jobs`` on it, and return (snapshot, sacct records
    of the jobs). The snapshot carries the configuration in effect."""
    from advisor.adapters.slurm_cli import snapshot

    before = snapshot(commands)
    ids = submit_all(jobs, commands)
    wait_done(list(ids.values()), commands, timeout)
    return before, finished(list(ids.values()), commands)
