"""Which Slurm the test cluster runs, and how its programs are started.

``HostRelease``: Debian 12's own Slurm 22.05, installed with apt and run as is.

``TreeRelease``: a newer Slurm from a later Debian (24.11 from Debian 13), in a Debian tree
that ``debootstrap`` builds once from Debian's packages and that later runs reuse (under
``/var/cache/advisor-slurm/``, or ``$ADVISOR_SLURM_TREES``). Each of its programs runs in
that tree by ``chroot``, in a mount namespace of its own (``unshare``) where the tree sees
the host's temporary directory at the same path (the cluster's directory, the tests' files)
and a /proc of its own; the namespace, and its mounts, end with the program. The tree runs
its own munged, with its own key. Clients on the host (the tests, the advisor) reach it
through wrappers of the same names in the cluster's ``bin`` directory, first on PATH.
"""
from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from advisor.releases import TESTED

#: the Slurm releases the integration tests can run, by the name tests use: the rows of
#: advisor/releases.py marked tested
RELEASES = TESTED
HOST_PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge", "slurmdbd", "mariadb-server")
TREE_PACKAGES = ("slurmctld", "slurmd", "slurmdbd", "slurm-client", "munge")
#: the client commands of slurm-client, each given a wrapper on the host
CLIENTS = ("sacct", "sacctmgr", "salloc", "sattach", "sbatch", "sbcast", "scancel", "scontrol",
           "scrontab", "sdiag", "sinfo", "sprio", "squeue", "sreport", "srun", "sshare", "sstat",
           "strigger")
#: the Debian suite that carries each tree release
SUITES = {"24.11": "trixie", "26.05": "sid"}
#: where debootstrap fetches from when the host's apt sources name no Debian mirror
MIRROR = "http://deb.debian.org/debian"
#: the account munged runs as, looked up in the tree's /etc/passwd
MUNGE_NAME = "munge"
#: PATH inside a tree: its own programs only (the cluster's wrappers are visible there too)
TREE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


class ReleaseError(RuntimeError):
    pass


def mirror(sources: Path = Path("/etc/apt/sources.list.d/debian.sources")) -> str:
    """The host's own Debian mirror (its deb822 sources), else ``MIRROR``."""
    try:
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:") and line.split()[1:] and \
                    not line.split()[1].endswith("-security"):
                return line.split()[1]
    except OSError:
        pass
    return MIRROR


def tree_cache() -> Path:
    return Path(os.environ.get("ADVISOR_SLURM_TREES", "/var/cache/advisor-slurm"))


#: held while this harness runs apt-get: each release's worker prepares at once, and
#: ``apt-get update`` fails at once, without waiting, on the lists lock another holds
APT_LOCK = Path(tempfile.gettempdir()) / "advisor-slurm-apt.lock"
#: how long an apt-get waits for a lock held outside this harness (unattended upgrades)
APT_WAIT = 600


def _apt_install(packages: tuple[str, ...]) -> None:
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    lock = ["-o", f"DPkg::Lock::Timeout={APT_WAIT}"]
    with open(APT_LOCK, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        for cmd in (["apt-get", *lock, "update", "-qq"],
                    ["apt-get", *lock, "install", "-y", "-qq", "--no-install-recommends",
                     *packages]):
            _apt_get(cmd, env)


def _apt_get(cmd: list[str], env: dict[str, str]) -> None:
    """``cmd``, again every 5 s for ``APT_WAIT`` while another process holds apt's lock."""
    deadline = time.monotonic() + APT_WAIT
    while True:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        if r.returncode == 0:
            return
        if "Could not get lock" not in r.stderr or time.monotonic() > deadline:
            raise ReleaseError(f"{' '.join(cmd)} failed: {r.stderr.strip()[-500:]}")
        time.sleep(5)


class HostRelease:
    """The host's Slurm (Debian 12: 22.05)."""

    name = "22.05"

    def prepare(self) -> None:
        """apt-get the Debian packages when a binary is missing (about 25 s on a fresh VM)."""
        if not all(shutil.which(b) for b in ("slurmctld", "slurmd", "slurmdbd", "munged",
                                              "mariadbd", "sbatch")):
            _apt_install(HOST_PACKAGES)

    def command(self, argv: list[str], user: str | None = None) -> list[str]:
        return argv

    def popen_user(self, user: str | None) -> str | None:
        return user

    def clients(self, root: Path) -> str | None:
        return None        # the host's own, on PATH

    def conf_files(self) -> dict[str, str]:
        return {}

    def prepare_munge(self) -> None:
        """The host's munge key (made once) and socket directory."""
        if not Path("/etc/munge/munge.key").exists():
            r = subprocess.run(["runuser", "-u", "munge", "--", "mungekey", "--create"],
                               capture_output=True, text=True, timeout=30)
            if r.returncode != 0:
                raise ReleaseError(f"mungekey --create failed: {r.stderr.strip()}")
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")


@dataclass
class TreeRelease:
    """A Slurm from a Debian tree (see the module's docstring)."""

    name: str = "24.11"

    @property
    def tree(self) -> Path:
        return tree_cache() / f"slurm-{self.name}"

    def prepare(self) -> None:
        """The host's MariaDB (slurmdbd reaches it over loopback) and the tree, built once
        (about 45 s and 290 MB from Debian's mirror); a lock keeps two runs from building
        it at once, and a tree is only ever renamed into place whole."""
        if not all(shutil.which(b) for b in ("mariadbd", "debootstrap", "unshare")):
            _apt_install(("mariadb-server", "debootstrap"))
        cache = tree_cache()
        cache.mkdir(parents=True, exist_ok=True)
        with open(cache / f".slurm-{self.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not (self.tree / "usr" / "sbin" / "slurmctld").exists():
                self._build()
        self._check_version()
        shutil.copyfile("/etc/hosts", self.tree / "etc" / "hosts")

    def _build(self) -> None:
        staging = Path(tempfile.mkdtemp(prefix=f".slurm-{self.name}-", dir=tree_cache()))
        staging.chmod(0o755)    # the tree's root: its daemons' users must traverse it
        cmd = ["debootstrap", "--variant=minbase", f"--include={','.join(TREE_PACKAGES)}",
               SUITES[self.name], str(staging), mirror()]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            tail = (r.stderr.strip() or r.stdout.strip())[-500:]
            raise ReleaseError(f"{' '.join(cmd)} failed: {tail}")
        shutil.rmtree(self.tree, ignore_errors=True)
        staging.rename(self.tree)

    def _check_version(self) -> None:
        r = subprocess.run(["chroot", str(self.tree), "slurmctld", "-V"], capture_output=True,
                           text=True, timeout=60)
        words = r.stdout.split()       # "slurm-wlm 24.11.5"
        if not words or not words[-1].startswith(self.name):
            raise ReleaseError(f"{self.tree} holds {r.stdout.strip() or r.stderr.strip()}, "
                               f"not Slurm {self.name}: remove it to have it built again")

    def munge_ids(self) -> tuple[int, int]:
        for line in (self.tree / "etc" / "passwd").read_text().splitlines():
            fields = line.split(":")
            if fields[0] == MUNGE_NAME:
                return int(fields[2]), int(fields[3])
        raise ReleaseError(f"{self.tree}/etc/passwd has no {MUNGE_NAME} user")

    def command(self, argv: list[str], user: str | None = None) -> list[str]:
        """``argv`` run inside the tree, in a mount namespace of its own, from the caller's
        working directory where the tree sees it (else /tmp)."""
        tree, tmp = shlex.quote(str(self.tree)), shlex.quote(tempfile.gettempdir())
        spec = ":".join(map(str, self.munge_ids())) if user == MUNGE_NAME else "0:0"
        script = (f"mount --bind {tmp} {tree}{tmp} && mount -t proc proc {tree}/proc && "
                  f"exec chroot --userspec={spec} {tree} /usr/bin/env PATH={TREE_PATH} "
                  '/bin/sh -c \'cd "$0" 2>/dev/null || cd /tmp; exec "$@"\' "$PWD" "$@"')
        return ["unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
                script, "tree", *argv]

    def clients(self, root: Path) -> str:
        """A directory of wrappers, one per client command of the tree's Slurm and munge."""
        bin_dir = root / "bin"
        bin_dir.mkdir(exist_ok=True)
        for name in (*CLIENTS, "munge", "unmunge"):
            wrapper = bin_dir / name
            wrapper.write_text("#!/bin/sh\nexec " + " ".join(
                shlex.quote(a) for a in self.command([f"/usr/bin/{name}"])) + ' "$@"\n')
            wrapper.chmod(0o755)
        return str(bin_dir)

    def popen_user(self, user: str | None) -> None:
        return None        # the tree's user, set by chroot

    def conf_files(self) -> dict[str, str]:
        """From 23.x slurmd starts its cgroup plugin whatever the proctrack and task
        plugins; the tree has no cgroup filesystem, and nothing here needs one."""
        return {"cgroup.conf": "CgroupPlugin=disabled\n"}

    def prepare_munge(self) -> None:
        """The tree's socket directory (its key came with its munge package)."""
        munge = self.tree / "run" / "munge"
        munge.mkdir(parents=True, exist_ok=True)
        os.chown(munge, *self.munge_ids())


def release(name: str) -> HostRelease | TreeRelease:
    if name == HostRelease.name:
        return HostRelease()
    if name in SUITES:
        return TreeRelease(name)
    raise ReleaseError(f"unknown Slurm release {name!r}: one of {', '.join(RELEASES)}")


def wanted() -> tuple[str, ...]:
    """The releases to test: ``$ADVISOR_SLURM_RELEASES`` (comma-separated), else all."""
    names = tuple(n.strip() for n in os.environ.get("ADVISOR_SLURM_RELEASES", "").split(",")
                  if n.strip()) or RELEASES
    for n in names:
        release(n)
    return names
