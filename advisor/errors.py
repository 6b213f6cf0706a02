"""Errors the library raises. The CLI alone turns them into one-line messages and exit codes.

Every error says what is wrong and how to fix it; none of them is a traceback for bad data.
"""
from __future__ import annotations

import difflib
from collections.abc import Iterable


class AdvisorError(Exception):
    """Base class. ``exit_code`` is the documented code the CLI exits with."""

    exit_code = 1


class BadInput(AdvisorError):
    """The user's input (a trace, a policy spec, an option) cannot be used as given."""

    exit_code = 2


class TraceFormatError(BadInput):
    """A malformed SWF line: names the file, the line number and the field."""

    def __init__(self, path: str, line: int, field: str, problem: str, fix: str = ""):
        self.path, self.line, self.field = path, line, field
        msg = f"{path}, line {line}, field '{field}': {problem}"
        if fix:
            msg += f" ({fix})"
        super().__init__(msg)


class PluginRefused(BadInput):
    """An installed plugin (a policy or a command) does not meet its contract."""


class SourceUnavailable(AdvisorError):
    """A source the advisor needs (a file, a daemon, a command) cannot be reached."""

    exit_code = 3


class Busy(AdvisorError):
    """Another run holds the lock (exit code 5)."""

    exit_code = 5


class MissingExtra(AdvisorError):
    """An optional dependency is not installed."""

    exit_code = 4

    def __init__(self, module: str, extra: str):
        super().__init__(
            f"this needs the optional package '{module}': install it with "
            f"pip install 'slurm-policy-advisor[{extra}]'"
        )


def nearest(word: str, names: Iterable[str], n: int = 3) -> str:
    """' (did you mean X or Y?)' for the valid names closest to ``word``; '' if none is."""
    names = list(names)
    close = difflib.get_close_matches(word, names, n=n, cutoff=0.5) or \
        difflib.get_close_matches(word.lower(), names, n=n, cutoff=0.5)
    if close:                   # only those about as close as the closest

        def ratio(m: str) -> float:
            return difflib.SequenceMatcher(None, word.lower(), m.lower()).ratio()
        close = [m for m in close if ratio(m) >= ratio(close[0]) - 0.1]
    if not close and len(word) >= 2:
        close = [m for m in names if m.lower().startswith(word.lower()[:2])][:n]
    return f" (did you mean {' or '.join(close)}?)" if close else ""
