"""Shared fixtures: the bundled traces, read once per session."""
from functools import lru_cache

import pytest

from advisor.adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.adapters.swf import BUNDLED_TRACES

LELONG_FILTER = CleaningOptions(drop_overruns=True, drop_oversize=True)


@lru_cache(maxsize=None)
def bundled(name: str, lelong_filter: bool = True):
    path = next(BUNDLED_TRACES.glob(f"{name}*.swf.gz"))
    return read_swf(path, cleaning=LELONG_FILTER if lelong_filter else None)


@pytest.fixture(scope="session")
def trace():
    return bundled


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """No configuration file of this machine's, a state folder of the test's own."""
    from advisor.adapters import config
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(config, "SYSTEM_CONFIG", tmp_path / "etc" / "advisor.toml")
    return tmp_path
