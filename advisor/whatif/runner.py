"""Executor seam: where independent simulations run. Parallelism is per scenario, never
inside one simulation.

``SerialExecutor`` runs in this process; ``ProcessExecutor`` on local cores; ``RayExecutor``
on Ray: an embedded local instance (started here, on loopback, stopped on ``close``) or an
existing cluster (``address``). All three take the same functions and items and give the
same results; callers batch their items so that per-task overhead stays small.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Iterable, Iterator, Protocol

from advisor.errors import MissingExtra, SourceUnavailable

EXECUTORS = ("auto", "serial", "process", "ray")


class Executor(Protocol):
    def map_unordered(self, fn: Callable, items: Iterable) -> Iterator[tuple[int, object]]:
        """Yield (index of the item, fn(item)) as each result arrives."""


class SerialExecutor:
    name = "serial"

    def map_unordered(self, fn, items):
        for i, item in enumerate(items):
            yield i, fn(item)

    def close(self) -> None:
        pass


class ProcessExecutor:
    """Local worker processes. Workers are forked where the platform allows, so they inherit
    the compiled engine instead of loading it again."""

    name = "process"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)

    def map_unordered(self, fn, items):
        items = list(items)
        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else None)
        with ProcessPoolExecutor(self.workers, mp_context=context) as pool:
            futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                yield futures[future], future.result()

    def close(self) -> None:
        pass


class RayExecutor:
    """Ray tasks, one per item. ``address=None`` starts an embedded local Ray with
    ``workers`` CPUs; otherwise it connects to that cluster ("auto", "ray://host:port"...).
    The embedded instance stays on loopback (it would otherwise advertise the machine's
    outward address) and is shut down by ``close``; a cluster connected to is left
    running."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None):
        try:
            import ray
        except ImportError:
            raise MissingExtra("ray", "ray") from None
        self.ray = ray
        self.started = False
        if not ray.is_initialized():
            if address is None:
                # Ray advertises the machine's outward address unless told otherwise
                os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
                os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
            try:
                ray.init(address=address, num_cpus=None if address else
                         (workers or os.cpu_count() or 1), include_dashboard=False,
                         log_to_driver=False, logging_level="ERROR")
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = address or "a local instance"
                raise SourceUnavailable(f"Ray: cannot start or reach {where}: "
                                        f"{str(e).splitlines()[0]} (check --ray-address, or "
                                        "use --executor process)") from None
            self.started = True
        self._remote = {}

    def map_unordered(self, fn, items):
        ray = self.ray
        remote = self._remote.setdefault(fn, ray.remote(fn))
        pending = {remote.remote(item): i for i, item in enumerate(items)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()
            self.started = False


def make_executor(workers: int | None, kind: str = "auto",
                  ray_address: str | None = None) -> Executor:
    """``auto``: Ray when an address is given or the [ray] extra is installed and there is
    more than one worker, else local processes; ``workers`` = 1 runs serially."""
    cores = workers or os.cpu_count() or 1
    if kind == "auto":
        if ray_address:
            kind = "ray"
        elif cores == 1:
            kind = "serial"
        else:
            import importlib.util
            kind = "ray" if importlib.util.find_spec("ray") else "process"
    if kind == "serial":
        return SerialExecutor()
    if kind == "process":
        return ProcessExecutor(workers)
    if kind == "ray":
        return RayExecutor(workers, ray_address)
    raise ValueError(f"unknown executor {kind}")
