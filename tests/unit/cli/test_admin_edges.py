"""What a new Slurm administrator meets first (issue 18): bad input is one line and a
documented exit code, outputs are checked before any simulation, a --write folder holds one
recommended set in modes Slurm can read, tables read at 80 columns, names cannot drive the
terminal or forge SWF lines, defaults come from configuration files."""
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from rich.console import Console

import advisor.engine.cache as engine_cache
import advisor.plugins.warmup as warmup
from advisor.adapters import config as config_files
from advisor.adapters.files import atomic_write
from advisor.adapters.slurm_cli import workload_from_sacct
from advisor.adapters.store import Store
from advisor.adapters.swf import format_swf, parse_header, read_swf
from advisor.cli import main
from advisor.views.advice import recommendation_view
from tests.helpers import ROOT_DIR, one_line_error

ROOT = ROOT_DIR
KTH = "swf:KTH-SP2@150d"


def run(*args, env=None, **kw):
    """The CLI as a user runs it: a process, stdout and stderr apart."""
    return subprocess.run([sys.executable, "-m", "advisor.cli", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, **kw)




def _one_line_error(done, code, text):
    one_line_error(done, code, "advisor: error: ", text)


# 1 and 9: an empty trace, a moment outside the trace
@pytest.mark.parametrize("content", ["", "; MaxProcs: 10\n"])
@pytest.mark.parametrize("procs", [["--procs", "10"], []])
def test_empty_trace_is_bad_input(tmp_path, content, procs):
    trace = tmp_path / "empty.swf"
    trace.write_text(content)
    _one_line_error(run("replay", str(trace), *procs), 2, "holds no jobs")


def test_moment_past_the_trace_is_bad_input():
    done = run("recommend", "--from", "swf:KTH-SP2@5000d", "--no-store")
    _one_line_error(done, 2, "the moment 2010-06-02 14:00:31 Europe/Stockholm (5000.0d) is "
                    "after its last job")
    assert done.stdout == ""


def test_moment_before_the_trace_names_its_date():
    """A date before the trace's first job is named as given, not as a negative offset."""
    done = run("recommend", "--from", "swf:KTH-SP2@1990-01-01", "--no-store")
    _one_line_error(done, 2, "the moment 1990-01-01 00:00:00 Europe/Stockholm (-2457.5d) is "
                    "before the trace's first job: its jobs arrive from 1996-09-30")


# 3 and 4: outputs checked before any simulation; the run shown and kept when --write fails
def test_write_to_a_file_or_a_read_only_folder_fails_at_once(home):
    (home / "f").touch()
    store = home / "runs.sqlite"
    done = run("recommend", "--from", KTH, "--write", str(home / "f"), "--store", str(store))
    _one_line_error(done, 3, "it is a file, not a folder")
    assert "compiling" not in done.stderr and not store.exists()     # no work was done
    (home / "d").mkdir()
    (home / "d" / "site.conf").write_text("")
    done = run("recommend", "--from", KTH, "--write", str(home / "d"), "--no-store")
    _one_line_error(done, 3, "holds files the advisor did not write (site.conf)")

    ro = home / "ro"
    ro.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(ro)]).returncode == 0
    if not mounted:
        if os.geteuid() == 0:
            pytest.skip("cannot mount a read-only tmpfs here (root ignores modes)")
        ro.chmod(0o555)
    try:
        done = run("recommend", "--from", KTH, "--write", str(ro / "new"), "--no-store")
        _one_line_error(done, 3, "takes no new files")
    finally:
        if mounted:
            subprocess.run(["umount", str(ro)], check=True)


def test_a_failed_write_still_shows_and_records_the_run(home, monkeypatch, capsys):
    import advisor.adapters.files

    def full(*args, **kw):
        raise advisor.adapters.files.SourceUnavailable("cannot write change/: No space left on "
                                                       "device")

    monkeypatch.setattr(advisor.adapters.files, "replace_folder", full)
    store = home / "runs.sqlite"
    code = main(["recommend", "--from", KTH, "--samples", "2", "--executor", "serial",
                 "--candidate", "easy:SPF:SPF:T=1d", "--min-gain", "0", "--min-wins", "0",
                 "--risk", "100",
                 "--write", str(home / "change"), "--store", str(store), "--json"])
    out, err = capsys.readouterr()
    assert code == 3 and "No space left on device" in err
    doc = json.loads(out)
    assert doc["change"] and doc["written"] == {
        "error": "cannot write change/: No space left on device"}
    kept = Store(store)
    assert kept.last_doc()["written"] == doc["written"]
    kept.close()


# 5 and 6: one recommended set per folder, in Slurm's modes
def test_write_folder_holds_exactly_one_set_with_slurm_modes(home, capsys):
    folder = home / "change"
    common = ["recommend", "--from", KTH, "--samples", "2", "--executor", "serial",
              "--min-gain", "0", "--min-wins", "0", "--risk", "100", "--no-store",
              "--write", str(folder)]
    assert main([*common, "--candidate", "easy:SPF:SPF:T=1d"]) == 10
    assert sorted(p.name for p in folder.iterdir()) == ["advisor.conf", "commands.sh",
                                                        "job_submit.lua"]
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert modes == {"advisor.conf": 0o644, "commands.sh": 0o755, "job_submit.lua": 0o644}
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755
    # depth-2 EASY-FCFS gains a little at this moment, and needs no job_submit.lua
    assert main([*common, "--candidate", "depth:FCFS:FCFS:k=2"]) == 10
    assert sorted(p.name for p in folder.iterdir()) == ["advisor.conf", "commands.sh"]
    assert "bf_job_part_count_reserve=2" in (folder / "advisor.conf").read_text()
    assert not [p for p in home.iterdir() if p.name.startswith(".change.")]   # no debris
    capsys.readouterr()


def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "slurm.conf"
    atomic_write(path, "a\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o640)
    atomic_write(path, "b\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and path.read_text() == "b\n"


# 2: the decision columns at 80 columns
def test_candidates_table_keeps_its_decision_columns_at_80_columns(home, capsys):
    assert main(["recommend", "--from", KTH, "--samples", "2", "--executor", "serial",
                 "--no-store", "--json"]) in (0, 10)
    doc = json.loads(capsys.readouterr().out)
    console = Console(width=80, record=True, color_system=None)
    console.print(recommendation_view(doc))
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    header = next(line for line in text.splitlines() if " gain " in line)
    for column in ("candidate", "bsld", "gain", "wins", "avg", "p95", "max", "push", "risk"):
        assert re.search(rf"\b{column}\b", header), (column, header)
    assert "…" not in text
    for column in ("past",):
        assert re.search(rf"\b{column}\b", header), (column, header)
    sampled = [r for r in doc["candidates"][1:] if r["sampled"]]
    for row in sorted(sampled, key=lambda r: -r["gain"])[:3]:
        line = next(ln for ln in text.splitlines() if f"{row['gain']:+.1%}" in ln)
        assert f"{round(row['wins'] * row['samples'])}/{row['samples']}" in line and \
            line.rstrip().endswith(
            ("ok", "max", "p95", "push", "fair", "past")), line


def test_the_other_views_read_at_80_columns(home, capsys):
    """The snapshot, a replay, the policies and the past runs: nothing cut, nothing wider."""
    from advisor.plugins.spec import parse_policy
    from advisor.studies.replay import replay
    from advisor.views.advice import history_view
    from advisor.views.report import policies_table, replay_table, snapshot_view
    from advisor.whatif.snapshot import trace_snapshot
    from advisor.adapters.swf import resolve_trace
    from advisor.engine import EngineConfig, Estimates
    workload = read_swf(resolve_trace("KTH-SP2"))
    policies = [parse_policy(s) for s in ("easy:FCFS:FCFS", "easy:SPF:SPF:T=20h")]
    store = home / "runs.sqlite"
    main(["recommend", "--from", KTH, "--samples", "2", "--executor", "serial", "--store",
          str(store), "--json"])
    capsys.readouterr()
    kept = Store(store)
    runs = kept.runs(5)
    kept.close()
    views = [snapshot_view(trace_snapshot(workload, policies[0], 150 * 86400)),
             replay_table(workload, replay(workload, policies, Estimates(), EngineConfig())),
             policies_table(), history_view(runs)]
    for view in views:
        console = Console(width=80, record=True, color_system=None)
        console.print(view)
        text = console.export_text()
        assert "…" not in text, text
        assert max(len(line) for line in text.splitlines()) <= 80


# 10: names and header values cannot forge SWF lines or drive the terminal
NAMES = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(users=st.lists(NAMES, min_size=1, max_size=4), part=NAMES)
def test_sacct_names_never_forge_header_lines(users, part):
    records = [{"job_id": i + 1, "submit": 100 + i, "start": 200 + i, "end": 300 + i,
                "alloc_cpus": 1, "req_cpus": 1, "limit": 600, "state": "COMPLETED",
                "user": u, "group": "g", "partition": part} for i, u in enumerate(users)]
    text = format_swf(workload_from_sacct(records, procs=4))
    lines = text.splitlines()
    header = [ln for ln in lines if ln.startswith(";")]
    assert len(header) == 3 + len(set(users)) + 1 + 1           # start, procs, note, legend
    assert len(lines) == len(header) + len(users)
    for line in header:
        assert all(c.isprintable() for c in line), repr(line)
    notes = parse_header(header).notes
    assert sum(n.startswith("user ") for n in notes) == len(set(users))


def test_a_control_character_in_a_trace_header_never_reaches_the_terminal(tmp_path):
    trace = tmp_path / "evil.swf"
    trace.write_text("; Computer: evil\x1b[2J\x1b]0;owned\x07 machine\n; MaxProcs: 4\n"
                     "1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 1 -1 -1\n")
    assert read_swf(trace).machine.name == "evil\\x1b[2J\\x1b]0;owned\\x07 machine"
    done = run("snapshot", "--from", f"swf:{trace}@0")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\\x1b[2J" in done.stdout


# 12: the compile notice, on stderr whatever stderr is
def test_cold_cache_says_it_compiles_and_how_long(home, monkeypatch, capsys):
    monkeypatch.setattr(engine_cache, "engine_compiled", lambda kernels=(): False)
    assert main(["recommend", "--from", KTH, "--samples", "2", "--executor", "serial",
                 "--no-store", "--json"]) in (0, 10)
    err = capsys.readouterr().err
    assert "compiling the simulator once" in err
    assert re.search(r"simulator compiled in \d+ s", err), err


def test_a_run_compiles_only_the_kernels_it_plays(tmp_path):
    """A replay of textbook policies compiles the textbook engine, not the slurm mode's
    kernel, and says only that much is compiled."""
    probe = [sys.executable, "-c",
             "from advisor.plugins.warmup import compile_all, compiled\n"
             "compile_all(('textbook',), [])\n"
             "print(compiled(('textbook',), []), compiled(('slurm',), []), compiled())"]
    done = subprocess.run(probe, capture_output=True, text=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.stdout.split() == ["True", "False", "False"], done.stderr
    assert not list(tmp_path.rglob("*slurm_core*"))


def test_compiled_is_said_by_compile_all_for_these_sources(tmp_path):
    """An empty numba cache is not compiled; the cache the test session uses is once
    compile_all has run; touching a source (numba then compiles again) unsays it."""
    probe = [sys.executable, "-c",
             "import advisor.engine.cache as c; print(c.engine_compiled())"]
    empty = subprocess.run(probe, capture_output=True, text=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert empty.stdout.strip() == "False", empty.stderr
    warmup.compile_all()
    assert engine_cache.engine_compiled() and warmup.compiled()   # the families' too
    sources = tmp_path / "sources"
    sources.mkdir()
    (sources / "core.py").write_text("x = 1\n")
    key = engine_cache.sources_key("f", sources)
    engine_cache.mark_compiled(tmp_path, key)
    assert engine_cache.compiled(tmp_path, key)
    os.utime(sources / "core.py", ns=(0, 0))
    assert not engine_cache.compiled(tmp_path, engine_cache.sources_key("f", sources))


# 13: version, help, the README's own examples
def test_version_and_help_say_what_things_are():
    done = run("--version")
    assert done.returncode == 0 and re.match(r"advisor \(slurm-policy-advisor\) \d", done.stdout)
    for command in ("replay", "tune", "snapshot", "recommend", "report", "history",
                    "policies", "bench"):
        text = run(command, "--help").stdout
        assert f"example: advisor {command}" in text, command
        assert not re.search(r"seed 00\d", text, re.I), (command, text)


def test_readme_commands_need_only_the_readme_install():
    """The README installs .[plot,ray]: none of its examples may need another extra."""
    readme = (ROOT / "README.md").read_text()
    assert ".[plot,ray]" in readme
    assert ".parquet" not in readme


def test_tune_table_says_how_many_policies_it_shows():
    done = run("tune", "KTH-SP2", "--weeks", "4", "--workers", "1")
    assert done.returncode == 0, done.stderr
    assert re.search(r"the best 10 of \d+ policies", " ".join(done.stdout.split()))


# configuration files: site, then user, then options
def test_configuration_files_give_defaults_that_options_override(home, capsys):
    (home / "etc").mkdir()
    config_files.SYSTEM_CONFIG.write_text('objective = "avg_wait"\nrisk = 1.2\n'
                                          'executor = "serial"\n')
    user = home / "config" / "slurm-policy-advisor"
    user.mkdir(parents=True)
    (user / "advisor.toml").write_text("risk = 1.3\n")
    base = ["recommend", "--from", KTH, "--samples", "2", "--no-store", "--json"]
    main(base)
    settings_ = json.loads(capsys.readouterr().out)["settings"]
    assert (settings_["objective"], settings_["risk"]) == ("avg_wait", 1.3)
    main([*base, "--risk", "1.4"])
    assert json.loads(capsys.readouterr().out)["settings"]["risk"] == 1.4
    # a site's reference: the limits against it, floored by its replay of the history
    (user / "advisor.toml").write_text('reference = "easy:FCFS:FCFS"\n')
    main(base)
    doc = json.loads(capsys.readouterr().out)
    assert doc["settings"]["reference"] == "easy:FCFS:FCFS" and doc["reference_tails"]
    main([*base, "--no-history-floor"])
    assert json.loads(capsys.readouterr().out)["reference_tails"] is None
    (user / "advisor.toml").write_text("risky = 2\n")
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "unknown key 'risky'" in err and str(user / "advisor.toml") in err
    # a flag's key takes true or false, nothing else
    (user / "advisor.toml").write_text("replace_site_policy = true\n")
    main(base)
    assert json.loads(capsys.readouterr().out)["settings"]["replace_site_policy"] is True
    (user / "advisor.toml").write_text('replace_site_policy = "yes"\n')
    assert main(base) == 2
    assert "replace_site_policy = 'yes': give true or false" in capsys.readouterr().err


# 14: the report plot explains its colours and draws one cluster's runs
def test_report_plot_names_the_limits_broken_and_keeps_to_one_source(home, capsys):
    pytest.importorskip("matplotlib")
    from advisor.views.plots import report_figure
    store = home / "runs.sqlite"
    for source in (KTH, "swf:SDSC-SP2@100d", "swf:KTH-SP2@100d"):
        main(["recommend", "--from", source, "--samples", "2", "--executor", "serial",
              "--store", str(store), "--json"])
    capsys.readouterr()
    kept = Store(store)
    last, docs = kept.last_doc(), kept.docs()
    kept.close()
    last["candidates"][1].update(safe=False, over=["p95_wait", "tail_push"])
    fig = report_figure(last, docs)
    cand, hist = fig.axes
    legend = [t.get_text() for t in cand.get_legend().get_texts()]
    assert "over the p95 wait limit" in legend and any("p95 wait limit:" in t for t in legend)
    assert any("MaxWait limit" in t for t in legend) and "the configuration in effect" in legend
    assert len(hist.lines[0].get_xdata()) == 2                    # KTH-SP2's runs only
    assert "KTH-SP2" in hist.get_title() and "SDSC" not in hist.get_title()


# systemd units beside the cron example
def test_systemd_units_parse(tmp_path):
    analyze = subprocess.run(["which", "systemd-analyze"], capture_output=True, text=True)
    if analyze.returncode:
        pytest.skip("systemd-analyze is not installed (Debian package systemd)")
    units = ROOT / "examples" / "systemd"
    advisor_bin = Path(sys.executable).parent / "advisor"
    for unit in units.iterdir():
        text = unit.read_text().replace("/opt/slurm-policy-advisor/.venv/bin/advisor",
                                        str(advisor_bin))
        (tmp_path / unit.name).write_text(text)
    done = subprocess.run(["systemd-analyze", "verify", *map(str, sorted(tmp_path.iterdir()))],
                          capture_output=True, text=True)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_session_cleanup_kills_its_own_processes_and_no_other_runs(tmp_path):
    """A Ray process is found by the folder it names (or holds open), as a whole path: the
    cleanup of pid 12's folder leaves pid 123's processes running."""
    import time

    from advisor.whatif import ray_session
    (tmp_path / "123").mkdir()
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    other = subprocess.Popen([*sleep, f"--temp-dir={tmp_path}/123/session_x"])
    mine = subprocess.Popen([*sleep, str(tmp_path / "12")])
    try:
        time.sleep(0.3)
        ray_session.remove_session(tmp_path / "12")
        assert mine.wait(timeout=10) == -9
        time.sleep(0.3)
        assert other.poll() is None
        ray_session.remove_session(tmp_path / "123")
        assert other.wait(timeout=10) == -9 and not (tmp_path / "123").exists()
    finally:
        for proc in (mine, other):
            proc.kill()


def test_the_store_gives_the_last_change_for_the_minimum_dwell(home):
    """The dwell counts from the snapshot time of the last run that recommended a change
    on the same source; runs that kept the configuration do not restart it."""
    from advisor.adapters.store import Store
    store = Store(home / "runs.sqlite")
    assert store.last_change("slurm") is None
    chosen = {"spec": "easy:SPF:T=1d", "label": "EASY-SPF-SPF T=1d"}
    store.record({"snapshot_time": 1000, "change": True, "chosen": chosen}, "slurm", 10)
    store.record({"snapshot_time": 2000, "change": False, "chosen": chosen}, "slurm", 0)
    store.record({"snapshot_time": 3000, "change": True, "chosen": chosen}, "swf:X@1d", 10)
    assert store.last_change("slurm") == ("easy:SPF:T=1d", 1000)
    assert store.last_change() == ("easy:SPF:T=1d", 3000)
    store.close()
