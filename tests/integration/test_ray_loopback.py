"""The embedded Ray exposes nothing (issue 54): during a real ``advisor recommend
--executor ray``, every socket that a process of the run listens on (TCP) or is bound to
(UDP) has a loopback address. Read from /proc, as ``ss -ltunp`` does: each process's open
sockets (its fd links), matched to /proc/net/{tcp,tcp6,udp,udp6}."""
from __future__ import annotations

import ipaddress
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")

LISTEN = "0A"           # TCP_LISTEN in /proc/net/tcp's st column

#: one worker of a parallel run runs every test that starts Ray, one at a time
pytestmark = pytest.mark.xdist_group("ray")


def _address(hex_address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """/proc/net's local address: the IP in host byte order, 32-bit words for IPv6."""
    raw = bytes.fromhex(hex_address.split(":")[0])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.ip_address(words)
    return ip.ipv4_mapped or ip if ip.version == 6 else ip


def _sockets() -> dict[int, tuple[str, str, str]]:
    """Every socket of this machine: inode -> (table, local address, state)."""
    out = {}
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for line in Path(f"/proc/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            out[int(fields[9])] = (table, fields[1], fields[3])
    return out


def _group(pgid: int) -> list[int]:
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[2]) == pgid:
                pids.append(int(stat.parent.name))
        except (OSError, IndexError):
            continue
    return pids


def _exposed(pgid: int, seen: set) -> list[str]:
    """The run's listening (TCP) or bound (UDP) sockets that are not on loopback; every
    one seen is added to ``seen``."""
    sockets, wrong = _sockets(), []
    for pid in _group(pgid):
        try:
            links = [os.readlink(fd) for fd in Path(f"/proc/{pid}/fd").iterdir()]
        except OSError:
            continue                    # gone meanwhile
        for link in links:
            if not link.startswith("socket:["):
                continue
            table, local, state = sockets.get(int(link[8:-1]), ("", "", ""))
            listening = table.startswith("tcp") and state == LISTEN
            bound = table.startswith("udp") and not local.endswith(":0000")
            if not (listening or bound):
                continue
            ip = _address(local)
            seen.add((pid, table, str(ip)))
            if not ip.is_loopback:
                wrong.append(f"pid {pid} {table} {ip}:{int(local.split(':')[1], 16)}")
    return wrong


def test_the_embedded_ray_listens_on_loopback_only(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "advisor.cli", "recommend", "--from", "swf:KTH-SP2@150d",
         "--samples", "16", "--horizon", "2d", "--executor", "ray", "--no-store"],
        env={**os.environ, "XDG_STATE_HOME": str(tmp_path)}, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: set = set()
    wrong: list[str] = []
    try:
        while proc.poll() is None:
            wrong += _exposed(proc.pid, seen)
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=60) in (0, 10), proc.stderr.read()
    assert not wrong, sorted(set(wrong))
    # Ray's GCS, raylet and workers listen: the test saw them, so it shows something
    assert len({pid for pid, _, _ in seen}) >= 3, seen
