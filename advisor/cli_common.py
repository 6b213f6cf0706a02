"""What the commands of ``advisor`` share: reading a trace, checking an output before the
long work, JSON out, the compile notice, the progress bar and a muted stderr. Only the CLI
modules use it."""
from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager

from advisor.errors import BadInput, MissingExtra

EXIT_OK = 0


def _emit_json(doc: dict) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, default=list) + "\n")


def _commands(args):
    """How Slurm's commands are run: --slurm-bin and --slurm-timeout."""
    from advisor.adapters.slurm_cli import SlurmCommands
    return SlurmCommands(bin_dir=args.slurm_bin, timeout=args.slurm_timeout)


def _moment(text: str, now: int, ago: bool = False) -> int:
    """An epoch from a date in this machine's time zone (2026-11-01[T12:00]) or, with
    ``ago``, a duration back (30d); both were checked when the line was parsed."""
    from advisor.units import is_date, parse_date, parse_duration
    if is_date(text):
        return int(parse_date(text).timestamp())
    return now - parse_duration(text)


def _source(args):
    """The source ``--from`` names (``advisor.sources.open_source``), the policy and the
    shares file read first, before any reading of the source."""
    from advisor.plugins.spec import parse_policy
    from advisor.sources import open_source
    policy = parse_policy(args.policy) if args.policy else None
    return open_source(args.source, policy, args.fair_share,
                       _shares(args.fair_share, args.shares), _commands(args))


def _estimates(text: str):
    """The estimate model of --estimates (checked when the line was parsed)."""
    from advisor.engine import Estimates
    if text.startswith("f="):
        return Estimates("badness", float(text[2:]))
    return Estimates(text)


def _load(args):
    from advisor.adapters.swf import read_swf, resolve_trace
    from advisor.cleaning import CleaningOptions
    cleaning = CleaningOptions(drop_invalid=not args.keep_invalid,
                               drop_oversize=args.drop_oversize,
                               drop_overruns=args.drop_overruns)
    if args.procs is not None and args.procs <= 0:
        raise BadInput("--procs must be a positive number of processors")
    fair_share = getattr(args, "fair_share", False)
    shares = _shares(fair_share, getattr(args, "shares", None))
    workload = read_swf(resolve_trace(args.trace), procs=args.procs, cleaning=cleaning)
    return _with_accounts(fair_share, workload, shares)


def _shares(fair_share: bool, path: str | None) -> dict[str, int] | None:
    """--shares read (before the trace: a bad file fails first); None without it. BadInput
    when it comes without --fair-share."""
    if not path:
        return None
    if not fair_share:
        raise BadInput("--shares gives the accounts' shares for --fair-share: add --fair-share")
    from advisor.adapters.swf import read_shares
    return read_shares(path)


def _with_accounts(fair_share: bool, workload, shares: dict[str, int] | None):
    """The trace with its groups as accounts when --fair-share asks."""
    if not fair_share:
        return workload
    from advisor.whatif.trace_accounts import with_accounts
    return with_accounts(workload, shares)


def _window(args, workload) -> tuple[int | None, int | None]:
    """--since and --until on the trace's clock (None: its ends)."""
    from advisor.units import parse_moment
    since, until = (parse_moment(m, workload.header) if m else None
                    for m in (args.since, args.until))
    if since is not None and until is not None and until <= since:
        raise BadInput(f"--until {args.until} is not after --since {args.since}")
    return since, until


def _trace_input(args, history: bool = False, warm: bool = False):
    """What every trace command plays, the same way: the trace (filtered as the options
    say) cut to the jobs submitted in [--since, --until), its arrivals made --load times as
    dense; and the past before --since (None without it): the jobs submitted before it, or
    with ``history`` the jobs finished by then, as a live cluster's sacct would give them.
    ``warm`` (with ``history``): the weeks before --since played too, and the window's
    first moment on the played clock after them (``warm_window``)."""
    from advisor.cleaning import trace_window
    whole = _load(args)
    since, until = _window(args, whole)
    if history:
        from advisor.whatif.hindsight import bench_window, warm_window
        if warm:
            return warm_window(whole, since, until, args.load)
        return bench_window(whole, since, until, args.load)
    before = whole.jobs[whole.jobs["submit"] < since] if since is not None else None
    return trace_window(whole, since, until, args.load), before


def _check_output(path: str, extra: tuple[str, str] | None = None) -> None:
    """A file the command will write: refused before any work if it cannot be."""
    from advisor.adapters.files import check_writable
    check_writable(path)
    if extra:
        import importlib.util
        if importlib.util.find_spec(extra[0]) is None:
            raise MissingExtra(*extra)


def _compile_notice(kernels: tuple[str, ...] | None = None, policies=None) -> None:
    """On a cold cache, say on stderr (a terminal or not: cron mails it) that the
    simulator is compiled once, compile here what the run plays (the engine's ``kernels``,
    None: all; the kernels of the families ``policies`` choose from, None: every family's),
    and say how long that took."""
    import time

    from advisor.engine.cache import require_cache
    from advisor.plugins.warmup import ENGINE, compile_all, compiled
    require_cache()
    kernels = ENGINE if kernels is None else kernels
    if compiled(kernels, policies):
        return
    sys.stderr.write("advisor: compiling the simulator once for this machine (about a "
                     "minute; later runs reuse it)...\n")
    sys.stderr.flush()
    start = time.monotonic()
    with _exit_at_once():
        compile_all(kernels, policies)
    sys.stderr.write(f"advisor: simulator compiled in {time.monotonic() - start:.0f} s\n")


@contextmanager
def _exit_at_once():
    """For the compile, which no exception stops: numba's compiler calls back into Python
    from C (llvmlite's object cache), where a KeyboardInterrupt is printed and dropped, and
    the compile went on for a minute and more. A signal there ends the run at once: the
    compiler's child process killed, the one line written, the signal's exit code. Nothing
    is left half done: numba writes each cache file whole (by a rename), and the cache is
    marked compiled only at the end; the lock and the store close with the process."""
    import signal

    from advisor import interrupts

    def now(signum, frame):
        interrupts.note(signum)
        _kill_children()
        sys.stderr.write(f"advisor: {interrupts.WORDS[signum]}\n")
        sys.stderr.flush()
        os._exit(interrupts.EXIT_CODES[signum])

    previous = {s: signal.signal(s, now) for s in interrupts.EXIT_CODES}
    try:
        yield
    finally:
        interrupts.restore(previous)


def _kill_children() -> None:
    """SIGKILL this process's children (during the compile: its second compiler)."""
    import signal
    from pathlib import Path
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] == me:
                os.kill(int(stat.parent.name), signal.SIGKILL)
        except (OSError, IndexError, ValueError):
            continue


@contextmanager
def _progress(what: str):
    """A progress bar on stderr (when it is a terminal); yields on_progress(done, total)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.console import Console
    err = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(),
                  MofNCompleteColumn(), TimeElapsedColumn(), console=err, transient=True,
                  disable=not err.is_terminal) as progress:
        task = progress.add_task(what, total=None)
        yield lambda done, total: progress.update(task, completed=done, total=total)


@contextmanager
def _fd2_muted(mute: bool):
    """File descriptor 2 to /dev/null for the block, when ``mute``."""
    if not mute:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
