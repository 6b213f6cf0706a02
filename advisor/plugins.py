"""Policy plugins, registered like Slurm's ``type/name`` plugins.

A plugin is an object registered under the entry-point group ``advisor.policies`` with the
name ``family/name`` (``ordering/spf``, ``backfill/easy``, ``threshold/queue``). It has:

* ``family``, ``name``, ``summary``: what it is;
* ``Params``: a frozen dataclass; each field's metadata may give ``help``, ``kind``
  (``duration`` accepts 20h, 30m, 2d, or seconds), ``min`` and ``choices``;
* ``configure(config, params, **role) -> EngineConfig``: its simulation hook, the settings of
  the compiled core that enact it.

Built-in families register through the same entry points (see pyproject.toml) as any site's
own plugins.
"""
from __future__ import annotations

import dataclasses
import re
from functools import lru_cache
from importlib.metadata import entry_points

from advisor.errors import BadInput

GROUP = "advisor.policies"
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw]?)$")
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@lru_cache(maxsize=1)
def registry() -> dict[str, object]:
    """Every installed plugin by ``family/name``."""
    found = {}
    for ep in entry_points(group=GROUP):
        try:
            found[ep.name] = ep.load()
        except Exception as e:  # a broken third-party plugin must not break the others
            raise BadInput(f"policy plugin '{ep.name}' ({ep.value}) failed to load: {e}; "
                           "fix or uninstall the package that provides it") from e
    if not found:
        raise BadInput("no policy plugins are registered: install the package "
                       "(pip install -e .) so that its entry points exist")
    return found


def plugin(family: str, name: str):
    plugins = registry()
    key = f"{family}/{name.lower()}"
    if key not in plugins:
        names = sorted(k.split("/", 1)[1] for k in plugins if k.startswith(family + "/"))
        raise BadInput(f"unknown {family} policy '{name}'; installed: {', '.join(names)}")
    return plugins[key]


def family(name: str) -> dict[str, object]:
    return {k: v for k, v in registry().items() if k.startswith(name + "/")}


def parse_duration(text: str) -> int:
    m = _DURATION.match(text.strip().lower())
    if not m:
        raise BadInput(f"'{text}' is not a duration; write e.g. 3600, 90m, 20h or 2d")
    return int(round(float(m.group(1)) * _UNIT[m.group(2)]))


def format_duration(seconds: int) -> str:
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def parse_param(params_cls, key: str, text: str):
    """Parse ``key=text`` for a Params dataclass, honouring its field metadata."""
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    f = fields[key]
    meta = f.metadata
    if meta.get("kind") == "duration":
        value = parse_duration(text)
    elif f.type in (int, "int"):
        try:
            value = int(text)
        except ValueError:
            raise BadInput(f"{key}={text}: {key} takes a whole number") from None
    else:
        value = text
    if "choices" in meta and value not in meta["choices"]:
        raise BadInput(f"{key}={text}: choose one of {', '.join(meta['choices'])}")
    if "min" in meta and value < meta["min"]:
        raise BadInput(f"{key}={text}: {key} must be at least {meta['min']}")
    return value


def describe_params(params_cls) -> list[dict]:
    """Name, default and help of each parameter (for ``advisor policies``)."""
    out = []
    for f in dataclasses.fields(params_cls):
        meta = dict(f.metadata)
        default = f.default
        if meta.get("kind") == "duration" and isinstance(default, int):
            default = format_duration(default)
        out.append({"name": f.name, "default": default, **meta})
    return out
