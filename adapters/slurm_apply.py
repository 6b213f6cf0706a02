"""``--apply``: put a recommended change in effect on a live cluster, or leave it as it was.

The advisor owns two files and nothing else: its slurm.conf include fragment (default
``advisor.conf`` beside slurm.conf) and, when a candidate needs one, ``job_submit.lua``
(where slurmctld looks for it: beside slurm.conf). slurm.conf itself is never edited; the
site adds one line, ``Include <fragment>``, after every scheduling key (a later line wins).

Steps, each checked; a failure after the first write restores every file from its backup,
reconfigures again and resets the site factors it changed, then raises ``ApplyFailed``:
1. refuse what ``scontrol reconfigure`` cannot enact (docs/slurm-mapping.md, "What changes
   at runtime"), a partition that slurm.conf itself defines and the change would redefine
   or remove (the advisor edits only its fragment), a slurm.conf without the Include line
   or with a scheduling key after it, and a job_submit.lua that is the site's own (it would
   be replaced);
2. back up each file (``.bak``) and write the new one atomically. The fragment keeps the
   keys and partitions an earlier change set and takes the new values: the diff is against
   the configuration in effect, which includes them. A partition the change removes stays
   until its pending jobs have moved (Slurm fails the jobs of a partition that vanishes);
3. ``scontrol reconfigure``; 4. ``scontrol show config`` must show every changed key with
   its new value, and ``scontrol show partition`` every partition as written; 5. what a
   family changes beyond slurm.conf (``sacctmgr`` limits; a rollback runs its undo), then
   the scontrol commands that re-rank or move pending jobs (site factors, partitions). A job
   that started or ended meanwhile is skipped, not a failure; 6. with partitions to remove,
   the final fragment, ``scontrol reconfigure``, and the check that they are gone.
"""
from __future__ import annotations

import re
import shlex
import time as clock
from dataclasses import dataclass
from pathlib import Path

from advisor.adapters.files import atomic_write
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.adapters.slurm_text import parse_config, parse_partitions
from advisor.errors import AdvisorError, BadInput, SourceUnavailable
from advisor.interrupts import deferred
from advisor.model import RESTART_KEYS, Snapshot
from advisor.whatif.slurmconf import (FRAGMENT, MARK, SCRIPT,
                                      SlurmChange, conf_lines, job_submit_lua)

#: job_submit.lua when the candidate needs no job rule but an earlier advisor script set
#: one: new jobs get none (the simulation of such a candidate gives every job site factor 0)
NEUTRAL_SCRIPT = job_submit_lua([], "no site factor (the ordering in effect needs none)")
VERIFY_TIMEOUT = 15.0


class ApplyFailed(AdvisorError):
    """--apply failed and everything it changed was put back (exit code 6)."""

    exit_code = 6


class RollbackFailed(AdvisorError):
    """--apply failed and so did putting things back: the message says what to restore by
    hand (exit code 7)."""

    exit_code = 7


@dataclass(frozen=True)
class Applied:
    fragment: str
    script: str | None
    backups: tuple[str, ...]
    verified: dict[str, str]          # key: the value scontrol show config reports
    site_updates: int
    skipped_jobs: tuple[int, ...]     # no longer pending when their update ran

    def as_dict(self) -> dict:
        return {"fragment": self.fragment, "job_submit_lua": self.script,
                "backups": list(self.backups), "verified": self.verified,
                "site_updates": self.site_updates, "skipped_jobs": list(self.skipped_jobs)}


def slurm_conf_path(commands: SlurmCommands) -> Path:
    """The slurm.conf that slurmctld read (``scontrol show config``'s SLURM_CONF)."""
    for line in commands.run("scontrol", "show", "config").splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "SLURM_CONF":
            return Path(value.strip())
    raise BadInput("scontrol show config names no SLURM_CONF; pass --include FILE")


def check_include(conf: Path, fragment: Path, keys) -> None:
    """slurm.conf must include ``fragment`` after every line that sets one of ``keys``."""
    try:
        lines = conf.read_text().splitlines()
    except OSError as e:
        raise SourceUnavailable(f"cannot read {conf}: {e.strerror or e}") from e
    at, last = None, {}
    for n, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip()
        word, _, rest = line.partition(" ")
        if word.lower() == "include" and _resolve(rest.strip(), conf) == fragment.resolve():
            at = n
        key = line.split("=", 1)[0].strip()
        if "=" in line and key.lower() in {k.lower() for k in keys}:
            last[key] = n
    fix = f"add 'Include {fragment}' as the last line of {conf}"
    if at is None:
        raise BadInput(f"{conf} does not include {fragment}: {fix}")
    late = sorted(k for k, n in last.items() if n > at)
    if late:
        raise BadInput(f"{conf} sets {', '.join(late)} after 'Include {fragment}', which "
                       f"would override the advisor's value: {fix}")


def _resolve(path: str, conf: Path) -> Path:
    p = Path(path)
    return (p if p.is_absolute() else conf.parent / p).resolve()


def merged_fragment(old: str, change: SlurmChange, remove: bool = True) -> str:
    """The keys and partitions an earlier fragment set, updated with this change's new
    values; ``remove``: without the partitions the change removes."""
    keys, parts = {}, {}
    for raw in old.splitlines():
        line = raw.split("#", 1)[0].strip()
        key, sep, value = line.partition("=")
        if sep and key.strip() == "PartitionName":
            parts[value.split()[0]] = line
        elif sep:
            keys[key.strip()] = value.strip()
    keys.update({k: new for k, (_, new) in change.diff.items()})
    for line in change.partitions:
        parts[line.split()[0].split("=", 1)[1]] = line
    if remove:
        for name in change.removed:
            parts.pop(name, None)
    stamp = clock.strftime("%Y-%m-%dT%H:%M:%S%z")
    return (f"# {MARK}: {change.label} ({change.spec}), applied {stamp}\n"
            f"# fidelity: {change.fidelity}; the previous version is in {FRAGMENT}.bak\n"
            + "".join(f"{k}={v}\n" for k, v in keys.items())
            + "".join(f"{line}\n" for line in parts.values()))


def check_partitions(conf: Path, names) -> None:
    """slurm.conf itself must not define a partition the change redefines or removes."""
    try:
        lines = conf.read_text().splitlines()
    except OSError as e:
        raise SourceUnavailable(f"cannot read {conf}: {e.strerror or e}") from e
    for n, raw in enumerate(lines, 1):
        words = raw.split("#", 1)[0].split()
        key, _, name = (words[0] if words else "").partition("=")
        if key.lower() == "partitionname" and name in names:
            raise BadInput(f"{conf} defines partition {name} itself (line {n}), which this "
                           f"change redefines or removes: move that line into {FRAGMENT}, "
                           "or use --write DIR and install the PartitionName lines by hand")


def _normal(value: str) -> str:
    """A slurm.conf value as compared: case, item order and plugin prefixes aside."""
    items = (re.sub(r"^job_submit/", "", v.strip().lower()) for v in value.split(","))
    return ",".join(sorted(v for v in items if v and v not in ("(null)", "none")))


def _ours(path: Path) -> bool:
    return not path.exists() or MARK in path.read_text(errors="replace").split("\n", 1)[0]


def apply_change(change: SlurmChange, snapshot: Snapshot, commands: SlurmCommands,
                 fragment: Path | None = None) -> Applied:
    """Enact ``change`` (from ``advisor.whatif.slurmconf.change_for`` on ``snapshot``) or raise
    with everything put back; see the module docstring."""
    if change.restart:
        keys = "/".join(k for k in change.diff if k in RESTART_KEYS)
        raise BadInput(f"this change needs a slurmctld restart ({keys}): --apply does only "
                       "what 'scontrol reconfigure' can; use --write DIR and restart "
                       "slurmctld by hand")
    conf = slurm_conf_path(commands)
    fragment = fragment or conf.parent / FRAGMENT
    check_partitions(conf, set(change.layout_names))
    old_fragment = _read(fragment)
    text = merged_fragment(old_fragment, change, remove=False)
    final = merged_fragment(old_fragment, change) if change.removed else None
    check_include(conf, fragment, {line.split("=", 1)[0] for line in text.splitlines()
                                   if "=" in line and not line.startswith("#")})
    script_path = conf.parent / SCRIPT
    script = change.script
    if not script and "lua" in snapshot.config.job_submit_plugins and script_path.exists() \
            and _ours(script_path) and NEUTRAL_SCRIPT != script_path.read_text():
        script = NEUTRAL_SCRIPT          # an earlier advisor ordering's script: retire it
    if script and not _ours(script_path):
        raise BadInput(f"{script_path} is the site's own job_submit.lua and --apply would "
                       "replace it: merge the site-factor line into it by hand (--write DIR "
                       "gives the advisor's version)")
    files = [(fragment, text)]
    if script:
        files.append((script_path, script))
    # the fragment is put back even when it was empty: slurm.conf includes it
    saved = [(path, _read(path) if path.exists() or path == fragment else None)
             for path, _ in files]
    backups, updated, admin = [], [], []
    try:
        for (path, content), (_, old) in zip(files, saved):
            if old:
                atomic_write(path.with_name(path.name + ".bak"), old)
                backups.append(str(path.with_name(path.name + ".bak")))
            atomic_write(path, content)
        commands.run("scontrol", "reconfigure")
        verified = _verify(change, commands)
        for line in change.admin:        # what a family changes beyond slurm.conf
            admin.append(line)
            commands.run(*shlex.split(line))
        skipped = _rerank(change, commands, updated)
        if final is not None:          # the jobs have moved: the old partitions can go
            atomic_write(fragment, final)
            commands.run("scontrol", "reconfigure")
            _verify(change, commands, final=True)
    except BaseException as e:   # any failure, an OSError or an interrupt too: put back
        _roll_back(saved, snapshot, updated, commands, e, change.undo if admin else ())
    return Applied(str(fragment), str(script_path) if script else None, tuple(backups),
                   verified, len(updated), tuple(skipped))


def _read(path: Path) -> str:
    try:
        return path.read_text() if path.exists() else ""
    except OSError as e:
        raise SourceUnavailable(f"cannot read {path}: {e.strerror or e}") from e


def _verify(change: SlurmChange, commands: SlurmCommands, final: bool = False
            ) -> dict[str, str]:
    """What ``scontrol show config`` reports for each changed key, once it and ``scontrol
    show partition`` match the change (``final``: the removed partitions gone too); the
    controller applies a reconfigure before it answers, the poll is a margin."""
    deadline = clock.monotonic() + VERIFY_TIMEOUT
    while True:
        shown = conf_lines(parse_config(commands.run("scontrol", "show", "config")))
        wrong = {k: f"{k}={shown[k]}, not {new}" for k, (_, new) in change.diff.items()
                 if _normal(shown[k]) != _normal(new)}
        if change.partitions or change.removed:
            wrong.update(_partitions_wrong(change, commands, final))
        if not wrong:
            return {k: shown[k] for k in change.diff}
        if clock.monotonic() > deadline:
            raise ApplyFailed("after scontrol reconfigure, scontrol show config or "
                              f"partition has {next(iter(wrong.values()))}")
        clock.sleep(0.5)


def _partitions_wrong(change: SlurmChange, commands: SlurmCommands, final: bool
                      ) -> dict[str, str]:
    """The partitions slurmctld does not show as the change writes them (name: how)."""
    text = commands.run("scontrol", "show", "partition", "-o")
    nodes = tuple(n for p in parse_partitions(text) for n in p.nodes)
    live = {p.name: p for p in parse_partitions(text, nodes)}
    wrong = {}
    for want in parse_partitions("\n".join(change.partitions)):
        got = live.get(want.name)
        seen = None if got is None else (set(got.nodes), got.max_time, got.state)
        if seen != (set(want.nodes), want.max_time, want.state):
            wrong[want.name] = f"partition {want.name} " + (
                "missing" if got is None else f"as Nodes={','.join(got.nodes)} "
                f"MaxTime={got.max_time} State={got.state}")
    if final:
        wrong.update({name: f"partition {name} still there" for name in change.removed
                      if name in live})
    return wrong


def _rerank(change: SlurmChange, commands: SlurmCommands, updated: list) -> list[int]:
    """Run the change's job updates; ``updated`` collects (job id, field) as each
    succeeds."""
    skipped = []
    for line in change.commands:
        args = shlex.split(line)
        if args[:2] != ["scontrol", "update"] or line in change.admin:
            continue
        job = int(next(a for a in args if a.startswith("JobId=")).split("=")[1])
        fields = [a.split("=", 1)[0] for a in args[2:] if not a.startswith("JobId=")]
        try:
            commands.run(*args)
            updated += [(job, f) for f in fields]
        except SourceUnavailable:
            if commands.run("squeue", "-h", "-t", "PD", "-j", str(job), "-o", "%i").strip():
                raise
            skipped.append(job)    # started or ended since the snapshot
    return skipped


def _old_values(snapshot: Snapshot) -> dict[tuple[int, str], str]:
    """What each pending job had before: its site factor and its partitions."""
    old = {}
    for j in snapshot.pending:
        old[j.job_id, "SiteFactor"] = str(int(j.priority_factors.get("site", 0)))
        old[j.job_id, "Partition"] = ",".join(j.asked)
    return old


def _roll_back(saved, snapshot: Snapshot, updated: list[tuple[int, str]],
               commands: SlurmCommands, cause: BaseException, undo: tuple[str, ...] = ()):
    with deferred():       # a second signal must not leave the rollback half done
        _put_back(saved, snapshot, updated, commands, cause, undo)
    if not isinstance(cause, Exception):
        raise cause                  # an interrupt: put back, then stop as asked
    raise ApplyFailed(f"--apply failed and was rolled back: {_what(cause)}") from cause


def _put_back(saved, snapshot: Snapshot, updated: list[tuple[int, str]],
              commands: SlurmCommands, cause: BaseException, undo: tuple[str, ...]):
    try:
        for line in undo:
            commands.run(*shlex.split(line))
        for path, old in saved:
            if old is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, old)
        commands.run("scontrol", "reconfigure")
        old = _old_values(snapshot)
        for job, name in updated:
            commands.run("scontrol", "update", f"JobId={job}", f"{name}={old[job, name]}")
    except (AdvisorError, OSError) as e:
        where = ", ".join(f"{p} (backup {p}.bak)" for p, _ in saved)
        raise RollbackFailed(f"--apply failed ({_what(cause)}) and so did the rollback "
                             f"({_what(e)}): restore {where} and run scontrol "
                             "reconfigure") from e


def _what(e: BaseException) -> str:
    """An error in words: the advisor's own message, or an OSError's file and reason."""
    if isinstance(e, OSError) and not isinstance(e, AdvisorError):
        return f"{e.filename or ''}: {e.strerror or e}".lstrip(": ")
    return str(e)
