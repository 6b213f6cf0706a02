"""Output in an admin's words: what the advisor prints can be given back to it; help and
output name what a thing does, not where it came from; one sign convention for "better";
moments printed in the zone they were read in, with the zone named; a parameter has the
same name, unit and range in a command and in its policy; the package installs under its
own name only."""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from advisor.errors import BadInput
from advisor.plugins.contract import Context
from advisor.plugins.grid import ANY_CLUSTER, default_grid
from advisor.plugins.registry import registry
from advisor.plugins.spec import parse_policy
from tests.helpers import ROOT_DIR

ROOT = ROOT_DIR
COMMANDS = ("replay", "tune", "queues", "plans", "classes", "coscheduling", "timeshare",
            "snapshot", "recommend", "report", "history", "policies", "compile", "bench")


def advisor(*args, **kw):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, **kw)


# -- labels are specs -------------------------------------------------------------------------
def _every_grid_policy():
    from advisor.policies.ordering.study import candidates
    history = pd.DataFrame({"user": "u", "submit": [0, 1, 2, 3], "efficiency": 0.2,
                            "limit": [600, 3600, 36000, 86400]})
    grid = default_grid(Context(ANY_CLUSTER, pending=10, history=history))
    return grid + candidates((20 * 3600,))


def test_every_label_of_the_grid_and_of_tune_parses_back_to_its_policy():
    policies = _every_grid_policy()
    families = {c.plugin.family for p in policies for c in p.choices}
    assert len(policies) > 100 and {"timeshare", "queues", "plan", "threshold"} <= families
    for policy in policies:
        assert parse_policy(policy.label) == policy, policy.label
        assert parse_policy(policy.canonical) == policy, policy.canonical


# -- where a thing came from stays in the docs' references ------------------------------------
def test_no_seed_numbers_anywhere_a_user_or_a_reader_of_the_code_looks():
    found = []
    for path in [ROOT / "README.md", *ROOT.glob("docs/*.md"), *ROOT.glob("advisor/**/*.py"),
                 *ROOT.glob("adapters/*.py"), *ROOT.glob("policies/*.py"),
                 *ROOT.glob("bench/*.py"), *ROOT.glob("examples/**/*")]:
        if path.is_file() and re.search(r"\bseeds? 00\d", path.read_text(errors="replace"),
                                        re.I):
            found.append(str(path.relative_to(ROOT)))
    assert not found, found


@pytest.mark.parametrize("command", COMMANDS)
def test_help_says_what_things_do_not_where_they_came_from(command):
    done = advisor(command, "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for jargon in (r"\bseed 00", r"\bTable \d", r"\bFigs?\. \d", r"§", r"\bpaper setting",
                   r"\b(CS|DC|F)-like", r"\bhonest\b"):
        assert not re.search(jargon, text), (jargon, command)


def test_study_output_names_no_tables_or_figures():
    for args in (["queues", "KTH-SP2", "--trigger", "100", "--until", "8w"],
                 ["plans", "LLNL-Atlas", "--since", "2007-02-01", "--until", "2007-02-08",
                  "--bins", "PLAN2"],
                 ["classes", "SDSC-BLUE", "--until", "30d"],
                 ["coscheduling"]):
        done = advisor(*args)
        assert done.returncode == 0, done.stderr
        text = " ".join(done.stdout.split())
        assert not re.search(r"\bTable \d|\bFigs?\. \d|\bpaper setting|-like\b|\bseed 00",
                             text), (args, text)


def test_better_is_above_zero_everywhere_and_says_so():
    from advisor.views.advice import CANDIDATES_LEGEND
    assert "> 0: better" in CANDIDATES_LEGEND
    done = advisor("replay", "KTH-SP2", "--online", "1d", "--against-static", "--since",
                   "20w", "--until", "21w", "--samples", "1", "--executor", "serial")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert "< 0" not in text and "> 0: the advice better" in text
    plans = advisor("plans", "LLNL-Atlas", "--since", "2007-02-01", "--until", "2007-02-08")
    assert "gain: the mean wait saved against the baseline (> 0: better)" in \
        " ".join(plans.stdout.split())


# -- moments in their zone --------------------------------------------------------------------
def test_a_trace_moment_is_read_and_printed_in_the_trace_zone_with_its_name():
    done = advisor("snapshot", "--from", "swf:KTH-SP2@1996-12-09T13:00")
    assert done.returncode == 0, done.stderr
    assert "1996-12-09 13:00:00 Europe/Stockholm" in done.stdout


def test_a_live_moment_is_printed_in_this_machines_zone_with_its_name():
    from datetime import datetime

    from advisor.units import format_moment
    now = datetime(2026, 11, 1, 12, 30).astimezone()
    assert format_moment(now.timestamp()) == now.strftime("%Y-%m-%d %H:%M:%S ") + \
        now.tzname()


# -- one parameter, one name, unit and range --------------------------------------------------
@pytest.mark.parametrize("option, key, good, bad", [
    ("--share", "share", "0.75", "0.8"), ("--mpl", "mpl", "8", "9"),
    ("--slice", "slice", "5s", "4s"), ("--route", "route", "idle,mixed", "idle,busy"),
])
def test_timeshare_takes_what_timeshare_gang_takes(option, key, good, bad):
    parse_policy(f"timeshare/gang:{key}={good}")
    with pytest.raises(BadInput):
        parse_policy(f"timeshare/gang:{key}={bad}")
    refused = advisor("timeshare", "SDSC-BLUE", "--until", "2d", option, bad)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert option in refused.stderr
    gang = registry().plugin("timeshare", "gang")
    meta = {f.name: f.metadata for f in gang.Params.__dataclass_fields__.values()}
    helped = " ".join(advisor("timeshare", "--help").stdout.split())
    assert f"as timeshare/gang's {key}" in helped and key in meta


def test_queues_parts_and_tune_threshold_take_what_their_policies_take():
    queues = registry().plugin("queues", "runtime").Params.__dataclass_fields__["P"].metadata
    assert (queues["min"], queues["max"]) == (1, 8)
    assert advisor("queues", "--parts", "9").returncode == 2
    threshold = registry().plugin("threshold", "queue").Params.__dataclass_fields__["T"]
    assert threshold.metadata["min"] == 60
    assert advisor("tune", "--threshold", "59s").returncode == 2
    with pytest.raises(BadInput):
        parse_policy("easy:SPF:SPF:T=59s")


# -- packaging --------------------------------------------------------------------------------
def test_the_wheel_installs_advisor_alone(tmp_path):
    """The repository's adapters/ and policies/ install as advisor.adapters and
    advisor.policies: no top-level name another package could hold."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                           str(tmp_path), str(ROOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next(tmp_path.glob("*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"advisor"}, tops
    for folder in ("adapters", "policies"):
        modules = {p.name for p in (ROOT / folder).glob("*.py")}
        assert modules <= {Path(n).name for n in names if n.startswith(f"advisor/{folder}/")}
    assert any(n.startswith("advisor/data/traces/KTH-SP2") for n in names)
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    points = zipfile.ZipFile(wheel).read(entry).decode()
    assert "= advisor.policies.ordering.plugin:FCFS" in points and "= policies." not in points


def test_the_package_says_its_version():
    from importlib.metadata import version

    import advisor as package
    assert package.__version__ == version("slurm-policy-advisor")
    assert advisor("--version").stdout.strip().endswith(package.__version__)


def test_every_option_of_every_command_says_what_it_does():
    import argparse

    from advisor.cli_args import build_parser
    from advisor.cli_plugins import commands
    parser = build_parser(commands())
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    silent = [f"{name} {a.option_strings or a.dest}" for name, command in sub.choices.items()
              for a in command._actions if not a.help]
    assert not silent, silent


def test_a_simulated_schedule_says_what_it_is_in_its_header(tmp_path):
    out = tmp_path / "cons.swf"
    done = advisor("replay", "KTH-SP2", "--policy", "conservative:FCFS", "--swf-out", str(out))
    assert done.returncode == 0, done.stderr
    lines = out.read_text().splitlines()
    header = [line for line in lines if line.startswith(";")]
    jobs = len(lines) - len(header)
    assert f"; MaxRecords: {jobs}" in header and f"; MaxJobs: {jobs}" in header
    assert not any("EASY scheduler" in line or line.startswith("; EndTime") for line in header)
    assert any("simulated schedule under CONSERVATIVE-FCFS" in line for line in header)
