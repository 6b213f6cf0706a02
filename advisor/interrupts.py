"""SIGINT and SIGTERM as exceptions that unwind a run, and the few steps that must not be
cut in half by one (a folder swapped for another, a rollback, Ray's shutdown).

The command line installs ``handler`` for both signals (``install``): a signal then raises
``KeyboardInterrupt`` (SIGINT) or ``Terminated`` (SIGTERM) in the main thread, so that every
``finally`` runs. Inside ``deferred()`` a signal is only noted, and raised when the block
ends. Signals are noted, not blocked: Python runs a handler in the main thread whichever
thread the kernel delivered the signal to, and a run has other threads (Ray's, numba's,
rich's), so a signal mask of the main thread alone would not hold it back. Where Python
cannot raise (a callback from C: numba's compiler, an at-fork hook) it prints the exception
and drops it; the unraisable hook ``install`` sets sends the signal again, to be raised
once back in Python's own code. Inside numba or llvmlite, loading a kernel, the handler
itself sends it again instead of raising. While a library starts (``kept``: Ray's start
puts its own SIGTERM handlers, whose exit an at-fork hook may drop), ours stay in place. A
library caller who installs nothing keeps Python's own behaviour, and ``deferred`` and
``kept`` change nothing.
"""
from __future__ import annotations

import _thread
import os
import signal
import sys
import time
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


#: modules a signal's exception must not unwind: numba's and llvmlite's Python code, which
#: compiles and loads a kernel (some of it called back from C); cut there, a kernel was
#: left half loaded and its first call crashed the process (CI, SIGINT at 0.84 s)
_KERNEL_LOADERS = ("numba.", "llvmlite.")


def handler(signum, frame) -> None:
    _received.append(signum)
    if _depth:
        _held.append(signum)
        return
    if _loading_kernel(frame):
        _send_again(signum)     # noted: raised once back in the advisor's code
        return
    _raise(signum)


def _loading_kernel(frame) -> bool:
    """Whether the signal cut into numba or llvmlite (``_KERNEL_LOADERS``)."""
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith(_KERNEL_LOADERS):
            return True
        frame = frame.f_back
    return False


def _raise(signum: int) -> None:
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def install() -> dict[int, object]:
    """Our handler for SIGINT and SIGTERM (again, after a library such as Ray put its own);
    returns the handlers it replaced."""
    if sys.unraisablehook is not _unraisable:
        _hooks.append(sys.unraisablehook)
        sys.unraisablehook = _unraisable
    return {s: signal.signal(s, handler) for s in EXIT_CODES}


_hooks: list = []   # the unraisable hook ours replaced


def _unraisable(unraisable) -> None:
    """Where Python cannot raise, in a callback from C (numba's compiler notifying
    llvmlite's object cache, an at-fork hook), it prints the signal's exception and drops
    it: send the signal again, to be raised once back in Python's own code."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _received and not _depth:
        _send_again(_received[-1])
        return
    (_hooks[-1] if _hooks else sys.__unraisablehook__)(unraisable)


def _send_again(signum: int) -> None:
    """``signum`` sent again a moment later, from another thread: sent from here, it would
    be handled here again (a thread that waits for nothing: Thread.start would wait)."""
    _thread.start_new_thread(_resend, (signum,))


def _resend(signum: int) -> None:
    time.sleep(0.02)
    os.kill(os.getpid(), signum)


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
def kept():
    """For the block, a library that sets a handler for SIGINT or SIGTERM leaves ours in
    place (it is told ours was there): Ray's start puts its own for SIGTERM, which exits
    where Python may drop the exit (an at-fork hook), or kills Ray's processes and then
    ignores the signal. With ours, a signal raises as anywhere else, and the starter's own
    cleanup (``RayExecutor``: a shutdown and the session's processes killed) runs."""
    ours = {s for s in EXIT_CODES if signal.getsignal(s) is handler}
    if not ours:
        yield
        return
    original = signal.signal

    def keeping(signum, new):
        return handler if signum in ours else original(signum, new)

    signal.signal = keeping
    try:
        yield
    finally:
        signal.signal = original


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
