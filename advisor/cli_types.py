"""The command line's value types: each option's value is checked when the line is parsed,
before any work, and a bad one is answered in one line that says what to give instead.

``Parser`` prints argparse's errors as that one line (exit 2, as any bad input), with the
nearest valid names when a name is unknown.
"""
from __future__ import annotations

import argparse
import re
import sys

from advisor import units
from advisor.errors import BadInput, nearest


def _bounds(low, high, above: bool) -> str:
    if high is None:
        return f"{'>' if above else '>='} {low:g}"
    return f"from {low:g} to {high:g}"


def count(low: int, high: int | None = None):
    """A whole number from ``low`` to ``high`` (None: no upper bound)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a whole "
                                             f"number {_bounds(low, high, False)}")
        return value
    return parse


def number(low: float, high: float | None = None, above: bool = False):
    """A number from ``low`` (or above it, with ``above``) to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        if value != value or value < low or (above and value == low) or \
                (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: give a number "
                                             f"{_bounds(low, high, above)}")
        return value
    return parse


def checked(check):
    """An argparse type from a check that raises BadInput: the text, once it passes."""
    def parse(text: str) -> str:
        try:
            check(text)
        except BadInput as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text
    return parse


def duration(low: int = 1, high: int | None = None):
    """A duration (3600, 90m, 20h, 2d, 1w) of at least ``low`` seconds and at most ``high``,
    as seconds."""
    def parse(text: str) -> int:
        if text.strip().startswith("-"):
            raise argparse.ArgumentTypeError(f"'{text}' is negative: give a duration of at "
                                             f"least {low} s (e.g. 2d)")
        value = units.parse_duration(checked(units.parse_duration)(text))
        if value < low:
            raise argparse.ArgumentTypeError(f"'{text}' is too short: give at least "
                                             f"{low} s")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"'{text}' is over the bound of "
                                             f"{units.format_duration(high)}: give at most "
                                             "that")
        return value
    return parse


#: a moment of a trace: a duration since its start or a date that exists (its place in the
#: trace is found once the trace is read)
moment = checked(units.check_moment)
#: a date that exists (2026-11-01, 2026-11-01T08:00)
date_moment = checked(units.parse_date)
#: how far back: a duration (30d, 12h) or a date that exists
since_moment = checked(units.check_since)


def estimates(text: str) -> str:
    """Runtime estimates: user, exact, or f=N with N >= 1."""
    if text in ("user", "exact"):
        return text
    try:
        if text.startswith("f=") and float(text[2:]) >= 1:
            return text
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"'{text}' is not an estimate model: give user, exact "
                                     "or f=N with N >= 1 (e.g. f=2)")


def one_of(*names: str):
    """One of ``names``; an unknown one is answered with the nearest."""
    def parse(text: str) -> str:
        if text in names:
            return text
        raise argparse.ArgumentTypeError(f"'{text}' is not one of {', '.join(names)}"
                                         f"{nearest(text, names)}")
    return parse


class Parser(argparse.ArgumentParser):
    """argparse, with its errors in one line, as every other: 'advisor: error: ...'; a
    negative value with a unit (--horizon -1d) is read as a value, as -1 is, so that its
    option's type says what is wrong with it (argparse took it for an unknown option)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-\d+(\.\d*)?[a-z]*$|^-\.\d+[a-z]*$")

    def error(self, message: str):
        message = " ".join(message.split())
        if "invalid choice" in message and "argument command" in message:
            word = message.split("'")[1] if "'" in message else ""
            names = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)]
            choices = names[0].choices if names else {}
            message = f"unknown command '{word}'{nearest(word, choices)}; the commands " \
                      f"are {', '.join(choices)}"
        sys.stderr.write(f"advisor: error: {message} (see {self.prog} --help)\n")
        sys.exit(2)
