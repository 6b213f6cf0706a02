"""Slurm's outputs -> the model. Real 22.05 outputs (tests/fixtures/slurm-22.05-lab and our
own recordings in tests/fixtures/slurm-22.05, with the configuration that produced them), and
documents of the newer schemas (data_parser v0.0.39 to v0.0.44) built to the documented
shapes from the same real jobs, so both families must give the same Snapshot parts."""
import copy
import json
import pickle
from pathlib import Path

import pytest

from advisor.adapters import slurm_json, slurm_text
from advisor.adapters.slurm_cli import assemble, job_efficiency, workload_from_sacct
from advisor.policies.timeshare.inputs import cpu_efficiency
from advisor.errors import BadInput, SourceUnavailable
from advisor.model import Snapshot
from tests.helpers import FIXTURES

LAB = FIXTURES / "slurm-22.05-lab"
OURS = FIXTURES / "slurm-22.05"
SAMPLE_DIRS = [LAB, OURS]
NOW = int((OURS / "captured_at.txt").read_text())


def read(directory: Path, name: str) -> str:
    return (directory / name).read_text()


def squeue_doc(directory=OURS, name="squeue.json"):
    return slurm_json.load(read(directory, name), "squeue --json")


# ---------------------------------------------------------------- 22.05: every real sample
@pytest.mark.parametrize("directory", SAMPLE_DIRS, ids=lambda d: d.parent.name)
def test_every_squeue_sample(directory):
    for path in sorted(directory.glob("squeue*.json")):
        doc = slurm_json.load(path.read_text(), "squeue --json")
        assert slurm_json.schema(doc, "squeue") == "v0.0.38"
        running, pending = slurm_json.jobs_from_squeue(doc, NOW)
        raw = {j["job_id"]: j for j in doc["jobs"]}
        for job in running + pending:
            r = raw[job.job_id]
            assert job.state == r["job_state"] and job.cpus == r["cpus"]
            assert job.time_limit == (None if r["time_limit"] is None else
                                      r["time_limit"] * 60)
            assert job.submit_time == r["submit_time"] and job.priority == r["priority"]
        finished = {j for j, r in raw.items() if r["job_state"] == "COMPLETED"}
        assert not finished & {j.job_id for j in running + pending}


def test_recorded_squeue_quirks():
    running, pending = slurm_json.jobs_from_squeue(squeue_doc(), NOW)
    jobs = {j.job_id: j for j in running + pending}
    assert jobs[19].time_limit is None          # no --time, partition MaxTime=INFINITE
    assert jobs[21].held and jobs[21].priority == 0 and jobs[21].state_reason == "JobHeldUser"
    assert jobs[22].dependency == "afterok:17(unfulfilled)" and not jobs[22].held
    assert jobs[20].partitions == ("batch", "high")  # pending in two partitions
    assert jobs[16].node_list == ("n1", "n2", "n3", "n4") and jobs[16].elapsed == 7
    assert jobs[18].expected_start == 1795296300 and jobs[18].start_time is None
    assert jobs[25].nice == 100


def test_cpus_null_when_tasks_unset():
    """22.05 prints ``cpus: null`` for a job that gave no task count; the CPUs then come
    from the requested TRES, then from tasks x cpus-per-task, then from the node count."""
    doc = squeue_doc()
    raw = next(j for j in doc["jobs"] if j["job_id"] == 18)
    raw["cpus"] = None
    raw["tasks"] = None
    assert slurm_json.job_cpus(raw) == 32                 # tres_req_str cpu=32
    raw["tres_req_str"] = ""
    raw.update(tasks=8, cpus_per_task=2)
    assert slurm_json.job_cpus(raw) == 16
    raw.update(tasks=None)
    assert slurm_json.job_cpus(raw) == 2                  # node_count


@pytest.mark.parametrize("directory", SAMPLE_DIRS, ids=lambda d: d.parent.name)
def test_every_node_partition_config_sample(directory):
    doc = slurm_json.load(read(directory, "sinfo.json"), "sinfo --json")
    nodes = slurm_json.nodes_from_json(doc, "sinfo --json")
    assert [n.cpus for n in nodes] == [16] * 4
    text_nodes = slurm_text.parse_nodes(read(directory, next(
        p.name for p in directory.glob("scontrol_show_node*.txt"))))
    assert [(n.name, n.cpus, n.partitions) for n in nodes] == \
        [(n.name, n.cpus, n.partitions) for n in text_nodes]
    parts = slurm_text.parse_partitions(read(directory, next(
        p.name for p in directory.glob("scontrol_show_partition*.txt"))))
    assert {p.name: p.priority_job_factor for p in parts}["high"] == 10
    assert all(p.nodes for p in parts) and parts[0].default and parts[0].max_time is None
    config = slurm_text.parse_config(read(directory, "scontrol_show_config.txt"))
    assert config.priority_type == "priority/multifactor"
    assert (config.priority_weight_age, config.priority_weight_job_size,
            config.priority_weight_partition) == (1000, 500, 1000)
    assert config.priority_max_age == 86400 and config.select_type == "select/cons_tres"


def test_recorded_config_and_partitions():
    config = slurm_text.parse_config(read(OURS, "scontrol_show_config.txt"))
    assert config.scheduler_parameters == {"bf_interval": "1", "bf_continue": ""}
    assert config.backfill.bf_interval == 1 and config.backfill.bf_continue
    assert config.backfill.bf_window == 1440 and config.priority_calc_period == 60
    short = slurm_text.parse_partitions(read(OURS, "scontrol_show_partition.txt"))[2]
    assert (short.name, short.nodes, short.max_time, short.default_time) == \
        ("short", ("n3", "n4"), 1800, 300)


def test_scheduler_parameters_typed_and_tres_weights():
    text = read(OURS, "scontrol_show_config.txt").replace(
        "bf_interval=1,bf_continue",
        "bf_interval=30,bf_window=2880,bf_resolution=300,bf_job_part_count_reserve=1,"
        "bf_min_age_reserve=600,default_queue_depth=200,kill_invalid_depend").replace(
        "PriorityWeightTRES      = (null)", "PriorityWeightTRES      = CPU=-1,GRES/gpu=2.5")
    c = slurm_text.parse_config(text)
    b = c.backfill
    assert (b.bf_window, b.bf_resolution, b.bf_job_part_count_reserve, b.bf_min_age_reserve,
            b.default_queue_depth, b.bf_continue) == (2880, 300, 1, 600, 200, False)
    assert c.scheduler_parameters["kill_invalid_depend"] == ""
    assert c.priority_weight_tres == {"cpu": -1.0, "gres/gpu": 2.5}


@pytest.mark.parametrize("text,seconds", [("1-00:00:00", 86400), ("00:05:00", 300),
                                          ("30:00", 1800), ("1:00:00", 3600), ("30", 1800),
                                          ("30 sec", 30), ("0 min", 0), ("2-12", 216000),
                                          ("UNLIMITED", None), ("NONE", None)])
def test_slurm_durations(text, seconds):
    assert slurm_text.slurm_duration(text) == seconds


def test_hostlists():
    assert slurm_text.expand_hostlist("n[1-3,5],gpu[08-10],login1") == (
        "n1", "n2", "n3", "n5", "gpu08", "gpu09", "gpu10", "login1")
    assert slurm_text.expand_hostlist("") == ()


def test_sprio_formats():
    ours = slurm_text.parse_sprio(read(OURS, "sprio.txt"))
    assert ours[(20, "high")]["priority"] == 1156 and ours[(20, "batch")]["priority"] == 256
    for (_, _), f in ours.items():  # sprio rounds each factor: the sum is within 1
        assert abs(f["priority"] - sum(v for k, v in f.items()
                                       if k not in ("priority", "nice"))) <= 1
    with pytest.raises(BadInput, match="sprio, line 1"):
        slurm_text.parse_sprio("1|batch|root")


def test_lab_sprio_long_samples_agree_with_squeue():
    """The lab samples hold ``sprio -l``, a column table: read it by its header."""
    for name, squeue in (("sprio_l.txt", "squeue.json"),
                         ("sprio_l_with_slurmdbd.txt", "squeue_with_slurmdbd.json")):
        table = slurm_text.parse_sprio(read(LAB, name))
        prio = {j["job_id"]: j["priority"] for j in squeue_doc(LAB, squeue)["jobs"]}
        assert table and all(prio[job] == f["priority"] for (job, _), f in table.items())
        for (_, _), f in table.items():  # nice lowers the priority; sprio rounds factors
            parts = sum(v for k, v in f.items() if k not in ("priority", "nice"))
            assert f["priority"] <= 1 or abs(parts - f["nice"] - f["priority"]) <= 1


@pytest.mark.parametrize("directory", SAMPLE_DIRS, ids=lambda d: d.parent.name)
def test_every_sacct_sample(directory):
    records = slurm_json.sacct_records(slurm_json.load(read(directory, "sacct.json"),
                                                       "sacct --json"))
    assert records and all(r["submit"] for r in records)
    workload = workload_from_sacct(records)
    done = [r for r in records if r["start"] and r["end"]]
    assert len(workload) == len(done)
    assert workload.cleaning.jobs_read == len(records)
    for r, (_, row) in zip(sorted(done, key=lambda r: (r["submit"], r["job_id"])),
                           workload.jobs.iterrows()):
        assert row["job_id"] == r["job_id"] and row["runtime"] == r["end"] - r["start"]
        assert row["wait"] == r["start"] - r["submit"]
        # field 6 is TotalCPU per allocated CPU (the recorded jobs sleep: about none)
        cpus = r["alloc_cpus"] or r["req_cpus"]
        assert r["total_cpu"] is not None
        assert row["avg_cpu"] == pytest.approx(r["total_cpu"] / cpus, abs=1e-3)


def test_sacct_total_cpu_makes_field_6_and_the_efficiency():
    doc = slurm_json.load(read(SAMPLE_DIRS[0], "sacct.json"), "sacct --json")
    raw = next(j for j in doc["jobs"] if j["time"]["elapsed"] > 0 and j["time"]["end"])
    raw["time"]["total"] = {"seconds": 30, "microseconds": 500000}
    record = next(r for r in slurm_json.sacct_records(doc) if r["job_id"] == raw["job_id"])
    assert record["total_cpu"] == 30.5
    workload = workload_from_sacct([record])
    row = workload.jobs.iloc[0]
    assert row["avg_cpu"] == pytest.approx(30.5 / record["alloc_cpus"], abs=1e-3)
    assert cpu_efficiency(workload.jobs).iloc[0] == pytest.approx(
        min(1.0, 30.5 / record["alloc_cpus"] / row["runtime"]), abs=1e-3)
    assert job_efficiency(record) == pytest.approx(cpu_efficiency(workload.jobs).iloc[0],
                                                abs=1e-3)      # the history's column
    del raw["time"]["total"]
    record = next(r for r in slurm_json.sacct_records(doc) if r["job_id"] == raw["job_id"])
    assert record["total_cpu"] is None
    assert workload_from_sacct([record]).jobs.iloc[0]["avg_cpu"] == -1.0


def test_sacct_empty_window_is_not_an_error():
    doc = slurm_json.load(read(OURS, "sacct_empty.json"), "sacct --json")
    assert slurm_json.sacct_records(doc) == []
    assert len(workload_from_sacct([])) == 0


def test_bad_documents():
    with pytest.raises(BadInput, match="squeue --json: output is not JSON"):
        slurm_json.load('{"jobs": [', "squeue --json")
    doc = squeue_doc()
    doc["meta"]["plugin"]["type"] = "openapi/v0.0.37"
    with pytest.raises(BadInput, match="unknown JSON schema 'openapi/v0.0.37'"):
        slurm_json.jobs_from_squeue(doc, NOW)
    del doc["meta"]
    with pytest.raises(BadInput, match="no meta.plugin"):
        slurm_json.jobs_from_squeue(doc, NOW)
    failed = {"meta": {}, "errors": [{"description": "Failed while looking for jobs",
                                      "error": "Unable to contact slurm controller"}]}
    with pytest.raises(SourceUnavailable, match="slurmctld up"):
        slurm_json.load(json.dumps(failed), "squeue --json")
    with pytest.raises(BadInput, match="no SchedulerType"):
        slurm_text.parse_config("hello = world")


# ------------------------------------------------- newer schemas, built to their documented shape
def quantity(value, infinite=False):
    """data_parser's number object (v0.0.39+)."""
    if value is None:
        return {"set": False, "infinite": infinite, "number": 0}
    return {"set": True, "infinite": False, "number": value}


def meta(version: str, release: str) -> dict:
    if version == "v0.0.39":  # 23.02: data_parser named beside the openapi plugin
        return {"plugin": {"type": "openapi/v0.0.39", "name": "Slurm OpenAPI v0.0.39",
                           "data_parser": "data_parser/v0.0.39"},
                "Slurm": {"version": {"major": 23, "micro": 1, "minor": 2},
                          "release": release}}
    major, minor, micro = release.split(".")
    return {"plugin": {"type": "", "name": "", "data_parser": f"data_parser/{version}",
                       "accounting_storage": "accounting_storage/slurmdbd"},
            "client": {"source": "", "user": "root", "group": "root"}, "command": [],
            "slurm": {"version": {"major": major, "micro": micro, "minor": minor},
                      "release": release, "cluster": "lab"}}


NEWER = [("v0.0.39", "23.02.7"), ("v0.0.40", "23.11.10"), ("v0.0.41", "24.05.8"),
         ("v0.0.42", "24.11.5"), ("v0.0.43", "25.05.3"), ("v0.0.44", "25.11.6")]


def newer_job(raw: dict) -> dict:
    """A 22.05 job record in the v0.0.39+ shape: numbers and times as objects, the state as
    an array, an unlimited limit as ``infinite``, exclusive/shared as flag arrays."""
    j = copy.deepcopy(raw)
    for key in ("submit_time", "start_time", "end_time", "eligible_time", "accrue_time",
                "priority", "cpus", "node_count", "tasks", "cpus_per_task", "nice",
                "array_job_id"):
        j[key] = quantity(j.get(key))
    j["time_limit"] = quantity(None, infinite=True) if raw["time_limit"] is None else \
        quantity(raw["time_limit"])
    j["job_state"] = [raw["job_state"]]
    j["shared"] = [] if raw.get("shared") is None else [raw["shared"]]
    j.pop("job_resources", None)
    return j


@pytest.mark.parametrize("version,release", NEWER)
def test_newer_squeue_gives_the_same_jobs(version, release):
    old = squeue_doc()
    doc = {"meta": meta(version, release), "errors": [], "warnings": [],
           "jobs": [newer_job(j) for j in old["jobs"]],
           "last_backfill": quantity(NOW), "last_update": quantity(NOW)}
    doc = json.loads(json.dumps(doc))
    assert slurm_json.schema(doc, "squeue") == version
    assert slurm_json.slurm_release(doc) == release
    assert slurm_json.jobs_from_squeue(doc, NOW) == slurm_json.jobs_from_squeue(old, NOW)


@pytest.mark.parametrize("version,release", NEWER)
def test_newer_scontrol_nodes_give_the_same_machine(version, release):
    """From 23.02 nodes come from ``scontrol show node --json``, one record per node;
    sinfo's grouped records, which sum a group's allocations, are refused."""
    old_nodes = slurm_json.nodes_from_json(slurm_json.load(read(OURS, "sinfo.json"), "s"), "s")
    node_doc = {"meta": meta(version, release), "errors": [], "nodes": [
        {"name": n.name, "cpus": n.cpus, "alloc_cpus": n.alloc_cpus, "effective_cpus": n.cpus,
         "state": n.state.split("+"), "partitions": list(n.partitions),
         "real_memory": n.memory, "alloc_memory": n.alloc_memory} for n in old_nodes]}
    assert slurm_json.nodes_from_json(node_doc, "scontrol show node") == old_nodes
    grouped = {"meta": meta(version, release), "errors": [], "sinfo": [
        {"nodes": {"nodes": [n.name for n in old_nodes]}}]}
    with pytest.raises(BadInput, match="scontrol show node --json"):
        slurm_json.nodes_from_json(grouped, "sinfo --json")


@pytest.mark.parametrize("version,release", NEWER)
def test_newer_sacct(version, release):
    old = slurm_json.load(read(OURS, "sacct.json"), "sacct --json")
    jobs = copy.deepcopy(old["jobs"])
    for j in jobs:
        t = j["time"]
        t["limit"] = quantity(None, infinite=True) if t["limit"] is None else \
            quantity(t["limit"])
        t["start"] = t["start"] or 0
        j["state"]["current"] = [j["state"]["current"]]
        j["priority"] = quantity(j["priority"])
    doc = {"meta": meta(version, release), "errors": [], "warnings": [], "jobs": jobs}
    assert slurm_json.sacct_records(doc) == slurm_json.sacct_records(old)


def test_assembled_snapshot_round_trips_losslessly():
    running, pending = slurm_json.jobs_from_squeue(squeue_doc(), NOW)
    snap = assemble(NOW, slurm_json.nodes_from_json(slurm_json.load(read(OURS, "sinfo.json"),
                                                                    "s"), "s"),
                    slurm_text.parse_partitions(read(OURS, "scontrol_show_partition.txt")),
                    running, pending,
                    slurm_text.parse_config(read(OURS, "scontrol_show_config.txt")),
                    {"kind": "slurm", "adapter": "cli", "schema": "v0.0.38"},
                    slurm_text.parse_sprio(read(OURS, "sprio.txt")))
    assert [j.job_id for j in snap.pending][:2] == [23, 18]   # by priority: 625, 287
    back = Snapshot.from_dict(json.loads(json.dumps(snap.to_dict())))
    assert back == snap and isinstance(back.running[0].node_list, tuple)
    # pickled, as each task ships it to a worker: the same, and its machine built once
    shipped = [pickle.loads(pickle.dumps(snap)) for _ in range(2)]
    assert shipped[0] == snap and shipped[1].machine is shipped[0].machine
    with pytest.raises(BadInput, match="no nodes"):
        assemble(NOW, (), snap.machine.partitions, running, pending, snap.config, {})


def test_lab_text_samples_agree_with_the_json_ones():
    """scontrol show job -o and sacct -P came from the same cluster as squeue/sacct --json.
    (sdiag and sshare samples are not inputs of the advisor: fair-share enters through
    sprio's factor.)"""
    running, pending = slurm_json.jobs_from_squeue(squeue_doc(LAB), NOW)
    jobs = {j.job_id: j for j in running + pending}
    for line in read(LAB, "scontrol_show_job_o.txt").splitlines():
        kv = slurm_text.key_values(line)
        job = jobs[int(kv["JobId"])]
        assert (job.cpus, job.state, job.priority) == (int(kv["NumCPUs"]), kv["JobState"],
                                                       int(kv["Priority"]))
        assert job.time_limit == slurm_text.slurm_duration(kv["TimeLimit"])
    lines = read(LAB, "sacct_parsable.txt").splitlines()
    header = lines[0].split("|")
    records = {r["job_id"]: r for r in slurm_json.sacct_records(
        slurm_json.load(read(LAB, "sacct.json"), "sacct --json"))}
    for line in lines[1:]:
        row = dict(zip(header, line.split("|")))
        r = records[int(row["JobID"])]
        assert (r["state"], r["req_cpus"], r["limit"]) == (
            row["State"], int(row["ReqCPUS"]), slurm_text.slurm_duration(row["Timelimit"]))


@pytest.mark.parametrize("release", ["24.11", "26.05"])
@pytest.mark.parametrize("depth", [50, 200, 800])
def test_sdiag_s_backfill_statistics_read_alike_from_its_text_and_json(release, depth):
    """Recorded a moment apart (tests/fixtures/sdiag): the same depth tried, a cycle or two
    more at most, the mean cycle within a tenth."""
    name = f"sdiag-{release}-depth{depth}"
    text = slurm_text.backfill_stats(read(FIXTURES / "sdiag", f"{name}.txt"))
    js = slurm_json.backfill_stats(json.loads(read(FIXTURES / "sdiag", f"{name}.json")))
    assert js["depth_try_mean"] == text["depth_try_mean"] >= depth * 0.95
    assert 0 <= js["cycles"] - text["cycles"] <= 2
    assert abs(js["cycle_mean_us"] - text["cycle_mean_us"]) <= 0.1 * text["cycle_mean_us"]
    assert js["table_mean"] == text["table_mean"]


def test_sdiag_before_its_first_backfill_cycle_reads_as_none():
    """sdiag prints no mean before the first cycle since its reset (sdiag.c)."""
    text = read(FIXTURES / "sdiag", "sdiag-22.05-depth50.txt")
    head, _, tail = text.partition("Backfilling stats")
    kept = [line for line in tail.splitlines()
            if "Mean" not in line and "mean" not in line]
    zero = "\n".join(line.replace(": 16", ": 0") if "Total cycles" in line else line
                     for line in kept)
    assert set(slurm_text.backfill_stats(head + "Backfilling stats" + zero).values()) == {0}


def test_sdiag_without_backfill_statistics_is_named():
    with pytest.raises(BadInput, match="Backfilling stats lack"):
        slurm_text.backfill_stats("Main schedule statistics (microseconds):\n\tLast cycle: 1\n")
    with pytest.raises(BadInput, match="sdiag --json: no backfill statistics"):
        slurm_json.backfill_stats({"statistics": {"parts_packed": 1}})
