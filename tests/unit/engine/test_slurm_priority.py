"""Each multifactor priority factor against what sprio printed on the real test cluster for
the same jobs, under the configuration that produced it (fixtures recorded by
tests/fixtures/record_priorities.py from Slurm 22.05; the configurations are in that script:
job size with PriorityFavorSmall=NO/YES and SMALL_RELATIVE_TO_TIME, partition, TRES
weights including a negative one with NO_NORMAL_TRES and a GPU weight over the GPUs of
the job's partition, age, nice, an admin site factor).

Tolerance: sprio prints each weighted factor rounded to an integer, so a factor must be
within 0.5 (plus 1e-6) of it; the age, recomputed for every job by an ``scontrol update``
between two recorded epochs, must lie within the range those epochs give, +-0.5.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from advisor.adapters import slurm_json, slurm_text
from advisor.adapters.slurm_cli import assemble
from advisor.engine.priority import job_priority, weighted_factors
from tests.helpers import FIXTURES

RECORDED = sorted(p for p in FIXTURES.glob("priority-*") if p.is_dir())
ROUNDING = 0.5 + 1e-6


def recorded(directory: Path):
    def read(name):
        return (directory / name).read_text()

    before, after = map(int, read("recomputed_between.txt").split())
    nodes = slurm_text.parse_nodes(read("scontrol_show_node.txt"))
    parts = slurm_text.parse_partitions(read("scontrol_show_partition.txt"),
                                        tuple(n.name for n in nodes))
    config = slurm_text.parse_config(read("scontrol_show_config.txt"))
    doc = slurm_json.load(read("squeue.json"), "squeue --json")
    running, pending = slurm_json.jobs_from_squeue(doc, after)
    factors = slurm_text.parse_sprio(read("sprio.txt"))
    snap = assemble(after, nodes, parts, running, pending, config, {"kind": "slurm"}, factors)
    return snap, factors, before, after


def test_fixtures_were_recorded():
    assert len(RECORDED) == 4


@pytest.mark.parametrize("directory", RECORDED, ids=lambda p: p.name)
def test_every_factor_matches_sprio(directory):
    snap, factors, before, after = recorded(directory)
    cfg = snap.config
    checked = 0
    for job in snap.pending:
        for part in job.partitions or (job.partition,):
            seen = factors.get((job.job_id, part))
            if seen is None:
                continue
            ours = weighted_factors(job, part, snap.machine, cfg)
            for name in ("jobsize", "partition"):
                assert ours[name] == pytest.approx(seen[name], abs=ROUNDING), (job.job_id,
                                                                                name)
            # sprio's NICE column is the nice value, which the priority subtracts
            assert ours["nice"] == pytest.approx(-seen["nice"], abs=ROUNDING), job.job_id
            tres = sum(v for k, v in seen.items() if k.startswith("tres:"))
            assert ours["tres"] == pytest.approx(tres, abs=ROUNDING * max(
                len(cfg.priority_weight_tres), 1)), job.job_id
            young = weighted_factors(job, part, snap.machine, cfg, before)["age"]
            old = weighted_factors(job, part, snap.machine, cfg, after)["age"]
            assert young - ROUNDING <= seen["age"] <= old + ROUNDING, job.job_id
            # the whole priority: truncated sum, within sprio's rounding of the factors
            low = job_priority(job, part, snap.machine, cfg, before)
            high = job_priority(job, part, snap.machine, cfg, after)
            assert low - 4 <= seen["priority"] <= high + 4, job.job_id
            checked += 1
    assert checked >= 6


def test_the_recordings_exercise_each_factor():
    """So that the comparison above could fail: each configuration moves its factors."""
    seen = {}
    for directory in RECORDED:
        _, factors, _, _ = recorded(directory)
        seen[directory.name] = factors
    large = seen["priority-large"].values()
    assert len({round(f["jobsize"]) for f in large}) >= 4
    assert len({round(f["age"]) for f in large}) >= 4
    assert {round(f["nice"]) for f in large} >= {0, 100}
    assert any(f["site"] == 777 for f in large)
    tres = seen["priority-favor-small-tres"].values()
    assert any(v < 0 for f in tres for k, v in f.items() if k.startswith("tres:"))
    gpus = [f.get("tres:gres/gpu", 0) for f in seen["priority-gres-tres"].values()]
    assert len({round(g) for g in gpus}) >= 3 and min(gpus) == 0
    small = seen["priority-small-time"].values()
    assert len({round(f["jobsize"]) for f in small}) >= 4
