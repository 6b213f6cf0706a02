"""A play's sub-second times read from slurmctld's log (``advisor.studies.slurmctld_log``),
on lines as slurmctld 22.05.8 and 24.11.5 wrote them on the test cluster (2026-12-02, at
SlurmctldDebug=verbose with DebugFlags=Backfill)."""
from __future__ import annotations

from advisor.studies.slurmctld_log import play_times

LOG = """\
[2026-12-02T07:01:12.294] sched/backfill: _attempt_backfill: beginning
[2026-12-02T07:01:13.216] _slurm_rpc_submit_batch_job: JobId=1 InitPrio=1 usec=526
[2026-12-02T07:01:13.294] sched/backfill: _attempt_backfill: beginning
[2026-12-02T07:01:13.295] sched/backfill: _start_job: Started JobId=1 in batch on n[1-4]
[2026-12-02T07:01:14.217] _slurm_rpc_submit_batch_job: JobId=2 InitPrio=1 usec=842
[2026-12-02T07:01:14.295] sched/backfill: _attempt_backfill: beginning
[2026-12-02T07:01:15.218] _slurm_rpc_submit_batch_job: JobId=12 InitPrio=1 usec=457
[2026-12-02T07:01:16.005] sched: Allocate JobId=12 NodeList=n3 #CPUs=1 Partition=batch
[2026-12-02T07:02:03.311] _job_complete: JobId=1 WEXITSTATUS 0
[2026-12-02T07:02:03.312] _job_complete: JobId=1 done
[2026-12-02T07:02:03.377] sched/backfill: _attempt_backfill: beginning
[2026-12-02T07:02:03.377] sched/backfill: _start_job: Started JobId=2 in batch on n1
[2026-12-02T07:02:04.418] _job_complete: JobId=2 WEXITSTATUS 0
[2026-12-02T07:02:04.419] _job_complete: JobId=2 done
[2026-12-02T07:02:05.020] _job_complete: JobId=12 done
[2026-12-02T07:02:05.377] sched/backfill: _attempt_backfill: beginning
"""
T0 = 1796194873216  # 2026-12-02T07:01:13.216 UTC, in ms


def test_each_job_s_times_come_from_its_own_lines():
    out = play_times(LOG.splitlines(), [1, 2, 12])
    assert out["jobs"][1] == [T0, T0 + 79, T0 + 50096]
    assert out["jobs"][2] == [T0 + 1001, T0 + 50161, T0 + 51203]
    # a start by the main scheduler, and the JobId=12 lines not read as JobId=1's
    assert out["jobs"][12] == [T0 + 2002, T0 + 2789, T0 + 51804]


def test_the_cycles_are_those_of_the_play_and_other_jobs_are_left_out():
    out = play_times(LOG.splitlines(), [1, 2])
    assert out["cycles"] == [T0 + 78, T0 + 1079, T0 + 50161]  # 07:01:12 is before it
    assert set(out["jobs"]) == {1, 2}


def test_a_job_the_log_does_not_carry_whole_is_left_out():
    lines = [ln for ln in LOG.splitlines() if "JobId=2 done" not in ln]
    assert set(play_times(lines, [1, 2])["jobs"]) == {1}
    assert play_times([], [1]) == {"jobs": {}, "cycles": []}
