"""``advisor check`` as a user runs it: a real process on the bundled CEA-Curie excerpt (a
Slurm-run site's log, with its starts) and the example site's slurm.conf files; the live
path on what the test cluster's commands printed (tests/fixtures/sitecheck-22.05); and
the errors bad input gets."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from advisor import cli, cli_common
from tests.helpers import ROOT_DIR, one_line_error
from tests.unit.whatif.test_sitecheck import SITECHECKS, Recorded
from tests.unit.whatif.test_sitecheck import utc as utc  # the fixture, by its name

CURIE = ROOT_DIR / "examples" / "curie"
#: six hours of the excerpt: a quiet Sunday night's jobs
WINDOW = ("--since", "2012-04-22T00:00", "--until", "2012-04-22T06:00")


def advisor(*args, env=None):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, env=env)


def test_a_slurm_run_trace_is_checked_against_its_logged_starts(tmp_path):
    out = tmp_path / "jobs.csv"
    done = advisor("check", "CEA-Curie", "--conf", str(CURIE / "fairshare.conf"), *WINDOW,
                   "--span", "3h", "--json", "--jobs-out", str(out))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["tolerance_s"] == 30 and doc["zone"] == "Europe/Paris"
    assert len(doc["windows"]) == 2 and doc["windows"][0][1] - doc["windows"][0][0] == 10800
    assert doc["jobs"] > 50 and 0.0 < doc["within"] <= doc["within_minute"] <= 1.0
    assert set(doc["partitions"]) <= {"standard", "large", "hybrid", "BCS", "TestIB"}
    assert sum(p["jobs"] for p in doc["partitions"].values()) == doc["jobs"]
    assert len(doc["furthest"]) == 10
    assert any("equal shares" in f for f in doc["findings"])
    table = pd.read_csv(out)
    assert len(table) == doc["jobs"]
    assert ((table["sim"] - table["real"]).abs() <= 30).mean() == pytest.approx(doc["within"])


def test_the_report_reads_at_80_columns():
    done = advisor("check", "CEA-Curie", "--conf", str(CURIE / "fcfs.conf"), *WINDOW,
                   env={**os.environ, "COLUMNS": "80"})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "Site check of" in lines[0]
    assert any("started within 30 s of their real start" in line for line in lines)
    assert any(line.startswith("The jobs furthest off") for line in lines)


@pytest.mark.parametrize("args, code, words", [
    (["check", "CEA-Curie"], 2, ("give its slurm.conf with --conf",)),
    (["check", "LLNL-Atlas", "--conf", str(CURIE / "fcfs.conf")], 2,
     ("logs no start time",)),
    (["check", "CEA-Curie", "--conf", str(CURIE / "none.conf")], 3, ("none.conf",)),
    (["check", "CEA-Curie", "--conf", str(CURIE / "fcfs.conf"), "--since", "2012-04-22",
      "--until", "2012-04-21"], 2, ("--until must come after --since",)),
    (["check", "CEA-Curie", "--conf", str(CURIE / "fcfs.conf"), "--jobs-out",
      "/nonexistent/dir/jobs.csv"], 3, ("/nonexistent/dir",)),
])
def test_bad_input_is_one_line_and_its_code(args, code, words):
    one_line_error(advisor(*args), code, *words)


def test_a_bad_slurm_conf_names_its_line(tmp_path):
    bad = tmp_path / "slurm.conf"
    bad.write_text("NodeName=n1 CPUs=8\nPartitionName=p Nodes=n9\n")
    one_line_error(advisor("check", "CEA-Curie", "--conf", str(bad)), 2,
                   "line 2", "node n9")


def test_the_live_check_reads_the_cluster_s_accounting(monkeypatch, capsys, utc):
    """The live path, end to end in one process, on what 22.05 printed."""
    window = json.loads((SITECHECKS["22.05"] / "window.json").read_text())
    monkeypatch.setattr(cli_common, "_commands",
                        lambda args: Recorded(here=SITECHECKS["22.05"]))

    def local(t):
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    code = cli.main(["check", "--since", local(window["since"]), "--until",
                     local(window["until"]), "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source"] == "cluster lab (sacct)" and doc["tolerance_s"] == 2
    assert doc["jobs"] >= 4 and any("were held" in f for f in doc["findings"])
