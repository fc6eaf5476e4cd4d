"""Where a sweep's runs execute: this process, a local process pool, or a Dask cluster.

Contract: an executor is a context manager with ``workers`` (how many runs go at once) and
``run(settings, specs, on_row)``, which calls ``on_row(row)`` in this process once per spec as the
runs finish (in completion order: the caller sorts by ``row["run"]``). Each run is
:func:`.run.run_spec`, the same function whatever the executor, so the rows do not depend on it.

- A run's own problems are rows (``run_spec`` never raises for them). A worker that dies (killed,
  out of memory, ``os._exit`` in the strategy) gives ``error`` rows and the sweep goes on: on the
  pool, for every run in flight when it died (the pool cannot tell whose it was; it is restarted);
  on Dask, for the run that killed its worker ``distributed.scheduler.allowed-failures`` times
  (Dask retries a task whose worker died).
- At most ``2 x workers`` runs are in flight: the rest are submitted as runs finish, so a sweep of a
  million runs holds no million futures, and Ctrl-C has little to cancel.
- ``KeyboardInterrupt`` (Ctrl-C) while ``run`` waits cancels what is queued, stops the runs in
  progress (pool workers are terminated; Dask futures are cancelled) and re-raises, after the
  ``on_row`` calls of every run that had finished. Pool workers ignore SIGINT so that only this
  process decides.
- Pool: ``concurrent.futures.ProcessPoolExecutor`` in ``forkserver`` mode where the platform has it
  (else ``spawn``): no fork of a process that may hold threads. The pool starts with the first
  ``run`` and serves later ones; the settings (paths: a pool never sends files) go with each run.
- Dask (``dask.distributed``, the ``[dask]`` extra): ``"local"`` starts a ``LocalCluster`` of
  ``workers`` single-threaded worker processes (its HTTP server on a free port); any other address connects a
  ``Client`` to a running scheduler and uses all its worker threads. The settings are scattered to
  the workers once (``broadcast``), each run is one task.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Any, Self

from cefisim.api.cli.common.extras import missing_extra
from cefisim.api.cli.sweep.grid import RunSpec
from cefisim.api.cli.sweep.run import Settings, failed_row, run_task

__all__ = ["DaskExecutor", "DaskMissing", "PoolExecutor", "SerialExecutor", "run_spec"]

OnRow = Callable[[dict[str, Any]], None]
IN_FLIGHT = 2  # runs in flight per worker: one running, one queued so a worker never waits


class DaskMissing(RuntimeError):
    """``--dask`` without dask.distributed installed."""


def run_spec(settings: Settings, spec: RunSpec) -> dict[str, Any]:
    """The task every executor runs (module level: workers import it by name)."""
    return run_task(settings, spec)


class _Executor:
    workers: int = 1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Release the workers (idempotent)."""


class SerialExecutor(_Executor):
    """Every run in this process, one after the other (``--workers 0``: debuggers and profilers)."""

    def run(self, settings: Settings, specs: list[RunSpec], on_row: OnRow) -> None:
        for spec in specs:
            on_row(run_spec(settings, spec))


# --- process pool ----------------------------------------------------------------------------------


def _pool_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _windowed(
    specs: list[RunSpec],
    window: int,
    submit: Callable[[RunSpec], Any],
    completed: Callable[[list[Any]], Iterator[Any]],
    result: Callable[[Any, RunSpec], dict[str, Any]],
    on_row: OnRow,
) -> None:
    """Keep ``window`` runs in flight; hand each finished one's row to ``on_row``."""
    pending = iter(specs)
    live: dict[Any, RunSpec] = {}
    for spec in pending:
        live[submit(spec)] = spec
        if len(live) >= window:
            break
    while live:
        for fut in completed(list(live)):
            spec = live.pop(fut)
            on_row(result(fut, spec))
            nxt = next(pending, None)
            if nxt is not None:
                live[submit(nxt)] = nxt


class PoolExecutor(_Executor):
    """``workers`` local processes (``--workers N``)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: cf.ProcessPoolExecutor | None = None

    def _started(self) -> cf.ProcessPoolExecutor:
        """The pool, started on first use and again after it broke."""
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if ctx.get_start_method() == "forkserver":
                # the server imports cefisim once; every worker forks from it already loaded
                ctx.set_forkserver_preload([__name__])
            self._pool = cf.ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_pool_init)
        return self._pool

    def run(self, settings: Settings, specs: list[RunSpec], on_row: OnRow) -> None:
        def submit(spec: RunSpec) -> cf.Future:
            try:
                return self._started().submit(run_spec, settings, spec)
            except BrokenProcessPool:  # a worker died: the runs it took down have their rows; go on
                broken, self._pool = self._pool, None
                assert broken is not None
                broken.shutdown(wait=False, cancel_futures=True)
                return self._started().submit(run_spec, settings, spec)

        def result(fut: cf.Future, spec: RunSpec) -> dict[str, Any]:
            exc = fut.exception()
            if exc is None:
                return fut.result()
            if isinstance(exc, BrokenProcessPool):
                return failed_row(
                    spec,
                    "error",
                    "a worker process died (killed, out of memory, or the strategy "
                    "ended the process) while this run was in flight; the pool was restarted for "
                    "the runs after it",
                    None,
                    0.0,
                )
            return failed_row(
                spec,
                "error",
                f"the worker process failed: {type(exc).__name__}: {exc}",
                "".join(traceback.format_exception(exc)),
                0.0,
            )

        def completed(futs: list[Any]) -> Iterator[Any]:
            done, _ = cf.wait(futs, return_when=cf.FIRST_COMPLETED)
            return iter(sorted(done, key=futs.index))

        try:
            _windowed(specs, IN_FLIGHT * self.workers, submit, completed, result, on_row)
        except KeyboardInterrupt:
            self._terminate()
            raise

    def _terminate(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        # the processes must stop now, not after their current run: ProcessPoolExecutor has no public
        # way before Python 3.14 (terminate_workers), hence its _processes
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in processes:
            p.terminate()
        for p in processes:
            p.join()

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


# --- Dask ---------------------------------------------------------------------------------------------


class DaskExecutor(_Executor):
    """Runs as tasks of a Dask cluster: ``address`` ``"local"`` (a LocalCluster of ``workers``
    processes) or a scheduler's address (``tcp://host:8786``)."""

    def __init__(self, address: str, workers: int) -> None:
        try:  # an optional dependency (cefisim[dask]): imported when a cluster is asked for
            import dask
            from distributed import Client, LocalCluster  # (the same optional dependency)
        except ModuleNotFoundError as exc:
            raise DaskMissing(str(missing_extra(exc, "dask", "--dask"))) from None
        self.cluster: Any = None
        if address == "local":
            # ":0": the scheduler's HTTP server (always started) on a free port, never a clash on 8787
            # the worker processes inherit an ignored SIGINT: Ctrl-C on a terminal reaches the whole process
            # group, and it is this process's to handle (cancel, then close the cluster), not theirs
            main = threading.current_thread() is threading.main_thread()
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            try:
                # the workers' sampling profiler (every 10 ms) and GIL monitor (every 1 ms) compete with
                # the runs for the machine's cores: off for the cluster we start (a user's own
                # cluster keeps its configuration)
                with dask.config.set(
                    {"distributed.worker.profile.enabled": False, "distributed.admin.system-monitor.gil.enabled": False}
                ):
                    self.cluster = LocalCluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=":0",
                        # the cluster's own log stays quiet but for a crash: on Ctrl-C (or a busy machine)
                        # a worker's heartbeat may find the scheduler gone and log an ERROR with its
                        # traceback, which would reach the user's terminal. What a run needs to say
                        # (a failed task, a dead worker) is in its row.
                        silence_logs=logging.CRITICAL,
                    )
            finally:
                if main:
                    signal.signal(signal.SIGINT, previous)
            self.client = Client(self.cluster)
        else:
            self.client = Client(address)
        threads = sum(w["nthreads"] for w in self.client.scheduler_info()["workers"].values())
        self.workers = max(1, threads)

    def run(self, settings: Settings, specs: list[RunSpec], on_row: OnRow) -> None:
        from distributed import as_completed  # an optional dependency, present once __init__ ran

        client = self.client
        shared = client.scatter(settings, broadcast=True, hash=False)
        ac = as_completed()
        inflight: set[Any] = set()

        def submit(spec: RunSpec) -> Any:
            fut = client.submit(run_spec, shared, spec, pure=False)
            inflight.add(fut)
            ac.add(fut)
            return fut

        def completed(_: list[Any]) -> Iterator[Any]:
            return iter([next(ac)])

        def result(fut: Any, spec: RunSpec) -> dict[str, Any]:
            inflight.discard(fut)
            if fut.status == "finished":
                return fut.result()
            exc = fut.exception()
            return failed_row(spec, "error", f"the Dask task failed: {type(exc).__name__}: {exc}", None, 0.0)

        try:
            _windowed(specs, IN_FLIGHT * self.workers, submit, completed, result, on_row)
        except KeyboardInterrupt:
            client.cancel(list(inflight), force=True)
            raise

    def close(self) -> None:
        client, cluster = getattr(self, "client", None), self.cluster
        self.cluster = None
        if client is not None:
            client.close()
            del self.client  # the getattr above makes a second close a no-op
        if cluster is not None:
            cluster.close()
