"""Commands a policy family adds to ``advisor`` (its study over a trace, a model), found as
the policy plugins are: through the entry-point group ``advisor.commands``, one
``name = "package.module:OBJECT"`` each, the built-in families' in pyproject.toml exactly
as a site's package lists its own. Each is checked when the parser is built: one missing a
member, named otherwise than its entry point or over a built-in command is refused with one
line naming its package.

A command's module needs only this module's names (the helpers every trace command shares):

    from advisor.cli_plugins import (EXIT_OK, Command, atomic_write, check_output,
                                     check_param, compile_notice, count, duration,
                                     emit_json, estimates, number, one_of, progress,
                                     trace_input, trace_options)

``add_arguments(parser)`` declares its options (``trace_options(parser)`` for the ones
every trace command takes); ``run(args, console)`` does the work and returns the exit
code, raising ``AdvisorError`` for the CLI to map. It imports its study inside ``run``, so
that building the parser stays quick.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points

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
           "number", "one_of", "progress", "trace_input", "trace_options"]


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


def refused(command: Command, problem: str) -> PluginRefused:
    return PluginRefused(f"command '{command.name}': {problem}; fix or uninstall its package")


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
