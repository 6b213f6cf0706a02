"""The history of recommendations, in SQLite, and the lock that keeps runs from overlapping.

Table ``runs``: when, from which source, what was recommended (the spec, or none), the
exit code, and the whole JSON document (evidence included). Table ``site_checks``: the
site checks made before recommendations (``advisor check`` on the day before), by source
and by the window, machine and configuration they checked, so that a day's runs check
once. The default database is ``$XDG_STATE_HOME/slurm-policy-advisor/advisor.sqlite``
(``~/.local/state/...``).
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import time
from contextlib import contextmanager
from pathlib import Path

from advisor.errors import Busy, SourceUnavailable

SCHEMA = """CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,           -- epoch seconds of the run
    source TEXT NOT NULL,
    snapshot_time INTEGER NOT NULL,
    change INTEGER NOT NULL,       -- 1: a change was recommended
    spec TEXT,                     -- the recommended candidate's spec (NULL: keep)
    label TEXT,
    exit_code INTEGER NOT NULL,
    doc TEXT NOT NULL              -- the run's JSON document
);
CREATE TABLE IF NOT EXISTS site_checks (
    source TEXT NOT NULL,
    key TEXT NOT NULL,             -- the window, machine and configuration checked
    at INTEGER NOT NULL,           -- epoch seconds of the check
    doc TEXT NOT NULL,             -- its summary (advisor.whatif.sitecheck)
    PRIMARY KEY (source, key)
)"""


#: site checks kept per source (a day's windows: one a day, more when the
#: configuration changes within one)
KEPT_CHECKS = 30


def default_path() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(Path.home(), ".local", "state")
    return Path(state) / "slurm-policy-advisor" / "advisor.sqlite"


class Store:
    def __init__(self, path: str | os.PathLike | None = None, create: bool = True):
        """The store at ``path`` (default ``default_path()``); without ``create``, a store
        that does not exist is an error (a reader's typo must not make an empty one)."""
        self.path = Path(path) if path else default_path()
        if not create and not self.path.is_file():
            raise SourceUnavailable(f"no store at {self.path}: give --store the file that "
                                    "advisor recommend records to (its --store)")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(self.path)
            self.db.executescript(SCHEMA)
            self.db.commit()
        except (OSError, sqlite3.Error) as e:
            raise SourceUnavailable(f"store {self.path}: {e} (pass --store PATH to a "
                                    "writable file)") from None

    def record(self, doc: dict, source: str, exit_code: int, now: int | None = None) -> int:
        chosen = doc.get("chosen") or {}
        change = bool(doc.get("change"))
        with self.db:
            cur = self.db.execute(
                "INSERT INTO runs (at, source, snapshot_time, change, spec, label, exit_code,"
                " doc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (int(now if now is not None else time.time()), source,
                 int(doc.get("snapshot_time", 0)), int(change),
                 chosen.get("spec") if change else None,
                 chosen.get("label") if change else None, exit_code,
                 json.dumps(doc, default=list)))
        return int(cur.lastrowid)

    def last_change(self, source: str | None = None) -> tuple[str, int] | None:
        """The spec and snapshot time of the most recent run that recommended a change
        (hysteresis, and the minimum dwell: when the configuration was last changed on the
        advice)."""
        sql = "SELECT spec, snapshot_time FROM runs WHERE change = 1"
        args: tuple = ()
        if source:
            sql += " AND source = ?"
            args = (source,)
        row = self.db.execute(sql + " ORDER BY id DESC LIMIT 1", args).fetchone()
        return (row[0], int(row[1])) if row else None

    def site_check(self, source: str, key: str) -> dict | None:
        """The site check made for ``source`` under ``key``, or None."""
        row = self.db.execute("SELECT doc FROM site_checks WHERE source = ? AND key = ?",
                              (source, key)).fetchone()
        return None if row is None else json.loads(row[0])

    def save_site_check(self, source: str, key: str, doc: dict,
                        now: int | None = None) -> None:
        """Keep a site check; a source keeps its last ``KEPT_CHECKS``."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO site_checks (source, key, at, doc) "
                            "VALUES (?, ?, ?, ?)", (source, key, int(
                                now if now is not None else time.time()), json.dumps(doc)))
            self.db.execute("DELETE FROM site_checks WHERE source = ? AND key NOT IN (SELECT "
                            "key FROM site_checks WHERE source = ? ORDER BY at DESC LIMIT ?)",
                            (source, source, KEPT_CHECKS))

    def configurations(self, source: str, since: int, until: int) -> list[tuple[int, str]]:
        """(snapshot time, configuration key) of each run of ``source`` (``slurm`` reads
        ``slurm:cli``'s too) whose snapshot is between two epochs (runs recorded before
        keys were: none)."""
        rows = self.db.execute(
            "SELECT snapshot_time, json_extract(doc, '$.config_key') FROM runs WHERE "
            "(source = ? OR source LIKE ? || ':%') AND snapshot_time BETWEEN ? AND ? "
            "ORDER BY snapshot_time", (source, source, since, until)).fetchall()
        return [(int(t), k) for t, k in rows if k]

    def runs(self, limit: int = 20) -> list[dict]:
        """The last ``limit`` runs, newest first, with the figures a history shows: the
        queue's bounded slowdown, the chosen candidate's gain, the site check's share
        within its tolerance (None: no check), and whether --apply ran ("yes", "failed",
        or None)."""
        rows = self.db.execute(
            "SELECT id, at, source, snapshot_time, change, spec, label, exit_code, doc FROM "
            "runs ORDER BY id DESC LIMIT ?", (limit,)).fetchall()
        keys = ("id", "at", "source", "snapshot_time", "change", "spec", "label", "exit_code")
        out = []
        for r in rows:
            doc = json.loads(r[-1])
            chosen = next((c for c in doc.get("candidates", [])
                           if r[4] and c.get("spec") == r[5]), None)
            applied = doc.get("applied")
            site = doc.get("site_check") or {}
            out.append({**dict(zip(keys, r)), "queue_bsld": doc.get("queue_bsld"),
                        "gain": chosen.get("gain") if chosen else None,
                        "site": site.get("within") if site.get("jobs") else None,
                        "applied": None if applied is None else
                        ("failed" if "error" in applied else "yes")})
        return out

    def last_doc(self) -> dict | None:
        """The newest run's whole document (its ``source`` added), or None."""
        row = self.db.execute("SELECT source, doc FROM runs ORDER BY id DESC LIMIT 1"
                              ).fetchone()
        return None if row is None else {**json.loads(row[1]), "source": row[0]}

    def docs(self, limit: int = 200) -> list[dict]:
        """The last ``limit`` documents, oldest first, each with its run time ``at``."""
        rows = self.db.execute("SELECT at, doc FROM runs ORDER BY id DESC LIMIT ?",
                               (limit,)).fetchall()
        return [{**json.loads(d), "at": at} for at, d in reversed(rows)]

    def close(self) -> None:
        self.db.close()


@contextmanager
def run_lock(path: str | os.PathLike):
    """Hold an exclusive lock on ``path`` for the duration, or raise Busy at once."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a+")
    except OSError as e:
        raise SourceUnavailable(f"lock file {path}: {e} (pass --lock PATH)") from None
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"another advisor run holds {path}; this one stops (it runs again "
                       "at its next schedule)") from None
        yield
    finally:
        handle.close()
