"""The slurm core's steps, each called alone on a small state (``slurm.state_for``): two
4-CPU nodes, one partition, three jobs worked out by hand.

A (6 CPUs, 1,000 s) takes both nodes but 2 CPUs; B (8 CPUs, 530 s) cannot start; C (1 CPU, 100 s)
could, on the CPUs A left. The main scheduler starts A and stops the partition at B
(schedule()); the backfill cycle reserves both nodes for B from A's expected end and
starts C, which ends before it (_attempt_backfill())."""
from __future__ import annotations

from dataclasses import replace

import pytest

from advisor.engine.core import QUEUED, RUNNING
from advisor.engine.slurm import slurm_input, state_for, with_backfill
from advisor.engine.slurm_backfill import backfill
from advisor.engine.slurm_queue import enqueue, main_pass
from advisor.engine.slurm_reserve import add_reservation
from advisor.engine.slurm_running import finish_job
from advisor.engine.slurm_state import S_NQ, S_NRES, S_PICKED, S_QH
from advisor.engine.slurm_willrun import earliest
from advisor.model import Cluster, Job, Node, Partition, SchedulingConfig, Snapshot

A, B, C = 0, 1, 2
CONFIG = with_backfill(SchedulingConfig(), bf_interval=30, bf_resolution=60)


def small_state(config=CONFIG):
    """(arrays, state) of the three jobs, all submitted at 0 and not yet queued."""
    names = ("n1", "n2")
    machine = Cluster("lab", tuple(Node(n, 4) for n in names),
                      (Partition("batch", names, default=True),))
    jobs = [Job(job_id=i + 1, user="u", partition="batch", cpus=cpus, state="PENDING",
                submit_time=0, time_limit=limit, partitions=("batch",))
            for i, (cpus, limit) in enumerate(((6, 1000), (8, 530), (1, 100)))]
    snap = Snapshot(time=-1, machine=machine, running=(), pending=(), config=config)
    inp = slurm_input(snap, {j.job_id: j.time_limit for j in jobs}, jobs, timing=None)
    assert list(inp.job_ids) == [1, 2, 3]
    return state_for(inp)


def queued(config=CONFIG):
    arrays, st = small_state(config)
    for j in (A, B, C):
        enqueue(st, j, 0)
    return arrays, st


def test_arrivals_join_the_queue_in_priority_order():
    arrays, st = queued()
    assert list(arrays.state) == [QUEUED] * 3
    assert list(arrays.queue[arrays.sc[S_QH]:arrays.sc[S_NQ]]) == [A, B, C]


def test_the_main_pass_stops_the_partition_at_its_first_blocked_job():
    arrays, st = queued()
    main_pass(st, 0)
    assert list(arrays.start) == [0, -1, -1]
    assert arrays.part_free[0] == 2          # C would fit, but B blocks the partition
    assert list(arrays.queue[arrays.sc[S_QH]:arrays.sc[S_NQ]]) == [B, C]


def test_a_reservation_search_finds_the_running_jobs_end_on_both_nodes():
    arrays, st = queued()
    main_pass(st, 0)
    assert earliest(st, B, 0, 0, 530) == arrays.exp_end[A] == 1000
    assert arrays.sc[S_PICKED] == 2


def test_the_backfill_cycle_reserves_for_the_head_and_starts_what_ends_before():
    arrays, st = queued()
    main_pass(st, 0)
    assert backfill(st, 30)
    assert arrays.first_resv[B] == 1000 and arrays.start[B] == -1
    assert arrays.start[C] == 30 and arrays.state[C] == RUNNING
    assert arrays.sc[S_NRES] == 1 and (arrays.res_b[0], arrays.res_e[0]) == (960, 1500)


@pytest.mark.parametrize("version, end", [("22.05.8", 1500), ("24.11.5", 1560)])
def test_a_reservation_is_rounded_to_bf_resolution(version, end):
    """[1000, 1530) at 60 s: the begin down to 960, the end down to 1500 up to 24.05, up
    to 1560 from 24.11."""
    arrays, st = queued(replace(CONFIG, slurm_version=version))
    main_pass(st, 0)
    earliest(st, B, 0, 0, 530)
    add_reservation(st, 1000, 530, 0)
    assert (arrays.res_b[0], arrays.res_e[0]) == (960, end)


@pytest.mark.parametrize("window, held", [(20, (960, 1200)), (16, None), (1440, (960, 1500))])
def test_a_reservation_is_held_up_to_the_window_s_end(window, held):
    """The cycle's map of reservations ends at its time plus bf_window, down to
    bf_resolution (_attempt_backfill()'s window_end): B's [960, 1500) is cut at 1200 by a
    20-minute window; under 16 minutes (960) it begins at the window's end and holds
    nothing."""
    arrays, st = queued(with_backfill(CONFIG, bf_window=window))
    main_pass(st, 0)
    earliest(st, B, 0, 0, 530)
    add_reservation(st, 1000, 530, 0)
    got = (arrays.res_b[0], arrays.res_e[0]) if arrays.sc[S_NRES] else None
    assert got == held


def test_an_end_gives_the_nodes_back():
    arrays, st = queued()
    main_pass(st, 0)
    finish_job(st, A)
    assert arrays.part_free[0] == 8
    assert list(arrays.node_free) == [4, 4]
