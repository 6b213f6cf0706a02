"""Shared fixtures: the bundled traces, read once per session. And how the suite runs in
parallel (pytest-xdist, ``-n`` in pyproject.toml's addopts): the simulator compiled once
before the workers start, and the tests that must not overlap kept on one worker each, in
order (``--dist loadgroup``, the mark ``xdist_group``): those of each Slurm release's
cluster (tests/integration/conftest.py: one cluster per release, started by the worker
that runs them, concurrently with the other releases'), and those that start Ray or look
for Ray's folders and processes (``xdist_group("ray")``)."""
import os
import shutil
import tempfile
from functools import lru_cache

import pytest

from advisor.adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.adapters.swf import BUNDLED_TRACES

LELONG_FILTER = CleaningOptions(drop_overruns=True, drop_oversize=True)


def pytest_configure(config):
    """In the controller of a parallel run, compile the simulator (and the families'
    kernels) before any worker starts: else every worker would compile it at once. In a
    worker, a state folder of its own (the run lock and the store of the runs that name
    none): two workers' advisor runs would otherwise meet in the user's."""
    if hasattr(config, "workerinput"):
        state = tempfile.mkdtemp(prefix=f"advisor-state-{config.workerinput['workerid']}-")
        os.environ["XDG_STATE_HOME"] = state
        config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))
    elif getattr(config.option, "numprocesses", None):
        from advisor.plugins.warmup import compile_all, compiled
        if not compiled():
            compile_all()


def pytest_collection_finish(session):
    """A worker whose grouped tests lost their group stops the run: xdist's loadgroup
    fails silently on pytest 9.2 (pytest-dev/pytest-xdist#1386), and two clusters of one
    release, or two Ray tests at once, would fail in ways that name neither."""
    if getattr(session.config.option, "loadgroup", False):
        lost = [i.nodeid for i in session.items
                if i.get_closest_marker("xdist_group") and "@" not in i.nodeid]
        if lost:
            raise pytest.UsageError(f"pytest-xdist lost the group of {lost[0]} (and "
                                    f"{len(lost) - 1} more): install the pytest "
                                    "pyproject.toml asks for")


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
