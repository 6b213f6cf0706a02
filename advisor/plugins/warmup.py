"""``compile_all``: the engine's kernels and those each installed family keeps in its own
folder (a plugin's ``compile_kernels``), compiled ahead of the first run; ``compiled``:
whether they all are, for these sources."""
from __future__ import annotations

import inspect

from advisor.engine import cache, warmup
from advisor.plugins.registry import registry


def family_kernels() -> tuple:
    """Each installed family's kernel compiler, once (members of a family may share one)."""
    out = []
    for plugin in registry().plugins.values():
        if plugin.compile_kernels is not None and plugin.compile_kernels not in out:
            out.append(plugin.compile_kernels)
    return tuple(out)


def _folders() -> list[str]:
    """A module of each family folder that holds kernels."""
    return sorted({inspect.getfile(f) for f in family_kernels()})


def compiled() -> bool:
    return cache.engine_compiled() and all(cache.folder_compiled(f) for f in _folders())


def compile_all() -> None:
    warmup.compile_all(family_kernels())
    for module in _folders():
        cache.mark_folder_compiled(module)
