"""Run cells on a dask or ray cluster that shares no file system with the driver.

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
tasks and keeps finished cells. An address that is malformed or does not answer is one
sentence (`UserError`, exit 2), checked before anything runs.

Threads: a dask worker started with ``--nthreads T`` runs T cells at once, each still in its
own supervised child; the worker's preparation and the fork are serialised
(`treebench.execute.supervise.PREPARE_LOCK`), the waits run in parallel. Every task reports
which (host, process, thread) ran it, so the run summary states the workers and threads
actually used (`ClusterRun`).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.cell import Cell
from treebench.errors import UserError
from treebench.execute.fold import dataset_for, dataset_key, hold_dataset
from treebench.execute.supervise import PREPARE_LOCK, run_cell
from treebench.results.rows import build_record
from treebench.execute.lifetime import keep_sigterm_handler
from treebench.execute.jobs import effective_n_jobs

#: driver side: datasets sent to workers, counted once per (dataset, worker) shipment
SHIPMENTS: Counter = Counter()
#: worker side: datasets this process received from the driver and installed in its cache
RECEIVED: Counter = Counter()

#: worker side: the shipped datasets this process holds, key -> (shipment, dataset); the most
#: recent `HELD_SIZE` only, so that a long-lived worker serving many sweeps does not grow
_HELD: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
HELD_SIZE = 16

#: ray: retries of a task whose worker died (bounded, like dask's allowed-failures default)
RAY_MAX_RETRIES = 3
#: seconds to wait for a TCP connection to a cluster address before calling it unreachable
CONNECT_SECONDS = 10.0


@dataclass
class ClusterRun:
    """Where a sweep ran: the cluster as found at connection, and what the tasks reported."""

    backend: str
    where: str  # the scheduler's or the ray cluster's address, or "a local ... cluster"
    workers: int = 0  # dask workers / ray nodes alive at connection
    threads: int = 0  # dask worker threads / ray CPUs at connection
    used: set[tuple[str, int, int]] = field(default_factory=set)  # (host, pid, thread) ran a cell
    received: Counter = field(default_factory=Counter)  # (host, pid, dataset key) -> shipments
    shipped: Counter = field(default_factory=Counter)  # dataset key -> copies sent

    def note(self, where: tuple[str, int, int], received: list[str]) -> None:
        self.used.add(tuple(where))
        for key in received:
            self.received[(where[0], where[1], key)] += 1

    @property
    def n_workers_used(self) -> int:
        """Worker processes (dask workers, ray worker processes) that ran at least one cell."""
        return len({(h, p) for h, p, _ in self.used})

    @property
    def n_threads_used(self) -> int:
        return len(self.used)

    @property
    def n_hosts_used(self) -> int:
        return len({h for h, _, _ in self.used})

    def to_manifest(self) -> dict[str, Any]:
        """What ran the cells, for ``manifest.json`` (`treebench.api.note_cluster_run`): the
        cluster as found at connection and the hosts, worker processes and threads that
        returned at least one record."""
        return {"backend": self.backend, "where": self.where, "workers": self.workers,
                "threads": self.threads, "hosts_used": self.n_hosts_used,
                "workers_used": self.n_workers_used, "threads_used": self.n_threads_used,
                "describe": self.describe()}

    def describe(self) -> str:
        """What ran the cells, for the run summary: ``2 dask workers (4 threads) at tcp://...``
        or ``2 ray worker processes on 1 host at ray://...``."""
        w, t, h = self.n_workers_used, self.n_threads_used, self.n_hosts_used
        if self.backend == "dask":
            return f"{_n(w, 'dask worker')} ({_n(t, 'thread')}) at {self.where}"
        return f"{_n(w, 'ray worker process', 'ray worker processes')} on {_n(h, 'host')} at {self.where}"


def _n(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


def _datasets(cells: list[Cell], data_dirs: list[str] | None) -> dict[str, Any]:
    """Each distinct dataset of ``cells``, loaded (parsed, cached) by the driver."""
    out: dict[str, Any] = {}
    for c in cells:
        k = dataset_key(c)
        if k not in out:
            out[k] = dataset_for(c, data_dirs, offline=None)
    return out


class InStore:
    """A dataset in ray's object store, wrapped so that ray hands the task the reference (not
    the value): a worker process fetches it once and keeps it (`install_dataset`)."""

    def __init__(self, ref: Any):
        self.ref = ref


def install_dataset(shipped: tuple[str, Any] | None) -> list[str]:
    """Put a shipped ``(key, dataset)`` into this worker's dataset cache (before each cell, so
    that the cache's eviction never sends a worker looking for a file it does not have).
    Returns the keys received now: a shipment (a dask scatter, a ray object) is counted in
    `RECEIVED` the first time this process sees it, and a ray object is fetched only then."""
    if shipped is None:
        return []
    key, ds = shipped
    tag = ds.ref if isinstance(ds, InStore) else ds
    got: list[str] = []
    with PREPARE_LOCK:  # threads of one dask worker install and prepare one at a time
        held = _HELD.get(key)
        if held is None or (held[0] != tag if isinstance(ds, InStore) else held[0] is not tag):
            if isinstance(ds, InStore):
                import ray

                ds = ray.get(ds.ref)
            _HELD[key] = (tag, ds)
            RECEIVED[key] += 1
            got.append(key)
        _HELD.move_to_end(key)
        ds = _HELD[key][1]
        while len(_HELD) > HELD_SIZE:
            _HELD.popitem(last=False)
        hold_dataset(key, ds)
    return got


def here() -> tuple[str, int, int]:
    """(host, process id, thread id) of the code running this."""
    return socket.gethostname(), os.getpid(), threading.get_ident()


def cluster_cell(cell: Cell, data_dirs: list[str] | None, context: dict[str, Any],
                 shipped: tuple[str, Any] | None) -> dict[str, Any]:
    """The task run on a worker: install the shipped dataset, run the cell supervised (its own
    child process), return ``{"record", "where", "received"}``: the cell's record, which
    (host, pid, thread) ran it and which shipments it received."""
    received = install_dataset(shipped)
    record = run_cell(cell, None if shipped is not None else data_dirs, context)
    if record is None:  # the worker was interrupted: let the engine treat it as a failure
        raise RuntimeError("the cell was interrupted on its worker")
    return {"record": record, "where": here(), "received": received}


def received_counts() -> dict[str, int]:
    """This process's `RECEIVED` (called on workers with ``client.run``)."""
    return dict(RECEIVED)


def _crashed_record(cell: Cell, context: dict[str, Any], reason: str) -> dict[str, Any]:
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
    *,
    backend: str,
    address: str | None,
    n_jobs: int,
    data_dirs: list[str] | None,
    data_dir_on_workers: bool,
    context: dict[str, Any],
    take: Callable[[dict[str, Any]], None],
    show_where: bool = True,
    on_start: Callable[[ClusterRun], None] | None = None,
) -> ClusterRun:
    """Run ``cells`` on dask or ray; ``take(record)`` writes each record as it arrives.
    ``on_start`` receives the `ClusterRun` once connected (it fills in as cells finish, so the
    caller sees what ran even when the sweep is interrupted); it is also returned."""
    address = resolve_address(backend, address)
    if address:
        if backend == "dask":
            dask_security(address)  # TLS settings missing or wrong: one sentence, at once
        check_address(backend, address)
    run = ClusterRun(backend=backend, where="")
    kw = dict(address=address, n_jobs=n_jobs, data_dirs=data_dirs,
              data_dir_on_workers=data_dir_on_workers, context=context, take=take,
              show_where=show_where, run=run, on_start=on_start)
    if backend == "dask":
        _run_dask(cells, **kw)
    elif backend == "ray":
        _run_ray(cells, **kw)
    else:  # pragma: no cover - the caller checks
        raise ValueError(f"not a cluster backend: {backend!r}")
    return run


def _say(text: str, enabled: bool) -> None:
    if enabled:
        print(f"treebench: {text}", file=sys.stderr, flush=True)


def _host_port(location: str) -> tuple[str, int] | None:
    """``host:port`` (``[v6]:port`` too) split, or None when it is not of that form."""
    host, sep, port = location.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_address(backend: str, address: str) -> None:
    """Refuse, in one sentence, an address that is malformed or where nothing answers (a TCP
    connection within `CONNECT_SECONDS`): ray would otherwise wait minutes for a GCS that is
    not there. ``auto`` (ray) is left to ray, which fails at once when no cluster runs here."""
    if backend == "ray" and address == "auto":
        return
    example = "tcp://host:8786" if backend == "dask" else "auto, host:6379 or ray://host:10001"
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = ("tcp" if backend == "dask" else ""), address
    ok_schemes = ("tcp", "tls") if backend == "dask" else ("", "ray")
    hp = _host_port(location.rstrip("/"))
    if scheme not in ok_schemes or hp is None:
        raise UserError(f"--address {address!r} is not a {backend} cluster address; give "
                        f"{example}.")
    try:
        socket.create_connection(hp, timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        reason = (exc.strerror or str(exc) or type(exc).__name__).lower()
        start = "`dask scheduler`" if backend == "dask" else "`ray start --head`"
        raise UserError(f"cannot reach the {backend} cluster at {address} ({reason}); start it "
                        f"with {start} or check --address.") from None


# ----------------------------------------------------------------------------- dask
#: dask's configuration keys (and their environment variables) of the client's TLS settings
TLS_SETTINGS = (
    ("CA file", "distributed.comm.tls.ca-file", "DASK_DISTRIBUTED__COMM__TLS__CA_FILE"),
    ("client certificate", "distributed.comm.tls.client.cert",
     "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT"),
    ("client key", "distributed.comm.tls.client.key", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"),
)


def dask_security(address: str | None):
    """The client's `distributed.security.Security` for a ``tls://`` scheduler address, from
    dask's own configuration (``distributed.comm.tls.*`` in a dask YAML file, or the
    ``DASK_DISTRIBUTED__COMM__TLS__...`` environment variables); None for other addresses
    (dask's defaults apply). Raise `UserError` when a TLS address has no CA file or client
    certificate set, or a file set does not exist."""
    if not address or not address.startswith("tls://"):
        return None
    import dask.config
    from distributed.security import Security

    paths = {key: dask.config.get(key, None) for _, key, _ in TLS_SETTINGS}
    ca, cert, key = (paths[k] for _, k, _ in TLS_SETTINGS)
    if not ca or not cert:
        raise UserError(
            f"--address {address} is a TLS address but the client has no certificates; set "
            f"DASK_DISTRIBUTED__COMM__TLS__CA_FILE and DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT "
            f"(and ..._CLIENT__KEY unless the key is in the certificate file), or "
            f"distributed.comm.tls in dask's configuration (see docs/scaling.md).")
    for what, k, env in TLS_SETTINGS:
        path = paths[k]
        if path and not Path(str(path)).expanduser().is_file():
            source = env if os.environ.get(env) else k
            raise UserError(f"the TLS {what} {path} (set by {source}) does not exist; give the "
                            f"path of the PEM file.")
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key or None,
                    require_encryption=True)


def _dask_client(address: str | None, n_jobs: int):
    from distributed import Client, get_client

    if address:
        security = dask_security(address)
        try:
            return Client(address, timeout="20s", set_as_default=False, security=security), True
        except (OSError, TimeoutError, ValueError) as exc:
            raise UserError(f"cannot reach the dask scheduler at {address} ({exc}); start it "
                            f"with `dask scheduler` or check --address.") from None
    try:
        return get_client(), False  # a client the Python caller made
    except ValueError:
        n = effective_n_jobs(n_jobs)
        # the scheduler, workers and dashboard listen on the loopback interface only
        return Client(processes=True, n_workers=n, threads_per_worker=1, host="127.0.0.1",
                      set_as_default=False, dashboard_address="127.0.0.1:0"), True


def _run_dask(cells, *, address, n_jobs, data_dirs, data_dir_on_workers, context, take,
              show_where, run, on_start) -> None:
    from distributed import as_completed

    import logging

    client, own = _dask_client(address, n_jobs)
    futures: list[Any] = []
    # a lost scheduler is told in one sentence below; dask's client would also log its own
    # reconnection failure with tracebacks of its cancelled closing coroutines
    client_log = logging.getLogger("distributed.client")
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        info = client.scheduler_info()
        workers = info.get("workers", {})
        if not workers:
            client.wait_for_workers(1, timeout=60)
            workers = client.scheduler_info().get("workers", {})
        run.where = client.scheduler.address if address else "a local dask cluster"
        run.workers = len(workers)
        run.threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
        if on_start is not None:
            on_start(run)
        _say(f"running on dask scheduler {client.scheduler.address} "
             f"({run.workers} workers, {run.threads} threads)", show_where)
        shipped: dict[str, Any] = {}
        if not data_dir_on_workers:
            for key, ds in _datasets(cells, data_dirs).items():
                shipped[key] = client.scatter((key, ds), broadcast=True, hash=False)
                SHIPMENTS[key] += len(workers)
                run.shipped[key] += len(workers)
        by_key: dict[str, Cell] = {}
        for c in cells:
            k = f"treebench-cell-{c.id}"
            by_key[k] = c
            futures.append(client.submit(cluster_cell, c, data_dirs, context,
                                         shipped.get(dataset_key(c)), key=k, pure=False))
        for fut in as_completed(futures, loop=client.loop):
            cell = by_key[fut.key]
            if fut.status == "finished":
                got = fut.result()
                run.note(got["where"], got["received"])
                record = got["record"]
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
        client_log.setLevel(level)


def _connection_lost(exc: BaseException | None) -> bool:
    from distributed.comm.core import CommClosedError

    return isinstance(exc, CommClosedError | OSError)


def _cancel_dask(client, futures) -> None:
    try:
        client.cancel([f for f in futures if not f.done()], force=True)
    except Exception:  # noqa: BLE001 - best effort on the way out
        pass


# ----------------------------------------------------------------------------- ray
#: a driver joined to a ray head by its GCS address checks, while no cell finishes, that the
#: GCS still takes connections; this many refusals in a row (one a second) mean it is gone
HEAD_REFUSALS = 3


class _HeadWatch:
    """Notices a dead ray head before ray does: a driver joined by the GCS address is ended
    by ray's core worker (``Failed to connect to GCS within 60 seconds ... The program will
    terminate``, exit 1, no Python exception) a minute after its head dies. Raising
    `ConnectionError` first gives the one-sentence message and exit 2. Ray Client
    drivers (``ray://``) get a `ConnectionError` from ray itself and are not watched."""

    def __init__(self, gcs: str | None):
        self.hp = _host_port(gcs) if gcs else None
        self.refused = 0

    def check(self) -> None:
        if self.hp is None:
            return
        try:
            socket.create_connection(self.hp, timeout=2.0).close()
            self.refused = 0
        except ConnectionRefusedError:
            self.refused += 1
        except OSError:  # a slow or unreachable network is not a refusal: leave it to ray
            return
        if self.refused >= HEAD_REFUSALS:
            raise ConnectionError(f"the ray head's GCS at {self.hp[0]}:{self.hp[1]} refuses "
                                  f"connections")


def _ray_init(address: str | None, n_jobs: int) -> bool:
    """Connect to (or start) ray unless the caller already did; True when we connected."""
    import ray

    if ray.is_initialized():
        return False
    kw: dict[str, Any] = {"log_to_driver": False}
    if address:
        kw["address"] = address
    else:
        kw.update(num_cpus=effective_n_jobs(n_jobs), include_dashboard=False)
    try:
        with keep_sigterm_handler():  # SIGTERM stays a Ctrl-C for this run
            ray.init(**kw)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UserError(f"cannot reach the ray cluster at {address or 'this machine'} ({first}); "
                        f"start it with `ray start --head` or check --address.") from None
    return True


def _run_ray(cells, *, address, n_jobs, data_dirs, data_dir_on_workers, context, take,
             show_where, run, on_start) -> None:
    import ray

    started = _ray_init(address, n_jobs)
    refs: list[Any] = []
    lost = False
    try:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        run.workers = len(nodes)
        run.threads = int(ray.cluster_resources().get("CPU", 0))
        if not address:
            run.where = "a local ray cluster"
        elif address.startswith("ray://"):
            run.where = address  # Ray Client: the driver talks to the head's client server
        else:
            run.where = ray.get_runtime_context().gcs_address
        if on_start is not None:
            on_start(run)
        _say(f"running on ray at {run.where} ({run.workers} nodes, {run.threads} CPUs)",
             show_where)
        remote = ray.remote(num_cpus=1, max_retries=RAY_MAX_RETRIES)(cluster_cell)
        shipped: dict[str, Any] = {}
        if not data_dir_on_workers:
            for key, ds in _datasets(cells, data_dirs).items():
                # one copy in the object store, moved by ray to each node that runs the
                # dataset's cells; each worker process fetches it once (`install_dataset`)
                shipped[key] = (key, InStore(ray.put(ds)))
                SHIPMENTS[key] += 1
                run.shipped[key] += 1
        by_ref: dict[Any, Cell] = {}
        for c in cells:
            ref = remote.remote(c, data_dirs, context, shipped.get(dataset_key(c)))
            by_ref[ref] = c
            refs.append(ref)
        pending = list(refs)
        watch = _HeadWatch(None if run.where.startswith("ray://") or not address else run.where)
        while pending:
            # a bounded wait, so that Ctrl-C is seen between waits
            done, pending = ray.wait(pending, num_returns=1, timeout=1.0)
            if not done:
                watch.check()
            for ref in done:
                cell = by_ref.pop(ref)
                try:
                    got = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                    record = _crashed_record(cell, context, f"{type(exc).__name__}: {text}")
                else:
                    run.note(got["where"], got["received"])
                    record = got["record"]
                take(record)
    except KeyboardInterrupt:
        for r in refs:
            try:
                ray.cancel(r, force=True)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        raise
    except ConnectionError as exc:  # the head or the Ray Client server went away
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        lost = True
        raise UserError(f"lost the connection to the ray cluster ({first}); finished cells are "
                        f"saved, run the same command again to resume.") from None
    finally:
        if started and not lost:
            ray.shutdown()  # (not after a lost head: it would wait for it; the process exits)
