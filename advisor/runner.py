"""Executor seam: where independent simulations run. Parallelism is per scenario, never
inside one simulation.

``SerialExecutor`` runs in this process; ``ProcessExecutor`` on local cores. A Ray executor
(an embedded local Ray, or a cluster) plugs in here with the same ``map``.
"""
from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Iterable, Iterator, Protocol


class Executor(Protocol):
    def map_unordered(self, fn: Callable, items: Iterable) -> Iterator[tuple[int, object]]:
        """Yield (index of the item, fn(item)) as each result arrives."""


class SerialExecutor:
    def map_unordered(self, fn, items):
        for i, item in enumerate(items):
            yield i, fn(item)


class ProcessExecutor:
    """Local worker processes. Workers are forked where the platform allows, so they inherit
    the compiled engine instead of loading it again."""

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


def make_executor(workers: int | None) -> Executor:
    """``workers`` = 1 runs serially; None uses every local core."""
    if workers == 1 or (workers is None and (os.cpu_count() or 1) == 1):
        return SerialExecutor()
    return ProcessExecutor(workers)
