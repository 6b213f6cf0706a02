"""A real Slurm cluster on this host, for integration tests: Debian's munge, mariadb, slurmdbd,
slurmctld and four virtual slurmd nodes of 16 CPUs and 8000 MB each, all on loopback. Memory
is allocated (CR_Core_Memory, 500 MB per CPU by default, so a job that asks for no memory
fills a node's memory only with its CPUs), n3 and n4 carry two GPUs each, and limits are
enforced (two accounts with different shares, a QOS with per-user limits:
``ACCOUNTING``); the GPUs are a GRES whose device files are empty files in the cluster's
directory (Slurm 22.05 drops a GPU without a File [src: gres.c
gres_g_node_config_load()]; nothing opens them: TaskPlugin=task/none constrains no device).

Everything the cluster writes lives in one private directory (configuration, state, spool,
logs, the database), its daemons listen on free ports, and every daemon runs in the
foreground as a child of this process, so ``stop`` ends exactly what ``start`` began and
leaves a site's own Slurm alone. Clients find the cluster through ``SLURM_CONF`` (and a
tree release's commands through ``PATH``), which ``start`` sets in this process's
environment and ``stop`` puts back.

Its pitfalls: SlurmctldHost must be ``hostname -s``, and without slurmdbd no priority is
ever recomputed.

Which Slurm runs, and how its programs are started, is the ``release``
(slurm_release.py): Debian 12's 22.05 on the host, or 24.11 in a Debian 13 tree.

Run by hand: ``python -m tests.integration.slurm_cluster [22.05|24.11]`` starts a cluster
and waits for Ctrl-C; ``SLURM_CONF`` and ``PATH`` are printed.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.integration.slurm_release import HostRelease, TreeRelease, release

NODES = 4
NODE_CPUS = 16
NODE_MEMORY = 8000        # MB
MEM_PER_CPU = NODE_MEMORY // NODE_CPUS
GPU_NODES = ("n3", "n4")
NODE_GPUS = 2

#: the accounts and the QOS beside the defaults (sacctmgr -i ...): research (1 share) and
#: physics (3 shares), root a user of both; the QOS "capped" lets a user run 2 jobs and
#: 16 CPUs at once, and all its jobs 3 GPUs
ACCOUNTING = (
    ["add", "account", "physics", "Description=test", "Organization=lab", "Fairshare=3"],
    ["add", "user", "root", "Account=physics"],
    ["add", "qos", "capped", "MaxJobsPU=2", "MaxTRESPU=cpu=16", "GrpTRES=gres/gpu=3"],
    ["modify", "user", "root", "set", "qos+=capped"],
)

GRES_CONF = """\
NodeName=n[{first_gpu}-{nodes}] Name=gpu File={root}/dev/gpu[0-{last_gpu}]
"""

SLURM_CONF = """\
ClusterName=lab
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
SlurmctldPort={ctld_port}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool/%n
SlurmctldPidFile={root}/run/slurmctld.pid
SlurmdPidFile={root}/run/slurmd-%n.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_continue
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU={mem_per_cpu}
GresTypes=gpu
AccountingStorageTRES=gres/gpu
PriorityType=priority/multifactor
PriorityCalcPeriod=1
PriorityMaxAge=1-0
PriorityWeightAge=1000
PriorityWeightFairshare=0
PriorityWeightJobSize=500
PriorityWeightPartition=1000
PriorityWeightQOS=0
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageEnforce=associations,limits,qos
AccountingStorageHost=127.0.0.1
AccountingStoragePort={dbd_port}
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=n[1-{cpu_nodes}] NodeHostname={host} NodeAddr=127.0.0.1 Port={cpu_ports} \
CPUs={cpus} RealMemory={memory} State=UNKNOWN
NodeName=n[{first_gpu}-{nodes}] NodeHostname={host} NodeAddr=127.0.0.1 Port={gpu_ports} \
CPUs={cpus} RealMemory={memory} Gres=gpu:{gpus} State=UNKNOWN
PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP PriorityJobFactor=1
PartitionName=high Nodes=ALL MaxTime=INFINITE State=UP PriorityJobFactor=10
PartitionName=short Nodes=n[3-4] MaxTime=30 DefaultTime=5 State=UP PriorityJobFactor=5
"""

SLURMDBD_CONF = """\
AuthType=auth/munge
DbdHost=localhost
DbdPort={dbd_port}
SlurmUser=root
LogFile={root}/log/slurmdbd.log
PidFile={root}/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort={db_port}
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db
"""


class ClusterError(RuntimeError):
    pass


def worker_ports(n: int) -> list[int]:
    """n consecutive free TCP ports on loopback for one cluster's daemons (slurm.conf gives
    the slurmds' ports as a range), from a range of its own for each pytest-xdist worker
    (gw0, gw1, ...) so that clusters started at once do not pick the same, and below the
    kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768 and up by default): a port
    the OS hands out for a bind to port 0 may be taken as the source port of some other
    process's connection before the daemon binds it, and the daemon then exits."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = 17001 + 1000 * (int(worker) if worker.isdigit() else 0)
    for base in range(first, 32768 - n, n):
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return list(range(base, base + n))
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise ClusterError("no free port range below 32768 for the cluster's daemons")


def wait_for(what: str, check, timeout: float = 60.0, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    tail = ""
    if log is not None and log.exists():
        tail = "\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:])
    raise ClusterError(f"timed out waiting for {what}{tail}")


def quiet(cmd: list[str], env=None, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=env, timeout=timeout, capture_output=True, text=True)


@dataclass
class SlurmCluster:
    """Start with ``start()``, stop with ``stop()``; ``env`` is what a client needs."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="advisor-slurm-")))
    procs: list[tuple[str, subprocess.Popen]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    release: HostRelease | TreeRelease = field(default_factory=HostRelease)
    #: os.environ's SLURM_CONF and PATH before ``start`` set them (``stop`` puts them back)
    _saved_environ: dict[str, str | None] = field(default_factory=dict)

    # ---------------------------------------------------------------- start
    def start(self) -> SlurmCluster:
        t0 = time.monotonic()
        self.release.prepare()
        self.timings["prepare"] = time.monotonic() - t0
        root = self.root
        for d in ("etc", "state", "spool", "log", "run", "mysql", "dev"):
            (root / d).mkdir(parents=True, exist_ok=True)
        os.chmod(root, 0o755)
        shutil.chown(root / "mysql", "mysql", "mysql")
        ctld_port, dbd_port, db_port, slurmd_base, *_ = worker_ports(3 + NODES)
        host = socket.gethostname().split(".")[0]
        conf = root / "etc" / "slurm.conf"
        cpu_nodes = NODES - len(GPU_NODES)
        gpu_base = slurmd_base + cpu_nodes
        shape = dict(nodes=NODES, cpu_nodes=cpu_nodes, first_gpu=cpu_nodes + 1,
                     gpus=NODE_GPUS)
        conf.write_text(SLURM_CONF.format(
            host=host, root=root, ctld_port=ctld_port, dbd_port=dbd_port, cpus=NODE_CPUS,
            memory=NODE_MEMORY, mem_per_cpu=MEM_PER_CPU,
            cpu_ports=f"{slurmd_base}-{gpu_base - 1}",
            gpu_ports=f"{gpu_base}-{slurmd_base + NODES - 1}", **shape))
        for k in range(NODE_GPUS):
            (root / "dev" / f"gpu{k}").touch()
        (root / "etc" / "gres.conf").write_text(GRES_CONF.format(
            root=root, last_gpu=NODE_GPUS - 1, **shape))
        for name, text in self.release.conf_files().items():
            (root / "etc" / name).write_text(text)
        dbd_conf = root / "etc" / "slurmdbd.conf"
        dbd_conf.write_text(SLURMDBD_CONF.format(root=root, dbd_port=dbd_port,
                                                 db_port=db_port))
        os.chmod(dbd_conf, 0o600)
        self.env = dict(os.environ, SLURM_CONF=str(conf))
        clients = self.release.clients(root)
        if clients:
            self.env["PATH"] = f"{clients}:{os.environ.get('PATH', '')}"
        try:
            self._munge()
            self._mariadb(db_port)
            self._slurmdbd()
            t = time.monotonic()
            self._spawn("slurmctld", ["slurmctld", "-D"])
            for i in range(1, NODES + 1):
                (root / "spool" / f"n{i}").mkdir(exist_ok=True)
                self._spawn(f"slurmd-n{i}", ["slurmd", "-D", "-N", f"n{i}"])
            wait_for("all nodes idle", self._all_idle, log=root / "log" / "slurmctld.log")
            # (a GRES limit needs the GRES's TRES, which slurmctld registers at its start)
            for cmd in ACCOUNTING:
                self.run("sacctmgr", "-i", *cmd)
            self.timings["daemons"] = time.monotonic() - t
        except BaseException:
            self.stop(keep=True)
            raise
        for key in ("SLURM_CONF", "PATH"):
            self._saved_environ[key] = os.environ.get(key)
            os.environ[key] = self.env[key]
        self.timings["start"] = time.monotonic() - t0
        return self

    def _spawn(self, name: str, cmd: list[str], user: str | None = None,
               on_host: bool = False) -> subprocess.Popen:
        """Start a daemon in the foreground, a child of this process: a program of the
        release's Slurm, or (``on_host``) of the host (MariaDB)."""
        log = open(self.root / "log" / f"{name}.out", "ab")
        if not on_host:
            cmd, user = self.release.command(cmd, user), self.release.popen_user(user)
        p = subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, user=user, start_new_session=True)
        log.close()
        self.procs.append((name, p))
        return p

    def _munge(self) -> None:
        if self._munge_works():
            return  # a munged already serves this release's socket: use it, never stop it
        self.release.prepare_munge()
        self._spawn("munged", ["/usr/sbin/munged", "-F", "--force"], user="munge")
        wait_for("munged", self._munge_works, timeout=20)

    def _munge_works(self) -> bool:
        try:
            cred = quiet(["munge", "-n"], env=self.env, timeout=10)
            if cred.returncode != 0:
                return False
            return subprocess.run(["unmunge"], input=cred.stdout, capture_output=True,
                                  env=self.env, text=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def _mariadb(self, port: int) -> None:
        t = time.monotonic()
        data, sock = self.root / "mysql" / "data", self.root / "mysql" / "mysqld.sock"
        # a temporary folder of its own: two installs at once in /tmp clash on table names
        tmp = self.root / "mysql" / "tmp"
        tmp.mkdir()
        shutil.chown(tmp, "mysql", "mysql")
        r = quiet(["mariadb-install-db", "--no-defaults", "--user=mysql", f"--datadir={data}",
                   f"--tmpdir={tmp}", "--auth-root-authentication-method=socket",
                   "--skip-test-db"], timeout=120)
        if r.returncode != 0:
            raise ClusterError(f"mariadb-install-db failed: {r.stderr.strip()[-500:]}")
        self._spawn("mariadbd", ["mariadbd", "--no-defaults", "--user=mysql",
                                 f"--datadir={data}", f"--tmpdir={tmp}", f"--socket={sock}",
                                 f"--port={port}",
                                 "--bind-address=127.0.0.1", "--innodb-buffer-pool-size=64M",
                                 "--innodb-lock-wait-timeout=900"], on_host=True)
        client = ["mariadb", "--no-defaults", f"--socket={sock}", "-u", "root"]
        wait_for("mariadbd", lambda: quiet([*client, "-e", "select 1"]).returncode == 0,
                 log=self.root / "log" / "mariadbd.out")
        r = quiet([*client, "-e",
                   "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmpw';"
                   "CREATE USER 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';"
                   "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
                   "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"])
        if r.returncode != 0:
            raise ClusterError(f"creating the slurm database user failed: {r.stderr.strip()}")
        self.timings["mariadb"] = time.monotonic() - t

    def _slurmdbd(self) -> None:
        t = time.monotonic()
        self._spawn("slurmdbd", ["slurmdbd", "-D"])
        wait_for("slurmdbd", lambda: quiet(["sacctmgr", "-n", "show", "cluster"],
                                           env=self.env).returncode == 0,
                 log=self.root / "log" / "slurmdbd.log")
        for cmd in (["add", "cluster", "lab"],
                    ["add", "account", "research", "Description=test", "Organization=lab"],
                    ["add", "user", "root", "Account=research"]):
            r = quiet(["sacctmgr", "-i", *cmd], env=self.env)
            if r.returncode != 0:
                raise ClusterError(f"sacctmgr {' '.join(cmd)} failed: {r.stderr.strip()}")
        self.timings["slurmdbd"] = time.monotonic() - t

    def _all_idle(self) -> bool:
        for name, p in self.procs:
            if p.poll() is not None:
                raise ClusterError(f"{name} exited with {p.returncode}; see {self.root}/log"
                                   + self._log_tail(name))
        r = quiet(["sinfo", "-h", "-N", "-t", "idle", "-o", "%N"], env=self.env)
        return r.returncode == 0 and len(set(r.stdout.split())) == NODES

    def _log_tail(self, name: str, lines: int = 15) -> str:
        """The last lines a daemon wrote (its own log, else its captured output), so that a
        CI log says why it exited."""
        logs = self.root / "log"
        for path in (logs / f"{name}.log", logs / f"{name}.out"):
            if path.exists() and path.stat().st_size:
                return "\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    # ---------------------------------------------------------------- use
    def run(self, *cmd: str, timeout: float = 30) -> str:
        """Run a Slurm client command against this cluster; its stdout, or ClusterError."""
        r = quiet(list(cmd), env=self.env, timeout=timeout)
        if r.returncode != 0:
            raise ClusterError(f"{' '.join(cmd)}: {r.stderr.strip()}")
        return r.stdout

    def reconfigure(self, **settings: str) -> None:
        """Set slurm.conf keys (``SchedulerParameters="bf_interval=1"``, ...) and run
        ``scontrol reconfigure``; a key not in the file is appended."""
        conf = self.root / "etc" / "slurm.conf"
        lines = conf.read_text().splitlines()
        for key, value in settings.items():
            new = f"{key}={value}"
            at = [i for i, line in enumerate(lines) if line.split("=", 1)[0] == key]
            if at:
                lines[at[0]] = new
            else:
                lines.insert(next(i for i, line in enumerate(lines)
                                  if line.startswith("NodeName")), new)
        conf.write_text("\n".join(lines) + "\n")
        self.run("scontrol", "reconfigure")
        time.sleep(2)  # let slurmctld apply it before the next client call

    @contextlib.contextmanager
    def reconfigured(self, **settings: str):
        """``reconfigure`` for the duration of a with-block, then the original slurm.conf."""
        conf = self.root / "etc" / "slurm.conf"
        original = conf.read_text()
        try:
            self.reconfigure(**settings)
            yield self
        finally:
            self.cancel_all()
            conf.write_text(original)
            self.run("scontrol", "reconfigure")
            time.sleep(2)

    def restart_controller(self) -> None:
        """Stop slurmctld and start it again on the same state and slurm.conf: what changes
        of PreemptType and PreemptMode need [slurm.conf(5)]."""
        for i, (name, p) in enumerate(self.procs):
            if name == "slurmctld" and p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
                del self.procs[i]
                break
        self._spawn("slurmctld", ["slurmctld", "-D"])
        wait_for("the restarted slurmctld to answer", lambda: quiet(
            ["scontrol", "ping"], env=self.env).returncode == 0,
            log=self.root / "log" / "slurmctld.log")
        wait_for("all nodes idle", self._all_idle, log=self.root / "log" / "slurmctld.log")

    @contextlib.contextmanager
    def restarted(self, lines: tuple[str, ...] = (), drop: tuple[str, ...] = (),
                  **settings: str):
        """slurm.conf with ``settings``, extra ``lines`` (a partition) and without the
        partitions named in ``drop`` (the lines redefine them) under a restarted slurmctld
        for the duration of a with-block, then the original, restarted again."""
        conf = self.root / "etc" / "slurm.conf"
        original = conf.read_text()

        def kept_line(line: str) -> bool:
            key, _, value = line.partition("=")
            return key not in settings and not (key == "PartitionName" and
                                                value.split()[0] in drop)

        kept = [line for line in original.splitlines() if kept_line(line)]
        conf.write_text("\n".join([*kept, *(f"{k}={v}" for k, v in settings.items()),
                                    *lines]) + "\n")
        try:
            self.restart_controller()
            yield self
        finally:
            self.cancel_all()
            conf.write_text(original)
            self.restart_controller()

    def reset_usage(self, *accounts: str) -> None:
        """Set the raw fair-share usage of ``accounts`` (and of the users in them) back to
        0, as after the cluster's start (``sacctmgr modify account ... set RawUsage=0``)."""
        for account in accounts:
            self.run("sacctmgr", "-i", "modify", "account", "where", f"name={account}",
                     "set", "RawUsage=0")

    def cancel_all(self, timeout: float = 60.0) -> None:
        """Cancel every job and wait until squeue lists none: a cancelled job stays
        (COMPLETING) for a moment, and a snapshot taken then would count it as running."""
        ids = quiet(["squeue", "-h", "-o", "%i"], env=self.env).stdout.split()
        if ids:
            quiet(["scancel", *ids], env=self.env)
            wait_for("the cancelled jobs to leave the queue", lambda: not quiet(
                ["squeue", "-h", "-o", "%i"], env=self.env).stdout.split(), timeout=timeout,
                log=self.root / "log" / "slurmctld.log")

    # ---------------------------------------------------------------- stop
    def stop(self, keep: bool = False) -> None:
        """Cancel the jobs, then stop every daemon this object started: slurmctld first, then
        the others newest first (slurmd, slurmdbd, mariadbd, munged)."""
        if any(name == "slurmctld" and p.poll() is None for name, p in self.procs):
            try:
                self.cancel_all(timeout=20)
            except (OSError, subprocess.TimeoutExpired, ClusterError):
                pass  # stopping anyway
        order = sorted(reversed(self.procs), key=lambda np: np[0] != "slurmctld")
        for _name, p in order:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs.clear()
        for key, value in self._saved_environ.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved_environ.clear()
        if not keep and not os.environ.get("ADVISOR_KEEP_SLURM"):
            shutil.rmtree(self.root, ignore_errors=True)


if __name__ == "__main__":
    import signal
    import sys

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    cluster = SlurmCluster(release=release(sys.argv[1] if len(sys.argv) > 1 else "22.05"))
    cluster.start()
    print(f"export SLURM_CONF={cluster.root}/etc/slurm.conf PATH={cluster.env['PATH']}"
          f"   # up in {cluster.timings['start']:.1f} s: {cluster.timings}")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        cluster.stop(keep=True)
