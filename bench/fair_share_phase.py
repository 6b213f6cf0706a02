"""Fair-share sim-to-real recordings (``bench/sim_to_real.py --save``) replayed with the
PriorityCalcPeriod ticks at each phase of the minute, 5 s apart: the share of jobs the slurm
mode starts within 2 s of the real start at each phase, beside the phase read from
slurmctld's state file; and, at each tick the play saw, the ratio of the two accounts'
usage (the real schedule's, added to the snapshot's) that decides which goes first.

    .venv/bin/python bench/fair_share_phase.py RECORDINGS.json [...]
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.model import Snapshot  # noqa: E402
from advisor.studies.validate import CONFIGURATIONS, evaluate  # noqa: E402


def main() -> None:
    textbook = CONFIGURATIONS["fairshare-easy"][2]
    for path in sys.argv[1:]:
        recordings = json.loads(Path(path).read_text())
        for name in (k for k in recordings if k.startswith("fairshare")):
            snap = Snapshot.from_dict(recordings[name]["snapshot"])
            records = recordings[name]["records"]
            acc = snap.accounting
            first = min(r["submit"] for r in records)
            shares = []
            for p in range(0, 60, 5):  # ticks at first + p + k * 60
                moved = replace(snap, accounting=replace(acc, decay_ran=first - 60 + p))
                shares.append(round(100 * evaluate(moved, records, textbook)["slurm"]["within"]))
            read = None if acc.decay_ran is None else (acc.decay_ran - first) % 60
            print(f"{path} {name}: phase read {read}; within 2 s at phases 0, 5, ..., 55 s:",
                  shares)
            usage = {a.account: a.raw_usage for a in acc.associations if not a.user}
            ticks = range(read if read is not None else 0, 180, 60)
            for t in ticks:
                used = dict(usage)
                for r in records:
                    run = max(0, min(r["end"] - first, t) - (r["start"] - first))
                    used[r["account"]] = used.get(r["account"], 0.0) + r["alloc_cpus"] * run
                if used.get("research"):
                    print(f"  tick at {t} s: physics/research usage "
                          f"{used.get('physics', 0.0) / used['research']:.3f}")


if __name__ == "__main__":
    main()
