"""Durations as people write them (3600, 90m, 20h, 2d, 1w), and moments of a trace (a
duration since its start, or a date in its time zone), and the month each job of a trace
was submitted in."""
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
#: what a moment may be, for error messages
MOMENT_FORMS = ("seconds since the trace's start (864000, 10d, 36h) or a date "
                "(1996-10-01 or 1996-10-01T12:00)")


def parse_date(text: str) -> datetime:
    """A date (2026-11-01, 2026-11-01T12:00[:00]) that exists, without a zone."""
    text = text.strip()
    if not _DATE.match(text):
        raise BadInput(f"'{text}' is not a date; write e.g. 2026-11-01 or 2026-11-01T12:00")
    try:
        return datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError as e:
        raise BadInput(f"'{text}' is not a date that exists ({e}); write e.g. 2026-11-01 "
                       "or 2026-11-01T12:00") from None


def is_date(text: str) -> bool:
    """Whether ``text`` is written as a date (it may still not exist: ``parse_date``)."""
    return bool(_DATE.match(text.strip()))


def date_or_duration(text: str, forms: str) -> None:
    """Whether ``text`` is a date that exists or a duration; BadInput saying it is not
    ``forms`` when it is neither."""
    if is_date(text):
        parse_date(text)
        return
    try:
        parse_duration(text)
    except BadInput:
        raise BadInput(f"'{text}' is not {forms}") from None


def check_moment(text: str) -> None:
    """Whether ``text`` can be a moment of a trace (see ``parse_moment``)."""
    date_or_duration(text, f"a moment; give {MOMENT_FORMS}")


def check_since(text: str) -> None:
    """Whether ``text`` says how far back: a duration (30d, 12h) or a date that exists."""
    date_or_duration(text, "a duration (30d, 12h) or a date (2026-11-01, 2026-11-01T08:00)")


def zone(name: str | None):
    """The time zone ``name`` (an IANA name, as a trace's TimeZoneString); UTC for a name that
    is not one; None, this machine's zone (as ``datetime`` takes it), when ``name`` is."""
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return timezone.utc


def zone_name(name: str | None) -> str:
    """How ``zone(name)`` is named in output."""
    if name is None:
        return datetime.now().astimezone().tzname() or "local time"
    return "UTC" if zone(name) is timezone.utc else name


def trace_zone(header: TraceHeader):
    """The trace's time zone (its TimeZoneString), UTC when it names none or an unknown one."""
    return zone(header.time_zone_string or "UTC")


def parse_moment(text: str, header: TraceHeader) -> int:
    """A moment of a trace in its own clock: seconds since its start (``864000``, ``10d``,
    ``36h``) or a date (``1996-10-01``, ``1996-10-01T12:00``) in the trace's time zone,
    which needs the header's UnixStartTime."""
    text = text.strip()
    if _DATE.match(text):
        if header.unix_start_time is None:
            raise BadInput(f"the trace has no UnixStartTime, so the date '{text}' cannot be "
                           "placed in it; give the moment as seconds since its start")
        moment = parse_date(text).replace(tzinfo=trace_zone(header))
        return int(moment.timestamp()) - header.unix_start_time
    check_moment(text)
    return parse_duration(text)


def format_moment(epoch: float, name: str | None = None) -> str:
    """An instant as a date in the zone ``name`` (an IANA name, e.g. a trace's
    TimeZoneString; UTC when unknown), or, when None, in this machine's zone, as a live
    cluster's commands print it; the zone is named."""
    tz = zone(name)
    when = datetime.fromtimestamp(epoch, tz).astimezone(tz)
    return when.strftime("%Y-%m-%d %H:%M:%S ") + (when.tzname() if name is None else
                                                  zone_name(name))


def month_of(submit, header, fmt: str = "%Y-%m"):
    """Each job's calendar month of submission (or ``fmt`` of its date) on the trace's clock
    and in its time zone (UTC when it names none), or 30-day blocks from the first
    submission when the trace has no UnixStartTime."""
    import pandas as pd
    if header.unix_start_time is None:
        return ((submit - submit.min()) // (30 * 86400)).astype(str)
    when = pd.to_datetime(submit + header.unix_start_time, unit="s", utc=True)
    return when.tz_convert(trace_zone(header)).strftime(fmt).to_numpy()
