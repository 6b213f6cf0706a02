"""The files and processes of one embedded Ray, so that none outlive the run.

Each run's Ray keeps its session files in ``<root>/<pid>`` (root: the advisor's state
folder). Closing removes the folder and kills the processes of that Ray that its own
shutdown left running (its dashboard and runtime-env agents outlive the raylet for
minutes). A run killed outright (SIGKILL) cannot do this; the next run does it for it, for
every folder whose run is gone. Linux (/proc); elsewhere only the folders are removed.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

#: Unix socket paths hold at most 107 bytes, and Ray puts its sockets at
#: <temp>/session_<date>_<time>_<micros>_<pid>/sockets/plasma_store (up to 66 bytes more)
MAX_RAY_TEMP = 40
LINK_NOTE = "advisor-link"    # the short path Ray was given, when it was not the folder
MARK = "SLURM_POLICY_ADVISOR_RAY"   # environment variable: the session folder
KILL_WAIT = 10.0              # seconds to wait for killed processes to be gone


def session_folder(root: str | os.PathLike | None) -> tuple[Path, Path]:
    """A fresh folder for this process's embedded Ray, after removing the folders of runs
    that are gone; and the path to give Ray: the folder, or when its path is too long for
    Ray's sockets, a short link to it in a private folder of the system's temp folder."""
    root = (Path(root) if root else
            Path(tempfile.gettempdir()) / f"advisor-ray-{os.getuid()}").absolute()
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    for old in root.iterdir():
        if old.name.isdigit() and not _alive(int(old.name)):
            remove_session(old)
    folder = root / str(os.getpid())
    remove_session(folder)
    folder.mkdir(mode=0o700)
    if len(str(folder)) <= MAX_RAY_TEMP:
        return folder, folder
    link = Path(tempfile.mkdtemp(prefix="advr-")) / "s"
    link.symlink_to(folder)
    (folder / LINK_NOTE).write_text(str(link))
    return folder, link


def session_token() -> str | None:
    """Give the embedded Ray a token of its own, in the environment its processes inherit,
    unless the site gives one: Ray 2.60 turns token authentication on for a local instance
    and otherwise writes a new token to ~/.ray, which a service user without a home (Debian's
    slurm) cannot. Returns the variable set, for the caller to remove at the end."""
    if any(os.environ.get(v) for v in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN",
                                       "RAY_AUTH_TOKEN_PATH")):
        return None
    import secrets
    os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
    return "RAY_AUTH_TOKEN"


def mark(folder: Path) -> dict[str, str]:
    """The environment variable that marks the processes of the Ray using ``folder``:
    every process Ray starts inherits it (a process title Ray rewrites does not)."""
    return {MARK: str(folder)}


def remove_session(folder: Path) -> None:
    """Kill the processes of the Ray that used ``folder`` and still run, and remove the
    folder and its link."""
    note = folder / LINK_NOTE
    link = Path(note.read_text()) if note.exists() else None
    # until none is left: a killed process lingers a moment, and one may have been
    # starting while the others were killed
    deadline = time.monotonic() + KILL_WAIT
    while _kill_all(folder, link) and time.monotonic() < deadline:
        time.sleep(0.1)
    if link is not None:
        shutil.rmtree(link.parent, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)


def _kill_all(folder: Path, link: Path | None) -> int:
    """SIGKILL every process of the Ray that used ``folder``; returns how many were found."""
    found = 0
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if int(proc.name) != os.getpid() and _started_from(proc, folder, link):
                os.kill(int(proc.name), signal.SIGKILL)
                found += 1
        except OSError:
            continue                 # gone meanwhile, or not ours to look at
    return found


def _started_from(proc: Path, folder: Path, link: Path | None) -> bool:
    """A process of that Ray: it carries the mark, names the folder on its command line, or
    holds a file in it open (its logs). Ray rewrites its processes' titles, which can
    overwrite both the command line and the environment, but not the open files."""
    if f"{MARK}={folder}\0".encode() in (proc / "environ").read_bytes():
        return True
    # a whole path, not a prefix: the folder of pid 12 is not that of pid 123
    args = (proc / "cmdline").read_bytes().replace(b"=", b"\0").split(b"\0")
    for path in (folder, link) if link else (folder,):
        name = str(path).encode()
        if any(a == name or a.startswith(name + b"/") for a in args):
            return True
    inside = str(folder) + os.sep
    return any(os.readlink(fd).startswith(inside) for fd in (proc / "fd").iterdir())


@contextmanager
def on_loopback(embedded: bool = True):
    """For the block (``ray.init``), an embedded Ray takes 127.0.0.1 for its node's
    address, which every server of Ray's then binds to (Ray 2.5x on; before, they bound
    every interface): Ray's switch for that is read from the environment when Ray is first
    imported, and as a module constant when the node's address is resolved, so both are
    set (Ray may have been imported before, by a library caller or a test)."""
    if not embedded:
        yield
        return
    from ray._private import ray_constants
    was_env = os.environ.get(LOOPBACK_SWITCH)
    was = ray_constants.ENABLE_RAY_CLUSTER
    os.environ[LOOPBACK_SWITCH] = "0"       # inherited by the processes Ray starts
    ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = was
        if was_env is None:
            os.environ.pop(LOOPBACK_SWITCH, None)
        else:
            os.environ[LOOPBACK_SWITCH] = was_env


#: Ray's environment variable: "0" keeps a node on loopback (its name is about the
#: platforms where that is the default)
LOOPBACK_SWITCH = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def is_loopback(host: str) -> bool:
    import ipaddress
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: seconds the probe of a Ray address waits for each step (connect, then an answer)
PROBE_TIMEOUT = 5.0
#: HTTP/2's client connection preface and an empty SETTINGS frame: a gRPC server (Ray's
#: GCS, its client server) answers with a SETTINGS frame of its own
_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def probe(address: str) -> None:
    """Check, within a few seconds, that ``address`` (host:port, ray://host:port, or auto
    with a cluster recorded on this machine) reaches a gRPC server, as Ray's head is: Ray's
    own connect retries an address that does not answer for minutes, in code that no
    signal interrupts. SourceUnavailable naming the address given when it does not."""
    import socket

    from advisor.errors import SourceUnavailable
    target = _resolve(address)
    if target is None:
        return                        # auto, with no cluster recorded: Ray says so at once
    host, _, port = target.removeprefix("ray://").rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise SourceUnavailable(f"Ray address '{address}' is not host:port (e.g. "
                                "10.0.0.5:6379, or ray://10.0.0.5:10001)")
    try:
        with socket.create_connection((host, int(port)), timeout=PROBE_TIMEOUT) as s:
            s.settimeout(PROBE_TIMEOUT)
            s.sendall(_PREFACE)
            head = _read(s, 9)
    except socket.timeout:
        raise SourceUnavailable(f"Ray at {address}: no answer within {PROBE_TIMEOUT:g} s "
                                "(check --ray-address and the firewall)") from None
    except OSError as e:
        raise SourceUnavailable(f"Ray at {address}: {e.strerror or e} (check --ray-address: "
                                "the head's GCS port, 6379 by default, or ray://HOST:10001)"
                                ) from None
    if len(head) < 9 or head[3] != 4:
        raise SourceUnavailable(f"Ray at {address}: something listens there, but not Ray's "
                                "head (no gRPC answer); check --ray-address")


@contextmanager
def quiet_stderr(quiet: bool = True):
    """Ray's core writes its connection retries to file descriptor 2 itself, a line a
    second while it retries: kept out of the advisor's one-line error (into a file that is
    dropped) while it connects."""
    if not quiet:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def _read(sock, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _resolve(address: str) -> str | None:
    """The host:port that ``address`` stands for: itself, or for ``auto`` RAY_ADDRESS or the
    cluster this machine's ``ray start`` recorded (None when there is none)."""
    if address != "auto":
        return address
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"]
    recorded = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
    try:
        return recorded.read_text().strip() or None
    except OSError:
        return None
