"""No schedule moved: every golden case (tests/golden.py: the textbook engine, the slurm mode
over whole windows and as the online replay plays candidates, fair share included) gives
the start times recorded in tests/fixtures/golden.json, hash for hash. A change meant to
move schedules records them anew (``python -m tests.golden --write``) and says why."""
import json

from tests.golden import FIXTURE, cases


def test_every_golden_case_gives_the_recorded_start_times():
    recorded = json.loads(FIXTURE.read_text())
    now = cases()
    assert set(now) == set(recorded)
    moved = {k: (recorded[k]["mean_wait"], now[k]["mean_wait"]) for k in now
             if now[k]["sha256"] != recorded[k]["sha256"]}
    assert not moved, f"schedules moved (mean wait recorded -> now): {moved}"
