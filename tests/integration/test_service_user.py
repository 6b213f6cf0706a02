"""The shipped systemd unit's way of running the advisor, for real: installed by root into a
folder of its own (as /opt/slurm-policy-advisor), run as an unprivileged user whose home
does not exist (Debian's slurm: /nonexistent; nobody where Slurm is not installed), with
nothing but the environment the unit gives it (its Environment=, and the STATE_DIRECTORY
and CACHE_DIRECTORY that StateDirectory= and CacheDirectory= make). Root only: it installs a
venv with Debian's own Python (the test's interpreter may live in root's home, which that
user cannot read) and switches user with runuser."""
from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "examples" / "systemd" / "slurm-policy-advisor.service"
PYTHON = Path("/usr/bin/python3")
INSTALLED = "/opt/slurm-policy-advisor/.venv/bin/advisor"

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"),
                                reason="needs root (runuser, a venv of the system's Python)")


def _user() -> pwd.struct_passwd:
    for name in ("slurm", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    pytest.skip("no unprivileged user (slurm or nobody) on this machine")


def _unit() -> dict[str, list[str]]:
    """The [Service] section's settings, each key's values in order."""
    out: dict[str, list[str]] = {}
    section = None
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line
        elif section == "[Service]" and "=" in line and not line.startswith("#"):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


@pytest.fixture(scope="module")
def installed():
    """The package installed as root into a folder the user can read but not write, as an
    admin installs it under /opt, with the [ray] extra (the unit's default executor)."""
    if not PYTHON.exists():
        pytest.skip("Debian's python3 is not installed")
    base = Path(tempfile.mkdtemp(prefix="advisor-svc-"))
    base.chmod(0o755)
    try:
        venv = base / "opt"
        subprocess.run([str(PYTHON), "-m", "venv", str(venv)], check=True)
        done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"{ROOT}[ray]"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        yield base, venv / "bin" / "advisor"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _as_user(user, env: dict, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """A command as ``user`` with only ``env`` (and PATH, and the home that does not exist),
    from /, as systemd starts a service."""
    pairs = [f"{k}={v}" for k, v in {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir,
                                     **env}.items()]
    return subprocess.run(["runuser", "-u", user.pw_name, "--", "env", "-i", *pairs, *args],
                          capture_output=True, text=True, timeout=timeout, cwd="/")


def test_the_unit_runs_as_a_user_without_a_home(installed):
    base, advisor = installed
    user = _user()
    assert not os.access(user.pw_dir, os.W_OK) or user.pw_dir == "/nonexistent"
    unit = _unit()
    assert unit["User"] == ["slurm"]
    # what systemd gives the service, under the test's own root folder
    env = _unit_env(base, user)
    state, cache = Path(env["STATE_DIRECTORY"]), Path(env["CACHE_DIRECTORY"])

    # every command answers, --help included, whatever the cache
    for args in (["--version"], ["--help"], ["recommend", "--help"]):
        done = _as_user(user, env, str(advisor), *args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr

    # without the unit's cache folder: one line that says what to set, exit 3
    bare = {k: v for k, v in env.items() if k != "CACHE_DIRECTORY"}
    done = _as_user(user, bare, str(advisor), "compile")
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1 and "NUMBA_CACHE_DIR" in done.stderr, done.stderr

    # ExecStartPre: the simulator is compiled into the cache folder, once
    pre = unit["ExecStartPre"][0].split()
    assert pre[0] == INSTALLED and pre[1:] == ["compile"]
    done = _as_user(user, env, str(advisor), *pre[1:], "--json")
    assert done.returncode == 0, done.stderr
    assert str(cache) in done.stdout and '"compiled_now": true' in done.stdout

    # ExecStart, on a trace instead of slurmctld: no compiling, the store in the state folder
    start = unit["ExecStart"][0].split()
    assert start[0] == INSTALLED and start[1:4] == ["recommend", "--from", "slurm"]
    write = start[start.index("--write") + 1].replace("/var/lib", str(base / "var" / "lib"))
    done = _as_user(user, env, str(advisor), "recommend", "--from", "swf:KTH-SP2@150d",
                    "--samples", "2", "--write", write)
    assert done.returncode in (0, 10), done.stderr
    assert "compiling" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert (state / "advisor.sqlite").is_file()
    report = _as_user(user, env, str(advisor), "report", "--last", "1")
    assert report.returncode == 0 and "swf:KTH-SP2@150d" in report.stdout, report.stderr


def _unit_env(base: Path, user) -> dict[str, str]:
    """What systemd gives the unit (its Environment=, STATE_DIRECTORY, CACHE_DIRECTORY),
    under ``base``, the folders made and owned for ``user``."""
    unit = _unit()
    state = base / "var" / "lib" / unit["StateDirectory"][0]
    cache = base / "var" / "cache" / unit["CacheDirectory"][0]
    for folder in (state, cache):
        folder.mkdir(parents=True, exist_ok=True)
        os.chown(folder, user.pw_uid, user.pw_gid)
    env = {"STATE_DIRECTORY": str(state), "CACHE_DIRECTORY": str(cache)}
    for setting in unit.get("Environment", []):
        key, value = setting.split("=", 1)
        env[key] = value.replace("/var/lib", str(base / "var" / "lib"))
    return env


def test_every_command_as_the_unit_user_without_its_cache_folder(installed):
    """The unit's user with no cache folder at all (no home, no CacheDirectory=): the
    commands that simulate nothing answer (exit 0, or 3 for a Slurm that is not there); the
    ones that would compile the simulator stop at once, in one line saying what to set."""
    base, advisor = installed
    user = _user()
    env = {k: v for k, v in _unit_env(base, user).items() if k != "CACHE_DIRECTORY"}
    from advisor.cli_args import _subparsers, build_parser
    from advisor.cli_plugins import commands
    for name in _subparsers(build_parser(commands())):
        done = _as_user(user, env, str(advisor), name, "--help")
        assert done.returncode == 0 and "Traceback" not in done.stderr, (name, done.stderr)
    for args in (["policies"], ["policies", "--json"], ["report"]):
        done = _as_user(user, env, str(advisor), *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr and "NUMBA" not in done.stderr, done.stderr
    for args in (["replay", "KTH-SP2", "--policy", "easy:SPF:SPF"],
                 ["snapshot", "--from", "swf:KTH-SP2@150d"],
                 ["recommend", "--from", "swf:KTH-SP2@150d", "--samples", "1"]):
        done = _as_user(user, env, str(advisor), *args)
        assert done.returncode == 3, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and "NUMBA_CACHE_DIR" in done.stderr, done.stderr
    done = _as_user(user, {**env, "PATH": "/nonexistent"}, str(advisor), "history", "--out",
                    str(Path(env["STATE_DIRECTORY"]) / "h.swf"))
    assert done.returncode == 3 and "sacct: not found" in done.stderr, done.stderr


def test_the_cron_example_reports_a_failure_without_mail(installed, tmp_path):
    """examples/cron/advisor-cron.sh as the service user on a host without `mail`: a failed
    run is written to the script's standard error and ends it with the advisor's code."""
    base, advisor = installed
    user = _user()
    env = _unit_env(base, user)
    tools = base / "bin"          # the commands the script runs, and no mail
    tools.mkdir(exist_ok=True)
    for name in ("sh", "mkdir", "mv", "rm", "cat"):
        (tools / name).unlink(missing_ok=True)
        (tools / name).symlink_to(shutil.which(name))
    script = base / "advisor-cron.sh"
    shutil.copy(ROOT / "examples" / "cron" / "advisor-cron.sh", script)
    script.chmod(0o755)
    out = Path(env["STATE_DIRECTORY"]) / "cron"
    done = _as_user(user, {**env, "PATH": str(tools), "ADVISOR": str(advisor),
                           "OUT": str(out), "SOURCE": "swf:KTH-SP2@5000d"},
                    str(tools / "sh"), str(script))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "failed (exit 2)" in done.stderr and "after its last job" in done.stderr, \
        done.stderr
    assert not (out / "last.json.tmp").exists() and not (out / "last.json").exists()
