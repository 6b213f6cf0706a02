"""A bounded connect: an unreachable --ray-address (a closed port, a port where something
that is not Ray listens) ends the run with exit 3 within 30 s, in one line that names the
address as given. Ray's own connect retries such an address for minutes, in code no signal
interrupts, so the advisor probes the address first."""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("ray")

COMMAND = ["recommend", "--from", "swf:KTH-SP2@150d", "--samples", "1", "--no-store"]

#: one worker of a parallel run runs every test that starts Ray, one at a time
pytestmark = pytest.mark.xdist_group("ray")


def _run(address: str) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "advisor.cli", *COMMAND, "--ray-address",
                           address], capture_output=True, text=True, timeout=120)
    return done, time.monotonic() - start


def _one_line(done, address: str) -> str:
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("advisor: error: "), done.stderr
    assert address in lines[0]
    return lines[0]


def test_a_closed_port_ends_the_run_at_once():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]          # closed once the with ends: nothing listens
    address = f"127.0.0.1:{port}"
    done, took = _run(address)
    assert "refused" in _one_line(done, address).lower()
    assert took < 30


@pytest.mark.parametrize("answer", [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n"])
def test_a_port_that_is_not_ray_ends_the_run_at_once(answer):
    """A listener that says nothing, and one that answers as an HTTP/1 server."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held = []

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            held.append(conn)
            if answer:
                conn.sendall(answer)
                conn.close()

    threading.Thread(target=serve, daemon=True).start()
    address = f"127.0.0.1:{server.getsockname()[1]}"
    try:
        done, took = _run(address)
    finally:
        server.close()
        for conn in held:
            conn.close()
    assert "not Ray" in _one_line(done, address) or "no answer" in done.stderr
    assert took < 30


def test_an_address_that_is_not_host_port_is_named():
    done, _ = _run("nohost")
    assert "host:port" in _one_line(done, "nohost")
