"""A short play on the test cluster with what a site check must name rather than play: a
held job released later, a job cancelled while it waited, a node drained for a while.
Shared by tests/integration/test_site_check.py and tests/fixtures/record_sitecheck.py."""
from __future__ import annotations

import time

#: (offset s, sbatch options) of the play's jobs, the first filling the cluster for 20 s
JOBS = ((0, ["-n", "64", "-t", "1", "--wrap", "sleep 20"]),
        (1, ["-n", "16", "-t", "1", "--wrap", "sleep 8"]),
        (2, ["-H", "-n", "4", "-t", "1", "--wrap", "sleep 4"]),      # held, released at 12
        (3, ["-n", "48", "-t", "5", "--wrap", "sleep 300"]),          # cancelled at 14
        (4, ["-n", "8", "-t", "1", "--wrap", "sleep 6"]),
        (6, ["-A", "physics", "-n", "2", "-t", "1", "--wrap", "sleep 5"]),
        (8, ["-A", "research", "-n", "6", "-t", "1", "--wrap", "sleep 3"]))
#: (offset s, action) beside the submissions
ACTIONS = ((10, "drain"), (12, "release"), (14, "cancel"), (30, "resume"))
DRAINED = "n4"


def play_with_events(cluster) -> tuple[int, int, dict[str, int]]:
    """Submit JOBS and act ACTIONS at their offsets; wait until every job is done and
    sacct has them. Returns (the first submission's epoch, the last action's, the job ids
    of the held and the cancelled job)."""
    steps = sorted([(t, "submit", o) for t, o in JOBS] + [(t, a, None) for t, a in ACTIONS],
                   key=lambda s: s[0])
    ids: list[int] = []
    origin = time.monotonic()
    first = int(time.time())
    for offset, what, options in steps:
        time.sleep(max(origin + offset - time.monotonic(), 0))
        if what == "submit":
            out = cluster.run("sbatch", "--parsable", "-o", "/dev/null", *options)
            ids.append(int(out.strip().split(";")[0]))
        elif what == "drain":
            cluster.run("scontrol", "update", f"nodename={DRAINED}", "state=drain",
                        "reason=site-check")
        elif what == "resume":
            cluster.run("scontrol", "update", f"nodename={DRAINED}", "state=resume")
        elif what == "release":
            cluster.run("scontrol", "release", str(ids[2]))
        elif what == "cancel":
            cluster.run("scancel", str(ids[3]))
    last = int(time.time())
    wanted = ",".join(map(str, ids))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        states = cluster.run("sacct", "-n", "-X", "-P", "-o", "End", "-j", wanted).split()
        if len(states) == len(ids) and "Unknown" not in states:
            break
        time.sleep(1)
    return first, last, {"held": ids[2], "cancelled": ids[3]}


class Capture:
    """What ``advisor forecast`` reads, taken ``delay`` seconds after ``start()`` in a
    thread (while a play submits its jobs): the snapshot (squeue --start's estimates in
    it) and the finished jobs of the four weeks before. Whatever fails in the thread is
    raised by ``taken()``."""

    def __init__(self, delay: float):
        import threading
        self.delay, self.snapshot, self.history, self.error = delay, None, None, None
        self.thread = threading.Timer(delay, self._take)

    def start(self) -> Capture:
        self.thread.start()
        return self

    def _take(self) -> None:
        from advisor.adapters import slurm_cli
        from advisor.model import SECONDS_PER_WEEK
        try:
            self.snapshot = slurm_cli.snapshot(slurm_cli.SlurmCommands())
            self.history = slurm_cli.finished_jobs(
                self.snapshot.time - 4 * SECONDS_PER_WEEK, slurm_cli.SlurmCommands())
        except BaseException as e:     # (raised in the test's thread by taken())
            self.error = e

    def taken(self):
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.snapshot, self.history


def closer(row: dict) -> str:
    """Which estimate of ``forecast_against_slurm``'s row is nearer its real start:
    "forecast" (also where squeue --start gave none), "squeue" (also where the forecast
    said later than its horizon) or "tie"."""
    f, q, real = row["forecast"], row["squeue"], row["real"]
    if q is None or (f is not None and abs(f - real) < abs(q - real)):
        return "forecast"
    return "tie" if f is not None and abs(f - real) == abs(q - real) else "squeue"


def forecast_against_slurm(snapshot, history, records) -> list[dict]:
    """Each job pending in ``snapshot`` that started: its real start, the forecast's
    median (20 futures) and squeue --start's estimate (None: none), seconds from the
    snapshot."""
    from advisor.whatif.forecast import forecast
    real = {r["job_id"]: r["start"] for r in records if r["start"]}
    done = forecast(snapshot, history, samples=20, horizon=3600)
    rows = []
    for row in done.table.itertuples():
        if row.job_id not in real:
            continue
        t0 = snapshot.time
        rows.append({"job": int(row.job_id), "cpus": int(row.cpus),
                     "real": real[row.job_id] - t0,
                     "forecast": None if row.median < 0 else int(row.median - t0),
                     "squeue": None if row.slurm < 0 else int(row.slurm - t0)})
    return rows
