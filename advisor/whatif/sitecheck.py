"""How faithfully the slurm mode reproduces a site: its own past replayed and compared.

From a job log (a live cluster's sacct, or a trace of a Slurm-run site) the window from
``since`` to ``until`` is cut into replays of ``span`` each. At the start of each, the
cluster's state is rebuilt (``past_state.state_at``: running and pending jobs, fair-share
usage decayed to the moment) and the slurm mode plays the jobs submitted after it with
their real runtimes; each job is judged once, in the replay of the window it was submitted
in (the first replay also judges the jobs pending at its start), on its simulated start
against its real one. The figures are a site's own: the share of jobs within
max(2 s, bf_interval) and within a minute, the mean and 95th percentile of the error, by
partition, and the jobs furthest off with what they had in common. What the log and
slurmdbd's records show that the replay does not play (nodes out of service, jobs left
out, held jobs, a slurmctld restart, accounting changed) is named, not guessed around.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from advisor.engine.slurm import slurm_input, start_times
from advisor.engine.slurm_timing import LIVE, Timing
from advisor.model import STARTED_BY, Accounting, Cluster, JobLog, SchedulingConfig
from advisor.whatif.past_state import PastState, state_at
from advisor.whatif.unplayed import describe, unplayed

#: the second tolerance every check reports beside max(2 s, bf_interval)
MINUTE = 60
#: a replay's window where none is given to a recommendation's check: the state is rebuilt
#: this often (sampled futures run a day or three from one state)
SPAN = 6 * 3600
#: the jobs furthest off a check lists
FURTHEST = 10
#: the columns of a check's table of judged jobs (times epoch seconds)
JUDGED_COLUMNS = ("job_id", "window", "partition", "account", "user", "qos", "cpus",
                  "gpus", "limit", "submit", "real", "sim", "backfilled", "reason")


@dataclass(frozen=True)
class SiteCheck:
    """A check's judged jobs (``JUDGED_COLUMNS``; ``sim`` -1: the replay never started
    it), its tolerance, windows and findings (what it does not play, in words)."""

    table: pd.DataFrame
    tolerance: int
    windows: tuple[tuple[int, int], ...]
    findings: tuple[str, ...] = ()
    source: str = ""
    zone: str | None = None
    left_out: dict[str, int] = field(default_factory=dict)

    @property
    def figures(self) -> dict:
        return figures(self.table, self.tolerance)

    def by_partition(self) -> dict[str, dict]:
        return {str(p): figures(rows, self.tolerance)
                for p, rows in self.table.groupby("partition", sort=True)}

    def furthest(self, n: int = FURTHEST) -> pd.DataFrame:
        err = _error(self.table)
        return self.table.assign(error=err).sort_values(
            "error", ascending=False, key=abs, kind="mergesort").head(n)

    def summary(self) -> dict:
        """What a recommendation carries of it: the figures, by partition, the window and
        what was not played (no job list)."""
        return {"source": self.source, "since": self.windows[0][0] if self.windows else None,
                "until": self.windows[-1][1] if self.windows else None,
                "tolerance_s": self.tolerance, **self.figures,
                "partitions": self.by_partition(), "findings": list(self.findings)}

    def as_dict(self, top: int = FURTHEST) -> dict:
        far = self.furthest(top)
        return {"source": self.source, "zone": self.zone, "tolerance_s": self.tolerance,
                "windows": [list(w) for w in self.windows], **self.figures,
                "partitions": self.by_partition(),
                "furthest": far.to_dict("records"),
                "in_common": in_common(self.table, far),
                "findings": list(self.findings), "left_out": dict(self.left_out)}


def _error(table: pd.DataFrame) -> pd.Series:
    """Simulated minus real start (s); NaN where the replay never started the job."""
    sim = table["sim"].where(table["sim"] >= 0)
    return (sim - table["real"]).astype(float)


def figures(table: pd.DataFrame, tolerance: int) -> dict:
    """The share within ``tolerance`` and within a minute (a job the replay never started
    is outside both), the mean and 95th percentile of the absolute error, the mean signed
    error (positive: the replay starts jobs late) and both mean waits, in seconds."""
    err = _error(table)
    n = len(table)
    if n == 0:
        return {"jobs": 0, "within": float("nan"), "within_minute": float("nan"),
                "mean_error_s": float("nan"), "p95_error_s": float("nan"),
                "bias_s": float("nan"), "real_wait_s": float("nan"),
                "sim_wait_s": float("nan"), "never_started": 0}
    size = err.abs()
    return {"jobs": n, "within": float((size <= tolerance).sum() / n),
            "within_minute": float((size <= MINUTE).sum() / n),
            "mean_error_s": float(size.mean()), "p95_error_s": float(size.quantile(0.95)),
            "bias_s": float(err.mean()),
            "real_wait_s": float((table["real"] - table["submit"]).mean()),
            "sim_wait_s": float((table["sim"].where(table["sim"] >= 0) -
                                 table["submit"]).mean()),
            "never_started": int(err.isna().sum())}


def check_site(log: JobLog, cluster: Cluster, config: SchedulingConfig,
               accounting: Accounting = Accounting(), since: int | None = None,
               until: int | None = None, span: int | None = None,
               decay_ran: int | None = None, timing: Timing | None = LIVE,
               usage_known_at: int | None = None,
               on_progress: Callable[[int, int], None] | None = None) -> SiteCheck:
    """The check of ``log`` from ``since`` (its first submission) to ``until`` (when it
    was read), in replays of ``span`` (the whole window) on ``cluster`` under ``config``
    and ``accounting`` (associations and QOS as they are now, their usage as sshare read
    it at ``usage_known_at``, default the log's reading, rebuilt at each replay's
    start); ``decay_ran``: the phase of slurmctld's decay thread."""
    jobs = log.jobs
    since = int(jobs["submit"].min()) if since is None and len(jobs) else since or 0
    until = log.read_at if until is None else until
    span = max(until - since, 1) if not span else span
    windows = tuple((a, min(a + span, until)) for a in range(since, until, span))
    parts: list[pd.DataFrame] = []
    left_out: dict[str, set[int]] = {}
    played: list[PastState] = []
    by_id = jobs.set_index("job_id")
    for k, (a, b) in enumerate(windows):
        state = state_at(log, a, b, cluster, config, accounting, decay_ran,
                         judge_pending=k == 0, usage_known_at=usage_known_at)
        for what, ids in state.left_out.items():
            left_out.setdefault(what, set()).update(ids)
        parts.append(_replay(state, by_id, k, timing))
        played.append(state)
        if on_progress:
            on_progress(k + 1, len(windows))
    table = pd.concat(parts, ignore_index=True) if parts else \
        pd.DataFrame(columns=list(JUDGED_COLUMNS))
    tolerance = max(2, config.backfill.bf_interval)
    counts = {what: len(ids) for what, ids in left_out.items()}
    notes = findings(log, table, windows, counts, played[0] if played else None)
    return SiteCheck(table, tolerance, windows, notes, log.source, log.zone, counts)


def _replay(state: PastState, by_id: pd.DataFrame, window: int,
            timing: Timing | None) -> pd.DataFrame:
    """The judged jobs of one replay, each with its simulated start (``by_id``: the
    log's jobs indexed by id)."""
    snap, judged = state.snapshot, list(state.judged)
    if not judged:
        return pd.DataFrame(columns=list(JUDGED_COLUMNS))
    inp = slurm_input(snap, state.runtimes, state.arrivals, first_pass=True, timing=timing,
                      keep_nodes=True)
    sim = pd.Series(start_times(inp), index=inp.job_ids)
    jobs = {j.job_id: j for j in (*snap.pending, *state.arrivals)}
    rows = by_id.loc[judged]
    return pd.DataFrame({
        "job_id": judged, "window": window,
        "partition": [jobs[i].partition for i in judged],
        "account": rows["account"].to_numpy(), "user": rows["user"].to_numpy(),
        "qos": rows["qos"].to_numpy(), "cpus": rows["cpus"].to_numpy(),
        "gpus": rows["gpus"].to_numpy(), "limit": rows["limit"].to_numpy(),
        "submit": rows["submit"].to_numpy(), "real": rows["start"].to_numpy(),
        "sim": sim.reindex(judged).fillna(-1).astype(np.int64).to_numpy(),
        "backfilled": rows["backfilled"].to_numpy(), "reason": rows["reason"].to_numpy()})


# ------------------------------------------------------------------ what is named
def findings(log: JobLog, table: pd.DataFrame, windows, left_out: dict[str, int],
             first: PastState | None) -> tuple[str, ...]:
    """What the replays do not play, found where Slurm records it, in words."""
    out = [f"{n} {what}" for what, n in left_out.items()]
    out += list(log.notes)
    if windows and first is not None:
        begin, end = windows[0][0], max(int(table["real"].max()) if len(table) else 0,
                                        windows[-1][1])
        out += _node_events(log, begin, end)
        booted = first.snapshot.config.booted
        if begin < booted <= end:
            out.append("slurmctld started within the window (BOOT_TIME): the "
                       "configuration before it may have differed; played as it is now")
        changed = [what for when, what in log.changes if begin <= when <= end]
        if changed:
            out.append(f"the rules changed {len(changed)} times within the window (first: "
                       f"{changed[0]}): played as they are now")
    held = table["reason"].str.startswith("JobHeld").sum() if len(table) else 0
    if held:
        out.append(f"{held} jobs were held (sacct: JobHeldUser/JobHeldAdmin): played from "
                   "their release, their eligible time")
    asked = log.jobs["job_id"].isin(table["job_id"]) & (log.jobs["features"] != "")
    if asked.any():
        out.append(f"{int(asked.sum())} jobs asked for node features (not played: any "
                   "node of their partition would do)")
    requeued = log.jobs["job_id"].isin(table["job_id"]) & (log.jobs["requeued"] > 0)
    if requeued.any():
        out.append(f"{int(requeued.sum())} jobs were requeued: only their last run is "
                   "in the log")
    if first is not None:
        counts = {k: n for k, n in unplayed(first.snapshot).items()
                  if not k.startswith("jobs ")}
        if counts:
            out.append(describe(counts))
    return tuple(out)


def _node_events(log: JobLog, begin: int, end: int, shown: int = 3) -> list[str]:
    """The nodes out of service at some time between ``begin`` and ``end``."""
    hit = [e for e in log.events if e.start <= end and (e.end < 0 or e.end >= begin)]
    if not hit:
        return []
    nodes = sorted({e.node for e in hit})
    states = sorted({e.state for e in hit})
    names = ", ".join(nodes[:shown]) + (f" and {len(nodes) - shown} more"
                                        if len(nodes) > shown else "")
    return [f"{len(nodes)} nodes were out of service ({'/'.join(states)}) during the "
            f"window: {names} (sacctmgr show event; played in service)"]


def in_common(table: pd.DataFrame, far: pd.DataFrame, least: float = 0.5,
              lift: float = 1.5) -> list[str]:
    """What the jobs furthest off shared more than the jobs judged did: each value that
    at least ``least`` of them had and that is ``lift`` times as common among them."""
    if len(far) < 2:
        return []
    out = []
    for name, values, everyone in _traits(table, far):
        shares = values.value_counts(normalize=True)
        base = everyone.value_counts(normalize=True)
        for value, share in shares.items():
            if share >= least and share >= lift * base.get(value, 0.0):
                count = int(round(share * len(far)))
                out.append(f"{count} of {len(far)} {name} {value} "
                           f"({base.get(value, 0.0):.0%} of the jobs judged)")
    return out


def _traits(table: pd.DataFrame, far: pd.DataFrame):
    """(what, the furthest jobs' values, every judged job's values) of each trait."""
    def size(t):
        return pd.cut(t["cpus"], [0, 1, 16, 128, 1024, np.inf],
                      labels=["of 1 CPU", "of 2-16 CPUs", "of 17-128 CPUs",
                              "of 129-1024 CPUs", "over 1024 CPUs"]).astype(str)

    def late(t):
        err = _error(t)
        return np.where(err.isna(), "never started", np.where(err > 0, "late", "early"))

    def started_by(t):
        return np.where(t["backfilled"], STARTED_BY[True], STARTED_BY[False])

    for name, get in (("in partition", lambda t: t["partition"]),
                      ("of account", lambda t: t["account"]),
                      ("of user", lambda t: t["user"]),
                      ("in QOS", lambda t: t["qos"]),
                      ("jobs", size),
                      ("simulated", late),
                      ("really started by", started_by)):
        yield name, pd.Series(get(far)), pd.Series(get(table))
