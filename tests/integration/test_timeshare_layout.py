"""timeshare/gang on the real slurmctld: the whole change the advisor emits for a
time-sliced partition (slurm.conf keys, PartitionName lines, job_submit.lua) is refused by
--apply up to 23.02 (it needs a restart) and accepted by a restarted slurmctld, enacted by
--apply from 23.11 (reconfigure restarts slurmctld), and runs as simulated:
the routed user's jobs land in ``batch_ts`` and take turns on its CPUs, a job too wide for
it goes to ``batch``, a job asking for another partition keeps it, and the snapshot of the
new layout is one the slurm mode simulates.

The test cluster's ``batch`` holds n[1-4] (16 CPUs each); share 0.25 gives n4 to
``batch_ts``, which ``high`` (all nodes) and ``short`` (n[3-4]) then lose."""
from __future__ import annotations

import contextlib
import getpass
import time
from pathlib import Path

import pandas as pd
import pytest

from advisor.adapters import slurm_cli
from advisor.adapters.slurm_apply import apply_change
from advisor.adapters.slurm_cli import SlurmCommands
from advisor.errors import BadInput
from advisor.plugins.contract import Context
from advisor.plugins.spec import parse_policy
from advisor.policies.timeshare.player import gang_partition
from advisor.whatif.candidates import candidates_for, slurm_candidate
from advisor.whatif.slurmconf import change_for
from tests.integration.slurm_cluster import NODE_CPUS, NODE_MEMORY
from tests.integration.test_slurm_snapshot import submit

pytestmark = pytest.mark.slurm

SPEC = "easy:FCFS:FCFS+timeshare/gang:share=0.25:mpl=2:slice=5s"
SLICE = 5


def _where(slurm, ids) -> dict[int, tuple[str, str]]:
    out = slurm.run("squeue", "-h", "-o", "%i %P %T", "-j", ",".join(map(str, ids)))
    return {int(i): (p, t) for i, p, t in (line.split() for line in out.splitlines())}


@contextlib.contextmanager
def _installed(slurm, fragment, change, snap, commands):
    """The change in force as the advisor says: up to 23.02 --apply refuses it (it needs a
    restart) and it is installed by hand, the fragment's lines replacing slurm.conf's own,
    under a restarted slurmctld; from 23.11 --apply enacts it with ``scontrol
    reconfigure``, once the site has moved the partitions it redefines into the fragment
    (what --apply asks for)."""
    if change.restart:
        with pytest.raises(BadInput, match="PreemptMode"):
            apply_change(change, snap, commands)
        settings = {k: new for k, (_, new) in change.diff.items()}
        lua = slurm.root / "etc" / "job_submit.lua"
        lua.write_text(change.script)
        try:
            with slurm.restarted(lines=change.partitions, drop=change.layout_names,
                                 **settings):
                yield
        finally:
            lua.unlink(missing_ok=True)
        return
    conf = Path(slurm.env["SLURM_CONF"])
    lines = conf.read_text().splitlines()
    moved = [line for line in lines if line.startswith("PartitionName=")]
    conf.write_text("\n".join(line for line in lines if line not in moved) + "\n")
    fragment.write_text("\n".join(moved) + "\n")
    slurm.run("scontrol", "reconfigure")
    time.sleep(2)
    apply_change(change, slurm_cli.snapshot(commands), commands)
    yield


def test_the_time_sliced_partition_on_the_real_slurmctld(included):
    slurm, fragment, _ = included
    commands = SlurmCommands()
    snap = slurm_cli.snapshot(commands)
    idle = pd.DataFrame({"user": [getpass.getuser()], "submit": [0], "efficiency": [0.2]})
    cand = slurm_candidate(parse_policy(SPEC), Context(snap.machine, snap.config,
                                                       history=idle))
    change = change_for(cand, snap)
    print(f"\n{change.fragment}\n" + "\n".join(change.caveats))
    assert cand.fidelity == "approximate"
    # PreemptMode needs a restart up to 23.02; from 23.11 reconfigure restarts slurmctld
    assert change.restart == (slurm.release.name < "23.11")
    assert {k for k in change.diff} >= {"PreemptMode", "SchedulerTimeSlice",
                                        "JobSubmitPlugins"}
    with _installed(slurm, fragment, change, snap, commands):
        parts = slurm.run("scontrol", "show", "partition", "-o")
        ts = next(line for line in parts.splitlines() if "PartitionName=batch_ts" in line)
        assert "OverSubscribe=FORCE:2" in ts and "Nodes=n4" in ts
        live = slurm_cli.snapshot(commands)
        gang = gang_partition(live.machine, live.config)
        assert gang is not None and (gang.name, gang.mpl, gang.slice_s) == \
            ("batch_ts", 2, SLICE)
        assert gang.cpus == NODE_CPUS and candidates_for(live, [])   # it simulates
        # (a suspended job keeps its memory: two must fit in a node's together)
        shared = [submit(slurm, ["-n", str(NODE_CPUS), "--mem", str(NODE_MEMORY // 2)],
                         120) for _ in range(2)]
        wide = submit(slurm, ["-n", str(2 * NODE_CPUS)], 60)
        other = submit(slurm, ["-n", "1", "-p", "high"], 60)
        time.sleep(2)
        where = _where(slurm, [*shared, wide, other])
        assert [where[i][0] for i in shared] == ["batch_ts", "batch_ts"], where
        assert where[wide][0] == "batch" and where[other][0] == "high", where
        turns = {i: [] for i in shared}
        deadline = time.monotonic() + 5 * SLICE
        while time.monotonic() < deadline:
            states = _where(slurm, shared)
            for i in shared:
                if not turns[i] or turns[i][-1] != states[i][1]:
                    turns[i].append(states[i][1])
            time.sleep(1)
        print(f"batch_ts, {5 * SLICE} s: {turns}")
        for i in shared:
            assert {"RUNNING", "SUSPENDED"} <= set(turns[i]), turns
