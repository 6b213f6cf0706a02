"""The Slurm releases the advisor supports, in one table: for each, the JSON schema its
commands print, what its commands leave out, the behaviour the slurm mode plays, what
``scontrol reconfigure`` applies, and whether the test harness runs it as a real daemon.

Adding a release is a row here plus its recorded fixtures (docs/snapshots.md, "Adding a
release"); the adapters, the engine and the enactment read the row, never a version number.

A behaviour change that moves a start time is a ``Behaviour``: the version it first appears
in (from Slurm's NEWS, to the micro release) and what the slurm mode does from then on. A
release is played with every behaviour that appeared up to its own version, so a 25.11 site
is played with the 25.05.1 change; a version newer than the newest row is read and played
as that row (``Played.note`` says so, and the reports show it). Changes in the release notes
that move no start time the slurm mode plays are listed in docs/snapshots.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

Version = tuple[int, int, int]


def parse_version(version: str) -> Version | None:
    """``"25.05.1"`` as (25, 5, 1); a missing micro is 0; None when not a version (a
    trace's configuration has none)."""
    m = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)) if m else None


@dataclass(frozen=True)
class Behaviour:
    """A change in how slurmctld schedules that moves start times, from ``since`` on."""

    key: str
    since: str
    what: str
    source: str


#: the changes the slurm mode plays, oldest first
BEHAVIOURS = (
    Behaviour("resv_end_rounded_up", "24.11.0",
              "a backfill reservation's end is rounded up to bf_resolution, not down",
              "backfill.c _set_slot_time()"),
    Behaviour("start_at_relevant_end", "25.05.1",
              "a planned start waits only for running jobs on the nodes picked, not for "
              "every job released with them",
              "cons_tres job_test.c _future_run_test(), _get_last_relevant_job()"),
    Behaviour("one_node_first_fit", "26.05.0",
              "a job on one node at most (one task) takes the first node in node order "
              "that fits, not the one with the fewest free CPUs",
              "cons_tres job_test.c _get_one_res()"),
)

@dataclass(frozen=True)
class Release:
    """One Slurm release (``year.month``) as the advisor reads, plays and enacts it."""

    name: str
    #: the data_parser version its squeue/sinfo/scontrol/sacct --json print by default
    schema: str
    #: the integration suite runs this release's own daemons (docs/snapshots.md)
    tested: bool = False
    #: sinfo --json groups nodes and sums their allocations (23.02+): nodes come from
    #: scontrol show node --json
    sinfo_groups_nodes: bool = True
    #: squeue --json says whether a job is exclusive (its ``shared``; 26.05's v0.0.45 drops
    #: it and prints neither replacement): else ``squeue -O JobID,Exclusive`` says
    job_exclusive_in_json: bool = True
    #: ``scontrol reconfigure`` restarts slurmctld, so every slurm.conf key applies (23.11+);
    #: before, some keys need a restart (``RESTART_KEYS``)
    reconfigure_restarts: bool = True
    #: sdiag prints --json (23.02+); before, its text alone
    sdiag_json: bool = True

    def version(self) -> Version:
        return parse_version(self.name)  # type: ignore[return-value]


#: keys slurmctld applies only on a restart when reconfigure does not restart it (the gang
#: scheduling guide asks for one for PreemptType and PreemptMode)
RESTART_KEYS = ("PriorityType", "SchedulerType", "SelectType", "PreemptType", "PreemptMode",
                "SchedulerTimeSlice")

#: every supported release, oldest first
RELEASES = (
    Release("22.05", "v0.0.38", tested=True, sinfo_groups_nodes=False,
            reconfigure_restarts=False, sdiag_json=False),
    Release("23.02", "v0.0.39", reconfigure_restarts=False),
    Release("23.11", "v0.0.40"),
    Release("24.05", "v0.0.41"),
    Release("24.11", "v0.0.42", tested=True),
    Release("25.05", "v0.0.43"),
    Release("25.11", "v0.0.44"),
    Release("26.05", "v0.0.45", tested=True, job_exclusive_in_json=False),
)
SCHEMAS = tuple(r.schema for r in RELEASES)
TESTED = tuple(r.name for r in RELEASES if r.tested)


@dataclass(frozen=True)
class Played:
    """How a site's version is read and played: its row, the behaviours in force, and a
    note when the row is not the version's own (a newer release than the table knows)."""

    release: Release
    behaviours: frozenset[str]
    note: str = ""

    def plays(self, key: str) -> bool:
        return key in self.behaviours


@lru_cache(maxsize=64)   # (the slurm mode asks once per simulation)
def release_of(version: str) -> Played:
    """The row for ``version`` (``"24.11.5"``) and the behaviours in force at it. An unknown
    version (a trace's) is played as the oldest release; one older than the table as the
    oldest, one newer than the newest as the newest, each with a note saying so."""
    parsed = parse_version(version)
    if parsed is None:
        return Played(RELEASES[0], frozenset())
    rows = [r for r in RELEASES if r.version()[:2] <= parsed[:2]]
    row = rows[-1] if rows else RELEASES[0]
    note = ""
    if not rows:
        note = f"Slurm {version} is older than any release the advisor reads; read as {row.name}"
    elif row.version()[:2] != parsed[:2]:
        note = (f"Slurm {version} is newer than the releases the advisor knows; read and "
                f"played as {row.name}")
    elif not row.tested:
        nearest = [r.name for r in RELEASES if r.tested and r.version() <= row.version()]
        note = (f"Slurm {row.name} is not run by the advisor's tests; its play follows the "
                f"release notes between {nearest[-1]} and the next tested release")
    behaviours = frozenset(b.key for b in BEHAVIOURS if parse_version(b.since) <= parsed)
    return Played(row, behaviours, note)


def schema_release(schema: str) -> Release:
    """The release whose commands print ``schema`` (``v0.0.42``: 24.11); KeyError if none."""
    return next(r for r in RELEASES if r.schema == schema)
