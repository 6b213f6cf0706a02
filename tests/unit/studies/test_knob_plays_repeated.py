"""The knob plays played again (issue 58, item 5), and what slurmctld's log shows of them.

A configuration played more than once on the same jobs (``config#2``, ``#3`` in
tests/fixtures/sim-to-real/*knobs-queued*) is judged by its median play as well as play by
play (test_sim_to_real_recorded), since plays of one workload differ by sub-second phases
sacct's whole seconds leave out. The plays recorded on 2026-12-02 ran with slurmctld
logging its backfill cycles (``bench/sim_to_real.py --log-backfill``), and each holds its
log's times in milliseconds (``advisor.studies.slurmctld_log``): what they show is
checked here, and where the mode parts from the cluster because of it.
"""
from __future__ import annotations

import json
import statistics
from dataclasses import replace
from functools import lru_cache

import pytest

from advisor.engine.slurm_timing import LIVE
from advisor.model import Snapshot
from advisor.site import BackfillCost
from advisor.studies.validate import CONFIGURATIONS, KNOB_PLAYS, evaluate
from tests.helpers import FIXTURES

RECORDINGS = FIXTURES / "sim-to-real"
FLOOR = 0.90
KNOB_CONFIGURATIONS = {c for pair in KNOB_PLAYS.values() for c in pair}


@lru_cache(maxsize=None)
def _recording(fixture: str) -> dict:
    """A recording, read once (each is up to 0.5 MB and read by every test below)."""
    return json.loads((RECORDINGS / f"{fixture}.json").read_text())


def _plays(path) -> dict[str, list[str]]:
    """A recording's plays by configuration, the knob configurations only."""
    by_config: dict[str, list[str]] = {}
    for name, run in _recording(path.stem).items():
        if isinstance(run, dict) and name.split("#")[0] in KNOB_CONFIGURATIONS:
            by_config.setdefault(name.split("#")[0], []).append(name)
    return by_config


REPEATED = [(path.stem, config) for path in sorted(RECORDINGS.glob("*knobs-queued*.json"))
            for config, names in _plays(path).items() if len(names) > 1]
LOGGED = [(path.stem, name) for path in sorted(RECORDINGS.glob("*knobs-queued*.json"))
          for name, run in _recording(path.stem).items()
          if isinstance(run, dict) and "log" in run]
#: configurations whose median play is below the floor (each play, slurm mode within 2 s)
BELOW_MEDIAN: dict[tuple[str, str], str] = {}


def _within(fixture: str, name: str) -> float:
    run = _recording(fixture)[name]
    out = evaluate(Snapshot.from_dict(run["snapshot"]), run["records"],
                   CONFIGURATIONS[name.split("#")[0]][2])
    return out["slurm"]["within"]


@pytest.mark.parametrize("fixture,config", [
    pytest.param(f, c, marks=pytest.mark.xfail(
        strict=True, reason=f"the plays read {BELOW_MEDIAN[f, c]}"))
    if (f, c) in BELOW_MEDIAN else (f, c) for f, c in REPEATED])
def test_the_median_play_of_a_knob_configuration_meets_the_floor(fixture, config):
    names = _plays(RECORDINGS / f"{fixture}.json")[config]
    shares = [_within(fixture, n) for n in names]
    print(f"\n{fixture} {config}: " + ", ".join(f"{s:.1%}" for s in shares))
    assert statistics.median(shares) >= FLOOR, shares


def _log(fixture: str, name: str) -> tuple[dict, dict[int, list[int]], list[int]]:
    run = _recording(fixture)[name]
    return run, {int(j): t for j, t in run["log"]["jobs"].items()}, run["log"]["cycles"]


@pytest.mark.parametrize("fixture,name", LOGGED)
def test_the_log_holds_every_job_and_the_backfill_thread_drifts(fixture, name):
    """Every job of the play is in the log, its start and end after its submission, its
    end a few tens of milliseconds past a whole second from its start (sleep's overhead);
    and the backfill cycles come later in the second as the play goes on, 0.6 to 3.6 ms
    a second (slurmctld's backfill thread sleeps bf_interval after each cycle ends
    [src: backfill.c backfill_agent()]), so that a cycle 50 s after the one that started
    a job comes after that job's end in the same second."""
    run, jobs, cycles = _log(fixture, name)
    assert sorted(jobs) == sorted(r["job_id"] for r in run["records"])
    assert all(s <= b <= e for s, b, e in jobs.values())
    overheads = sorted((e - b) % 1000 for _, b, e in jobs.values())
    assert 5 <= overheads[len(overheads) // 2] <= 100, overheads
    advance = [((b - a) - 1000 * round((b - a) / 1000)) / round((b - a) / 1000)
               for a, b in zip(cycles, cycles[1:]) if round((b - a) / 1000) >= 1]
    assert 0.5 <= statistics.mean(advance) <= 4.0, statistics.mean(advance)


#: a logged one-minute play whose blocker's end went otherwise (played beside a unit-test
#: run on the same two cores: its jobs outlived their seconds by 53 ms, median)
OTHERWISE = {("slurm-24.11-knobs-queued-40jobs-load1.5", "bf-window-1min#3"):
             "the cycle after the blocker's end started 3 jobs"}


@pytest.mark.parametrize("fixture,name", [
    pytest.param(f, n, marks=pytest.mark.xfail(strict=True, reason=OTHERWISE[f, n]))
    if (f, n) in OTHERWISE else (f, n)
    for f, n in LOGGED if n.split("#")[0] == "bf-window-1min"])
def test_at_the_blocker_s_end_one_cycle_starts_what_the_mode_starts_in_two_seconds(
        fixture, name):
    """When the blocker ends at 50 s, one backfill cycle starts the seven jobs that fit:
    the three first in the queue and, behind a 6-CPU job that does not, four 1-CPU ones,
    all in one second. The mode starts the first three at the end (its main scheduler's
    pass, at once) and the 1-CPU jobs at its next cycle, a second later: in slurmctld the
    main scheduler runs when the nodes' epilogs complete [src: proc_req.c
    _slurm_rpc_epilog_complete()], and that cycle had come first. Which of the two groups
    the mode has a second off depends on sub-second phases sacct does not give."""
    run, jobs, cycles = _log(fixture, name)
    blocker = min(jobs, key=lambda j: jobs[j][0])
    cycle = min(c for c in cycles if c >= jobs[blocker][2])
    following = next((c for c in cycles if c > cycle), cycle + 1000)
    started = [j for j, (_, b, _) in jobs.items() if cycle <= b < following]
    assert len(started) == 7
    real = {r["job_id"]: r["start"] for r in run["records"]}
    assert len({real[j] for j in started}) == 1
    table = evaluate(Snapshot.from_dict(run["snapshot"]), run["records"],
                     CONFIGURATIONS["bf-window-1min"][2])["table"]
    mode = sorted({int(table.loc[j, "slurm"]) for j in started})
    assert len(mode) == 2 and mode[1] - mode[0] == 1, mode


WINDOW_PLAYS = [(path.stem, name) for path in sorted(RECORDINGS.glob("*knobs-queued*.json"))
                for name in _plays(path).get("bf-window-1min", [])]


@pytest.mark.parametrize("fixture,name", WINDOW_PLAYS)
def test_a_one_minute_window_play_turns_on_one_4_cpu_job(fixture, name):
    """The job the one-minute window plays turn on: the 4-CPU, 60-s one submitted at 19 s,
    which slurmctld started at 79-81 s in the cycle that followed the 45-CPU job's end
    (that job started by a cycle 29 s before). The live reading starts it within a second
    of that, the cycle of the end's second seeing the end (``Timing.cycle_sees_end``).
    Read without that, the mode started it 13-15 s late, at the next end on the nodes it
    chose, in every play below the floor (66 to 73%: all but 26.05's second, where it
    started it at 81 s), and every later miss followed from it."""
    run = _recording(fixture)[name]
    snapshot, textbook = Snapshot.from_dict(run["snapshot"]), \
        CONFIGURATIONS["bf-window-1min"][2]
    for timing in (LIVE, replace(LIVE, cycle_sees_end=0)):
        out = evaluate(snapshot, run["records"], textbook, timing)
        table = out["table"].sort_values("real")
        first = table["submit"].min()
        job = table[table["submit"] - first == 19].iloc[0]
        assert 79 <= job["real"] - first <= 81
        late = job["slurm"] - job["real"]
        if timing == LIVE:
            assert abs(late) <= 1, late
            continue
        assert (late > 2) == (out["slurm"]["within"] < FLOOR), (late, out["slurm"])
        if late > 2:
            assert 13 <= late <= 15
            missed = table[(table["slurm"] - table["real"]).abs() > 2]
            assert missed["real"].min() >= job["real"] - 1


def test_a_cycle_s_cost_of_a_tick_leaves_the_queued_fcfs_play_as_it_was():
    """A backfill cycle costing 0.1 s (one tick of the live reading) starts its jobs a tick
    after the cycle begins; Slurm plans their ends on whole seconds all the same, so the
    top job's reservation stays where the free cycle puts it and the wave of 60-s jobs
    slurmctld backfilled at 80 s still starts then (planned in tenths it read 41.5%)."""
    run = _recording("knobs-queued-40jobs-load1.5")["fcfs-easy"]
    snapshot = Snapshot.from_dict(run["snapshot"])
    costly = replace(snapshot, config=replace(snapshot.config,
                                              backfill_cost=BackfillCost(100_000, 0)))
    textbook = CONFIGURATIONS["fcfs-easy"][2]
    free = evaluate(snapshot, run["records"], textbook)["slurm"]["within"]
    assert free >= FLOOR
    assert evaluate(costly, run["records"], textbook)["slurm"]["within"] == free
