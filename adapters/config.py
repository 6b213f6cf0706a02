"""Defaults from configuration files: the site's, then the user's, then the command line.

``/etc/slurm-policy-advisor/advisor.toml`` (the site), then
``$XDG_CONFIG_HOME/slurm-policy-advisor/advisor.toml`` (default ``~/.config/...``, the
user): a later file overrides an earlier one key by key, and an option given on the command
line overrides both. Flat keys, e.g.::

    objective = "avg_wait"
    risk = 1.3
    reference = "easy:FCFS:FCFS"
    store = "/var/lib/slurm-policy-advisor/advisor.sqlite"
    executor = "ray"
    ray_address = "auto"
    slurm_bin = "/usr/bin"
    slurm_timeout = 60
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from advisor.errors import BadInput, SourceUnavailable

if sys.version_info >= (3, 11):
    import tomllib
else:                                        # pragma: no cover - Python 3.10
    import tomli as tomllib

SYSTEM_CONFIG = Path("/etc/slurm-policy-advisor/advisor.toml")

#: key: (type, what a value must be), the options a file may set
KEYS = {
    "objective": (str, "avg_bsld, avg_wait, p95_wait or utilization"),
    "risk": ((int, float), "a number >= 1"),
    "reference": (str, "a policy spec, e.g. easy:FCFS:FCFS"),
    "store": (str, "a path"),
    "executor": (str, "auto, serial, process or ray"),
    "ray_address": (str, "a Ray address (auto, ray://host:port, host:port)"),
    "slurm_bin": (str, "a folder"),
    "slurm_timeout": ((int, float), "seconds, > 0"),
}


def user_config() -> Path:
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(home) / "slurm-policy-advisor" / "advisor.toml"


def config_files() -> list[Path]:
    """The files read, in precedence order (the later wins)."""
    return [SYSTEM_CONFIG, user_config()]


def load_defaults(files: list[Path] | None = None) -> dict:
    """The merged defaults of the files that exist, checked key by key."""
    merged: dict = {}
    for path in files if files is not None else config_files():
        if not path.is_file():
            continue
        try:
            doc = tomllib.loads(path.read_text())
        except OSError as e:
            raise SourceUnavailable(f"cannot read {path}: {e.strerror or e}") from e
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            raise BadInput(f"{path}: not valid TOML: {e}") from None
        for key, value in doc.items():
            if key not in KEYS:
                raise BadInput(f"{path}: unknown key '{key}' (known: {', '.join(KEYS)})")
            kind, what = KEYS[key]
            if not isinstance(value, kind) or isinstance(value, bool):
                raise BadInput(f"{path}: {key} = {value!r}: give {what}")
            merged[key] = value
    return merged
