"""The engine's slurm mode: each modelled Slurm rule on a screen-sized case whose answer is
worked out by hand, and the reduction to the textbook EASY on a real trace."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from advisor.adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.engine import EngineConfig, job_arrays, run
from advisor.engine.slurm import (run_slurm, slurm_input, start_times, with_backfill,
                                  workload_input)
from advisor.engine.slurm_timing import LIVE
from advisor.model import Cluster, Job, Node, Partition, SchedulingConfig, Snapshot
from advisor.adapters.swf import resolve_trace

FCFS_BUILTIN = replace(SchedulingConfig(), scheduler_type="sched/builtin")
EASY_EXACT = with_backfill(SchedulingConfig(), bf_interval=0, bf_resolution=1,
                           bf_job_part_count_reserve=1, bf_busy_nodes=True, bf_window=10**7,
                           bf_max_job_test=10**9)


def cluster(nodes=4, cpus=16, partitions=None) -> Cluster:
    names = tuple(f"n{i}" for i in range(1, nodes + 1))
    parts = partitions or (Partition("batch", names, default=True),)
    return Cluster("lab", tuple(Node(n, cpus) for n in names), parts)


def job(i, submit, cpus, limit, partition="batch", **kw) -> Job:
    return Job(job_id=i, user="u", partition=partition, cpus=cpus, state="PENDING",
               submit_time=submit, time_limit=limit, partitions=(partition,), **kw)


def play(jobs, runtimes, config, machine=None, t0=-1, timing=None):
    """Starts and first reservations; whole seconds as exact instants unless ``timing``."""
    snap = Snapshot(time=t0, machine=machine or cluster(), running=(), pending=(),
                    config=config)
    inp = slurm_input(snap, dict(zip([j.job_id for j in jobs], runtimes)), jobs,
                      timing=timing)
    start, resv = run_slurm(inp)
    order = {int(k): i for i, k in enumerate(inp.job_ids)}
    return [int(start[order[j.job_id]]) for j in jobs], [int(resv[order[j.job_id]])
                                                         for j in jobs]


def test_reduces_to_textbook_easy_job_by_job_on_kth():
    """One partition, one CPU per node, bf_interval 0, bf_resolution 1, FCFS: with
    reservations counted in CPUs (the textbook's idealisation) the slurm mode's main scheduler
    and backfill give every KTH-SP2 job the textbook EASY start, to the second. Slurm's own
    whole-node reservations (F4) change some, and its will-run batches (a reservation starts
    when the last of a batch of ending jobs ends, not at the exact earliest time) change
    many more: the test states that they do, and in that order."""
    workload = read_swf(resolve_trace("KTH-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    textbook, _ = run(job_arrays(workload), EngineConfig(backfill="easy"))
    counted, _ = run_slurm(workload_input(workload, EASY_EXACT, minutes=False,
                                          count_reservations=True))
    assert np.array_equal(counted, textbook)
    pinned, _ = run_slurm(workload_input(workload, EASY_EXACT, minutes=False,
                                         will_run_batches=False))
    pinned_differ = int((pinned != textbook).sum())
    assert 0 < pinned_differ < 0.05 * len(workload)  # 388 of 28,000 when written
    batched, _ = run_slurm(workload_input(workload, EASY_EXACT, minutes=False))
    assert int((batched != textbook).sum()) > 2 * pinned_differ  # 7,912 when written


def test_builtin_is_fcfs_without_backfill_on_ctc():
    workload = read_swf(resolve_trace("CTC-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    textbook, _ = run(job_arrays(workload), EngineConfig(backfill="none"))
    slurm, _ = run_slurm(workload_input(workload, FCFS_BUILTIN, minutes=False))
    assert np.array_equal(slurm, textbook)


def test_live_reading_adds_the_epilog_at_each_step_of_a_queue():
    """A live cluster's whole seconds are read at mid-second and an ended job's nodes are
    free 0.3 s later: three whole-machine jobs submitted together start at 0.5, 10.8 and
    21.1 s, reported 0, 10 and 21, where exact whole seconds say 0, 10 and 20. A backfill
    cycle comes at mid-second: a short job submitted at 4 (4.5 s) backfills at 5.5 s."""
    fcfs = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1,
                         bf_job_part_count_reserve=1)
    chain = [job(1, 0, 64, 600), job(2, 0, 64, 600), job(3, 0, 64, 600)]
    assert play(chain, [10, 10, 10], fcfs)[0] == [0, 10, 20]
    assert play(chain, [10, 10, 10], fcfs, timing=LIVE)[0] == [0, 10, 21]
    jobs = [job(1, 0, 63, 600), job(2, 2, 64, 600), job(3, 4, 1, 5)]
    assert play(jobs, [10, 10, 5], fcfs)[0] == [0, 10, 5]
    assert play(jobs, [10, 10, 5], fcfs, timing=LIVE)[0] == [0, 10, 5]


def test_a_reservation_is_tested_as_slurm_tests_it():
    """Slurm tests a job that must wait against the other reservations over its limit from
    the cycle's time, not from its own start, and its reservation against theirs with both
    ends rounded down to bf_resolution, end excluded. On one 16-CPU node: C (16 CPUs)
    reserves from A's expected end, 150 s, rounded down to 120. D (4 CPUs, 60 s), tested at
    3 s over [3, 63], finds the node free of reservations and starts when B ends, at 60 s;
    its reservation [60, 120) ends where C's begins, so it is kept, though D would run
    into C's. E (1 CPU, 60 s) then cannot start at 4 (it would run into D's reservation)
    and waits for C to end: 240, where a search for a window clear of every reservation
    would have reserved D after C and started E at once."""
    cfg = with_backfill(SchedulingConfig(), bf_interval=1)
    jobs = [job(1, 0, 12, 150), job(2, 0, 3, 60), job(3, 1, 16, 120), job(4, 2, 4, 60),
            job(5, 3, 1, 60)]
    start, resv = play(jobs, [140, 50, 100, 50, 5], cfg, cluster(nodes=1))
    assert resv[2:4] == [150, 60]
    assert start == [0, 0, 140, 51, 240]


@pytest.mark.parametrize("version", ["22.05.8", "24.11.5", ""])
def test_a_reservation_ends_as_its_release_rounds(version):
    """Up to 24.05 a reservation's end is rounded down to bf_resolution, from 24.11 up; a
    configuration without a version is played as 22.05. On one 4-CPU node A (2 CPUs, 200 s)
    and B (1 CPU, 40 s) run; C (the node, 120 s) reserves from A's end, [180, 300) or
    [180, 360). D (2 CPUs, 150 s) fits when B ends, over [40, 190]: rounded down, its
    reservation [0, 180) ends where C's begins and is kept, and E (1 CPU, 40 s), which
    would run into it, waits; rounded up, [0, 240) overlaps C's, D is reserved after C,
    and E starts in the first cycle after its submission."""
    cfg = replace(with_backfill(SchedulingConfig(), bf_interval=1), slurm_version=version)
    jobs = [job(1, 0, 2, 200), job(2, 0, 1, 40), job(3, 5, 4, 120), job(4, 6, 2, 150),
            job(5, 7, 1, 40)]
    start, resv = play(jobs, [200, 40, 10, 10, 10], cfg, cluster(nodes=1, cpus=4))
    if version.startswith("24.11"):
        assert resv[3] == 360 and start[4] == 8
    else:
        assert resv[3] == 40 and start[4] == 41


@pytest.mark.parametrize("cpus", [1, 4])
@pytest.mark.parametrize("version", ["24.11.5", "25.05.0", "25.05.1", "26.05.5"])
def test_a_planned_start_waits_for_its_own_nodes_from_25_05_1(version, cpus):
    """From 25.05.1 a reservation starts when the last running job on the nodes it was
    given ends, not when the will-run batch's last job does. On three 4-CPU nodes A (n1,
    ends at 40), a short job (n2, gone at 1) and B (n3, ends at 50) start; C (8 CPUs) finds
    room in the batch of A and B, at 50, on n1 and n2. Up to 25.05.0 C reserves [50, 150),
    E (4 CPUs, 45 s) backfills on n2 at once and C starts when E ends, at 48; from 25.05.1
    C reserves from A's end, [40, 140), and starts then, and E, which would run into it,
    waits for B's node. The same on one-CPU nodes (the engine's count of free nodes)."""
    cfg = replace(with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1),
                  slurm_version=version)
    jobs = [job(1, 0, cpus, 40), job(2, 0, cpus, 1000), job(3, 0, cpus, 50),
            job(4, 2, 2 * cpus, 100), job(5, 3, cpus, 45)]
    start, resv = play(jobs, [40, 1, 50, 100, 45], cfg, cluster(nodes=3, cpus=cpus))
    if version in ("25.05.1", "26.05.5"):
        assert resv[3] == 40 and start[3] == 40 and start[4] == 50
    else:
        assert resv[3] == 50 and start[3] == 48 and start[4] == 3


@pytest.mark.parametrize("version", ["24.11.5", "25.11.4", "26.05.0", "26.05.5"])
def test_a_one_cpu_job_takes_the_first_node_that_fits_from_26_05(version):
    """From 26.05 a job on one node at most takes the first node in node order that fits
    (cons_tres _get_one_res()), before it the one with the fewest free CPUs that suffice.
    On two 4-CPU nodes A (2 CPUs, 10 s) starts on n1 and B (3 CPUs, 100 s) on n2; then C
    (1 CPU) takes n2's last CPU up to 25.11 and a CPU of n1 from 26.05. When A ends, D
    (on a whole node) finds n1 free up to 25.11 and starts; from 26.05 it waits for B's
    end."""
    cfg = replace(SchedulingConfig(), slurm_version=version)
    jobs = [job(1, 0, 2, 10), job(2, 1, 3, 100), job(3, 2, 1, 1000),
            job(4, 3, 4, 10, exclusive=True)]
    start, _ = play(jobs, [10, 100, 1000, 10], cfg, cluster(nodes=2, cpus=4))
    assert start[:3] == [0, 1, 2]
    assert start[3] == (101 if version.startswith("26.05") else 10)


def test_reservation_waits_for_the_will_run_batch():
    """cons_tres will-run releases running jobs in batches: the first ends 30 s after the
    first job's end rounded up to 30 s (40 -> 60 -> 90), so B (ending at 65) is in A's
    batch and head C reserves from 65, not from 40 when A's CPUs would do. D, ending at 52,
    therefore backfills; C starts when D ends. Exact earliest starts (the textbook) would
    give C 40 and D 65."""
    easy = with_backfill(SchedulingConfig(), bf_interval=0, bf_resolution=1,
                         bf_job_part_count_reserve=1)
    one = cluster(nodes=1)
    jobs = [job(1, 0, 8, 40), job(2, 0, 4, 65), job(3, 1, 10, 100), job(4, 2, 4, 50)]
    assert play(jobs, [40, 65, 100, 50], easy, one)[0] == [0, 0, 52, 2]


def test_live_reading_plans_on_slurm_s_whole_seconds():
    """Read in tenths (LIVE), A and B start when J0's nodes are free, 0.3 s into second 10;
    Slurm plans their ends as that second plus their limits, 40 and 90, so the will-run
    batch opened by A (barrier 60) takes in B (90 <= 60 + 30) and head C reserves from 90:
    D, ending by 71, backfills at the next cycle and C starts when D ends, as in whole
    seconds. Planned in tenths (ends at 40.8 and 90.8), B would fall out of the batch, C
    would reserve from 40 and D wait for C (started 41 and 91)."""
    easy = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1,
                         bf_job_part_count_reserve=1)
    jobs = [job(1, 0, 16, 100), job(2, 1, 8, 30), job(3, 1, 4, 80), job(4, 2, 10, 100),
            job(5, 3, 4, 60)]
    runtimes = [10, 30, 80, 100, 60]
    start, resv = play(jobs, runtimes, easy, cluster(nodes=1), timing=LIVE)
    assert start == [0, 10, 10, 71, 11] and resv[3] == 90
    assert play(jobs, runtimes, easy, cluster(nodes=1))[0] == [0, 10, 10, 71, 11]


@pytest.mark.parametrize("b_runs, s_starts", [(30, 32), (20, 23)])
def test_live_reading_lets_the_cycle_of_a_long_job_s_last_second_see_its_end(b_runs,
                                                                              s_starts):
    """Read live, B (started by the cycle at 2.5 s, beside A, ahead of head H's reservation
    at 100) that runs 30 s has ended when the cycle of second 32 begins, the backfill
    thread having drifted past B's overhead (``Timing.cycle_sees_end``, 25 s): that cycle
    backfills S into B's CPUs, in second 32; the main scheduler, which could not (H heads
    the queue and does not fit), runs after the epilog. Without the rule, or for a B of
    20 s, B's CPUs are free 0.3 s after its end and S starts at the next cycle, a second
    after the end."""
    easy = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1,
                         bf_job_part_count_reserve=1)
    jobs = [job(1, 0, 8, 100), job(2, 1, 16, 10), job(3, 2, 8, 40), job(4, 3, 8, 50)]
    runtimes = [100, 5, b_runs, 10]
    start, resv = play(jobs, runtimes, easy, cluster(nodes=1), timing=LIVE)
    assert start == [0, 100, 2, s_starts] and resv[1] == 100
    without = play(jobs, runtimes, easy, cluster(nodes=1),
                   timing=replace(LIVE, cycle_sees_end=0))[0]
    assert without == [0, 100, 2, b_runs + 3]


def test_main_scheduler_blocks_a_partition_and_its_nodes_only():
    """F2: the head of 'a' (n1-n2) cannot start, so nothing after it starts on n1-n2, but 'b'
    (n3-n4) keeps scheduling; a job of 'ab' (all nodes) behind it is blocked on n1-n2 and
    fits on n3-n4."""
    parts = (Partition("a", ("n1", "n2")), Partition("b", ("n3", "n4")),
             Partition("ab", ("n1", "n2", "n3", "n4")))
    m = cluster(partitions=parts)
    jobs = [job(1, 0, 32, 600, "a"), job(2, 1, 8, 600, "a"), job(3, 1, 4, 600, "a"),
            job(4, 1, 4, 600, "b"), job(5, 1, 8, 600, "ab")]
    start, _ = play(jobs, [100, 100, 100, 100, 100], FCFS_BUILTIN, m)
    assert start == [0, 100, 100, 1, 1]


def test_bf_job_part_count_reserve_counts_per_partition():
    """Two disjoint partitions, each with a blocked head and a long job behind it: with
    bf_job_part_count_reserve=1 both heads reserve (one per partition) and neither long job may
    delay them; the second blocked job of a partition gets no reservation."""
    parts = (Partition("a", ("n1", "n2")), Partition("b", ("n3", "n4")))
    m = cluster(partitions=parts)
    cfg = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1,
                        bf_job_part_count_reserve=1)
    jobs = [job(1, 0, 32, 1000, "a"), job(2, 0, 32, 1000, "b"),      # fill both
            job(3, 1, 32, 1000, "a"), job(4, 1, 32, 1000, "b"),      # heads: reserve
            job(5, 1, 32, 1000, "a")]                                # second: no reservation
    _, resv = play(jobs, [500, 500, 500, 500, 500], cfg, m)
    assert resv[2] == 1000 and resv[3] == 1000
    # job 5's first reservation comes when it heads 'a' (t=500, job 3 started): 500 + 1000;
    # one at t=1 would have been after job 3's, at 2000
    assert resv[4] == 1500


def test_whole_node_reservation_blocks_a_long_job_on_a_half_free_node():
    """F4: the head needs 24 CPUs; 8 are free on n1 and both nodes are free at t=100. Its
    reservation takes both nodes whole from t=100, so a long 4-CPU job cannot use n1's free
    CPUs now, although the textbook's CPU count would let it (32 - 24 = 8 spare); it starts
    beside the head at t=100. A short job that ends before t=100 backfills at the next
    backfill tick after its arrival."""
    m = cluster(nodes=2)
    cfg = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1)
    jobs = [job(1, 0, 8, 100), job(2, 0, 16, 100), job(3, 1, 24, 1000),
            job(4, 2, 4, 1000), job(5, 3, 4, 60)]
    start, resv = play(jobs, [100, 100, 1000, 1000, 60], cfg, m)
    assert resv[2] == 100 and start[2] == 100
    assert start[3] == 100 and start[4] == 4


def test_priority_recomputed_only_every_calc_period():
    """F7: job size favours big jobs; a big job submitted later outranks a small one at once
    (priority set at submission), while age needs a recalculation to show."""
    cfg = replace(SchedulingConfig(), priority_type="priority/multifactor",
                  priority_weight_job_size=1000, priority_calc_period=60,
                  scheduler_type="sched/builtin")
    jobs = [job(1, 0, 64, 100), job(2, 1, 1, 100), job(3, 2, 48, 100)]
    start, _ = play(jobs, [100, 100, 100], cfg)
    assert start == [0, 100, 100]  # 3 (48 CPUs) outranks 2, both fit at 100
    cfg2 = replace(cfg, priority_weight_job_size=0, priority_weight_age=1000,
                   priority_max_age=100)
    jobs = [job(1, 0, 64, 100), job(2, 5, 60, 100), job(3, 6, 40, 100)]
    start, _ = play(jobs, [100, 100, 100], cfg2)
    # at submission both have age 0: priority 1, tie broken by submit (2 first); at the
    # recalculation of t=60 job 2 is older: still first. 3 waits for 2.
    assert start == [0, 100, 200]


def test_kill_at_limit_plus_over_time_limit_and_partition_max_time():
    parts = (Partition("short", ("n1",), max_time=120),)
    m = cluster(nodes=1, partitions=parts)
    cfg = replace(FCFS_BUILTIN, over_time_limit=1)
    jobs = [job(1, 0, 16, 600, "short"), job(2, 0, 16, 600, "short")]
    start, _ = play(jobs, [1000, 10], cfg, m)
    assert start == [0, 180]  # killed at MaxTime 120 s + OverTimeLimit 60 s


def test_bf_window_beyond_gets_no_reservation():
    cfg = with_backfill(SchedulingConfig(), bf_interval=1, bf_resolution=1, bf_window=10)
    jobs = [job(1, 0, 64, 3600), job(2, 1, 64, 60)]
    _, resv = play(jobs, [3600, 60], cfg)
    assert resv[1] == -1  # its start (3600 s) is past the 10-minute window
    cfg = with_backfill(cfg, bf_window=120)
    _, resv = play(jobs, [3600, 60], cfg)
    assert resv[1] == 3600


def test_bf_min_age_reserve_young_jobs_do_not_block():
    """A young head job (younger than bf_min_age_reserve) neither blocks the main scheduler
    nor reserves: the small job behind it starts at once."""
    cfg = replace(with_backfill(SchedulingConfig(), bf_min_age_reserve=600),
                  scheduler_type="sched/builtin")
    jobs = [job(1, 0, 60, 1000), job(2, 1, 64, 100), job(3, 2, 4, 100)]
    start, _ = play(jobs, [1000, 100, 100], cfg)
    assert start[2] == 2


@pytest.mark.parametrize("busy", [False, True])
def test_no_job_overlaps_capacity(busy):
    """On a real trace, in every configuration: the CPUs in use never exceed the machine."""
    workload = read_swf(resolve_trace("KTH-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    workload = workload.with_jobs(workload.jobs.iloc[:3000])
    cfg = with_backfill(SchedulingConfig(), bf_busy_nodes=busy)
    start, _ = run_slurm(workload_input(workload, cfg))
    runtime = workload.jobs["runtime"].to_numpy()
    procs = workload.jobs["procs"].to_numpy()
    assert (start >= workload.jobs["submit"].to_numpy()).all()
    events = sorted([(s, 1, p) for s, r, p in zip(start, runtime, procs) if r > 0]
                    + [(s + r, 0, -p) for s, r, p in zip(start, runtime, procs) if r > 0])
    use = np.cumsum([e[2] for e in events])
    assert use.max() <= workload.machine.procs


@pytest.mark.parametrize("changes", [dict(bf_job_part_count_reserve=1),
                                     dict(bf_job_part_count_reserve=3),
                                     dict(bf_job_part_count_reserve=1, bf_busy_nodes=True),
                                     dict(bf_job_part_count_reserve=0)])
def test_one_cpu_node_shortcuts_give_the_general_answer(changes):
    """On one-CPU nodes the core keeps node sets as bitmaps alone and takes shortcuts (a
    first reservation found by counting nodes, reused while the same jobs still run at its
    start; an EASY-like cycle ended when nothing can start; with one partition, start
    times ruled out by counting the nodes reservations hold over the job's window, and
    skipped while the count stays short). The same trace with one spare
    2-CPU node in a partition of its own takes the general path: every start and first
    reservation must be the same."""
    workload = read_swf(resolve_trace("KTH-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    fast = workload_input(workload, with_backfill(SchedulingConfig(), **changes))
    nodes = len(fast.node_cpus)
    part_nodes = np.zeros((2, nodes + 1), np.uint8)
    part_nodes[0, :nodes] = fast.part_nodes[0]
    part_nodes[1, nodes] = 1
    general = replace(fast, node_cpus=np.append(fast.node_cpus, 2), part_nodes=part_nodes,
                      part_tier=np.append(fast.part_tier, 1),
                      part_max=np.append(fast.part_max, fast.part_max[0]))
    start, resv = run_slurm(fast)
    assert (resv >= 0).sum() > 2000  # reservations were made, and compared
    general_start, general_resv = run_slurm(general)
    assert np.array_equal(start, general_start)
    assert np.array_equal(resv, general_resv)


@pytest.mark.parametrize("reserve", [1, 3, 0])
def test_start_times_skip_only_cycles_that_start_nothing(reserve):
    """``start_times`` skips the backfill cycles in which no pending job fits in the free
    CPUs; the starts must be run_slurm's, under EASY, depth 3 and conservative."""
    workload = read_swf(resolve_trace("KTH-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    inp = workload_input(workload, with_backfill(SchedulingConfig(),
                                                 bf_job_part_count_reserve=reserve))
    start, _ = run_slurm(inp)
    assert (start >= 0).all()
    assert np.array_equal(start_times(inp), start)


@pytest.mark.parametrize("timing", [None, LIVE])
def test_start_times_until_an_instant_are_the_whole_run_s_up_to_it(timing):
    """``start_times(inp, until)`` stops the run after second ``until``: the jobs started
    by then (in the whole second ``until`` too, when a second holds several ticks) start
    as in the whole run, the others get -1."""
    workload = read_swf(resolve_trace("KTH-SP2"),
                        cleaning=CleaningOptions(drop_overruns=True, drop_oversize=True))
    inp = replace(workload_input(workload, with_backfill(SchedulingConfig())), timing=timing)
    whole = start_times(inp)
    for until in np.quantile(whole, np.linspace(0.05, 0.95, 19)).astype(np.int64):
        until = int(whole[whole >= until].min())  # (an instant at which a job starts)
        cut = start_times(inp, until)
        assert np.array_equal(cut, np.where(whole <= until, whole, -1))
        assert (cut == until).any() and (cut == -1).any()
