"""One way in for a command: the built-in commands and a family's are entries of one
registry (the entry-point group ``advisor.commands``), and a package that registers one
there adds it to ``advisor``, its help and its configuration files, with nothing else
edited."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from advisor.cli_plugins import commands

HELLO = '''
from advisor.cli_plugins import EXIT_OK, Command, count, emit_json


def _arguments(p):
    p.add_argument("--times", type=count(1), default=1, help="how many greetings")
    p.add_argument("--json", action="store_true", help="print one JSON document")


def _run(args, out):
    if args.json:
        emit_json({"hello": args.times})
    else:
        out.print("hello " * args.times)
    return EXIT_OK


HELLO = Command("hello", "greet the admin", "advisor hello --times 2", _arguments, _run)
'''


def site_package(root: Path, entry: str) -> Path:
    """A package installed as pip would (its module and its dist-info), registering
    ``entry`` in the group."""
    (root / "hello_command.py").write_text(HELLO)
    info = root / "hello_command-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hello-command\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(f"[advisor.commands]\n{entry}\n")
    return root


def advisor(site: Path, *args):
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, env=env)


def test_the_built_in_commands_and_the_families_come_through_one_registry():
    names = [c.name for c in commands()]
    assert names == sorted(names)
    assert {"replay", "snapshot", "recommend", "report", "history", "check", "forecast",
            "policies", "compile", "bench", "tune", "plans", "queues", "classes", "coscheduling",
            "timeshare"} == set(names)


def test_a_package_adds_a_command_through_the_registry_alone(tmp_path):
    site = site_package(tmp_path, "hello = hello_command:HELLO")
    done = advisor(site, "hello", "--times", "2", "--json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().replace(" ", "").replace("\n", "") == '{"hello":2}'
    helped = advisor(site, "--help")
    assert "hello" in helped.stdout and "greet the admin" in helped.stdout
    assert "advisor hello --times 2" in advisor(site, "hello", "--help").stdout
    # its options are checked as any command's are
    bad = advisor(site, "hello", "--times", "0")
    assert bad.returncode == 2 and "--times" in bad.stderr


def test_a_command_taking_a_built_in_name_is_refused_naming_its_package(tmp_path):
    site = site_package(tmp_path, "replay = hello_command:HELLO")
    done = advisor(site, "--help")
    assert done.returncode == 2 and not done.stdout
    line = done.stderr.strip().splitlines()[-1]
    assert "'replay'" in line and "hello-command" in line
    assert textwrap.shorten(line, 400) == line     # one line
