"""The code passes the linter configured in pyproject.toml (ruff: pyflakes and pycodestyle,
100 columns), so that CI, which runs the suite, runs it too."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format",
                           "concise", str(ROOT)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
