"""Defaults from configuration files: the site's, then the user's, then the command line.

``/etc/slurm-policy-advisor/advisor.toml`` (the site), then
``$XDG_CONFIG_HOME/slurm-policy-advisor/advisor.toml`` (default ``~/.config/...``, the
user): a later file overrides an earlier one key by key, and an option given on the command
line overrides both. Flat keys, each the option of the same name, e.g.::

    objective = "avg_wait"
    risk = 1.3
    reference = "easy:FCFS:FCFS"
    replace_site_policy = false
    store = "/var/lib/slurm-policy-advisor/advisor.sqlite"
    executor = "ray"
    ray_address = "auto"
    slurm_bin = "/usr/bin"
    slurm_timeout = 60
    fidelity_floor = 0.6
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

from advisor.errors import AdvisorError, BadInput, SourceUnavailable, nearest

if sys.version_info >= (3, 11):
    import tomllib
else:                                        # pragma: no cover - Python 3.10
    import tomli as tomllib

SYSTEM_CONFIG = Path("/etc/slurm-policy-advisor/advisor.toml")

#: the keys a file may set: the options of the same name (dashes as underscores), whose
#: values are checked as the command line checks them
KEYS = ("objective", "risk", "reference", "dwell", "replace_site_policy", "share_slack",
        "lua_margin", "site_check", "fidelity_floor", "store", "executor", "ray_address",
        "slurm_bin", "slurm_timeout")


class Defaults(NamedTuple):
    """What the files say: each key's value and the file it came from, and the problems
    that keep a file from being read (an unreadable file, bad TOML, an unknown key). Only a
    command that takes options from the files fails on a problem (``advisor policies``
    does not read them)."""

    values: dict[str, tuple[object, Path]]
    problems: list[AdvisorError]


def user_config() -> Path:
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(Path.home(), ".config")
    return Path(home) / "slurm-policy-advisor" / "advisor.toml"


def config_files() -> list[Path]:
    """The files read, in precedence order (the later wins)."""
    return [SYSTEM_CONFIG, user_config()]


def load_defaults(files: list[Path] | None = None) -> Defaults:
    """The merged defaults of the files that exist, a later file's key over an earlier's."""
    merged: dict = {}
    problems: list[AdvisorError] = []
    for path in files if files is not None else config_files():
        try:
            if not path.is_file():
                continue
            doc = tomllib.loads(path.read_text())
        except OSError as e:
            problems.append(SourceUnavailable(f"cannot read {path}: {e.strerror or e}"))
            continue
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
            problems.append(BadInput(f"{path}: not valid TOML: {e}"))
            continue
        for key, value in doc.items():
            if key not in KEYS:
                problems.append(BadInput(f"{path}: unknown key '{key}'{nearest(key, KEYS)} "
                                         f"(known: {', '.join(KEYS)})"))
            else:
                merged[key] = (value, path)
    return Defaults(merged, problems)
