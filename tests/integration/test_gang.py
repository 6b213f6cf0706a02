"""Slurm's gang scheduling on the real test cluster: the behaviour the time-sliced partition
model assumes (advisor.policies.timeshare.kernel_gang), configured by the lines the advisor writes
(advisor.whatif.slurmconf). Two jobs that each take all CPUs of one node in a partition
with OverSubscribe=FORCE:2, under PreemptMode=GANG (a restart of slurmctld) and the
shortest time slice Slurm allows (5 s), alternate between RUNNING and SUSPENDED."""
from __future__ import annotations

import time
from dataclasses import replace

from advisor.model import Partition, SchedulingConfig
from advisor.whatif.slurmconf import conf_lines, partition_line
from tests.integration.slurm_cluster import NODE_CPUS, NODE_MEMORY

SLICE = 5
_WRITTEN = conf_lines(replace(SchedulingConfig(), preempt_mode="GANG",
                              scheduler_time_slice=SLICE))
GANG = {k: _WRITTEN[k] for k in ("PreemptType", "PreemptMode", "SchedulerTimeSlice")}
PARTITION = partition_line(Partition("ts", ("n1",), oversubscribe="FORCE:2"))


def test_two_jobs_on_the_same_cpus_take_turns(clean_queue):
    slurm = clean_queue
    with slurm.restarted(lines=(PARTITION,), **GANG):
        assert "GANG" in slurm.run("scontrol", "show", "config")
        assert "OverSubscribe=FORCE:2" in slurm.run("scontrol", "show", "partition", "ts")
        # (a suspended job keeps its memory: two must fit in a node's together)
        ids = [slurm.run("sbatch", "--parsable", "-o", "/dev/null", "-p", "ts", "-N",
                         "1", "-n", str(NODE_CPUS), "--mem", str(NODE_MEMORY // 2),
                         "--wrap", "sleep 120").strip()
               for _ in range(2)]
        seen = {i: set() for i in ids}
        turns = {i: [] for i in ids}        # the job's states, one entry per change
        both_running = 0
        deadline = time.monotonic() + 6 * SLICE
        while time.monotonic() < deadline:
            states = dict(line.split() for line in slurm.run(
                "squeue", "-h", "-o", "%i %T", "-j", ",".join(ids)).splitlines())
            for i in ids:
                seen[i].add(states.get(i, "GONE"))
                if not turns[i] or turns[i][-1] != states.get(i):
                    turns[i].append(states.get(i))
            both_running += all(states.get(i) == "RUNNING" for i in ids)
            time.sleep(1)
        print(f"\ngang on n1, {6 * SLICE} s: {turns}, polls with both running: "
              f"{both_running}")
        for i in ids:
            assert {"RUNNING", "SUSPENDED"} <= seen[i], seen
            swaps = [s for s in turns[i] if s in ("RUNNING", "SUSPENDED")]
            assert len(swaps) >= 3, turns            # at least run, stop, run again
        assert both_running <= 2          # a switch may be caught half done, not more
