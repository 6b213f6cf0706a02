"""Every bad value a clear error: one line, the documented exit code, no traceback, nothing
written; checked when the line is parsed, before any work. Dates that do not exist, numbers
out of range, names the advisor printed given back to it, unknown names answered with the
nearest, configuration files whose errors name the file and the key (and break only the
commands that read them), a truncated gzip, an interrupt while the advisor imports."""
from __future__ import annotations

import gzip
import os
import subprocess
import sys

import pytest

from advisor.adapters import config as config_files
from advisor.adapters.swf import resolve_trace
from advisor.cli import main
from tests.helpers import ROOT_DIR
from tests.helpers import one_line_error as one_line

KTH = "swf:KTH-SP2@150d"


def run(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, cwd=cwd)




# -- dates: every command that takes a moment --------------------------------------------------
@pytest.mark.parametrize("args", [
    ["replay", "--since", "1996-13-01"],
    ["replay", "--until", "1996-02-30"],
    ["replay", "--since", "1996-02-03T25:00"],
    ["plans", "--since", "1996-02-30"],
    ["timeshare", "SDSC-BLUE", "--until", "2001-02-29"],
    ["queues", "--since", "1996-13-01"],
    ["tune", "--until", "1996-11-31"],
    ["classes", "--since", "1996-00-10"],
    ["history", "--since", "2026-13-01", "--out", "x.swf"],
    ["history", "--until", "2026-02-30", "--out", "x.swf"],
])
def test_impossible_dates_are_one_line_with_the_expected_form(args):
    line = one_line(run(*args), 2, "e.g. 2026-11-01")
    assert "not a date that exists" in line


@pytest.mark.parametrize("command", ["snapshot", "recommend"])
def test_an_impossible_moment_in_a_source_is_bad_input(command, home):
    one_line(run(command, "--from", "swf:KTH-SP2@1996-02-30T10:00", "--no-store"
                 if command == "recommend" else "--json"), 2, "1996-02-30T10:00",
             "not a date that exists")


def test_until_before_since_is_refused():
    one_line(run("replay", "--since", "20d", "--until", "10d"), 2, "--until 10d", "after")


# -- numbers out of range, at parse time ------------------------------------------------------
@pytest.mark.parametrize("args, option", [
    (["recommend", "--from", KTH, "--workers", "0"], "--workers"),
    (["tune", "--workers", "0"], "--workers"),
    (["queues", "--trigger", "-1"], "--trigger"),
    (["queues", "--weeks-ahead", "0"], "--weeks-ahead"),
    (["queues", "--parts", "0"], "--parts"),
    (["queues", "--parts", "9"], "--parts"),
    (["report", "--last", "-1"], "--last"),
    (["snapshot", "--top", "-1"], "--top"),
    (["replay", "--load", "0"], "--load"),
    (["recommend", "--samples", "-1"], "--samples"),
    (["recommend", "--min-wins", "1.5"], "--min-wins"),
    (["recommend", "--risk", "0.5"], "--risk"),
    (["timeshare", "--share", "0"], "--share"),
    (["timeshare", "--mpl", "1"], "--mpl"),
    (["classes", "--busy", "2"], "--busy"),
    (["bench", "--repeat", "0"], "--repeat"),
    (["replay", "--seed", "-1"], "--seed"),
])
def test_numbers_out_of_range_are_refused_when_parsed(args, option):
    one_line(run(*args), 2, f"argument {option}:", "out of range")


@pytest.mark.parametrize("value", ["0", "59", "59s"])
def test_a_threshold_under_a_minute_is_refused(value):
    one_line(run("tune", "--threshold", value), 2, "argument --threshold:", "at least 60 s")


def test_a_store_named_for_report_must_exist(tmp_path):
    typo = tmp_path / "typo.sqlite"
    one_line(run("report", "--store", str(typo)), 3, str(typo), "--store")
    assert not typo.exists()


def test_an_output_name_must_say_its_format(tmp_path):
    one_line(run("replay", "--jobs-out", str(tmp_path / "x.xlsx")), 2, "x.xlsx", ".csv")
    assert not (tmp_path / "x.xlsx").exists()


def test_replay_without_a_policy_says_it_plays_the_default_four():
    done = run("replay", "KTH-SP2", "--until", "12d")
    assert done.returncode == 0, done.stderr
    assert "no --policy given, so the default four" in " ".join(done.stdout.split())


# -- the names the advisor prints, and unknown names ------------------------------------------
@pytest.mark.parametrize("label", ["EASY-SPF-SPF", "EASY-SPF-SPF T=1d", "DEPTH-SPF-SPF k=4",
                                   "PLAN2", "PLAN2 N=5", "CONSERVATIVE-FCFS"])
def test_printed_labels_are_accepted_as_policies(label):
    done = run("replay", "KTH-SP2", "--until", "12d", "--policy", label, "--json")
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("spec, hint", [
    ("plan9", "plan1"), ("esay:SPF", "did you mean easy"), ("easy:SFP", "spf"),
    ("easy:SPF:Q=3", "qos"), ("timeshare/gang:route=idel", "did you mean idle"),
])
def test_unknown_names_are_answered_with_the_nearest(spec, hint):
    one_line(run("replay", "KTH-SP2", "--policy", spec), 2, hint)


def test_unknown_commands_and_choices_are_answered_with_the_nearest():
    one_line(run("recomend"), 2, "did you mean recommend")
    one_line(run("recommend", "--objective", "avg_wiat"), 2, "did you mean avg_wait")


@pytest.mark.parametrize("spec", ["easy:SPF:SPF:T=20h:T=4h", "EASY-SPF-SPF T=1d T=2d",
                                  "plan2:N=5:N=6"])
def test_a_parameter_given_twice_is_refused(spec):
    one_line(run("replay", "KTH-SP2", "--policy", spec), 2, "twice")


def test_the_old_route_names_still_parse_to_the_new_ones():
    from advisor.plugins.spec import parse_policy
    old, new = parse_policy("timeshare/gang:route=DC,F"), parse_policy(
        "timeshare/gang:route=idle,mixed")
    assert old == new and "route=idle,mixed" in old.label


# -- configuration files ----------------------------------------------------------------------
@pytest.mark.parametrize("line, key", [
    ("risk = -3.0", "risk"), ('objective = "avg_wiat"', "objective"),
    ('reference = "easy:SFP"', "reference"), ('executor = "gpu"', "executor"),
    ("slurm_timeout = 0", "slurm_timeout"), ("risk = true", "risk"),
])
def test_configuration_errors_name_the_file_and_the_key(home, capsys, line, key):
    user = home / "config" / "slurm-policy-advisor" / "advisor.toml"
    user.parent.mkdir(parents=True)
    user.write_text(line + "\n")
    assert main(["recommend", "--from", KTH, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(user) in err and f"{key} = " in err, err
    # ... and do not break a command that does not read that key
    assert main(["policies", "--json"]) == 0
    capsys.readouterr()


def test_an_option_given_overrides_a_bad_file_value(home, capsys):
    (home / "etc").mkdir()
    config_files.SYSTEM_CONFIG.write_text('objective = "avg_wiat"\n')
    code = main(["recommend", "--from", KTH, "--objective", "avg_wait", "--samples", "1",
                 "--executor", "serial", "--no-store", "--candidate", "easy:SPF:SPF:T=1d",
                 "--json"])
    assert code in (0, 10), capsys.readouterr().err


def test_a_broken_file_breaks_only_the_commands_that_read_it(home, capsys):
    (home / "etc").mkdir()
    config_files.SYSTEM_CONFIG.write_text("objective = [\n")
    assert main(["policies", "--json"]) == 0
    capsys.readouterr()
    assert main(["recommend", "--from", KTH, "--no-store"]) == 2
    err = capsys.readouterr().err
    assert str(config_files.SYSTEM_CONFIG) in err and "not valid TOML" in err


# -- traces -----------------------------------------------------------------------------------
def test_a_truncated_gzip_is_bad_input(tmp_path):
    whole = resolve_trace("KTH-SP2").read_bytes()
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(whole[:len(whole) // 3])
    with pytest.raises(EOFError):
        gzip.decompress(cut.read_bytes())
    one_line(run("replay", str(cut)), 2, str(cut), "truncated")


# -- an interrupt while the first modules are imported ----------------------------------------
INTERRUPT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
"""


@pytest.mark.parametrize("module", ["rich", "numba", "pandas"])
def test_an_interrupt_during_the_imports_is_one_line_and_130(tmp_path, module):
    """Ctrl-C while a heavy module is imported (the first second of a run): the import is
    made to raise KeyboardInterrupt, as SIGINT there does."""
    (tmp_path / "sitecustomize.py").write_text(INTERRUPT.format(module=module))
    done = run("replay", "KTH-SP2", env={"PYTHONPATH": os.pathsep.join(
        [str(tmp_path), str(ROOT_DIR)])})
    assert done.returncode == 130, done.stderr
    assert done.stderr == "advisor: interrupted\n"


# -- fair share on traces ---------------------------------------------------------------------
@pytest.mark.parametrize("args, code, says", [
    (["replay", "KTH-SP2", "--fair-share"], 2, "--online EVERY"),
    (["replay", "KTH-SP2", "--online", "1d", "--shares", "x"], 2, "add --fair-share"),
    (["recommend", "--from", "slurm", "--fair-share", "--no-store"], 2,
     "--from swf:TRACE@TIME"),
    (["snapshot", "--from", KTH, "--fair-share", "--shares", "/nonexistent/shares"], 3,
     "cannot read /nonexistent/shares"),
])
def test_fair_share_on_a_trace_is_refused_where_it_cannot_be_played(args, code, says):
    one_line(run(*args), code, says)


def test_a_bad_shares_file_is_refused_before_the_trace_is_read(tmp_path):
    shares = tmp_path / "shares"
    shares.write_text("12 four\n")
    one_line(run("snapshot", "--from", "swf:/nonexistent.swf@1d", "--fair-share",
                 "--shares", str(shares)), 2, f"{shares}:1:", "GROUP SHARES")
