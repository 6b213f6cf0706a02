"""The type checker on the core, against a baseline that can only shrink.

    .venv/bin/python -m tests.typecheck            # the errors now, against the baseline
    .venv/bin/python -m tests.typecheck --write    # record them (after fixing some)

mypy (pinned in the dev extra, with pandas-stubs) checks the library's core: the model,
the engine, the plugin seam, the what-if layer and the settings. Its errors are counted per
file and error code (line numbers move with every edit); ``tests/unit/test_types.py``
fails when a count rises above ``tests/fixtures/mypy-baseline.json``, or when the baseline
holds more than there is (write it anew, so that a fix stays fixed).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tests" / "fixtures" / "mypy-baseline.json"
#: the core: what the library's callers and the next issues' changes go through
CORE = ("advisor/model.py", "advisor/releases.py", "advisor/errors.py", "advisor/units.py",
        "advisor/settings.py", "advisor/bounds.py", "advisor/sources.py", "advisor/engine",
        "advisor/plugins", "advisor/whatif")
ERROR = re.compile(r"^(?P<file>[^:]+):\d+: error: .*\[(?P<code>[a-z-]+)\]$")


def errors() -> Counter:
    """The type checker's errors on the core, by (file, code)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "--ignore-missing-imports",
                           "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"),
                           *CORE], capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1):        # 2: mypy itself failed
        raise RuntimeError(f"mypy failed to run: {done.stderr or done.stdout}")
    found = Counter()
    for line in done.stdout.splitlines():
        m = ERROR.match(line)
        if m:
            found[f"{m['file']} {m['code']}"] += 1
    return found


def baseline() -> Counter:
    return Counter(json.loads(BASELINE.read_text()))


def main() -> None:
    found = errors()
    if "--write" in sys.argv:
        BASELINE.write_text(json.dumps(dict(sorted(found.items())), indent=1) + "\n")
        print(f"{sum(found.values())} errors recorded in {BASELINE.relative_to(ROOT)}")
        return
    base = baseline()
    for key in sorted(set(found) | set(base)):
        if found[key] != base[key]:
            print(f"{key}: {base[key]} in the baseline, {found[key]} now")
    print(f"{sum(found.values())} errors now, {sum(base.values())} in the baseline")


if __name__ == "__main__":
    main()
