"""``advisor check`` on the test cluster's own accounting, each release.

A play of mixed jobs (GPUs, memory, a capped QOS, two accounts) is read back from sacct
alone, the state rebuilt 30 s into it, and replayed: test_sim_to_real.py's resources test
runs it after each of its plays (``site_check``), and it must meet the floor of the
recorded plays (90% within max(2 s, bf_interval)) in one of three plays, as the
simulation from the live snapshot must. Here, under fair share (the usage at the window's
start carried back from sshare's), a short play holds what the check must name and not
play: a held job, a job cancelled while it waited and a node drained for a while.
"""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime

from advisor.studies.validate import CONFIGURATIONS
from tests.integration.site_play import DRAINED, play_with_events

#: how far into a play the check's window begins: jobs run and wait then
INTO = 30


def site_check(cluster, since: int, until: int) -> dict:
    """``advisor check --json`` on the cluster's accounting from ``since`` to ``until``."""
    def local(t: int) -> str:
        return datetime.fromtimestamp(t).strftime("%Y-%m-%dT%H:%M:%S")
    done = subprocess.run([sys.executable, "-m", "advisor.cli", "check", "--since",
                           local(since), "--until", local(until), "--span", "1h", "--json"],
                          capture_output=True, text=True, env=cluster.env, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_check_names_what_it_does_not_play(clean_queue):
    with clean_queue.reconfigured(**CONFIGURATIONS["fairshare-easy"][0]):
        first, last, ids = play_with_events(clean_queue)
        doc = site_check(clean_queue, first, last + 30)
    print(f"\nsite check of the play with events: {doc['within']:.1%} of {doc['jobs']} "
          f"jobs; {doc['findings']}")
    findings = " | ".join(doc["findings"])
    assert "1 jobs cancelled before they started" in findings, findings
    assert "1 jobs were held" in findings, findings
    assert f"nodes were out of service (DRAIN) during the window: {DRAINED}" in findings
    judged = {row["job_id"] for row in doc["furthest"]}
    assert ids["held"] in judged and ids["cancelled"] not in judged
