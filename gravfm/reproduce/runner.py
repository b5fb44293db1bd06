"""Run points as tasks on dask.distributed, with a result cache per point and a live display.

Each point is one task (:func:`gravfm.reproduce.points.run_point`). Results are stored as
``<out>/points/<key>.json`` as they arrive, so a sweep that is interrupted, or extended by more
experiments, runs only the points it has no verified result for. Verilator builds are shared
through the build cache folder, whose per-key lock makes one process build a design while the
others wait for it (:mod:`gravfm.sim.build_cache`); on a cluster of several machines it must be a
shared folder.
"""

import json
import logging
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigError
from .points import Point
from .task import run_point_isolated

__all__ = ["PointStore", "RunStats", "run_points", "connect", "CONNECT_TIMEOUT_S"]

#: Seconds to wait for a --scheduler before giving up with one line.
CONNECT_TIMEOUT_S = 5


class PointStore:
    """``<out>/points/<key>.json``: one result per point, written whole (never half a file)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def path(self, key):
        return self.folder / f"{key}.json"

    def load(self, point):
        """The stored result of ``point``, verified or not, or None (missing, damaged, another point's)."""
        try:
            result = json.loads(self.path(point.key()).read_text())
        except (OSError, ValueError):
            return None
        return result if isinstance(result, dict) and result.get("point") == point.to_dict() else None

    def get(self, point):
        """The stored verified result of ``point``, or None (missing, failed, unverified, damaged)."""
        result = self.load(point)
        if result is None or result.get("status") != "ok" or not result.get("verified"):
            return None
        return result

    def put(self, result):
        path = self.path(result["key"])
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(result, indent=1) + "\n")
        os.replace(partial, path)


@dataclass
class RunStats:
    """What a run did: points reused from the store, computed now, failed (of those computed),
    missing (not computed: ``--report-only``)."""

    total: int = 0
    reused: int = 0
    computed: int = 0
    failed: int = 0
    missing: int = 0
    wall_s: float = 0.0
    workers: int = 0
    scheduler: str = ""
    errors: dict = field(default_factory=dict)


def connect(scheduler=None, *, workers=None, processes=True):
    """A dask ``Client`` (and the ``LocalCluster`` it owns, or None).

    ``scheduler``: address of a running scheduler (``tcp://host:8786``); an unreachable one is a
    :class:`~gravfm.errors.ConfigError` after :data:`CONNECT_TIMEOUT_S`. Otherwise a local cluster
    of ``workers`` (default: the machine's cores) single-threaded workers.
    """
    from distributed import Client, LocalCluster  # deferred: dask.distributed (only for a cluster)

    if scheduler:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT_S), None
        except (OSError, TimeoutError, ValueError) as error:
            raise ConfigError(f"--scheduler {scheduler}: cannot connect ({type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else 'no answer'})") from None
    # The workers start with SIGINT ignored (kept across exec): a terminal's Ctrl-C reaches only
    # this process, which closes the cluster; the workers' points then stop through their SIGTERM.
    ignore = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if ignore else None
    try:
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=processes,
                               dashboard_address=":0", silence_logs=logging.ERROR,
                               memory_limit=0)  # the work is in child processes the nanny does not see
    finally:
        if ignore:
            signal.signal(signal.SIGINT, previous)
    return Client(cluster), cluster


def run_points(points, store, *, cache_dir=None, scheduler=None, workers=None, display=True, function=None,
               processes=True, console=None, compute=True):
    """Run every point not already in ``store``; return ``({key: result}, RunStats)``.

    A point that fails is stored with its error (and retried by the next run); the others go on.
    ``compute=False`` only collects the stored results, failed ones too (``failed`` counts those,
    ``missing`` the points with none).
    KeyboardInterrupt (Ctrl-C) cancels what is left and closes the cluster before it propagates.
    ``function`` replaces :func:`~gravfm.reproduce.task.run_point_isolated` (tests).
    """
    function = function or run_point_isolated
    start = time.monotonic()
    stats = RunStats(total=len(points))
    results, todo = {}, []
    for point in points:
        stored = store.get(point)
        if stored is None:
            todo.append(point)
        else:
            results[point.key()] = stored
            stats.reused += 1
    if not compute:
        for point in todo:
            stored = store.load(point)
            if stored is None:
                stats.missing += 1
            else:
                results[point.key()] = stored
                stats.failed += 1
    elif todo:
        client, cluster = connect(scheduler, workers=workers, processes=processes)
        try:
            stats.scheduler = scheduler or "local cluster"
            stats.workers = len(client.scheduler_info().get("workers", {}))
            _compute(client, todo, store, results, stats, cache_dir=cache_dir, display=display,
                     function=function, console=console)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    stats.wall_s = time.monotonic() - start
    return results, stats


def _compute(client, todo, store, results, stats, *, cache_dir, display, function, console):
    from distributed import as_completed  # deferred: dask.distributed (only for a cluster)

    futures = {client.submit(function, point, cache_dir=cache_dir, key=f"gravfm-point-{point.key()}", pure=False):
               point for point in todo}
    pending = as_completed(list(futures))
    with _Display(len(todo), stats, enabled=display, console=console) as progress:
        try:
            while not pending.is_empty():
                for future in pending.next_batch(block=False):
                    result = _result(future, futures[future])
                    store.put(result)
                    results[result["key"]] = result
                    stats.computed += 1
                    if result["status"] != "ok" or not result.get("verified"):
                        stats.failed += 1
                        stats.errors[result["key"]] = result.get("error") or result.get("measured", {}).get("detail")
                    progress.advance(result)
                progress.refresh(_running(client))
                time.sleep(0.3)
        except BaseException:
            client.cancel(list(futures), force=True)
            raise


def _result(future, point):
    """The task's result; a task that died (worker lost, unpicklable error) becomes a failed result."""
    try:
        return future.result()
    except Exception as error:
        return {"key": point.key(), "point": point.to_dict(), "status": "failed", "wall_s": 0.0,
                "error": f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"}


def _running(client):
    """Tasks being processed now: at most one per worker thread."""
    try:
        processing = client.processing()
        threads = client.nthreads()
    except Exception:  # the scheduler went away: the next result will say so
        return 0
    return sum(min(len(keys), threads.get(worker, 1)) for worker, keys in processing.items())


class _Display:
    """The live rich display: points done / running / failed and the ETA (or nothing)."""

    def __init__(self, total, stats, *, enabled, console):
        self.total, self.stats, self.enabled, self.console = total, stats, enabled, console
        self.progress = None

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
                TimeRemainingColumn  # deferred: rich (only when printing)

            self.progress = Progress(TextColumn("points"), BarColumn(), MofNCompleteColumn(),
                                     TextColumn("{task.fields[state]}"), TimeElapsedColumn(), TextColumn("ETA"),
                                     TimeRemainingColumn(), console=self.console, transient=False)
            self.progress.start()
            self.task = self.progress.add_task("points", total=self.total, state=self._state(0))
        return self

    def _state(self, running):
        return f"running {running}, failed {self.stats.failed}"

    def advance(self, result):
        if self.progress is not None:
            self.progress.advance(self.task)
            if result["status"] != "ok" or not result.get("verified"):
                label = Point.from_dict(result["point"]).label()
                self.progress.console.print(f"failed: {label}: {result.get('error') or 'not verified'}")

    def refresh(self, running):
        if self.progress is not None:
            self.progress.update(self.task, state=self._state(running))

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.stop()
