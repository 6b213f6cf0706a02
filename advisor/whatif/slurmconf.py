"""The change that enacts a candidate, in Slurm's own terms.

``change_for(candidate, snapshot)`` gives a ``SlurmChange``: the slurm.conf lines that differ
from the configuration in effect (an include fragment), the job_submit.lua the candidate
needs, the scontrol commands that re-rank jobs already pending, whether ``scontrol
reconfigure`` suffices (../shared/slurm/MAPPING.md §7), and the fidelity and caveats. The
lines are rendered from the very ``SchedulingConfig`` the simulator played.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from advisor.whatif.candidates import Candidate
from advisor.engine.slurm import job_limit
from advisor.model import SchedulingConfig, Snapshot

FRAGMENT = "advisor.conf"
SCRIPT = "job_submit.lua"
#: settings that slurmctld applies only on a restart up to 23.02 (MAPPING.md §7)
RESTART_UP_TO_2302 = ("PriorityType", "SchedulerType", "SelectType")


def _minutes(seconds: int) -> str:
    return str(max(int(seconds) // 60, 1))


def _params(config: SchedulingConfig) -> str:
    """SchedulerParameters: the site's own, with the backfill settings a candidate sets."""
    items = dict(config.scheduler_parameters)
    reserve = config.backfill.bf_job_part_count_reserve
    if reserve:
        items["bf_job_part_count_reserve"] = str(reserve)
    else:
        items.pop("bf_job_part_count_reserve", None)
    if config.backfill.bf_min_age_reserve:
        items["bf_min_age_reserve"] = str(config.backfill.bf_min_age_reserve)
    return ",".join(k if v in ("", None) else f"{k}={v}" for k, v in items.items())


def conf_lines(config: SchedulingConfig) -> dict[str, str]:
    """The scheduling keys of slurm.conf for ``config``, as slurmctld reads them."""
    tres = ",".join(f"{k}={v:g}" for k, v in config.priority_weight_tres.items())
    return {
        "SchedulerType": config.scheduler_type,
        "SchedulerParameters": _params(config),
        "PriorityType": config.priority_type,
        "PriorityWeightAge": str(config.priority_weight_age),
        "PriorityWeightAssoc": str(config.priority_weight_assoc),
        "PriorityWeightFairshare": str(config.priority_weight_fairshare),
        "PriorityWeightJobSize": str(config.priority_weight_job_size),
        "PriorityWeightPartition": str(config.priority_weight_partition),
        "PriorityWeightQOS": str(config.priority_weight_qos),
        "PriorityWeightTRES": tres,
        "PriorityFlags": ",".join(config.priority_flags),
        "PriorityMaxAge": _minutes(config.priority_max_age),
        "PriorityFavorSmall": "YES" if config.priority_favor_small else "NO",
        "JobSubmitPlugins": ",".join(config.job_submit_plugins),
    }


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

    @property
    def empty(self) -> bool:
        return not self.diff and not self.script

    def as_dict(self) -> dict:
        return {"spec": self.spec, "label": self.label, "fidelity": self.fidelity,
                "caveats": list(self.caveats),
                "diff": {k: {"in_effect": a, "recommended": b} for k, (a, b)
                         in self.diff.items()},
                "fragment": self.fragment, "job_submit_lua": self.script,
                "commands": list(self.commands), "restart": self.restart,
                "activation": "restart slurmctld" if self.restart else "scontrol reconfigure"}


def needs_restart(keys, version: str) -> bool:
    """Up to 23.02 these keys need a restart; from 23.11 reconfigure restarts the daemons
    itself. An unknown version is treated as old (the safe answer)."""
    m = re.match(r"(\d+)\.(\d+)", version or "")
    old = m is None or (int(m.group(1)), int(m.group(2))) <= (23, 2)
    return old and any(k in RESTART_UP_TO_2302 for k in keys)


def change_for(candidate: Candidate, snapshot: Snapshot, epoch: int = 0) -> SlurmChange:
    current = snapshot.config
    config = candidate.config
    caveats = list(candidate.caveats)
    if candidate.site is not None and "lua" not in config.job_submit_plugins:
        config = replace(config, job_submit_plugins=(*config.job_submit_plugins, "lua"))
        if current.job_submit_plugins and "lua" in current.job_submit_plugins:
            caveats.append("the site's own job_submit.lua would be replaced: merge the "
                           "site-factor line into it by hand")
    before, after = conf_lines(current), conf_lines(config)
    diff = {k: (before[k], after[k]) for k in after if before[k] != after[k]}
    fragment = ""
    if diff:
        fragment = (f"# slurm-policy-advisor: {candidate.label} ({candidate.spec})\n"
                    f"# fidelity: {candidate.fidelity}\n"
                    + "".join(f"{k}={after[k]}\n" for k in diff))
    script = candidate.site.script() if candidate.site is not None else ""
    commands = []
    if candidate.site is not None and snapshot.pending:
        pending = list(snapshot.pending)
        submit = np.array([j.submit_time for j in pending], np.int64)
        minutes = np.array([job_limit(j, snapshot.machine) // 60 for j in pending], np.int64)
        values = candidate.site.values(submit, minutes, epoch)
        commands += [f"scontrol update JobId={j.job_id} SiteFactor={int(v)}"
                     for j, v in zip(pending, values)]
    elif not candidate.is_current:
        # the simulation gave every job site factor 0: clear what an earlier ordering set
        commands += [f"scontrol update JobId={j.job_id} SiteFactor=0" for j in snapshot.pending
                     if j.priority_factors.get("site", 0)]
        if "lua" in current.job_submit_plugins:
            caveats.append("if job_submit.lua sets site factors (an earlier advisor "
                           "ordering), new jobs keep getting them: --apply replaces the "
                           "advisor's own script with one that sets none")
    restart = needs_restart(diff, current.slurm_version)
    if diff:
        commands.insert(0, "scontrol reconfigure" if not restart else
                        "# restart slurmctld (PriorityType/SchedulerType change)")
    return SlurmChange(candidate.spec, candidate.label, candidate.fidelity, tuple(caveats),
                       diff, fragment, script, tuple(commands), restart)
