"""Run cells on a dask or ray cluster that shares no file system with the driver (issue 15).

The driver (this process) connects to an existing cluster (``execution.address``, or
``DASK_SCHEDULER_ADDRESS`` for dask) or starts a local one, prints where it runs, ships each
prepared dataset once per worker (dask ``scatter(broadcast=True)``, ray's object store), and
submits one task per cell. A task runs `treebench.execute.supervise.run_cell` on the worker,
which forks a supervised child per cell exactly as locally, so the per-cell time and memory
limits hold there and a cell's crash never takes the worker down. The worker returns the
cell's record; only the driver writes cell files (atomically, as they arrive), so a sweep
that loses its connection or is interrupted keeps every finished cell and a rerun resumes.

Faults: a worker that dies mid-cell makes the scheduler re-run its cells elsewhere (dask's
``distributed.scheduler.allowed-failures``, ray's ``max_retries``: bounded); a cell that keeps
killing workers is recorded ``crashed`` with the engine's reason. Ctrl-C cancels the pending
tasks and keeps finished cells.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from treebench.cells import Cell
from treebench.errors import UserError

#: driver side: datasets sent to workers, counted once per (dataset, worker) shipment
SHIPMENTS: Counter = Counter()
#: worker side: datasets this process received from the driver and installed in its cache
RECEIVED: Counter = Counter()

#: ray: retries of a task whose worker died (bounded, like dask's allowed-failures default)
RAY_MAX_RETRIES = 3


def dataset_key(cell: Cell) -> str:
    """The key of the cell's dataset in the worker cache (`treebench.execute.worker`)."""
    from treebench.cells import canonical_json

    return canonical_json([cell.dataset_loader, cell.dataset_params])


def _datasets(cells: list[Cell], data_dirs: list[str] | None) -> dict[str, Any]:
    """Each distinct dataset of ``cells``, loaded (parsed, cached) by the driver."""
    from treebench.execute.worker import dataset_for

    out: dict[str, Any] = {}
    for c in cells:
        k = dataset_key(c)
        if k not in out:
            out[k] = dataset_for(c, data_dirs, offline=None)
    return out


def install_dataset(shipped: tuple[str, Any] | None) -> None:
    """Put a shipped ``(key, dataset)`` into this worker's dataset cache (before each cell, so
    that the cache's eviction never sends a worker looking for a file it does not have)."""
    if shipped is None:
        return
    from treebench.execute import worker

    key, ds = shipped
    if worker._DATASETS.get(key) is not ds:
        if key not in RECEIVED:
            RECEIVED[key] += 1
        worker._DATASETS[key] = ds
    worker._DATASETS.move_to_end(key)


def cluster_cell(cell: Cell, data_dirs: list[str] | None, context: dict[str, Any],
                 shipped: tuple[str, Any] | None) -> dict[str, Any]:
    """The task run on a worker: install the shipped dataset, run the cell supervised (its own
    child process), return the record."""
    from treebench.execute.supervise import run_cell

    install_dataset(shipped)
    record = run_cell(cell, None if shipped is not None else data_dirs, context)
    if record is None:  # the worker was interrupted: let the engine treat it as a failure
        raise RuntimeError("the cell was interrupted on its worker")
    return record


def received_counts() -> dict[str, int]:
    """This process's `RECEIVED` (called on workers with ``client.run``)."""
    return dict(RECEIVED)


def _crashed_record(cell: Cell, context: dict[str, Any], reason: str) -> dict[str, Any]:
    from treebench.results.rows import build_record

    return build_record(cell, context, status="crashed", error=reason, runner={})


def resolve_address(backend: str, address: str | None) -> str | None:
    """The explicit address, else (dask) ``DASK_SCHEDULER_ADDRESS``, else None: a local cluster."""
    if address:
        return address
    if backend == "dask":
        return os.environ.get("DASK_SCHEDULER_ADDRESS") or None
    return None


def run_on_cluster(
    cells: list[Cell],
    out: Path,
    *,
    backend: str,
    address: str | None,
    n_jobs: int,
    data_dirs: list[str] | None,
    data_dir_on_workers: bool,
    context: dict[str, Any],
    take: Callable[[dict[str, Any]], None],
    show_where: bool = True,
) -> None:
    """Run ``cells`` on dask or ray; ``take(record)`` writes each record as it arrives."""
    address = resolve_address(backend, address)
    if backend == "dask":
        _run_dask(cells, address=address, n_jobs=n_jobs, data_dirs=data_dirs,
                  data_dir_on_workers=data_dir_on_workers, context=context, take=take,
                  show_where=show_where)
    elif backend == "ray":
        _run_ray(cells, address=address, n_jobs=n_jobs, data_dirs=data_dirs,
                 data_dir_on_workers=data_dir_on_workers, context=context, take=take,
                 show_where=show_where)
    else:  # pragma: no cover - the caller checks
        raise ValueError(f"not a cluster backend: {backend!r}")


def _say(text: str, enabled: bool) -> None:
    if enabled:
        print(f"treebench: {text}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- dask
def _dask_client(address: str | None, n_jobs: int):
    from distributed import Client, get_client

    if address:
        try:
            return Client(address, timeout="20s", set_as_default=False), True
        except (OSError, TimeoutError) as exc:
            raise UserError(f"cannot reach the dask scheduler at {address} ({exc}); start it "
                            f"with `dask scheduler` or check --address.") from None
    try:
        return get_client(), False  # a client the Python caller made
    except ValueError:
        from treebench.execute.executor import effective_n_jobs

        n = effective_n_jobs(n_jobs)
        return Client(processes=True, n_workers=n, threads_per_worker=1,
                      set_as_default=False, dashboard_address=":0"), True


def _run_dask(cells, *, address, n_jobs, data_dirs, data_dir_on_workers, context, take,
              show_where) -> None:
    from distributed import as_completed

    client, own = _dask_client(address, n_jobs)
    futures: list[Any] = []
    try:
        info = client.scheduler_info()
        workers = info.get("workers", {})
        if not workers:
            client.wait_for_workers(1, timeout=60)
            workers = client.scheduler_info().get("workers", {})
        threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
        _say(f"running on dask scheduler {client.scheduler.address} "
             f"({len(workers)} workers, {threads} threads)", show_where)
        shipped: dict[str, Any] = {}
        if not data_dir_on_workers:
            for key, ds in _datasets(cells, data_dirs).items():
                shipped[key] = client.scatter((key, ds), broadcast=True, hash=False)
                SHIPMENTS[key] += len(workers)
        by_key: dict[str, Cell] = {}
        for c in cells:
            k = f"treebench-cell-{c.id}"
            by_key[k] = c
            futures.append(client.submit(cluster_cell, c, data_dirs, context,
                                         shipped.get(dataset_key(c)), key=k, pure=False))
        for fut in as_completed(futures, loop=client.loop):
            cell = by_key[fut.key]
            if fut.status == "finished":
                record = fut.result()
            elif fut.status == "cancelled":  # the scheduler forgot it: connection lost
                raise OSError(f"cell {cell.id} was cancelled by the scheduler")
            else:
                exc = fut.exception()
                if _connection_lost(exc):
                    raise exc
                record = _crashed_record(cell, context, f"{type(exc).__name__}: {exc}")
            fut.release()
            take(record)
    except KeyboardInterrupt:
        _cancel_dask(client, futures)
        raise
    except (OSError, TimeoutError) as exc:
        raise UserError(f"lost the connection to the dask scheduler ({exc}); finished cells are "
                        f"saved, run the same command again to resume.") from None
    finally:
        if own:
            try:
                client.close(timeout=10)
            except Exception:  # noqa: BLE001 - closing after a lost connection
                pass


def _connection_lost(exc: BaseException | None) -> bool:
    from distributed.comm.core import CommClosedError

    return isinstance(exc, CommClosedError | OSError)


def _cancel_dask(client, futures) -> None:
    try:
        client.cancel([f for f in futures if not f.done()], force=True)
    except Exception:  # noqa: BLE001 - best effort on the way out
        pass


# ----------------------------------------------------------------------------- ray
def _run_ray(cells, *, address, n_jobs, data_dirs, data_dir_on_workers, context, take,
             show_where) -> None:
    import ray

    started = False
    if not ray.is_initialized():
        kw: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False}
        if address:
            kw["address"] = address
        else:
            from treebench.execute.executor import effective_n_jobs

            kw["num_cpus"] = effective_n_jobs(n_jobs)
            kw["include_dashboard"] = False
        try:
            ray.init(**kw)
        except ConnectionError as exc:
            raise UserError(f"cannot reach the ray cluster at {address} ({exc}); start it with "
                            f"`ray start --head` or check --address.") from None
        started = True
    refs: list[Any] = []
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        cpus = int(ray.cluster_resources().get("CPU", 0))
        where = ray.get_runtime_context().gcs_address if address else "a local ray cluster"
        _say(f"running on ray at {where} ({len(nodes)} nodes, {cpus} CPUs)", show_where)
        remote = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES)(cluster_cell)
        shipped: dict[str, Any] = {}
        if not data_dir_on_workers:
            for key, ds in _datasets(cells, data_dirs).items():
                # one copy in the object store of each node that runs the dataset's cells
                shipped[key] = ray.put((key, ds))
                SHIPMENTS[key] += len(nodes)
        by_ref: dict[Any, Cell] = {}
        for c in cells:
            ref = remote.remote(c, data_dirs, context, shipped.get(dataset_key(c)))
            by_ref[ref] = c
            refs.append(ref)
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                cell = by_ref.pop(ref)
                try:
                    record = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    record = _crashed_record(cell, context, f"{type(exc).__name__}: "
                                             f"{str(exc).splitlines()[0] if str(exc) else ''}")
                take(record)
    except KeyboardInterrupt:
        for r in refs:
            try:
                ray.cancel(r, force=True)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        raise
    finally:
        if started:
            ray.shutdown()
