"""The code passes the linter configured in pyproject.toml (ruff: pyflakes, pycodestyle at
100 columns, bugbear, and no print() outside the scripts), so that CI, which runs the
suite, runs it too."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format",
                           "concise", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
