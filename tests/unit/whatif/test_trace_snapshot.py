"""Snapshots from a trace, and playing any snapshot forward from its exact state."""
import json

import pytest

from advisor.cli import main
from advisor.engine import EngineConfig, check, job_arrays, make_arrays, run
from advisor.errors import BadInput
from advisor.model import Snapshot
from advisor.plugins.spec import parse_policy
from advisor.units import parse_moment
from advisor.whatif.snapshot import resume_arrays, trace_snapshot

DAY = 86400


def resumed_starts(workload, spec, moment):
    """Start time of every job: up to ``moment`` from the snapshot, after it simulated."""
    policy = parse_policy(spec)
    snap = trace_snapshot(workload, policy, moment)
    runtimes = dict(zip(workload.jobs["job_id"], workload.jobs["runtime"]))
    arrays, ids = resume_arrays(snap, runtimes, workload.jobs)
    check(arrays)
    start, _ = run(arrays, policy.engine_config())
    return snap, dict(zip(ids, start))


# EASY is the advisor's default; the others keep no state between passes that a snapshot
# would lose. (Conservative with a non-FCFS order keeps promises made in the past, which a
# snapshot does not carry: resumed, it may differ; Slurm rebuilds its plan every cycle.)
@pytest.mark.parametrize("spec", ["easy:FCFS:FCFS", "easy:SPF:SPF:T=20h", "none:FCFS",
                                  "depth:SPF:FCFS:k=4", "conservative:FCFS"])
def test_snapshot_forward_reproduces_the_full_replay_on_kth(trace, spec):
    workload = trace("KTH-SP2", lelong_filter=False)
    full, _ = run(job_arrays(workload), parse_policy(spec).engine_config())
    expected = dict(zip(workload.jobs["job_id"], full))
    end = dict(zip(workload.jobs["job_id"], full + workload.jobs["runtime"].to_numpy()))
    busiest = int(workload.jobs["submit"].iloc[5000])  # a moment with a queue
    for moment in (20 * DAY, 100 * DAY + 3600, busiest):
        snap, got = resumed_starts(workload, spec, moment)
        # every job not yet finished at the moment is there, running, queued or to come
        assert set(got) == {j for j, e in end.items() if e > moment}
        differ = [j for j, s in got.items() if s != expected[j]]
        assert differ == [], f"{spec} at {moment}: {len(differ)} jobs start differently"
    assert snap.running and snap.pending  # the busy moment had both


def test_snapshot_holds_exactly_the_state_at_that_moment(trace):
    workload = trace("KTH-SP2", lelong_filter=False)
    moment = int(workload.jobs["submit"].iloc[5000])
    snap = trace_snapshot(workload, parse_policy("easy:FCFS:FCFS"), moment)
    jobs = workload.jobs.set_index("job_id")
    later = set(jobs.index[jobs["submit"] > moment])
    seen = {j.job_id for j in (*snap.running, *snap.pending)}
    assert not seen & later
    for j in snap.running:
        assert j.start_time <= moment < j.start_time + jobs.loc[j.job_id, "runtime"]
        assert j.elapsed == moment - j.start_time and len(j.node_list) == j.cpus
    assert all(j.start_time is None and j.submit_time <= moment for j in snap.pending)
    assert sum(n.alloc_cpus for n in snap.machine.nodes) == snap.busy_cpus <= 100
    # FCFS: the queue's priorities rank jobs by submit time
    order = [j.job_id for j in snap.pending]
    assert order == [j.job_id for j in sorted(snap.pending,
                                              key=lambda j: (j.submit_time, j.job_id))]
    assert Snapshot.from_dict(json.loads(json.dumps(snap.to_dict()))) == snap


def test_resume_with_a_first_pass_starts_waiting_jobs_at_once():
    # one running job holds 2 of 4 processors; a 2-processor job waits in the snapshot
    arrays = make_arrays([0, 5], [100, 10], [100, 10], [2, 2], 4, t0=10, fixed=[0, -1],
                         first_pass=True)
    start, _ = run(arrays, EngineConfig())
    assert list(start) == [0, 10]
    lazy = make_arrays([0, 5], [100, 10], [100, 10], [2, 2], 4, t0=10, fixed=[0, -1])
    assert list(run(lazy, EngineConfig())[0]) == [0, 100]  # waits for the next event
    with pytest.raises(BadInput, match="ends it before the snapshot"):
        check(make_arrays([0], [5], [5], [1], 4, t0=10, fixed=[0]))


def test_moments(trace):
    header = trace("KTH-SP2", lelong_filter=False).header
    assert parse_moment("864000", header) == parse_moment("10d", header) == 864000
    # KTH's clock starts at 843480031 (1996-09-23 14:00:31 Europe/Stockholm)
    assert parse_moment("1996-09-24T14:00:31", header) == DAY
    with pytest.raises(BadInput, match="is not a moment"):
        parse_moment("yesterday", header)


def test_cli_snapshot_from_a_trace(capsys):
    assert main(["snapshot", "--from", "swf:KTH-SP2@1996-12-09T13:00", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {"time", "machine", "running", "pending", "config"} <= set(doc)
    assert doc["pending"] and all("priority" in j for j in doc["pending"])
    assert all(j["start_time"] <= doc["time"] for j in doc["running"])
    assert main(["snapshot", "--from", "swf:KTH-SP2@77d", "--policy", "easy:SPF:SPF"]) == 0
    assert "Policy replayed: easy:SPF:SPF" in capsys.readouterr().out
    assert main(["snapshot", "--from", "swf:KTH-SP2"]) == 2
    assert "names no moment" in capsys.readouterr().err
    assert main(["snapshot", "--from", "lsf"]) == 2
