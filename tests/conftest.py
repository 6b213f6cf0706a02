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
