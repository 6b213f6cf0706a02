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
import pickle
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Callable, Iterable, Iterator, Protocol

from advisor import interrupts
from advisor.errors import BadInput, MissingExtra, SourceUnavailable
from advisor.whatif import ray_session

#: tasks per worker a simulation is cut into, at least: enough to even out their lengths,
#: few enough that each task's fixed cost (shipping the snapshot, building its input)
#: stays small beside its simulations
TASKS_PER_WORKER = 2


def batch_bounds(candidates: int, samples: int, workers: int) -> list[tuple[int, int]]:
    """The candidates' batches, as [start, end) (a task is one sample under a batch):
    each sample's candidates in as few batches as give every worker TASKS_PER_WORKER
    tasks, or one per candidate, their sizes differing by one at most."""
    n = min(candidates, max(1, -(-TASKS_PER_WORKER * workers // max(samples, 1))))
    return [(k * candidates // n, (k + 1) * candidates // n) for k in range(n)]


EXECUTORS = ("auto", "serial", "process", "ray")
#: local workers (processes, or an embedded Ray's CPUs) per core of the machine, at most
MAX_WORKERS_PER_CORE = 4


class Executor(Protocol):
    workers: int  # how many items run at once

    def map_unordered(self, fn: Callable, items: Iterable) -> Iterator[tuple[int, object]]:
        """Yield (index of the item, fn(item)) as each result arrives."""


class Closing:
    """An executor in a ``with`` block: closed (its workers stopped) when the block ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class SerialExecutor(Closing):
    name = "serial"
    workers = 1

    def map_unordered(self, fn, items):
        for i, item in enumerate(items):
            yield i, fn(item)

    def close(self) -> None:
        pass


class ProcessExecutor(Closing):
    """Local worker processes, one pool for the executor's life (a pool per batch of tasks
    made a small recommendation slower than serial: docs/performance.md). Workers are forked at the
    first map where the platform allows, so they inherit the compiled engine instead of
    loading it again; an interrupt or a failure kills them rather than wait for the tasks
    still queued."""

    name = "process"

    def __init__(self, workers: int | None = None):
        self.workers = max(1, workers or os.cpu_count() or 1)
        self._pool = None

    def map_unordered(self, fn, items):
        items = list(items)
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context,
                                             initializer=_worker_signals)
        pool = self._pool
        try:
            # the first submit forks the workers: a signal during the fork would raise in
            # logging's at-fork callback, where Python prints the exception and drops it,
            # or in a child before it ignores SIGINT; held, it is raised once they exist
            with interrupts.deferred():
                futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            self._stop()
            raise

    def _stop(self) -> None:
        # an interrupt or a failure: the simulations still queued or running are not
        # waited for (a clean shutdown would run them all first)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
            for child in multiprocessing.active_children():
                child.kill()
                child.join()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


class RayExecutor(Closing):
    """Ray tasks, one per item. ``address=None`` starts an embedded local Ray with
    ``workers`` CPUs; otherwise it connects to that cluster ("auto", "ray://host:port"...).

    The embedded instance stays on loopback (it would otherwise advertise the machine's
    outward address), starts no dashboard unless ``dashboard``, and keeps its session files
    in a folder of its own under ``temp_root``, named by this process's id: ``close`` shuts
    it down and removes the folder, and a later start removes what a run that was killed
    left (its folder, and any Ray process still running from it). A cluster connected to is
    left running."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None,
                 temp_root: str | os.PathLike | None = None, dashboard: bool = False):
        # read when ray is imported: no stack dump on SIGTERM (the caller's handler decides
        # what a signal does), no usage statistics
        os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # an import cut by a signal left Ray's at-exit shutdown registered against the
        # half-imported package, which failed at exit: the import runs to its end, and the
        # signal is raised after it
        try:
            with interrupts.deferred():
                import ray
        except ImportError:
            raise MissingExtra("ray", "ray") from None
        self.ray = ray
        self.started = False
        self.temp_dir = None
        self._token = None
        self._remote = None       # the remote function, made at the first map
        if ray.is_initialized():
            return
        options = {}
        if address is not None:
            ray_session.probe(address)
        else:
            self.temp_dir, given = ray_session.session_folder(temp_root)
            os.environ.update(ray_session.mark(self.temp_dir))
            self._token = ray_session.session_token()
            options = {"num_cpus": workers or os.cpu_count() or 1, "_temp_dir": str(given)}
        try:
            with ray_session.quiet_stderr(address is not None), \
                    ray_session.on_loopback(address is None), interrupts.kept():
                ray.init(address=address, include_dashboard=dashboard, log_to_driver=False,
                         logging_level="ERROR", **options)
        except BaseException as e:        # an interrupt too: leave nothing started
            if address is None:
                ray.shutdown()
            self._remove_temp()
            if not isinstance(e, (ConnectionError, RuntimeError, ValueError)):
                raise
            where = address or "a local instance"
            raise SourceUnavailable(f"Ray: cannot start or reach {where}: "
                                    f"{str(e).splitlines()[0]} (check --ray-address; a cluster "
                                    "with token authentication also needs RAY_AUTH_MODE=token "
                                    "and its token in the environment; or use --executor "
                                    "process)") from None
        self.started = True
        if address is None:
            self._check_loopback()

    def _check_loopback(self) -> None:
        """Refuse an embedded Ray that took another address than loopback (a Ray whose
        switch ``ray_session.on_loopback`` sets no longer exists): its servers would listen
        on the machine's networks."""
        node = self.ray.util.get_node_ip_address()
        if not ray_session.is_loopback(node):
            self.close()
            raise SourceUnavailable(
                f"the embedded Ray took the address {node}, not loopback, and would listen "
                "on this machine's networks: use --executor process, or a Ray cluster of "
                "the site's (--ray-address)")

    @property
    def workers(self) -> int:
        """The CPUs of the Ray cluster (the embedded one's, or the one joined)."""
        return max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def map_unordered(self, fn, items):
        ray = self.ray
        if self._remote is None:
            self._remote = ray.remote(_call_pickled)
        remote = self._remote
        # each item pickled here by the standard pickler: Ray's own walks every object of
        # a task (thousands of jobs) through Python-level hooks, several times slower
        pending = {remote.remote(fn, pickle.dumps(item, pickle.HIGHEST_PROTOCOL)): i
                   for i, item in enumerate(items)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)

    def close(self) -> None:
        if self.started:
            self.started = False
            self.ray.shutdown()
        self._remove_temp()

    def _remove_temp(self) -> None:
        if self.temp_dir is not None:
            # with the processes shutdown leaves behind (the agents outlive the raylet)
            ray_session.remove_session(self.temp_dir)
            os.environ.pop(ray_session.MARK, None)
            self.temp_dir = None
        if self._token is not None:
            os.environ.pop(self._token, None)
            self._token = None


def _worker_signals() -> None:
    """A local worker leaves SIGINT to the run that started it (Ctrl-C reaches the whole
    process group) and dies of SIGTERM: the run stops its workers itself, and a forked
    worker must not inherit the run's handler, which would print a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _call_pickled(fn: Callable, item: bytes):
    return fn(pickle.loads(item))


def check_workers(workers: int | None, ray_address: str | None = None) -> None:
    """BadInput for more local workers than ``MAX_WORKERS_PER_CORE`` per core (a Ray
    cluster joined brings its own CPUs)."""
    machine = os.cpu_count() or 1
    if workers and not ray_address and workers > MAX_WORKERS_PER_CORE * machine:
        raise BadInput(f"--workers {workers} is over the bound of {MAX_WORKERS_PER_CORE} "
                       f"per core of this machine ({MAX_WORKERS_PER_CORE * machine}): more "
                       "local workers only share the cores, each with a simulation's "
                       "memory")


def make_executor(workers: int | None, kind: str = "auto", ray_address: str | None = None,
                  ray_temp: str | os.PathLike | None = None,
                  ray_dashboard: bool = False) -> Executor:
    """``auto``: Ray when a Ray cluster's address is given; else local processes, or serial
    with one worker. On one machine an embedded Ray never beat local processes, whatever
    the work (docs/performance.md, "Executors"), and its start and stop cost seconds."""
    check_workers(workers, ray_address)
    cores = workers or os.cpu_count() or 1
    if kind == "auto":
        kind = "ray" if ray_address else "serial" if cores == 1 else "process"
    if kind == "serial":
        return SerialExecutor()
    if kind == "process":
        return ProcessExecutor(workers)
    if kind == "ray":
        return RayExecutor(workers, ray_address, ray_temp, ray_dashboard)
    raise ValueError(f"unknown executor {kind}")
