"""Shared fixtures: the bundled traces, read once per session."""
from functools import lru_cache

import pytest

from adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from adapters.swf import BUNDLED_TRACES

SEED002_FILTER = CleaningOptions(drop_overruns=True, drop_oversize=True)


@lru_cache(maxsize=None)
def bundled(name: str, seed002_filter: bool = True):
    path = next(BUNDLED_TRACES.glob(f"{name}*.swf.gz"))
    return read_swf(path, cleaning=SEED002_FILTER if seed002_filter else None)


@pytest.fixture(scope="session")
def trace():
    return bundled
