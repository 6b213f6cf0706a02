"""Durations as people write them (3600, 90m, 20h, 2d, 1w), and moments of a trace (a
duration since its start, or a date in its time zone)."""
from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from advisor.errors import BadInput

if TYPE_CHECKING:
    from advisor.model import TraceHeader

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


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$")


def parse_moment(text: str, header: TraceHeader) -> int:
    """A moment of a trace in its own clock: seconds since its start (``864000``, ``10d``,
    ``36h``) or a date (``1996-10-01``, ``1996-10-01T12:00``) in the trace's time zone,
    which needs the header's UnixStartTime."""
    text = text.strip()
    if _DATE.match(text):
        if header.unix_start_time is None:
            raise BadInput(f"the trace has no UnixStartTime, so the date '{text}' cannot be "
                           "placed in it; give the moment as seconds since its start")
        zone = timezone.utc
        if header.time_zone_string:
            try:
                zone = ZoneInfo(header.time_zone_string)
            except (ZoneInfoNotFoundError, ValueError):
                pass
        moment = datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=zone)
        return int(moment.timestamp()) - header.unix_start_time
    try:
        return parse_duration(text)
    except BadInput:
        raise BadInput(f"'{text}' is not a moment; give seconds since the trace's start "
                       "(864000, 10d, 36h) or a date (1996-10-01T12:00)") from None
