"""What runs on a cluster's worker (dask or ray): the task of one cell, and the datasets
the driver ships, which the worker keeps and counts.

A dask worker receives each dataset of a sweep once, by the driver's broadcast
(`receive_datasets`, into this process's inbox), and each task names its shipment
(`Shipment` without data); a worker that does not hold it (it joined or was restarted after
the broadcast) answers at once that it needs it, and the driver sends that cell again with the
data, which the worker then keeps for its next cells. A ray worker process fetches a dataset
from ray's object store on its first cell (`InStore`). Every task reports which (host, process,
thread) ran it and, for a dask worker started by a nanny, the nanny's address: a worker the
nanny restarts in a new process is the same worker (`treebench.execute.cluster.ClusterRun`).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections import Counter, OrderedDict
from typing import Any

from treebench.results.cell import Cell
from treebench.execute.fold import hold_dataset
from treebench.execute.supervise import PREPARE_LOCK, run_cell

#: datasets this process received from the driver (a dask broadcast or a task carrying
#: one, a ray object fetched)
RECEIVED: Counter = Counter()

#: the shipped datasets this process holds, key -> (shipment, dataset); the most
#: recent `HELD_SIZE` only, so that a long-lived worker serving many sweeps does not grow
_HELD: OrderedDict[str, tuple[Any, Any]] = OrderedDict()
HELD_SIZE = 16
#: dask: the datasets the driver shipped, token (sweep id, key) -> dataset
_INBOX: OrderedDict[tuple[str, str], Any] = OrderedDict()
_INBOX_LOCK = threading.Lock()  # held for dictionary updates only, never while preparing


class InStore:
    """A dataset in ray's object store, wrapped so that ray hands the task the reference (not
    the value): a worker process fetches it once and keeps it (`install_dataset`)."""

    def __init__(self, ref: Any):
        self.ref = ref


class Shipment:
    """A dataset sent to dask workers under a token, ``(sweep id, dataset key)``. Without
    ``data`` the task names the shipment and the worker's inbox holds it (the driver broadcast
    it with `receive_datasets`); with ``data`` the task carries it, for a worker that had not
    received it (it joined or was restarted after the broadcast)."""

    __slots__ = ("token", "data")

    def __init__(self, token: tuple[str, str], data: Any = None):
        self.token = token
        self.data = data


class NotShipped(LookupError):
    """This dask worker does not hold the shipment a task names: the driver sends it along."""


def _keep(token: tuple[str, str], data: Any) -> None:
    """Put a shipped dataset into this worker's inbox. The inbox keeps every dataset of the
    newest sweep and at most `HELD_SIZE` of older sweeps (a long-lived worker does not grow)."""
    with _INBOX_LOCK:  # the broadcast runs in the worker's event loop, tasks in its threads
        if token not in _INBOX:
            RECEIVED[token[1]] += 1
        _INBOX[token] = data
        _INBOX.move_to_end(token)
        older = [t for t in _INBOX if t[0] != token[0]]
        for t in older[:max(0, len(older) - HELD_SIZE)]:
            del _INBOX[t]


def receive_datasets(items: list[tuple[tuple[str, str], Any]]) -> tuple[str, int]:
    """Keep each ``(token, dataset)`` in this dask worker's inbox (run on every worker by the
    driver's broadcast, ``client.run``); returns (host, pid) of the worker."""
    for token, data in items:
        _keep(token, data)
    return socket.gethostname(), os.getpid()


def install_dataset(shipped: tuple[str, Any] | None) -> list[str]:
    """Put a shipped ``(key, dataset)`` into this worker's dataset cache (before each cell, so
    that the cache's eviction never sends a worker looking for a file it does not have).
    Returns the keys received now: a shipment (a dask `Shipment`, a ray object, a dataset
    passed as such) is reported the first time this process installs it, and a ray object is
    fetched only then. Raises `NotShipped` for a dask shipment this worker does not hold."""
    if shipped is None:
        return []
    key, ds = shipped
    got: list[str] = []
    with PREPARE_LOCK:  # threads of one dask worker install and prepare one at a time
        held = _HELD.get(key)
        if isinstance(ds, Shipment):
            if held is None or held[0] != ds.token:
                if ds.data is not None:
                    _keep(ds.token, ds.data)
                with _INBOX_LOCK:
                    data = _INBOX.get(ds.token)
                if data is None:
                    raise NotShipped(key)
                _HELD[key] = (ds.token, data)
                got.append(key)  # counted in RECEIVED when it reached the inbox
        elif isinstance(ds, InStore):
            if held is None or held[0] != ds.ref:
                import ray

                _HELD[key] = (ds.ref, ray.get(ds.ref))
                RECEIVED[key] += 1
                got.append(key)
        elif held is None or held[0] is not ds:
            _HELD[key] = (ds, ds)
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


def _dask_worker() -> Any:
    """The dask worker running this task, or None (a ray worker, the driver)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:
        return None


def where_running() -> tuple[str, int, int, str | None]:
    """`here` and the worker's lasting identity: a dask worker started by a nanny keeps its
    nanny's address when the nanny restarts it in a new process (None otherwise)."""
    worker = _dask_worker()
    return (*here(), getattr(worker, "nanny", None) or None)


def cluster_cell(cell: Cell, data_dirs: list[str] | None, context: dict[str, Any],
                 shipped: tuple[str, Any] | None) -> dict[str, Any]:
    """The task run on a worker: install the shipped dataset, run the cell supervised (its own
    child process), return ``{"record", "where", "received"}``: the cell's record, which
    (host, pid, thread, lasting identity) ran it and which shipments it received. A dask
    worker that does not hold the shipment returns ``{"need": key, "worker": address}``
    at once instead, and the driver sends the cell again with its data."""
    try:
        received = install_dataset(shipped)
    except NotShipped as exc:
        worker = _dask_worker()
        return {"need": exc.args[0], "where": where_running(),
                "worker": getattr(worker, "address", None)}
    record = run_cell(cell, None if shipped is not None else data_dirs, context)
    if record is None:  # the worker was interrupted: let the engine treat it as a failure
        raise RuntimeError("the cell was interrupted on its worker")
    return {"record": record, "where": where_running(), "received": received}


def received_counts() -> dict[str, int]:
    """This process's `RECEIVED` (called on workers with ``client.run``)."""
    return dict(RECEIVED)
