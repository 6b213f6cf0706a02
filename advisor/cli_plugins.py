"""The commands of ``advisor``, found through one registry: the entry-point group
``advisor.commands``, one ``name = "package.module:OBJECT"`` each. The built-in commands
are registered there in pyproject.toml exactly as a family's, or a site's package, lists its
own. Each is checked when the parser is built: one missing a member, named otherwise than
its entry point, or taking another's name is refused with one line naming its package.

A command's module needs only this module's names (the helpers every trace command shares):

    from advisor.cli_plugins import (EXIT_OK, Command, atomic_write, check_output,
                                     check_param, compile_notice, count, duration,
                                     emit_json, estimates, number, one_of, progress,
                                     trace_input, trace_options, trace_study)

``add_arguments(parser)`` declares its options (``trace_options(parser)`` for the ones
every trace command takes); ``run(args, console)`` does the work and returns the exit
code, raising ``AdvisorError`` for the CLI to map. A study over a trace is one call of
``trace_study``. A command imports its study inside ``run``, so that building the parser
stays quick.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from advisor.adapters.files import atomic_write
from advisor.cli_args import trace_options
from advisor.cli_types import count, duration, number, one_of
from advisor.cli_common import (EXIT_OK, _check_output, _compile_notice, _emit_json,
                                _estimates, _progress, _trace_input)
from advisor.errors import BadInput, PluginRefused

GROUP = "advisor.commands"

check_output = _check_output
compile_notice = _compile_notice
emit_json = _emit_json
estimates = _estimates
progress = _progress
trace_input = _trace_input

__all__ = ["EXIT_OK", "GROUP", "Command", "atomic_write", "check_output", "check_param",
           "compile_notice", "commands", "count", "duration", "emit_json", "estimates",
           "number", "one_of", "progress", "trace_input", "trace_options", "trace_study"]


@dataclass(frozen=True)
class Command:
    """A command of ``advisor``: ``help`` (one line, lower case), ``example`` (a full
    command line), its options and its work; ``uses_plugins``: it reads policies, so the
    registry is loaded (and checked) before it runs."""

    name: str
    help: str
    example: str
    add_arguments: Callable
    run: Callable
    uses_plugins: bool = False


def check_param(spec: str, option: str) -> None:
    """An option that is a policy's parameter takes the values the policy takes: checked
    by parsing the policy it stands for."""
    from advisor.plugins.spec import parse_policy
    try:
        parse_policy(spec)
    except BadInput as e:
        raise BadInput(f"{option}: {e}") from None


@lru_cache(maxsize=1)
def commands() -> tuple[Command, ...]:
    """Every installed command, checked, by name."""
    out = {}
    for ep in entry_points(group=GROUP):
        package = ep.dist.name if ep.dist is not None else ep.value.split(":")[0]

        def refuse(problem: str):
            raise PluginRefused(f"command '{ep.name}' from {package}: {problem}; fix or "
                                "uninstall that package")
        try:
            command = ep.load()
        except Exception as e:  # a broken package: say which, whatever it raised
            refuse(f"cannot be loaded ({type(e).__name__}: {e})")
        if not isinstance(command, Command):
            refuse("is not an advisor.cli_plugins.Command")
        if command.name != ep.name:
            refuse(f"is registered as '{ep.name}' but is named '{command.name}'")
        if ep.name in out:
            refuse("takes the name of another command")
        out[ep.name] = command
    return tuple(out[n] for n in sorted(out))


def trace_study(args, out, play: Callable[[Any, Any, Callable], Any], *,
                as_dict: Callable[[Any, Any], dict], view: Callable[[Any, Any], Any],
                png: Callable[[Any, Any], bytes] | None = None,
                progress_of: str = "simulating", compile: bool = True) -> int:
    """What every study over a trace does, in order: ``--plot``'s file checked before any
    work, the trace read (``trace_input``), the simulator compiled, then
    ``play(workload, before, on_progress)`` under a progress bar, and its result written
    as ``--plot``'s PNG (``png(workload, result)``) and printed as one JSON document
    (``as_dict``) or for the terminal (``view``: a renderable or a list of them)."""
    plot = getattr(args, "plot", None)
    if plot:
        if png is None:
            raise BadInput("--plot: this command draws no plot")
        check_output(plot, extra=("matplotlib", "plot"))
    workload, before = trace_input(args)
    if compile:
        compile_notice()
    with progress(progress_of) as on_progress:
        result = play(workload, before, on_progress)
    if plot:
        atomic_write(plot, png(workload, result))
    if args.json:
        emit_json(as_dict(workload, result))
    else:
        shown = view(workload, result)
        for renderable in shown if isinstance(shown, list) else [shown]:
            out.print(renderable)
    return EXIT_OK
