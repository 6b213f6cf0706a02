"""SIGINT and SIGTERM as exceptions that unwind a run, and the few steps that must not be
cut in half by one (a folder swapped for another, a rollback, Ray's shutdown).

The command line installs ``handler`` for both signals (``install``): a signal then raises
``KeyboardInterrupt`` (SIGINT) or ``Terminated`` (SIGTERM) in the main thread, so that every
``finally`` runs. Inside ``deferred()`` a signal is only noted, and raised when the block
ends. Signals are noted, not blocked: Python runs a handler in the main thread whichever
thread the kernel delivered the signal to, and a run has other threads (Ray's, numba's,
rich's), so a signal mask of the main thread alone would not hold it back. A library caller
who installs nothing keeps Python's own behaviour, and ``deferred`` changes nothing.
"""
from __future__ import annotations

import signal
from contextlib import contextmanager

#: the signals that end a run, and the exit code each gives (128 + the signal's number)
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}
#: how the command line names each
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: unwinds like Ctrl-C (Ray's waits expect a KeyboardInterrupt and may
    raise a plain one in its place: ``received`` says which signal came)."""


_received: list[int] = []
_depth = 0          # how many deferred() blocks are open
_held: list[int] = []   # signals that came inside them


def handler(signum, frame) -> None:
    _received.append(signum)
    if _depth:
        _held.append(signum)
        return
    _raise(signum)


def _raise(signum: int) -> None:
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def install() -> dict[int, object]:
    """Our handler for SIGINT and SIGTERM (again, after a library such as Ray put its own);
    returns the handlers it replaced."""
    return {s: signal.signal(s, handler) for s in EXIT_CODES}


def restore(previous: dict[int, object]) -> None:
    for signum, old in previous.items():
        signal.signal(signum, old)


def reset() -> None:
    """Forget the signals of an earlier run (a test calls the CLI many times in one
    process)."""
    global _depth
    _received.clear()
    _held.clear()
    _depth = 0


def received() -> int | None:
    """The last ending signal that arrived, or None."""
    return _received[-1] if _received else None


def note(signum: int) -> None:
    """Record a signal that arrived by another way (Ray's own SIGTERM handler exits)."""
    _received.append(signum)


@contextmanager
def deferred():
    """Run the block to its end whatever signal comes; the signal is raised after it."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth and _held:
            signum = _held[-1]
            _held.clear()
            _raise(signum)


def hold_all() -> None:
    """From now on, note signals and never raise them (the run has ended and exits with
    the code ``received`` gives)."""
    global _depth
    _depth += 1
