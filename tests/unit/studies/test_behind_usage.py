"""The half-life's play (issue 58, item 5): the jobs queued behind blockers that give two
accounts a usage history (``validate.behind_usage``). The design is worth a play only if
the half-life decides the order: in the slurm mode, from the fair-share recording's
snapshot (research 1 share, physics 3), the orders under 7 days and under 2 minutes must
differ, whatever the phase of the decay thread's minute at which the jobs arrive."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from advisor.adapters.swf import read_swf, resolve_trace
from advisor.model import Snapshot
from advisor.studies.validate import (CONFIGURATIONS, behind_usage, evaluate, scaled_jobs,
                                      with_resources)
from tests.helpers import FIXTURES, flipped_pairs

SNAPSHOT = FIXTURES / "sim-to-real" / "fairshare-40jobs-load1.5.json"


def _records(jobs, t0: int) -> list[dict]:
    """The jobs as sacct records of a play that submits them from ``t0`` (``evaluate``
    reads a runtime as end - start; the starts, at submission, are not compared here)."""
    return [dict(job_id=k + 1, user="root", partition="batch", req_cpus=j.cpus,
                 alloc_cpus=j.cpus, submit=t0 + j.offset, eligible=t0 + j.offset,
                 limit=j.limit * 60, account=j.account, start=t0 + j.offset,
                 end=t0 + j.offset + j.runtime)
            for k, j in enumerate(jobs)]


def _starts(snapshot: Snapshot, records: list[dict], half_life: int) -> list[float]:
    snap = replace(snapshot, config=replace(snapshot.config,
                                            priority_decay_half_life=half_life))
    table = evaluate(snap, records, CONFIGURATIONS["fairshare-easy"][2])["table"]
    return table.sort_index()["slurm"].tolist()


@pytest.mark.parametrize("phase", [0, 20, 40])
def test_the_half_life_decides_which_account_starts_first(phase):
    snapshot = Snapshot.from_dict(json.loads(SNAPSHOT.read_text())["fairshare-easy"]["snapshot"])
    workload = read_swf(resolve_trace("KTH-SP2"))
    jobs = with_resources(scaled_jobs(workload, 40, 120, 64, 90, ("batch",), load=1.5),
                          0, 0, 0, 16, accounts=("research", "physics"))
    records = _records(behind_usage(jobs, 64, "physics", "research"),
                       snapshot.time + 1 + phase)
    days, minutes = _starts(snapshot, records, 7 * 86400), _starts(snapshot, records, 120)
    flipped = len(flipped_pairs(days, minutes, 2))
    assert flipped >= 200, flipped
    queue = [r for r in records if r["job_id"] > 2]
    first, first_minutes = (
        {name: min(starts[r["job_id"] - 1] for r in queue if r["account"] == name)
         for name in ("research", "physics")} for starts in (days, minutes))
    # under days the heavy account's usage counts and research starts first; under
    # minutes physics's has decayed and research's recent usage counts
    assert first["research"] < first["physics"]
    assert first_minutes["physics"] < first_minutes["research"]
