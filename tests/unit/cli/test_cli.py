"""The command line as a user runs it: a real process, real bundled traces."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from advisor.adapters.swf import read_swf


def advisor(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, cwd=cwd)


def test_replay_json_contract(tmp_path):
    done = advisor("replay", "CTC-SP2", "--policy", "easy:SPF:SPF", "--policy",
                   "easy:FCFS:FCFS:T=20h", "--policy", "conservative:FCFS", "--drop-overruns",
                   "--drop-oversize", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert set(doc["policies"]) == {"easy:SPF:SPF", "easy:FCFS:FCFS:T=20h", "conservative:FCFS"}
    for result in doc["policies"].values():
        assert {"jobs", "avg_wait", "max_wait", "avg_bsld", "utilization"} <= set(result)
        assert result["jobs"] == doc["jobs"] == 70048
        assert 0 < result["utilization"] < 1
    assert doc["cleaning"]["removed"]["overruns"] == 7174
    spf = doc["policies"]["easy:SPF:SPF"]
    assert spf["avg_wait"] == pytest.approx(2784, rel=0.03)  # Lelong et al. Table 2


def test_replay_writes_jobs_and_swf(tmp_path):
    jobs_csv, swf = tmp_path / "jobs.csv", tmp_path / "sim.swf"
    done = advisor("replay", "KTH-SP2", "--policy", "easy:FCFS:FCFS", "--jobs-out",
                   str(jobs_csv), "--swf-out", str(swf), "--drop-overruns")
    assert done.returncode == 0, done.stderr
    assert "EASY-FCFS-FCFS" in done.stdout
    table = pd.read_csv(jobs_csv)
    assert list(table.columns[:7]) == ["job_id", "submit", "start", "end", "wait", "runtime",
                                       "procs"]
    assert (table["wait"] == table["start"] - table["submit"]).all()
    simulated = read_swf(swf)
    assert simulated.jobs["wait"].tolist() == table["wait"].tolist()
    assert "simulated schedule under EASY-FCFS-FCFS" in simulated.header.notes[-1]


def test_parquet_and_one_file_per_policy(tmp_path):
    out = tmp_path / "jobs.parquet"
    done = advisor("replay", "KTH-SP2", "--policy", "easy:FCFS:FCFS", "--policy", "easy:SPF:SPF",
                   "--jobs-out", str(out))
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["jobs.EASY-FCFS-FCFS.parquet", "jobs.EASY-SPF-SPF.parquet"]
    assert len(pd.read_parquet(tmp_path / files[0])) == 28475


@pytest.mark.parametrize("args, code, message", [
    (["replay", "KTH-SP2", "--policy", "easy:FIFO"], 2, "unknown ordering policy 'FIFO'"),
    (["replay", "no-such-trace.swf"], 3, "no trace file 'no-such-trace.swf'"),
    (["replay", "KTH-SP2", "--procs", "50"], 2, "pass --drop-oversize or a larger --procs"),
    (["replay", "KTH-SP2", "--estimates", "f=x"], 2, "--estimates: 'f=x' is not an estimate"),
    (["tune", "KTH-SP2", "--weeks", "0"], 2, "--weeks: 0 is out of range"),
])
def test_errors_are_one_line_with_documented_codes(tmp_path, args, code, message):
    done = advisor(*args)
    assert done.returncode == code
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_malformed_trace_exit_2_and_no_partial_output(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n1 2 3\n")
    out = tmp_path / "jobs.csv"
    done = advisor("replay", str(bad), "--jobs-out", str(out))
    assert done.returncode == 2 and "line 3" in done.stderr
    assert not out.exists()


def test_tune_json_and_plot(tmp_path):
    png = tmp_path / "tune.png"
    done = advisor("tune", "KTH-SP2", "--weeks", "3", "--workers", "1", "--threshold", "20h",
                   "--plot", str(png), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["weeks"] == 3 and len(doc["policies"]) == 98
    assert doc["best"]["train_avg_wait"] == min(p["train_avg_wait"] for p in doc["policies"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_policies_lists_families_parameters_candidates_and_fidelity():
    done = advisor("policies", "--json")
    doc = json.loads(done.stdout)
    families = {f["family"]: f for f in doc["families"]}
    assert list(families) == ["ordering", "backfill", "threshold", "queues", "timeshare",
                              "plan", "prio", "bf"]
    assert families["ordering"]["default"] == "fcfs" and families["threshold"]["default"] is None
    plugins = {m["plugin"]: m for f in doc["families"] for m in f["members"]}
    queue, depth = plugins["threshold/queue"], plugins["backfill/depth"]
    assert queue["params"][0] == {"name": "T", "default": "20h", "min": "1m",
                                  "kind": "duration", "help": queue["params"][0]["help"]}
    assert queue["candidates"] == ["T=4h", "T=12h", "T=1d"] and queue["fidelity"] == "approximate"
    assert depth["params"][0]["default"] == 2 and depth["params"][0]["min"] == 1
    assert depth["candidates"] == ["k=2", "k=4"]
    assert plugins["ordering/spf"]["fidelity"] == "exact"
    exp = plugins["ordering/exp"]
    assert exp["fidelity"] == "none" and exp["candidates"] == []
    assert plugins["ordering/lcfs"]["candidates"] == []        # never bounds waiting in Slurm
    queues = plugins["queues/runtime"]       # with FCFS only; no history: fallback boundaries
    assert queues["candidates"] == ["P=2 cuts=4h", "P=3 cuts=1h/12h", "P=4 cuts=1h/4h/12h"]
    assert queues["fidelity"] == "approximate"
    plan = plugins["plan/sa"]          # alone (it replaces ordering and backfill), by alias
    assert plan["candidates"] == ["plan1 T=1d", "plan2 T=1d", "plan3 T=1d"]
    assert plan["fidelity"] == "approximate" and plan["bounds_wait"]
    # a knob proposes from a snapshot's state (none here), keeps Slurm's key as its name
    window = plugins["bf/window"]
    assert window["params"][0]["name"] == "bf_window" and window["params"][0]["default"] == 1440
    assert window["candidates"] == [] and window["fidelity"] == "exact"
    text = advisor("policies").stdout
    assert "threshold (optional)" in text and "backfill (default easy)" in text
    assert "bf (optional)" in text and "PriorityDecayHalfLife" in text


def test_queues_study_json_table_and_plot(tmp_path):
    png = tmp_path / "queues.png"
    done = advisor("queues", "KTH-SP2", "--trigger", "100", "--weeks-ahead", "2",
                   "--futures", "sampled", "--samples", "1", "--plot", str(png), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["futures"] == "sampled" and doc["r_fixed"] > 0
    t2 = doc["table2"]
    assert 0 < t2["tests"] <= t2["weeks"] and sum(t2["to_parts"].values()) == t2["changes"]
    assert len(doc["weeks"]) > 40 and {"week", "jobs", "r_fixed", "r_online"} <= \
        set(doc["weeks"][0])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = advisor("queues", "KTH-SP2", "--trigger", "100").stdout
    assert "Tests and changes of the online choice" in text and "R per week" in text


def test_a_family_benchmark_runs_through_its_plugin():
    """``advisor bench --family F -- OPTIONS`` is the one way to a family's benchmark: its
    own options, found through the plugin's ``bench``."""
    helped = advisor("bench", "--family", "plan", "--", "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: advisor bench --family plan --")
    assert "--single" in helped.stdout
    unknown = advisor("bench", "--family", "ordering")
    assert unknown.returncode == 2 and not unknown.stdout
    assert "families with one: plan, queues, timeshare" in unknown.stderr


def test_bench_prints_every_figure():
    # Figures only: nothing here asserts a speed (speed is measured, never tested).
    done = advisor("bench", "--repeat", "1", "--skip-tune", "--skip-online", "--skip-compile",
                   "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [t["trace"] for t in doc["traces"]] == ["KTH-SP2", "CTC-SP2", "SDSC-BLUE"]
    for t in doc["traces"]:
        assert t["jobs"] > 20000 and t["parse_s"] > 0 and t["peak_rss_mib"] > 0
        assert set(t["sim_s"]) == {"easy:FCFS:FCFS", "easy:SPF:SPF"}
    assert doc["replay_process"]["seconds"] > 0 and doc["replay_process"]["peak_rss_mib"] > 0
    # the plain-Python EASY ran (its schedule checked equal), each ordering was timed
    assert doc["against_plain"]["plain"]["seconds"] > 0 and doc["against_plain"]["ratio"] > 0
    # the libraries' own import, the floor under a whole process: less than a replay
    floor = doc["import_floor"]
    assert 0 < floor["peak_rss_mib"] < doc["replay_process"]["peak_rss_mib"]
    assert set(doc["slurm_orderings"]["seconds"]) == {"easy:SPF:SPF", "easy:SQF:SQF",
                                                     "easy:LQF:LQF"}
    skipped = {"tune KTH-SP2 process", "online decision", "cold compile, every kernel"}
    for target in doc["targets"]:
        assert (target["measured"] is None) == (target["figure"] in skipped), target
        assert target["met"] in ((None,) if target["figure"] in skipped else (True, False))


def test_recommend_exit_code_json_store_and_lock(tmp_path):
    store = tmp_path / "advisor.sqlite"
    args = ("recommend", "--from", "swf:KTH-SP2@150d", "--candidate", "easy:SPF",
            "--candidate", "conservative:LCFS", "--samples", "3", "--executor", "serial",
            "--store", str(store), "--write", str(tmp_path / "out"), "--json")
    done = advisor(*args)
    assert done.returncode in (0, 10), done.stderr
    doc = json.loads(done.stdout)
    assert (done.returncode == 10) == doc["change"]
    assert [c["spec"] for c in doc["candidates"]] == ["current", "easy:SPF",
                                                      "conservative:LCFS"]
    if doc["change"]:
        conf = (tmp_path / "out" / "advisor.conf").read_text()
        assert conf == doc["change_detail"]["fragment"]
    report = advisor("report", "--store", str(store), "--json", "--plot",
                     str(tmp_path / "report.png"))
    assert report.returncode == 0, report.stderr
    stored = json.loads(report.stdout)
    runs = stored["runs"]
    assert len(runs) == 1 and runs[0]["exit_code"] == done.returncode
    assert stored["latest"]["candidates"] == doc["candidates"]
    assert doc["cluster"]["cpus"] == 100 and doc["cluster"]["pending"] == sum(
        p["pending"] for p in doc["cluster"]["partitions"])
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = advisor("report", "--store", str(store)).stdout
    assert "Latest run" in text and "replayed and 3 sampled futures" in " ".join(text.split())
    assert "Past recommendations" in text and "EASY-SPF-SPF" in text

    import fcntl
    with open(store.with_suffix(".lock"), "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = advisor(*args)
    assert busy.returncode == 5 and "another advisor run" in busy.stderr
    assert busy.stdout == ""


def test_recommend_bad_input_is_one_line_and_exit_2(tmp_path):
    done = advisor("recommend", "--from", "swf:KTH-SP2@150d", "--objective", "speed",
                   "--no-store")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--objective: 'speed' is not one of" in done.stderr
    done = advisor("recommend", "--from", "swf:KTH-SP2@150d", "--candidate", "easy:EXP",
                   "--no-store", "--lock", str(tmp_path / "l"))
    assert done.returncode == 2 and "no form of EXP" in done.stderr


def test_replay_online_json():
    done = advisor("replay", "KTH-SP2", "--online", "2w", "--candidate", "easy:SPF",
                   "--samples", "2", "--executor", "serial", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["baseline"] == "easy:FCFS:FCFS" and doc["every"] == 14 * 86400
    assert doc["total"]["decisions"] == len(doc["decisions"]) > 20
    assert doc["total"]["jobs"] == sum(w["jobs"] for w in doc["weeks"]) == 28475
    assert {d["spec"] for d in doc["decisions"]} <= {"easy:FCFS:FCFS", "easy:SPF"}
    bad = advisor("replay", "KTH-SP2", "--online", "2w", "--policy", "easy:SPF",
                  "--policy", "easy:LCFS")
    assert bad.returncode == 2 and "once" in bad.stderr and not bad.stdout


def test_replay_against_static_json_and_plot(tmp_path):
    """The advice benchmark on a window with its load raised, the 4 weeks before it played
    as a warm-up: every run in one document (the site's and the rolling pick too), the
    weekly PNG; its options refused outside --online before any work."""
    png = tmp_path / "weeks.png"
    window = ("--since", "20w", "--until", "22w", "--load", "1.2")
    done = advisor("replay", "KTH-SP2", "--online", "1d", "--against-static", *window,
                   "--candidate", "easy:SPF", "--candidate", "easy:SQF:T=12h",
                   "--samples", "2", "--executor", "serial", "--plot", str(png), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [r["name"] for r in doc["runs"]] == ["baseline", "EASY-SPF-SPF",
                                                "EASY-SQF-SQF T=12h", "site's pick",
                                                "rolling pick", "online"]
    assert doc["pick"] in ("easy:FCFS:FCFS", "easy:SPF", "easy:SQF:T=12h")
    assert len(doc["rolling"]) == 2 and doc["rolling"][0] == doc["pick"]
    jobs = doc["total"]["jobs"]
    # the played workload holds the 4 weeks before as a warm-up; the judged jobs, the window
    assert doc["jobs"] > jobs and 1000 < jobs < 1500 and doc["first"] is not None
    assert [w["week"] for w in doc["weeks"]] == [0, 1]
    # two weeks of submissions, 1.2 times as dense: they fit in 12 days
    assert len(doc["decisions"]) == doc["total"]["decisions"] in (11, 12)
    assert doc["best"] in ("easy:SPF", "easy:SQF:T=12h")
    assert png.read_bytes()[:4] == b"\x89PNG"
    for bad in (("--against-static",), ("--online", "1d", "--plot", str(tmp_path / "p.png")),
                ("--online", "1d", "--load", "0")):
        done = advisor("replay", "KTH-SP2", *bad)
        assert done.returncode == 2 and not done.stdout, bad
    assert not (tmp_path / "p.png").exists()


def test_plans_study_json_bins_and_plot(tmp_path):
    """Zheng et al.'s study on Atlas's one busy month: PLAN 1-3 against FCFS, the months,
    Fig. 6's bins (JSON, table and heatmaps); a plan replays like any policy."""
    png = tmp_path / "fig6.png"
    window = ("--since", "2007-02-01", "--until", "2007-03-01")
    done = advisor("plans", "LLNL-Atlas", *window, "--plot", str(png), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert [r["name"] for r in doc["runs"]] == ["EASY-FCFS-FCFS", "PLAN1", "PLAN2", "PLAN3"]
    assert [r["policy"] for r in doc["runs"]] == ["easy:FCFS:FCFS", "plan1", "plan2", "plan3"]
    assert [m["month"] for m in doc["months"]] == ["2007-02"]
    bins = doc["bins"]["PLAN2"]
    assert len(bins["size_edges"]) == len(bins["runtime_edges"]) == 16
    assert sum(map(sum, bins["jobs"])) == doc["months"][0]["jobs"] == doc["runs"][0]["jobs"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = advisor("plans", "LLNL-Atlas", *window, "--policy", "plan2:N=20",
                   "--bins", "PLAN2 N=20").stdout
    assert "PLAN2 N=20" in text and "by size and runtime" in text and "2007-02" in text
    done = advisor("replay", "KTH-SP2", "--policy", "plan2:N=5", "--policy", "easy:FCFS",
                   "--json")                    # 440 evaluations a plan: seconds, not minutes
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["policies"]["plan2:N=5"]["label"] == "PLAN2 N=5"
    bad = advisor("replay", "KTH-SP2", "--policy", "easy:FCFS + plan2")
    assert bad.returncode == 2 and "replaces the backfill family" in bad.stderr


def test_classes_on_sdsc_blue_and_none_on_kth():
    """Frachtenberg et al.'s classes as a job-level heuristic: SDSC-BLUE gives field 6 for most
    jobs; KTH-SP2 gives it for none, and the command says so (exit 2) instead of guessing."""
    done = advisor("classes", "SDSC-BLUE", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["known"] / doc["jobs"] > 0.9
    assert [c["class"] for c in doc["classes"]] == ["busy", "mixed", "idle"]
    assert sum(c["jobs"] for c in doc["classes"]) == doc["known"]
    assert "heuristic" in doc["heuristic"]
    kth = advisor("classes", "KTH-SP2")
    assert kth.returncode == 2 and "field 6" in kth.stderr and not kth.stdout


def test_coscheduling_scenarios_against_the_tables():
    done = advisor("coscheduling", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert len(doc["values"]) == 72 and len(doc["orders"]) == 8
    text = advisor("coscheduling").stdout
    assert "complementing" in text and "FCS" in text


def test_timeshare_what_if_json():
    done = advisor("timeshare", "SDSC-BLUE", "--since", "2001-03-01", "--until",
                   "2001-03-15", "--share", "0.5", "--mpl", "4", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["setting"]["mpl"] == 4 and doc["hindsight"] is False
    assert sum(doc["partition_cpus"].values()) == 1152
    assert {(m["group"], m["layout"]) for m in doc["metrics"]} == {
        (g, lay) for g in ("all jobs", "time-sliced", "space-shared")
        for lay in ("baseline", "split")}
    bad = advisor("timeshare", "SDSC-BLUE", "--share", "1.5")
    assert bad.returncode == 2 and "share" in bad.stderr and not bad.stdout


def test_fd2_is_muted_for_the_block_only():
    """What C code writes to file descriptor 2 (Ray's core, on an interrupted run's
    shutdown) is dropped inside ``_fd2_muted(True)``, and fd 2 is whole again after it."""
    script = ("import os\nfrom advisor.cli_common import _fd2_muted\n"
              "with _fd2_muted(True):\n    os.write(2, b'dropped\\n')\n"
              "with _fd2_muted(False):\n    os.write(2, b'kept\\n')\n"
              "os.write(2, b'after\\n')\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0 and run.stderr.split() == ["kept", "after"], run.stderr
