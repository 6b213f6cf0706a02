"""``compile_all``: the engine's kernels and those each family keeps in its own folder (a
plugin's ``compile_kernels``), compiled ahead of a run; ``compiled``: whether they are,
for these sources. A run names what it plays (the engine's kernels, the policies whose
families it plays), so that a first ``advisor replay`` does not wait for the slurm mode."""
from __future__ import annotations

import inspect
from collections.abc import Sequence

from advisor.engine import cache, warmup
from advisor.plugins.registry import registry
from advisor.plugins.spec import Policy

#: every kernel of the engine
ENGINE = tuple(warmup.KERNELS)


def family_kernels(policies: Sequence[Policy] | None = None) -> tuple:
    """Each family's kernel compiler, once (members of a family may share one): of the
    families ``policies`` choose from, or of every installed one (None)."""
    plugins = (registry().plugins.values() if policies is None else
               [c.plugin for p in policies for c in p.choices])
    out = []
    for plugin in plugins:
        if plugin.compile_kernels is not None and plugin.compile_kernels not in out:
            out.append(plugin.compile_kernels)
    return tuple(out)


def _folders(families: tuple) -> list[str]:
    """A module of each family folder that holds kernels."""
    return sorted({inspect.getfile(f) for f in families})


def compiled(kernels: tuple[str, ...] = ENGINE,
             policies: Sequence[Policy] | None = None) -> bool:
    """Whether the engine's ``kernels`` and those of the families ``policies`` choose from
    (None: every installed family) are compiled."""
    return cache.engine_compiled(kernels) and all(
        cache.folder_compiled(f) for f in _folders(family_kernels(policies)))


def compile_all(kernels: tuple[str, ...] = ENGINE,
                policies: Sequence[Policy] | None = None) -> None:
    """Compile what ``compiled`` asks about, and say so."""
    families = family_kernels(policies)
    warmup.compile_all(families, kernels)
    for module in _folders(families):
        cache.mark_folder_compiled(module)
