"""A slurm.conf file read as slurmctld reads it: the test cluster's own file against what
its slurmctld reported of it (recorded from 24.11, tests/fixtures/slurm-24.11-gpu), the
example site's files, and the errors a bad file gets."""
from __future__ import annotations

import json
from dataclasses import fields

import pytest

from advisor.adapters import slurm_json, slurm_text
from advisor.adapters.slurm_conf import read_slurm_conf
from advisor.errors import BadInput, SourceUnavailable
from advisor.model import SchedulingConfig
from tests.helpers import FIXTURES, ROOT_DIR
from tests.integration.slurm_cluster import (GPU_NODES, MEM_PER_CPU, NODE_CPUS, NODE_GPUS,
                                             NODE_MEMORY, NODES, SLURM_CONF)

RECORDED = FIXTURES / "slurm-24.11-gpu"


def cluster_conf(tmp_path):
    """The test cluster's slurm.conf as its harness writes it."""
    cpu_nodes = NODES - len(GPU_NODES)
    path = tmp_path / "slurm.conf"
    path.write_text(SLURM_CONF.format(
        host="lab", root="/tmp/x", ctld_port=6817, dbd_port=6819, cpus=NODE_CPUS,
        memory=NODE_MEMORY, mem_per_cpu=MEM_PER_CPU, cpu_ports="17001-17002",
        gpu_ports="17003-17004", nodes=NODES, cpu_nodes=cpu_nodes, first_gpu=cpu_nodes + 1,
        gpus=NODE_GPUS))
    return path


def test_the_test_cluster_s_file_reads_as_its_slurmctld_reported_it(tmp_path):
    cluster, config = read_slurm_conf(cluster_conf(tmp_path))
    nodes = slurm_json.nodes_from_json(
        json.loads((RECORDED / "scontrol_show_node.json").read_text()), "scontrol")
    parts = slurm_text.parse_partitions(
        (RECORDED / "scontrol_show_partition_o.txt").read_text(), tuple(n.name for n in nodes))
    reported = slurm_text.parse_config((RECORDED / "scontrol_show_config.txt").read_text())
    assert cluster.name == "lab"
    assert [(n.name, n.cpus, n.memory, n.gres) for n in cluster.nodes] == \
        [(n.name, n.cpus, n.memory, n.gres) for n in nodes]
    assert [n.partitions for n in cluster.nodes] == [n.partitions for n in nodes]
    assert cluster.partitions == parts
    # every scheduling value the advisor plays, as slurmctld printed it (text values in
    # its case: CR_CORE_MEMORY for CR_Core_Memory)
    played = [f.name for f in fields(SchedulingConfig)
              if f.name not in ("slurm_version", "backfill_cost", "utc_offset", "booted",
                                "state_save_location", "accounting_storage_type",
                                "accounting_enforce", "select_type_parameters",
                                "accounting_storage_tres")]
    for name in played:
        assert getattr(config, name) == getattr(reported, name), name
    assert config.memory_consumable and config.limits_enforced
    assert config.select_type_parameters.upper() == reported.select_type_parameters
    # the TRES slurmctld always tracks, then the file's (24.11 adds two of a GPU's own)
    assert config.accounting_storage_tres == reported.accounting_storage_tres[:9]


def test_defaults_includes_and_cpus_from_the_topology(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nodes.conf").write_text(
        "NodeName=DEFAULT RealMemory=4000 Sockets=2 CoresPerSocket=4\n"
        "NodeName=a[01-03]\nNodeName=b1 CPUs=64 Gres=gpu:a100:4  # fat\n"
        "PartitionName=DEFAULT MaxTime=1-0 State=UP\n"
        "PartitionName=all Nodes=ALL Default=YES\n"
        "PartitionName=gpu Nodes=b1 MaxTime=2:00:00 PriorityTier=2\n")
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=site\nInclude sub/nodes.conf\nSchedulerTimeSlice=45\n"
                    "PriorityDecayHalfLife=14-0\nPriorityCalcPeriod=5\n"
                    "SchedulerParameters=bf_window=2880,bf_continue\n")
    cluster, config = read_slurm_conf(path)
    assert [(n.name, n.cpus, n.memory, n.gres) for n in cluster.nodes] == [
        ("a01", 8, 4000, {}), ("a02", 8, 4000, {}), ("a03", 8, 4000, {}),
        ("b1", 64, 4000, {"gpu": 4})]
    gpu = cluster.partition("gpu")
    assert gpu.nodes == ("b1",) and gpu.max_time == 7200 and gpu.priority_tier == 2
    assert cluster.partition("all").max_time == 86400 and cluster.default_partition.name == "all"
    assert cluster.nodes[3].partitions == ("all", "gpu")
    assert config.scheduler_time_slice == 45          # seconds in slurm.conf
    assert config.priority_decay_half_life == 14 * 86400
    assert config.priority_calc_period == 300          # minutes in slurm.conf
    assert config.backfill.bf_window == 2880 and config.backfill.bf_continue


def test_the_example_site_files():
    for name in ("fcfs", "age", "wide", "fairshare", "builtin"):
        cluster, config = read_slurm_conf(ROOT_DIR / "examples" / "curie" / f"{name}.conf")
        assert (len(cluster.nodes), cluster.cpus) == (5544, 93312)
        assert {"standard", "large", "hybrid"} <= {p.name for p in cluster.partitions}
    assert config.scheduler_type == "sched/builtin"


@pytest.mark.parametrize("text, words", [
    ("PartitionName=p Nodes=ALL\n", ("no NodeName line",)),
    ("NodeName=n1 CPUs=4\n", ("no PartitionName line",)),
    ("NodeName=n1 CPUs=four\nPartitionName=p Nodes=ALL\n", ("line 1", "CPUs=four")),
    ("NodeName=n1\nPartitionName=p Nodes=n[1-2]\n", ("line 2", "node n2")),
    ("NodeName=n1\nPartitionName=p Nodes=ALL MaxTime=soon\n", ("line 2", "soon")),
    ("NodeName=n1 Feature='a\nPartitionName=p\n", ("line 1", "quot")),
    ("NodeName=n1\nPartitionName=p\nPriorityWeightAge\n", ("line 3", "Key=Value")),
    ("Include self.conf\n", ("nested",)),
])
def test_a_bad_file_is_one_error_naming_the_line(tmp_path, text, words):
    path = tmp_path / "self.conf"
    path.write_text(text)
    with pytest.raises(BadInput) as e:
        read_slurm_conf(path)
    assert all(w in str(e.value) for w in words), str(e.value)


def test_a_missing_file_is_unavailable(tmp_path):
    with pytest.raises(SourceUnavailable, match="cannot read"):
        read_slurm_conf(tmp_path / "nope.conf")
