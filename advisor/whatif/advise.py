"""One piece of advice from a source: the workflow of ``advisor recommend`` as a library call.

A *source* is what the advice is about: a live cluster (``advisor.adapters.sources``), a
trace replayed to a moment (``TraceMoment``), or a snapshot held in memory
(``StaticSource``). Each gives a snapshot and the history of the weeks before it, as the
one protocol ``Source`` says; ``advisor.sources.open_source`` opens any of them by name.
``advise`` reads them, simulates the candidates (``recommend``), and returns the
recommendation with the Slurm change that enacts it; writing that change, applying it and
recording the run are the caller's.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol, runtime_checkable

import pandas as pd

from advisor.engine import Estimates
from advisor.errors import BadInput
from advisor.model import (SECONDS_PER_WEEK, JobLog, SchedulingConfig, Snapshot, Workload,
                           empty_history, release_of)
from advisor.plugins.spec import Policy
from advisor.settings import Settings
from advisor.whatif.decision import distrusted
from advisor.whatif.recommend import Recommendation, recommend
from advisor.whatif.sitecheck import SPAN, check_site
from advisor.whatif.runner import Executor
from advisor.whatif.slurmconf import SlurmChange, change_for
from advisor.whatif.snapshot import check_moment, trace_history, trace_snapshot


@runtime_checkable
class Source(Protocol):
    """What advice is given about."""

    @property
    def name(self) -> str:
        """How runs about this source are filed ("slurm", "swf:KTH-SP2@150d")."""

    @property
    def live(self) -> bool:
        """Whether a change can be applied to it (a live slurmctld)."""

    def snapshot(self) -> Snapshot:
        """The queue, the running jobs, the machine and its configuration now."""

    def history(self, snapshot: Snapshot, weeks: int) -> pd.DataFrame:
        """The jobs that finished in the ``weeks`` before ``snapshot``."""

    # and, where the source keeps accounting, the check of the days before reads
    # ``job_log(since, until) -> JobLog | None``: its jobs of that window as it recorded
    # them (``advisor.model.JobLog``)


@dataclass(frozen=True)
class TraceMoment:
    """A trace replayed under ``policy`` up to ``time`` (on its clock): the state a live
    cluster would have shown then, and the jobs it would have finished."""

    name: str
    workload: Workload
    policy: Policy
    time: int
    estimates: Estimates = Estimates()
    live = False
    _memo: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self):
        check_moment(self.workload, self.time)    # a bad moment fails before any work

    def snapshot(self) -> Snapshot:
        if "snapshot" not in self._memo:
            self._memo["snapshot"] = trace_snapshot(self.workload, self.policy, self.time,
                                                    self.estimates)
        return self._memo["snapshot"]

    def history(self, snapshot: Snapshot, weeks: int) -> pd.DataFrame:
        return trace_history(self.workload, snapshot, weeks)


@dataclass(frozen=True)
class StaticSource:
    """A snapshot and the jobs finished before it, held in memory: a source for tests and
    notebooks (as httpx's mock transport is for a client), and what a snapshot file gives
    (``advisor.sources``: no history)."""

    name: str
    read: Snapshot
    past: pd.DataFrame | None = None    # finished jobs, ``HISTORY_COLUMNS`` (None: none)
    log: JobLog | None = None           # its accounting of the days before (a site check)
    live = False

    def snapshot(self) -> Snapshot:
        return self.read

    def job_log(self, since: int, until: int) -> JobLog | None:
        return self.log

    def history(self, snapshot: Snapshot, weeks: int) -> pd.DataFrame:
        if self.past is None:
            return empty_history()
        since = snapshot.time - weeks * SECONDS_PER_WEEK
        return self.past[self.past["submit"] >= since].reset_index(drop=True)


class Store(Protocol):
    """Where earlier runs are recorded (``advisor.adapters.store.Store``)."""

    def last_change(self, source: str) -> tuple[str, int] | None:
        """The spec of the last change recommended for ``source``, and when."""


@dataclass(frozen=True)
class Advice:
    snapshot: Snapshot
    recommendation: Recommendation
    change: SlurmChange | None        # what Slurm is told, when a change is recommended
    history_note: str = ""            # ``fit_history``: less history than asked
    site_check: dict | None = None    # ``site_check``: the site's own past, replayed

    @property
    def release_note(self) -> str:
        """How the site's Slurm is played when not as a release the tests run."""
        return release_of(self.snapshot.config.slurm_version).note

    def as_dict(self) -> dict:
        """The recommendation, and the change in Slurm's words (None: keep); the
        configuration's key (``config_key``: a later check tells a change of it)."""
        return {**self.recommendation.as_dict(),
                "change_detail": self.change.as_dict() if self.change else None,
                "history_note": self.history_note, "release_note": self.release_note,
                "site_check": self.site_check, "config_key": config_key(self.snapshot)}


def advise(source: Source, settings: Settings = Settings(), executor: Executor | None = None,
           store: Store | None = None,
           on_progress: Callable[[int, int], None] | None = None) -> Advice:
    """The advice for ``source`` now: its snapshot and history read, every candidate
    simulated, the best under ``settings``' risk limits chosen (against the change the
    ``store`` says was made last, for the minimum dwell), and its Slurm change."""
    snap = source.snapshot()
    check_queue(snap)
    history = source.history(snap, settings.history_weeks)
    settings, note = fit_history(settings, history, snap.time)
    site = site_check(source, snap, settings, store)
    previous, since = (store.last_change(source.name) if store else None) or (None, None)
    rec = recommend(snap, history, settings, executor, previous, on_progress,
                    in_effect_since=since)
    refused = distrusted(site, settings.fidelity_floor)
    if refused and rec.change:
        rec = replace(rec, chosen=0, reason=f"{refused}; on its simulation alone it would "
                      f"recommend {rec.candidates[rec.chosen].label} ({rec.reason})")
    change = change_for(rec.candidates[rec.chosen], snap) if rec.change else None
    return Advice(snap, rec, change, note, site)


def site_check(source: Source, snapshot: Snapshot, settings: Settings,
               store: object | None = None) -> dict | None:
    """How faithfully the simulation reproduced the site over ``settings.site_check``
    before the snapshot's day began (local midnight: ``advisor.whatif.sitecheck``), the
    check's summary; None where the check is off or the source keeps no accounting (no
    ``job_log``: a trace replayed to a moment is its own simulation). A store that keeps
    checks (``site_check``, ``save_site_check``) keeps it by the window, the machine and
    the configuration checked: a day's runs check once, again when either changes."""
    read = getattr(source, "job_log", None)
    if not settings.site_check or read is None:
        return None
    local = snapshot.time + snapshot.config.utc_offset
    until = snapshot.time - local % 86400
    since = until - settings.site_check
    key = check_key(snapshot, since, until)
    cached = getattr(store, "site_check", None)
    found = cached(source.name, key) if cached else None
    if found is not None:
        return found
    log = read(since, snapshot.time)
    if log is None:
        return None
    log = with_configurations(log, snapshot, getattr(store, "configurations", None),
                              source.name)
    done = check_site(log, snapshot.machine, snapshot.config, snapshot.accounting, since,
                      until, SPAN, decay_ran=snapshot.accounting.decay_ran,
                      usage_known_at=snapshot.time).summary()
    keep = getattr(store, "save_site_check", None)
    if keep:
        keep(source.name, key, done)
    return done


def check_key(snapshot: Snapshot, since: int, until: int) -> str:
    """What a site check depends on besides the jobs: its window, the machine's nodes
    and partitions, and the configuration's keys (``config_key``)."""
    text = repr((since, until, snapshot.machine.partitions,
                 [(n.name, n.cpus, n.memory, n.gres) for n in snapshot.machine.nodes],
                 config_key(snapshot)))
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def config_key(snapshot: Snapshot) -> str:
    """The scheduling configuration in effect, as a key: its slurm.conf keys, not what is
    measured anew each run (the backfill cycle's cost, slurmctld's start)."""
    config = replace(snapshot.config.measured_as(SchedulingConfig()), utc_offset=0)
    return hashlib.blake2b(repr(config).encode(), digest_size=8).hexdigest()


def with_configurations(log: JobLog, snapshot: Snapshot, runs, source: str) -> JobLog:
    """``log`` with the changes of configuration the recorded runs saw (``runs(source,
    since, until)``: a store's (epoch, ``config_key``) of each run then): each run whose
    key is not the configuration's now."""
    if runs is None or not len(log):
        return log
    now = config_key(snapshot)
    seen = [(at, key) for at, key in runs(source, int(log.jobs["submit"].min()),
                                          log.read_at) if key and key != now]
    return replace(log, changes=log.changes + tuple(
        (at, "the configuration in effect differed from today's (advisor recommend's run "
             "then)") for at, _ in seen))


#: pending jobs a snapshot may hold: a simulation's cost grows faster than the queue, and a
#: default grid over a longer one would take longer than a decision made hourly can wait
#: (docs/performance.md, "Bounds")
MAX_PENDING = 20_000


def check_queue(snapshot: Snapshot) -> None:
    """BadInput, before any simulation, for a queue longer than the advisor plays."""
    if len(snapshot.pending) > MAX_PENDING:
        raise BadInput(f"the snapshot holds {len(snapshot.pending):,} pending jobs, over the "
                       f"bound of {MAX_PENDING:,} the advisor simulates (each simulation "
                       "would take seconds, and a recommendation hours)")


def fit_history(settings: Settings, history: pd.DataFrame, now: int
                ) -> tuple[Settings, str]:
    """The settings with ``history_weeks`` cut to the weeks the history holds (counted
    from its first submission, rounded up), and what was cut, in words ("" when
    nothing): a site that asks for more history than it has gets what there is, said."""
    asked = settings.history_weeks
    held = (-(-(now - int(history["submit"].min())) // SECONDS_PER_WEEK)
            if len(history) else 0)
    if held >= asked:
        return settings, ""
    note = (f"--history-weeks {asked} asked, but the history holds "
            + (f"{held} week{'s' if held > 1 else ''} ({len(history):,} jobs): "
               f"{held} used" if held else "no finished job: futures have no arrivals"))
    return replace(settings, history_weeks=max(1, held)), note
