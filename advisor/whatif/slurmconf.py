"""The change that enacts a candidate, in Slurm's own terms.

``change_for(candidate, snapshot)`` gives a ``SlurmChange``: the slurm.conf lines that differ
from the configuration in effect and the candidate's partition layout (an include fragment),
the job_submit.lua its job rules need, the scontrol commands that apply those rules to jobs
already pending, whether ``scontrol reconfigure`` suffices (docs/slurm-mapping.md, "What
changes at runtime"), and the fidelity and caveats. Everything is rendered from the very
candidate the simulator played, whatever families it came from.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, replace

from advisor.model import (SLURM_CONF, BackfillParameters, Partition, SchedulingConfig,
                           RESTART_KEYS, Snapshot, release_of)
from advisor.plugins.enactment import LuaFragment
from advisor.whatif.candidates import Candidate
from advisor.whatif.scenario import job_columns

FRAGMENT = "advisor.conf"
SCRIPT = "job_submit.lua"
COMMANDS = "commands.sh"
#: the files ``--write DIR`` may hold: one recommended set, and nothing else
WRITTEN = (FRAGMENT, SCRIPT, COMMANDS)
MARK = "slurm-policy-advisor"
#: the scontrol field each kind of job rule sets on pending jobs
RULE_FIELDS = (("route", "Partition"), ("site_factor", "SiteFactor"))


def _minutes(seconds: int) -> str:
    return str(max(int(seconds) // 60, 1))


def _implied(raw: dict, f: dataclasses.Field):
    """What SchedulerParameters as written says of one typed setting."""
    if f.name not in raw:
        return f.default
    if isinstance(f.default, bool):
        return True
    try:
        return int(raw[f.name])
    except (TypeError, ValueError):
        return None


def _params(config: SchedulingConfig) -> str:
    """SchedulerParameters: the site's own as written, with every typed setting that says
    otherwise (a candidate's) written over it; a setting back at Slurm's default is
    dropped."""
    items = dict(config.scheduler_parameters)
    for f in dataclasses.fields(BackfillParameters):
        value = getattr(config.backfill, f.name)
        if value == _implied(items, f):
            continue
        if value == f.default:
            items.pop(f.name, None)
        else:
            items[f.name] = "" if value is True else str(value)
    return ",".join(k if v in ("", None) else f"{k}={v}" for k, v in items.items())


def conf_lines(config: SchedulingConfig) -> dict[str, str]:
    """The scheduling keys of slurm.conf a candidate may change (the model's ``SLURM_CONF``)
    for ``config``, as slurmctld reads them."""
    return {key: _written(getattr(config, name), kind, config)
            for key, name, kind, written in SLURM_CONF if written}


def _written(value, kind: str, config: SchedulingConfig) -> str:
    """A value of a ``SLURM_CONF`` kind as slurm.conf takes it."""
    if kind == "params":
        return _params(config)
    if kind == "tres":
        return ",".join(f"{k}={v:g}" for k, v in value.items())
    if kind == "list":
        return ",".join(value)
    if kind == "bool":
        return "YES" if value else "NO"
    if kind == "minutes":
        return _minutes(value)
    return str(value)


def hostlist(names: tuple[str, ...]) -> str:
    """Node names as a Slurm hostlist: n[001-004,007],gpu1."""
    groups: dict[tuple[str, int], list[int]] = {}
    order, plain = [], []
    for name in names:
        m = re.match(r"^(.*?)(\d+)$", name)
        if not m:
            plain.append(name)
            continue
        digits = m.group(2)   # zero-padded numbers keep their width; others have none
        key = (m.group(1), len(digits) if digits.startswith("0") and len(digits) > 1 else 0)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    out = []
    for prefix, width in order:
        runs, numbers = [], sorted(set(groups[prefix, width]))
        for n in numbers:
            if runs and n == runs[-1][1] + 1:
                runs[-1][1] = n
            else:
                runs.append([n, n])
        text = ",".join(f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}"
                        for a, b in runs)
        out.append(f"{prefix}{text}" if len(numbers) == 1 else f"{prefix}[{text}]")
    return ",".join(out + plain)


def partition_line(p: Partition) -> str:
    """A PartitionName line of slurm.conf."""
    items = [f"PartitionName={p.name}", f"Nodes={hostlist(p.nodes)}",
             "MaxTime=" + ("UNLIMITED" if p.max_time is None else _minutes(p.max_time))]
    if p.default_time is not None:
        items.append(f"DefaultTime={_minutes(p.default_time)}")
    items += [f"PriorityTier={p.priority_tier}", f"PriorityJobFactor={p.priority_job_factor}",
              f"OverSubscribe={p.oversubscribe}"]
    if p.preempt_mode:
        items.append(f"PreemptMode={p.preempt_mode}")
    items.append(f"State={p.state}")
    if p.default:
        items.append("Default=YES")
    return " ".join(items)


def job_submit_lua(fragments: list[LuaFragment], title: str = "") -> str:
    """One job_submit.lua doing what every fragment does, in order."""
    helpers = []
    for f in fragments:
        if f.helpers and f.helpers not in helpers:
            helpers.append(f.helpers)
    return (f"-- {MARK}: {title or '; '.join(f.title for f in fragments)}\n"
            + "".join(helpers)
            + "function slurm_job_submit(job_desc, part_list, submit_uid)\n"
            + "".join(f.submit for f in fragments)
            + "   return slurm.SUCCESS\nend\n\n"
            "function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)\n"
            + "".join(f.modify for f in fragments)
            + "   return slurm.SUCCESS\nend\n")


@dataclass(frozen=True)
class SlurmChange:
    spec: str
    label: str
    fidelity: str
    caveats: tuple[str, ...]
    diff: dict[str, tuple[str, str]]     # key: (in effect, recommended)
    fragment: str                        # the include file's text ("" when no change)
    script: str                          # job_submit.lua ("" when none is needed)
    commands: tuple[str, ...]            # scontrol commands, in order
    restart: bool                        # a slurmctld restart is needed
    partitions: tuple[str, ...] = ()     # PartitionName lines: new, changed or drained
    removed: tuple[str, ...] = ()        # partitions the layout removes
    admin: tuple[str, ...] = ()          # of the commands, what a family changes beyond
    undo: tuple[str, ...] = ()           # slurm.conf (sacctmgr), and how to put it back

    @property
    def layout_names(self) -> tuple[str, ...]:
        """Every partition the change defines, drains or removes."""
        return tuple(line.split()[0].split("=", 1)[1] for line in self.partitions) + \
            self.removed

    @property
    def empty(self) -> bool:
        return not self.diff and not self.script and not self.partitions and \
            not self.removed and not self.commands

    def files(self) -> dict[str, tuple[str, int]]:
        """The set ``--write DIR`` holds, name: (text, mode): the include fragment, the
        job_submit.lua when one is needed, and the scontrol commands as a script."""
        files = {FRAGMENT: (self.fragment, 0o644)}
        if self.script:
            files[SCRIPT] = (self.script, 0o644)
        files[COMMANDS] = ("#!/bin/sh\nset -e\n" + "".join(c + "\n" for c in self.commands),
                           0o755)
        return files

    def as_dict(self) -> dict:
        return {"spec": self.spec, "label": self.label, "fidelity": self.fidelity,
                "caveats": list(self.caveats),
                "diff": {k: {"in_effect": a, "recommended": b} for k, (a, b)
                         in self.diff.items()},
                "partitions": list(self.partitions), "removed_partitions": list(self.removed),
                "fragment": self.fragment, "job_submit_lua": self.script,
                "commands": list(self.commands), "undo": list(self.undo),
                "restart": self.restart,
                "activation": "restart slurmctld" if self.restart else "scontrol reconfigure"}


def needs_restart(keys, version: str) -> bool:
    """Whether ``keys`` need slurmctld restarted on ``version``: where reconfigure does not
    restart it (up to 23.02, ``advisor.releases``) some keys apply only on a restart. An
    unknown version is treated as the oldest release (the safe answer)."""
    return not release_of(version).release.reconfigure_restarts and \
        any(k in RESTART_KEYS for k in keys)


def change_for(candidate: Candidate, snapshot: Snapshot) -> SlurmChange:
    current = snapshot.config
    config = candidate.config
    enactment = candidate.enactment
    caveats = list(candidate.caveats)
    # a rule that does nothing at submission (a plan's order) is only scontrol commands;
    # a change of settings alone keeps the rules in effect, and their script
    rules = [r for r in enactment.rules if (r.lua.submit or r.lua.modify)
             and not enactment.keeps_job_rules]
    if rules and "lua" not in config.job_submit_plugins:
        config = replace(config, job_submit_plugins=(*config.job_submit_plugins, "lua"))
    before, after = conf_lines(current), conf_lines(config)
    diff = {k: (before[k], after[k]) for k in after if before[k] != after[k]}
    lines, removed = layout_change(enactment.partitions, snapshot)
    if lines or removed:
        caveats.append("a PartitionName line replaces slurm.conf's own definition of that "
                       "partition: remove the site's line when installing it")
    drained = [line.split()[0][len("PartitionName="):] for line in lines if "State=DRAIN" in line]
    if drained:
        caveats.append(f"partition(s) {', '.join(drained)} stay, drained, until their running "
                       "jobs end; a later run removes them")
    fragment = ""
    if diff or lines or removed:
        fragment = (f"# {MARK}: {candidate.label} ({candidate.spec})\n"
                    f"# fidelity: {candidate.fidelity}\n"
                    + "".join(f"{k}={after[k]}\n" for k in diff)
                    + "".join(line + "\n" for line in lines)
                    + "".join(f"# removes partition {name}\n" for name in removed))
    script = job_submit_lua([r.lua for r in rules]) if rules else ""
    commands = [] if enactment.keeps_job_rules else job_commands(candidate, snapshot)
    if enactment.site_factor is None and not candidate.is_current and \
            not enactment.keeps_job_rules:
        # the simulation gave every job site factor 0: clear what an earlier ordering set
        commands += [f"scontrol update JobId={j.job_id} SiteFactor=0" for j in snapshot.pending
                     if j.priority_factors.get("site", 0)]
        if "lua" in current.job_submit_plugins:
            caveats.append("if job_submit.lua sets site factors (an earlier advice's), "
                           "new jobs keep getting them: --apply replaces the advisor's own "
                           "script with one that sets none")
    commands = [*enactment.commands, *commands]   # (the limits first, then the jobs)
    restart = needs_restart(diff, current.slurm_version)
    if diff or lines or removed:
        keys = "/".join(k for k in diff if k in RESTART_KEYS)
        commands.insert(0, "scontrol reconfigure" if not restart else
                        f"# restart slurmctld ({keys} change)")
    return SlurmChange(candidate.spec, candidate.label, candidate.fidelity, tuple(caveats),
                       diff, fragment, script, tuple(commands), restart, lines, removed,
                       enactment.commands, enactment.undo)


def layout_change(layout: tuple[Partition, ...] | None, snapshot: Snapshot
                  ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The PartitionName lines a layout needs (partitions new or changed, and those it drops
    that still run jobs, drained: Slurm fails the jobs of a partition that disappears) and
    the partitions it removes."""
    if layout is None or layout == snapshot.machine.partitions:
        return (), ()
    current = {p.name: p for p in snapshot.machine.partitions}
    names = {p.name for p in layout}
    busy = {j.partition for j in snapshot.running}
    gone = [p for p in snapshot.machine.partitions if p.name not in names]
    keep = [p for p in layout if current.get(p.name) != p] + \
        [replace(p, state="DRAIN", default=False) for p in gone if p.name in busy]
    return (tuple(partition_line(p) for p in keep),
            tuple(p.name for p in gone if p.name not in busy))


def job_commands(candidate: Candidate, snapshot: Snapshot) -> list[str]:
    """``scontrol update`` of each pending job whose value of a job rule differs from what
    it has now (a site factor: every pending job, as the simulation assumed)."""
    pending = list(snapshot.pending)
    commands = []
    for part, name in RULE_FIELDS:
        rule = getattr(candidate.enactment, part)
        if rule is None or not pending:
            continue
        values = rule.values(job_columns(pending, snapshot), snapshot.time)
        for j, v in zip(pending, values):
            if name == "Partition":
                if str(v) != ",".join(j.asked):
                    commands.append(f"scontrol update JobId={j.job_id} Partition={v}")
            else:
                commands.append(f"scontrol update JobId={j.job_id} {name}={int(v)}")
    return commands
