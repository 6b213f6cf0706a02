"""Signals end a run cleanly (issue 18): a real ``advisor recommend`` on the embedded Ray,
interrupted mid-simulation, exits 130 (SIGINT) or 143 (SIGTERM) with one line and leaves no
process and no Ray session folder behind; a run killed outright is cleaned up by the next.

SIGINT goes to the process group, as a terminal's Ctrl-C does (Ray's processes block it);
SIGTERM to the advisor alone, as ``kill PID`` and systemd's KillMode=mixed do, and to the
whole group, as systemd's default does (where Ray itself may end the run first, with 1)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

#: long enough that the signal lands while Ray simulates (several seconds on 2 cores)
COMMAND = ["recommend", "--from", "swf:CTC-SP2@100d", "--samples", "64", "--horizon", "3d",
           "--executor", "ray", "--no-store"]


def _start(state: Path) -> subprocess.Popen:
    # a new session, so that a group signal reaches only this run; SIGINT as a terminal
    # leaves it (a background job of a shell would ignore it)
    return subprocess.Popen([sys.executable, "-m", "advisor.cli", *COMMAND],
                            env={**os.environ, "XDG_STATE_HOME": str(state)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _ray_folder(state: Path) -> Path:
    return state / "slurm-policy-advisor" / "ray"


def _wait_for_ray(proc: subprocess.Popen, state: Path, timeout: float = 600) -> None:
    """Until the run's Ray has started a worker (after any cold compile), plus a margin:
    the driver has then registered. A group signal during ray.init kills the raylet
    before the driver registers, and Ray's C++ core exits 1 there, out of Python's reach
    (seen on a loaded machine, where the session folder came seconds before the driver)."""
    deadline = time.monotonic() + timeout
    while not list((_ray_folder(state) / str(proc.pid)).glob(
            "session_*/logs/python-core-worker-*.log")):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "Ray never started"
        time.sleep(0.2)
    time.sleep(2)
    assert proc.poll() is None, "the run ended before the signal: make COMMAND longer"


def _live_in_group(pgid: int) -> list[str]:
    """Processes of the run's group that still run (zombies awaiting init do not)."""
    left = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            left.append((Path(stat.parent) / "cmdline").read_bytes().replace(b"\0", b" ")
                        .decode(errors="replace")[:80])
    return left


def _gone(pgid: int, timeout: float = 5) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := _live_in_group(pgid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.parametrize("signum, to_group, code, word", [
    (signal.SIGINT, True, 130, "interrupted"),
    (signal.SIGTERM, False, 143, "terminated"),
    (signal.SIGTERM, True, 143, "terminated"),
])
def test_a_signal_ends_recommend_cleanly(tmp_path, signum, to_group, code, word):
    proc = _start(tmp_path)
    _wait_for_ray(proc, tmp_path)
    (os.killpg if to_group else os.kill)(proc.pid, signum)
    got = proc.wait(timeout=120)
    err = proc.stderr.read()
    assert "Traceback" not in err and "SIGTERM received" not in err, err
    if got == 1 and signum == signal.SIGTERM and to_group:
        # the raylet, killed by the same signal, can die first: Ray's C++ core then ends
        # the process with 1 before Python's handler runs (1 time in 5 on a loaded 2-core
        # machine); nothing is left running, and the next run removes the session folder
        # (the test below). docs/recommend.md says so; the systemd unit signals the advisor
        # alone (KillMode=mixed), the case above.
        assert "raylet" in err.lower() or "lost objects" in err or "socket" in err, err
        assert _gone(proc.pid, timeout=30) == []
        return
    assert got == code, err
    assert _gone(proc.pid) == []
    assert err.strip().splitlines()[-1] == f"advisor: {word}", err
    assert list(_ray_folder(tmp_path).iterdir()) == []


def test_the_next_run_cleans_up_after_a_killed_one(tmp_path):
    killed = _start(tmp_path)
    _wait_for_ray(killed, tmp_path)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    time.sleep(1)
    assert _live_in_group(killed.pid), "nothing outlived the kill: the test shows nothing"
    assert (_ray_folder(tmp_path) / str(killed.pid)).exists()
    after = subprocess.run([sys.executable, "-m", "advisor.cli", "recommend", "--from",
                            "swf:KTH-SP2@150d", "--samples", "2", "--executor", "ray",
                            "--no-store"], env={**os.environ, "XDG_STATE_HOME": str(tmp_path)},
                           capture_output=True, text=True, timeout=600)
    assert after.returncode in (0, 10), after.stderr
    assert _gone(killed.pid) == []
    assert list(_ray_folder(tmp_path).iterdir()) == []
