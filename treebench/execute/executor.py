"""Run cells in parallel and report progress: this module decides where cells run; each cell
runs as one `treebench.execute.cell_run.CellRun` wherever that is.

``fork`` (the default) runs cells in a pool of long-lived workers forked from the driver once
it has imported and warmed up the learners and loaded the data (`treebench.execute.pool`):
workers start at once, share that memory and run many cells each, with every cell's time and
memory limits still enforced. The other backends go through joblib (``loky``: fresh
interpreters, ``threading``, ``sequential``; ``dask`` or ``ray`` when their packages register a
joblib backend) and run each cell through `treebench.execute.supervise.run_cell`, which forks
a supervised child per cell from whatever process runs it. Records stream back unordered as
cells finish, and this process (the driver) writes each cell file: workers need no shared
file system.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from treebench.results.cell import Cell
from treebench.errors import ConfigError
from treebench.execute.jobs import effective_n_jobs  # noqa: F401 - also imported from here
from treebench.execute.supervise import run_cell
from treebench.results import store
from treebench.execute.lifetime import stop_if_terminated, watch_parent
from treebench.execute.cluster import run_on_cluster
from treebench.execute.pool import run_pool


def _backend_available(backend: str) -> None:
    if backend == "dask":
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ConfigError(
                "backend `dask` needs dask.distributed; install it with `pip install treebench[dask]`."
            ) from None
    if backend == "ray":
        try:
            import ray  # noqa: F401
            from ray.util.joblib import register_ray

            register_ray()
        except ImportError:
            raise ConfigError(
                "backend `ray` needs ray; install it with `pip install treebench[ray]`."
            ) from None


@dataclass(frozen=True)
class ClusterTarget:
    """Where a dask/ray run sends its cells: ``address`` of an existing scheduler (None: a
    local cluster), whether workers read the data directory themselves, and ``on_start``, which
    receives the `treebench.execute.cluster.ClusterRun` once the cluster answers."""

    address: str | None = None
    data_dir_on_workers: bool = False
    on_start: Callable[[Any], None] | None = None


def run_cells(
    cells: list[Cell],
    out: Path,
    *,
    n_jobs: int,
    backend: str,
    data_dirs: list[str] | None,
    context: dict[str, Any],
    on_result: Callable[[dict[str, Any]], None] | None = None,
    show_progress: bool = True,
    cluster: ClusterTarget | None = None,
) -> Counter:
    """Run ``cells``, write each finished cell's file under ``out``, and call ``on_result``
    with its row; returns status counts. Raises KeyboardInterrupt after cleaning up.
    ``cluster`` says where a dask/ray run sends its cells."""
    cluster = cluster or ClusterTarget()
    from joblib import Parallel, delayed, parallel_config


    _backend_available(backend)
    if not cells:
        return Counter()
    if backend in ("dask", "ray"):  # a cluster: records come back, this process writes them
        progress = CellProgress(len(cells), show_progress)
        try:
            run_on_cluster(
                cells, backend=backend, address=cluster.address, n_jobs=n_jobs,
                data_dirs=data_dirs, data_dir_on_workers=cluster.data_dir_on_workers,
                context=context, take=lambda rec: _take(rec, out, progress, on_result, store.write_cell),
                show_where=show_progress, on_start=cluster.on_start,
            )
        finally:
            progress.close()
        return progress.counts
    n_jobs_eff = 1 if backend == "sequential" else min(effective_n_jobs(n_jobs), len(cells))
    progress = CellProgress(len(cells), show_progress)
    try:
        if backend == "fork":
            run_pool(cells, n_jobs_eff, data_dirs, context,
                     lambda rec: _take(rec, out, progress, on_result, store.write_cell),
                     on_warm=progress.warming)
            return progress.counts
        if n_jobs_eff == 1 and backend in ("loky", "sequential"):
            # one worker: run in this process (already warm, no worker start-up); each cell
            # still runs in its own forked child
            for c in cells:
                stop_if_terminated()
                record = run_cell(c, data_dirs, context)
                if record is None:  # Ctrl-C reached the cell's wait
                    raise KeyboardInterrupt
                _take(record, out, progress, on_result, store.write_cell)
            return progress.counts
        tasks = (delayed(run_cell)(c, data_dirs, context) for c in cells)
        with parallel_config(backend=backend, n_jobs=n_jobs_eff, **_worker_options(backend)):
            results: Any = Parallel(return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")(tasks)
            try:
                for record in results:
                    _take(record, out, progress, on_result, store.write_cell)
            except BaseException:
                _abort(results)
                raise
    finally:
        progress.close()
    return progress.counts


#: seconds an idle loky worker waits for more cells before it exits (joblib's default: 300)
LOKY_IDLE_SECONDS = 30


def _worker_options(backend: str) -> dict[str, Any]:
    """joblib backend options: loky's workers (fresh interpreters) end with this process,
    however it ends (`treebench.execute.lifetime.watch_parent`), and soon when idle."""
    if backend != "loky":
        return {}
    import os


    return {"idle_worker_timeout": LOKY_IDLE_SECONDS, "initializer": watch_parent,
            "initargs": (os.getpid(),)}


def _abort(results: Any) -> None:
    """Stop the workers of an interrupted joblib generator now (joblib kills loky's workers
    when the generator is closed early) instead of at exit, after their cells."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            results.close()
        except Exception:  # noqa: BLE001 - best effort on the way out
            pass


def _take(record, out: Path, progress: CellProgress, on_result, write_cell) -> None:
    if record is None:  # interrupted before it finished
        return
    write_cell(out, record)
    row = record["row"]
    progress.update(row)
    if on_result is not None:
        on_result(row)
    stop_if_terminated()


class CellProgress:
    """A rich progress bar on stderr with counts by status and ETA; one line when not a TTY."""

    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled
        self.start = time.perf_counter()
        self.done = 0
        self.counts: Counter = Counter()
        self._bar = None
        self._warm_told = False
        if enabled and sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("[bold]cells"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task = self._bar.add_task("cells", total=total, status="")
            self._bar.start()

    def _status_text(self) -> str:
        return " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))

    #: a warm-up longer than this is reported on a line of its own (it compiled kernels)
    SLOW_WARM_SECONDS = 5.0

    def warming(self, learner: str, seconds: float | None) -> None:
        """Say that the driver is warming ``learner`` up (``seconds`` None: starting) before
        any cell runs: the first run on a machine compiles its kernels, which takes minutes
        with nothing else moving. A warm-up that took long is reported once it ends."""
        if not self.enabled:
            return
        if seconds is None:
            if self._bar is not None:
                if not self._warm_told:
                    self._bar.console.print(
                        "treebench: warming up the learners (the first run on a machine "
                        "compiles their kernels, which takes minutes; later runs load them)")
                    self._warm_told = True
                self._bar.update(self._task, status=f"warming up {learner}")
            return
        if self._bar is not None:
            self._bar.update(self._task, status=self._status_text())
        if seconds >= self.SLOW_WARM_SECONDS:
            msg = (f"treebench: warmed up {learner} in {seconds:.0f} s (its kernels were "
                   f"compiled and cached: later runs load them)")
            if self._bar is not None:
                self._bar.console.print(msg)
            else:
                print(msg, file=sys.stderr)

    def update(self, row: dict[str, Any]) -> None:
        self.done += 1
        self.counts[row["status"]] += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, status=self._status_text())

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        elif self.enabled:
            secs = time.perf_counter() - self.start
            print(
                f"treebench: ran {self.done}/{self.total} cells in {secs:.1f} s "
                f"({self._status_text() or 'none finished'})",
                file=sys.stderr,
            )
