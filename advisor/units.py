"""Durations as people write them: 3600, 90m, 20h, 2d, 1w."""
from __future__ import annotations

import re

from advisor.errors import BadInput

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> int:
    m = _DURATION.match(text.strip().lower())
    if not m:
        raise BadInput(f"'{text}' is not a duration; write e.g. 3600, 90m, 20h or 2d")
    return int(round(float(m.group(1)) * _UNIT[m.group(2)]))


def format_duration(seconds: int) -> str:
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
