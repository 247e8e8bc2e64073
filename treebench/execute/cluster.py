"""Run cells on a dask or ray cluster that shares no file system with the driver.

The driver (this process) connects to an existing cluster (``execution.address``, or
``DASK_SCHEDULER_ADDRESS`` for dask) or starts a local one, prints where it runs, ships each
prepared dataset once per worker, and submits one task per cell. A task runs
`treebench.execute.supervise.run_cell` on the worker (`treebench.execute.cluster_worker`),
which forks a supervised child per cell exactly as locally, so the per-cell time and memory
limits hold there and a cell's crash never takes the worker down. The worker returns the
cell's record; only the driver writes cell files (atomically, as they arrive), so a sweep
that loses its connection or is interrupted keeps every finished cell and a rerun resumes.

Shipping: dask gets the datasets by one broadcast to the workers connected at the start
(``client.run``; a worker that dies meanwhile fails only its own part, and the wait is
bounded); no task depends on dask-managed data, so no worker's death can lose a dataset that
tasks wait for. A worker without the data (it joined or was restarted later) answers its
first cell at once, and the driver sends that cell again carrying the data. ray keeps one
copy in its object store. A local ray starts with every process on the loopback interface.

Faults: a worker that dies mid-cell makes the scheduler re-run its cells elsewhere (dask's
``distributed.scheduler.allowed-failures``, ray's ``max_retries``: bounded); a cell that keeps
killing workers is recorded ``crashed`` with the engine's reason. A dask sweep with no worker
connected says so and waits `NO_WORKER_SECONDS` for one, then stops with one sentence (exit
2, finished cells kept). Ctrl-C cancels the pending tasks and keeps finished cells. An address
that is malformed or does not answer is one sentence (`UserError`, exit 2), checked before
anything runs.

Threads: a dask worker started with ``--nthreads T`` runs T cells at once, each still in its
own supervised child; the worker's preparation and the fork are serialised
(`treebench.execute.supervise.PREPARE_LOCK`), the waits run in parallel. Every task reports
which (host, process, thread) ran it, so the run summary states the workers and threads
actually used (`ClusterRun`), a dask worker its nanny restarted counted once.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.results.cell import Cell
from treebench.errors import UserError
from treebench.execute.cluster_worker import InStore, Shipment, cluster_cell, receive_datasets
from treebench.execute.fold import dataset_for, dataset_key
from treebench.execute.jobs import effective_n_jobs
from treebench.execute.lifetime import keep_sigterm_handler
from treebench.results.rows import build_record

#: driver side: datasets sent to workers, counted once per (dataset, worker) shipment
SHIPMENTS: Counter = Counter()
#: ray: retries of a task whose worker died (bounded, like dask's allowed-failures default)
RAY_MAX_RETRIES = 3
#: seconds to wait for a TCP connection to a cluster address before calling it unreachable
CONNECT_SECONDS = 10.0
#: dask: seconds a sweep waits for a worker when none is connected (at the start, or after
#: the last one died) before it stops with one sentence; the wait is announced when it begins
NO_WORKER_SECONDS = 120.0
#: dask: seconds without a finished cell after which the driver asks how many workers are
#: connected (and again at this interval while none finishes)
IDLE_CHECK_SECONDS = 2.0
#: dask: seconds the driver waits for its broadcast of the datasets before it submits the
#: cells anyway (a worker the broadcast has not reached gets the data with its first cell)
SHIP_SECONDS = 60.0


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
    #: (host, pid) -> the lasting identity of a dask worker that a nanny restarts in a new
    #: process (its nanny's address): the new process is the same worker, restarted
    lasting: dict[tuple[str, int], str] = field(default_factory=dict)

    def note(self, where: tuple, received: list[str]) -> None:
        """A task's report: ``where`` is (host, pid, thread) or (host, pid, thread, lasting
        identity or None), ``received`` the dataset keys it received."""
        host, pid, thread = where[:3]
        self.used.add((host, pid, thread))
        if len(where) > 3 and where[3]:
            self.lasting[(host, pid)] = where[3]
        for key in received:
            self.received[(host, pid, key)] += 1

    def _workers(self) -> dict[Any, dict[int, int]]:
        """worker -> its processes that ran cells -> threads each used; a worker is its
        lasting identity when it has one, else its process."""
        out: dict[Any, dict[int, int]] = {}
        for h, p, _ in self.used:
            worker = ("nanny", self.lasting[(h, p)]) if (h, p) in self.lasting else (h, p)
            procs = out.setdefault(worker, {})
            procs[p] = procs.get(p, 0) + 1
        return out

    @property
    def n_workers_used(self) -> int:
        """Workers that ran at least one cell: dask workers (a worker its nanny restarted
        counts once) or ray worker processes."""
        return len(self._workers())

    @property
    def n_threads_used(self) -> int:
        """Threads that ran cells; a restarted worker counts the most threads one of its
        processes used."""
        return sum(max(procs.values()) for procs in self._workers().values())

    @property
    def n_restarts(self) -> int:
        """Processes beyond the first of each restarted dask worker that ran cells."""
        return sum(len(procs) - 1 for procs in self._workers().values())

    @property
    def n_hosts_used(self) -> int:
        return len({h for h, _, _ in self.used})

    def to_manifest(self) -> dict[str, Any]:
        """What ran the cells, for ``manifest.json`` (`treebench.api.note_cluster_run`): the
        cluster as found at connection and the hosts, workers and threads that returned at
        least one record, and the restarts among those workers."""
        return {"backend": self.backend, "where": self.where, "workers": self.workers,
                "threads": self.threads, "hosts_used": self.n_hosts_used,
                "workers_used": self.n_workers_used, "threads_used": self.n_threads_used,
                "worker_restarts": self.n_restarts, "describe": self.describe()}

    def describe(self) -> str:
        """What ran the cells, for the run summary: ``2 dask workers (4 threads) at tcp://...``
        (``(2 threads, 1 restart)`` when a nanny restarted one of them) or ``2 ray worker
        processes on 1 host at ray://...``."""
        w, t, h, r = self.n_workers_used, self.n_threads_used, self.n_hosts_used, self.n_restarts
        if self.backend == "dask":
            again = f", {_n(r, 'restart')}" if r else ""
            return f"{_n(w, 'dask worker')} ({_n(t, 'thread')}{again}) at {self.where}"
        procs = _n(w, "ray worker process", "ray worker processes")
        return f"{procs} on {_n(h, 'host')} at {self.where}"


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
    import logging

    client, own = _dask_client(address, n_jobs)
    sweep: _DaskSweep | None = None
    # a lost scheduler is told in one sentence below; dask's client would also log its own
    # reconnection failure with tracebacks of its cancelled closing coroutines
    client_log = logging.getLogger("distributed.client")
    level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        workers = _dask_workers_at_start(client)
        run.where = client.scheduler.address if address else "a local dask cluster"
        run.workers = len(workers)
        run.threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
        if on_start is not None:
            on_start(run)
        _say(f"running on dask scheduler {client.scheduler.address} "
             f"({run.workers} workers, {run.threads} threads)", show_where)
        sweep = _DaskSweep(client, run, data_dirs, context, take)
        if not data_dir_on_workers:
            sweep.ship(_datasets(cells, data_dirs), show_where)
        for c in cells:
            sweep.submit(c)
        sweep.collect()
    except KeyboardInterrupt:
        if sweep is not None:
            sweep.cancel()
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


def _dask_workers_at_start(client) -> dict[str, Any]:
    """The scheduler's workers; when it has none, wait `NO_WORKER_SECONDS` for one (said on
    the console), then stop with one sentence."""
    workers = client.scheduler_info().get("workers", {})
    if workers:
        return workers
    at = client.scheduler.address
    _say(f"no dask worker is connected to the scheduler at {at}; waiting up to "
         f"{NO_WORKER_SECONDS:g} s for one", True)
    try:
        client.wait_for_workers(1, timeout=NO_WORKER_SECONDS)
    except TimeoutError:
        raise UserError(f"no dask worker connected to the scheduler at {at} within "
                        f"{NO_WORKER_SECONDS:g} s; start workers (`dask worker {at}`) and run "
                        f"the same command again.") from None
    return client.scheduler_info().get("workers", {})


def _dask_worker_count(client) -> int:
    """Workers connected to the scheduler now (asked without their details)."""
    info = client.scheduler_info(n_workers=0)
    n = info.get("n_workers")
    return len(info.get("workers", {})) if n is None else int(n)


def _broadcast(client, items: list[tuple[tuple[str, str], Any]]) -> int:
    """Send ``items`` to every worker connected now (`receive_datasets`); returns how many
    workers received them. A worker that dies meanwhile only fails its own part. The wait is
    bounded by `SHIP_SECONDS` (a worker that hangs cannot hold the sweep back): past it, 0."""
    box: dict[str, Any] = {}

    def send() -> None:
        try:
            box["got"] = client.run(receive_datasets, items, on_error="return")
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    sender = threading.Thread(target=send, name="treebench-ship", daemon=True)
    sender.start()
    sender.join(SHIP_SECONDS)
    if sender.is_alive():
        _say(f"the datasets have not reached every dask worker after {SHIP_SECONDS:g} s; the "
             f"cells start now and a worker without them receives them with its first cell",
             True)
        return 0
    if "error" in box:
        raise box["error"]
    return sum(not isinstance(v, BaseException) for v in box["got"].values())


def _next_done(done, timeout: float) -> Any:
    """The next finished future of the `distributed.as_completed` ``done``, or None when
    none finishes within ``timeout`` seconds. Waits on the condition that ``done`` notifies
    when a future finishes, in steps of at most 0.1 s, as its own iterator does."""
    deadline = time.monotonic() + timeout
    ready = getattr(done, "thread_condition", None)
    while not done.has_ready():
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        if ready is None:
            time.sleep(min(left, 0.02))
        else:
            with ready:
                ready.wait(timeout=min(left, 0.1))
    return next(done)


class _DaskSweep:
    """The driver's side of a dask sweep: ships the datasets to the workers connected at the
    start, submits one task per cell, takes each record as it arrives, sends a cell again with
    its dataset when its worker did not hold it (a worker that joined or was restarted later),
    and, while no cell finishes, checks that some worker is connected."""

    def __init__(self, client, run: ClusterRun, data_dirs: list[str] | None,
                 context: dict[str, Any], take: Callable[[dict[str, Any]], None]):
        from distributed import as_completed

        self.client, self.run, self.data_dirs = client, run, data_dirs
        self.context, self.take = context, take
        self.data: dict[str, Any] = {}  # dataset key -> dataset
        self.tokens: dict[str, tuple[str, str]] = {}  # dataset key -> (sweep id, key)
        self.cells: dict[str, Cell] = {}  # task key -> its cell, until its record is taken
        self.futures: dict[str, Any] = {}  # task key -> future, until taken
        self.tries: Counter = Counter()  # cell id -> tasks submitted for it
        self.done = as_completed(loop=client.loop)
        self.no_worker_since: float | None = None

    def ship(self, datasets: dict[str, Any], show: bool) -> None:
        sweep = uuid.uuid4().hex
        self.data = datasets
        self.tokens = {k: (sweep, k) for k in datasets}
        _say(f"shipping {_n(len(datasets), 'dataset')} to the dask workers", show)
        reached = _broadcast(self.client, [(self.tokens[k], ds) for k, ds in datasets.items()])
        for k in datasets:
            SHIPMENTS[k] += reached
            self.run.shipped[k] += reached

    def submit(self, cell: Cell, worker: str | None = None) -> None:
        """Submit a task for ``cell``: naming its shipment, or (``worker``: a worker that
        lacked it) carrying the dataset, preferably to that worker and before its other cells."""
        self.tries[cell.id] += 1
        n = self.tries[cell.id]
        key = f"treebench-cell-{cell.id}" + (f"-{n}" if n > 1 else "")
        k = dataset_key(cell)
        shipped = None
        if k in self.tokens:
            shipped = (k, Shipment(self.tokens[k], self.data[k] if n > 1 else None))
        kw: dict[str, Any] = {}
        if worker:
            kw = {"workers": [worker], "allow_other_workers": True, "priority": 1}
        fut = self.client.submit(cluster_cell, cell, self.data_dirs, self.context, shipped,
                                 key=key, pure=False, **kw)
        self.cells[key], self.futures[key] = cell, fut
        self.done.add(fut)

    def collect(self) -> None:
        while not self.done.is_empty():
            fut = _next_done(self.done, IDLE_CHECK_SECONDS)
            if fut is None:
                self.check_workers()
            else:
                self.take_one(fut)

    def take_one(self, fut) -> None:
        cell = self.cells.pop(fut.key)
        del self.futures[fut.key]
        if fut.status == "finished":
            got = fut.result()
            fut.release()
            if "need" in got:  # its worker did not hold the dataset: send it along
                SHIPMENTS[got["need"]] += 1
                self.run.shipped[got["need"]] += 1
                self.submit(cell, worker=got.get("worker"))
                return
            self.run.note(got["where"], got["received"])
            record = got["record"]
        elif fut.status == "cancelled":  # the scheduler forgot it: connection lost
            raise OSError(f"cell {cell.id} was cancelled by the scheduler")
        else:
            exc = fut.exception()
            if _connection_lost(exc):
                raise exc
            fut.release()
            record = _crashed_record(cell, self.context, f"{type(exc).__name__}: {exc}")
        if self.no_worker_since is not None:  # a record again after a wait: say who came
            self.check_workers()
        self.take(record)

    def check_workers(self) -> None:
        """No cell finished for a while: when no worker is connected, say so and wait
        `NO_WORKER_SECONDS` for one; past that, cancel the cells and stop with a sentence."""
        n = _dask_worker_count(self.client)
        at = self.client.scheduler.address
        if n:
            if self.no_worker_since is not None:
                _say(f"{_n(n, 'dask worker')} connected to {at} again; the sweep goes on", True)
            self.no_worker_since = None
            return
        now = time.monotonic()
        if self.no_worker_since is None:
            self.no_worker_since = now
            _say(f"no dask worker is connected to the scheduler at {at}; waiting up to "
                 f"{NO_WORKER_SECONDS:g} s for one ({_n(len(self.futures), 'cell')} to go)",
                 True)
        elif now - self.no_worker_since >= NO_WORKER_SECONDS:
            self.cancel()
            raise UserError(f"no dask worker was connected to the scheduler at {at} for "
                            f"{NO_WORKER_SECONDS:g} s; finished cells are saved, start workers "
                            f"(`dask worker {at}`) and run the same command again to resume.")

    def cancel(self) -> None:
        _cancel_dask(self.client, list(self.futures.values()))


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


@contextmanager
def _ray_on_loopback():
    """Let a local ray start on the loopback address. ray binds its GCS, raylet, workers and
    the driver's own server to the node's address, and ``ray.init`` replaces a loopback node
    address by one other machines reach, except where ray's clusters are off
    (``ray._private.ray_constants.ENABLE_RAY_CLUSTER``, false on macOS and Windows or with
    ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``): off while ray starts, every one of them listens
    on 127.0.0.1 only. Restored after the start (a later run may join a real cluster)."""
    try:
        from ray._private import ray_constants
    except ImportError:  # a ray without it: its own defaults
        ray_constants = None
    before = getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    if before is not None:
        ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if before is not None:
            ray_constants.ENABLE_RAY_CLUSTER = before


def _ray_init(address: str | None, n_jobs: int) -> bool:
    """Connect to (or start) ray unless the caller already did; True when we connected."""
    import ray

    if ray.is_initialized():
        return False
    kw: dict[str, Any] = {"log_to_driver": False}
    if address:
        kw["address"] = address
    else:  # a new local instance (not one named by RAY_ADDRESS), no dashboard, on loopback
        kw.update(address="local", num_cpus=effective_n_jobs(n_jobs), include_dashboard=False)
    try:
        with keep_sigterm_handler(), (nullcontext() if address else _ray_on_loopback()):
            ray.init(**kw)  # SIGTERM stays a Ctrl-C for this run
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
