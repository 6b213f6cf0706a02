"""Shared fixtures: the bundled traces, read once per session. And how the suite runs in
parallel (pytest-xdist, ``-n`` in pyproject.toml's addopts): the simulator compiled once
before the workers start, and the tests that must not overlap kept on one worker each, in
order (``--dist loadgroup``): those of each Slurm release's cluster (one cluster per
release, started by the worker that runs them, concurrently with the other releases'), and
those that start Ray or look for Ray's folders and processes."""
from functools import lru_cache

import pytest

from advisor.adapters.swf import read_swf
from advisor.cleaning import CleaningOptions
from advisor.adapters.swf import BUNDLED_TRACES

LELONG_FILTER = CleaningOptions(drop_overruns=True, drop_oversize=True)


#: tests that start Ray or check what Ray leaves: one worker runs them all, one at a time
RAY_TESTS = ("tests/integration/test_signals.py", "tests/integration/test_ray_cluster.py",
             "tests/integration/test_ray_loopback.py", "tests/unit/cli/test_ray_connect.py",
             "tests/unit/whatif/test_recommend.py::test_every_executor_gives_the_same_results")


def pytest_configure(config):
    """In the controller of a parallel run, compile the simulator (and the families'
    kernels) before any worker starts: else every worker would compile it at once."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        from advisor.plugins.warmup import compile_all, compiled
        if not compiled():
            compile_all()


def pytest_collection_modifyitems(config, items):
    for item in items:
        release = getattr(getattr(item, "callspec", None), "params", {}).get("slurm")
        if release:
            item.add_marker(pytest.mark.xdist_group(f"slurm-{release}"))
        elif item.nodeid.startswith(RAY_TESTS):
            item.add_marker(pytest.mark.xdist_group("ray"))


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
