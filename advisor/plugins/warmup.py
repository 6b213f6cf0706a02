"""``compile_all``: the engine's kernels and those each installed family keeps in its own
folder (a plugin's ``compile_kernels``), compiled ahead of the first run."""
from __future__ import annotations

from advisor.engine import warmup
from advisor.plugins.registry import registry


def family_kernels() -> tuple:
    """Each installed family's kernel compiler, once (members of a family may share one)."""
    out = []
    for plugin in registry().plugins.values():
        if plugin.compile_kernels is not None and plugin.compile_kernels not in out:
            out.append(plugin.compile_kernels)
    return tuple(out)


def compile_all() -> None:
    warmup.compile_all(family_kernels())
