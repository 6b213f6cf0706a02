"""Signals end every run cleanly (issues 18 and 54): a real ``advisor recommend``, with
``--store`` and ``--write``, signalled at random moments on every executor (during the
imports, the trace's replay, Ray's start, the simulations, the writing), exits 130 (SIGINT)
or 143 (SIGTERM) with one line (or, signalled before Python has reached the advisor's
handlers, dies of the signal with nothing written), and leaves no process, no Ray session
folder, no lock held, a store that is whole and a change folder that holds a whole set or
nothing new.

SIGINT goes to the process group, as a terminal's Ctrl-C does (Ray's processes block it,
local workers ignore it); SIGTERM to the advisor alone, as ``kill PID`` and the shipped
unit's KillMode=mixed do. A SIGTERM to the whole group (systemd's default KillMode) also
kills Ray's own processes: that case has a test of its own below. The moments are drawn
with a fixed seed, so a failure names a moment that can be tried again."""
from __future__ import annotations

import fcntl
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

#: a run of a few seconds on every executor (on 2 cores: about 2.5 s serially, 6 s on Ray)
COMMAND = ["recommend", "--from", "swf:KTH-SP2@150d", "--samples", "4"]
#: signalled runs per executor: 30 in all
RUNS = {"serial": 10, "process": 10, "ray": 10}
#: the files a change folder may hold (``whatif.slurmconf.WRITTEN``)
SET = {"advisor.conf", "job_submit.lua", "commands.sh"}
WORDS = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated")}

#: one worker of a parallel run runs every test that starts Ray, one at a time
pytestmark = pytest.mark.xdist_group("ray")


def _start(tmp: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    # a new session, so that a group signal reaches only this run; SIGINT as a terminal
    # leaves it (a background job of a shell would ignore it)
    return subprocess.Popen(
        [sys.executable, "-m", "advisor.cli", *args],
        # (a crash prints every thread's Python stack: a segfault seen once under load,
        # SIGINT at 0.82 s of a 1.8 s process-executor run, did not recur in 120 tries)
        env={**os.environ, "XDG_STATE_HOME": str(tmp / "state"), "PYTHONFAULTHANDLER": "1",
             **(env or {})},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _recommend(tmp: Path, executor: str) -> subprocess.Popen:
    return _start(tmp, *COMMAND, "--executor", executor, "--store", str(tmp / "runs.sqlite"),
                  "--write", str(tmp / "change"))


def _ray_folder(tmp: Path) -> Path:
    return tmp / "state" / "slurm-policy-advisor" / "ray"


def _stat_fields(stat: Path) -> list[str]:
    """A /proc/PID/stat's fields after the command's name (state, ppid, pgrp, ...)."""
    return stat.read_text().rsplit(")", 1)[1].split()


def _live_in_group(pgid: int) -> list[str]:
    """Processes of the run's group that still run (zombies awaiting init do not)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = _stat_fields(stat)
            if int(fields[2]) == pgid and fields[0] != "Z":
                left.append((stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
                            .decode(errors="replace")[:80])
        except (OSError, IndexError):
            continue
    return left


def _gone(pgid: int, timeout: float = 10) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := _live_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


#: the kernel's flag of a process that is ending (``PF_EXITING``, include/linux/sched.h)
PF_EXITING = 0x4


def _ending(pid: int) -> bool:
    """Whether the process has begun its exit (its memory is being unmapped,
    docs/recommend.md "Signals"): a signal sent now is never handled."""
    try:
        flags = int(_stat_fields(Path(f"/proc/{pid}/stat"))[6])
    except (OSError, IndexError):
        return True
    return bool(flags & PF_EXITING)


def _signal_at(proc: subprocess.Popen, delay: float, signum: int) -> bool:
    """Send ``signum`` after ``delay`` s, unless the run ended or is ending before: whether
    it was sent. (waitid with WNOWAIT sees an ended run without reaping it.)"""
    time.sleep(delay)
    if (os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            or _ending(proc.pid)):
        return False
    (os.killpg if signum == signal.SIGINT else os.kill)(proc.pid, signum)
    return True


def _check_left_clean(tmp: Path, proc: subprocess.Popen) -> None:
    """Nothing running, no Ray session, the lock free, the store whole, the change folder
    a whole set, and no half-written file beside it."""
    assert _gone(proc.pid) == []
    ray = _ray_folder(tmp)
    assert not ray.exists() or list(ray.iterdir()) == []
    with open(tmp / "runs.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)      # raises when still held
    if (tmp / "runs.sqlite").exists():
        with sqlite3.connect(tmp / "runs.sqlite") as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    change = tmp / "change"
    if change.exists():
        names = {p.name for p in change.iterdir()}
        assert {"advisor.conf", "commands.sh"} <= names <= SET, names
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("executor", list(RUNS))
def test_signals_at_random_moments_end_every_run_cleanly(tmp_path, executor):
    if executor == "ray":
        pytest.importorskip("ray")
    whole = _recommend(tmp_path, executor)         # unsignalled: how long a run takes
    t0 = time.monotonic()
    assert whole.wait(timeout=600) in (0, 10), whole.stderr.read()
    length = time.monotonic() - t0
    _check_left_clean(tmp_path, whole)
    rng = random.Random(f"issue 54 {executor}")
    signalled = 0
    for n in range(RUNS[executor]):
        signum = rng.choice(list(WORDS))
        delay = rng.uniform(0.05, length)
        proc = _recommend(tmp_path, executor)
        sent = _signal_at(proc, delay, signum)
        code = proc.wait(timeout=180)
        err = proc.stderr.read()
        where = f"run {n}: {signal.Signals(signum).name} at {delay:.2f} s of {length:.1f}"
        if sent:
            signalled += 1
            # before the interpreter has reached the advisor's handlers (a loaded machine
            # once took over 0.06 s), the signal's own default ends it: nothing written,
            # and a shell reports the same 130 or 143
            assert (code, err.strip().splitlines()) in (
                (WORDS[signum][0], [f"advisor: {WORDS[signum][1]}"]), (-signum, [])), \
                (where, err)
        else:
            assert code in (0, 10), (where, err)
        _check_left_clean(tmp_path, proc)
    assert signalled >= RUNS[executor] * 0.7, "most runs must be signalled to show anything"


def test_a_signal_during_the_cold_compile(tmp_path):
    """Interrupted while it compiles the simulator (an empty cache folder): 130 at once (the
    compile, a minute and more, is not finished first), and the cache is not marked
    compiled, so the next run compiles again rather than trusting a half-filled cache
    (numba writes each kernel's files atomically)."""
    cache = tmp_path / "numba"
    proc = _start(tmp_path, *COMMAND, "--executor", "serial", "--no-store",
                  env={"NUMBA_CACHE_DIR": str(cache)})
    notice = proc.stderr.readline()       # the compile has begun
    assert notice.startswith("advisor: compiling the simulator"), notice
    time.sleep(3)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=20) == 130
    assert proc.stderr.read().strip().splitlines() == ["advisor: interrupted"]
    assert not list(cache.rglob("advisor-engine.compiled"))
    assert _gone(proc.pid) == []


def _wait_for_ray(proc: subprocess.Popen, tmp: Path, timeout: float = 600) -> None:
    """Until the run's Ray has started a worker, plus a margin: the driver has then
    registered with the raylet."""
    deadline = time.monotonic() + timeout
    while not list((_ray_folder(tmp) / str(proc.pid)).glob(
            "session_*/logs/python-core-worker-*.log")):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "Ray never started"
        time.sleep(0.2)
    time.sleep(1)
    assert proc.poll() is None, "the run ended before the signal: make COMMAND longer"


def test_sigterm_to_the_whole_group_on_ray(tmp_path):
    """systemd's default KillMode: SIGTERM reaches Ray's processes too. Once the driver has
    registered, the advisor ends with 143 as above. (Before, during ray.init, the raylet
    can die first and Ray's C++ core end the run with 1 before Python runs: the reason the
    shipped unit signals the advisor alone; docs/recommend.md.)"""
    pytest.importorskip("ray")
    proc = _start(tmp_path, *COMMAND, "--samples", "16", "--horizon", "3d", "--executor",
                  "ray", "--no-store")
    _wait_for_ray(proc, tmp_path)
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=120) == 143
    assert proc.stderr.read().strip().splitlines()[-1] == "advisor: terminated"
    assert _gone(proc.pid) == []
    assert list(_ray_folder(tmp_path).iterdir()) == []


def test_the_next_run_cleans_up_after_a_killed_one(tmp_path):
    killed = _start(tmp_path, *COMMAND, "--samples", "16", "--horizon", "3d", "--executor",
                    "ray", "--no-store")
    _wait_for_ray(killed, tmp_path)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    time.sleep(1)
    assert _live_in_group(killed.pid), "nothing outlived the kill: the test shows nothing"
    assert (_ray_folder(tmp_path) / str(killed.pid)).exists()
    after = subprocess.run([sys.executable, "-m", "advisor.cli", *COMMAND, "--samples", "2",
                            "--executor", "ray", "--no-store"],
                           env={**os.environ, "XDG_STATE_HOME": str(tmp_path / "state")},
                           capture_output=True, text=True, timeout=600)
    assert after.returncode in (0, 10), after.stderr
    assert _gone(killed.pid) == []
    assert list(_ray_folder(tmp_path).iterdir()) == []
