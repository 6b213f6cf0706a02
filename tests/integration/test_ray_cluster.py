"""A Ray cluster joined for real (issue 23): ``ray start --head`` on this machine with two
worker CPUs, ``advisor recommend --ray-address 127.0.0.1:PORT`` against it, the same
recommendation as the serial path to the last figure, and the cluster stopped with nothing
of it left. (``ray start`` replaces a loopback ``--node-ip-address`` with the machine's
own address; its port listens on every interface, loopback included.) The cluster uses
token authentication (``ray start``'s default in Ray 2.60), with a token of its own given
to both sides in the environment, as a site gives its cluster's token to the advisor."""
from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from advisor.whatif import ray_session

pytest.importorskip("ray")

RAY = Path(sys.executable).with_name("ray")
#: small enough for a few seconds on 2 cores, yet several tasks per sample
COMMAND = ["recommend", "--from", "swf:KTH-SP2@150d", "--samples", "4", "--seed", "3",
           "--no-store", "--json"]

#: one worker of a parallel run runs every test that starts Ray, one at a time
pytestmark = pytest.mark.xdist_group("ray")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(*extra: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "advisor.cli", *COMMAND, *extra],
                          env=env, capture_output=True, text=True, timeout=1200)


def _advisor(*extra: str, env: dict) -> dict:
    done = _run(*extra, env=env)
    assert done.returncode in (0, 10), done.stderr
    return json.loads(done.stdout)


def _processes_of(temp: Path) -> list[str]:
    """Processes whose command line names the cluster's temp folder."""
    left = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(temp) in args:
            left.append(args[:120])
    return left


def _ran_here(temp: Path) -> bool:
    """The cluster has registered a driver's job and started a worker process for it."""
    logs = temp / "session_latest" / "logs"
    jobs = "Registering job" in (logs / "gcs_server.out").read_text(errors="replace")
    return jobs and bool(list(logs.glob("python-core-worker-*.log")))


def _start_head(temp: Path, env: dict) -> str:
    """``ray start --head`` with 2 CPUs, its files in ``temp``; its address on loopback."""
    port = _free_port()
    done = subprocess.run([str(RAY), "start", "--head", "--node-ip-address", "127.0.0.1",
                           "--port", str(port), "--num-cpus", "2", "--temp-dir", str(temp),
                           "--include-dashboard", "false", "--disable-usage-stats"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return f"127.0.0.1:{port}"


def test_a_started_ray_cluster_gives_the_serial_results(tmp_path):
    """The cluster is stopped by its folder, not by ``ray stop``, which would stop every
    Ray of the machine, a developer's own too."""
    if not RAY.exists():
        pytest.skip("no ray command beside this Python")
    # Ray's socket paths must stay short: a folder directly under the system's temp
    temp = Path(tempfile.mkdtemp(prefix="rc-"))
    # every process of the cluster inherits the mark, so that all of them can be found
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", **auth, **ray_session.mark(temp)}
    try:
        address = _start_head(temp, env)
        assert _processes_of(temp) and not _ran_here(temp)
        state = {"XDG_STATE_HOME": str(tmp_path / "state")}
        # without the token: Ray retries for about 20 s, then exit 3 and the fix named
        unauthenticated = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
        refused = _run("--ray-address", address, env={**unauthenticated, **state})
        assert refused.returncode == 3 and not refused.stdout
        assert "RAY_AUTH_MODE=token" in refused.stderr.strip().splitlines()[-1]
        env = {**os.environ, **auth, **state}
        on_cluster = _advisor("--ray-address", address, env=env)
        serial = _advisor("--executor", "serial", env=env)
        assert on_cluster["candidates"] and on_cluster == serial
        # it joined the cluster rather than starting a Ray of its own: no session folder
        # of its own, and the cluster registered its driver and started workers for it
        assert not list((tmp_path / "state").glob("slurm-policy-advisor/ray/*/session_*"))
        assert _ran_here(temp)
    finally:
        ray_session.remove_session(temp)
    assert not _processes_of(temp) and not temp.exists()
