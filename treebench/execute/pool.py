"""The ``fork`` backend: a pool of long-lived cell workers with per-cell limits.

Forking a supervised child per cell costs a fork of a ~300 MB interpreter (~28 ms), more than a
tiny cell's whole fit and scoring. Here the driver forks ``n`` workers once, after it has imported, warmed every learner the cells use and loaded
their datasets (the workers share those pages), and each worker runs many cells in its own
process, each cell a `treebench.execute.cell_run.CellRun` fitted in the worker itself. The
limits stay per cell (`treebench.execute.limits`):

* **time**: the worker tells the driver when a cell's fit starts (after its warm-up and data
  preparation: ``limits.time`` counts the fit and its scoring only); the driver kills
  a worker whose cell runs past ``limits.time`` plus the grace period (10 %, at least 2 s),
  writes the cell as ``timeout`` and forks a fresh worker in its place;
* **memory**: ``limits.memory`` megabytes on top of the worker's resident set when the fit
  starts. The worker lowers its own soft ``RLIMIT_AS`` to its address space plus the limit for
  the fit (allocations beyond it raise ``MemoryError``: an ``oom`` row) and restores it after;
  the driver reads the worker's resident set every 20 ms and kills it when the cell goes over;
* **crashes**: a worker that dies (a native solver's abort or segfault) leaves its cell as a
  ``crashed`` row, and a fresh worker takes its place. A worker whose cell ran out of memory
  exits after reporting it, so no later cell inherits a damaged heap.

Peak memory per cell: the worker resets its resident-set high-water mark (``VmHWM``, through
``/proc/self/clear_refs``) when the fit starts and reads it when the cell ends, so
``peak_rss_mb`` is the worker's peak during the cell and ``cell_rss_mb`` what the cell added
on top of it, as the per-cell child of `treebench.execute.supervise` reports them.

Which worker runs which cell: a worker keeps the folds it binarized in memory
(`treebench.execute.fold`), so the driver hands it the next cell of the fold it is on while
one is left, else a cell of a fold no other worker is on (`CellQueue`). Each fold is then
binarized by one worker rather than by every worker in turn (on the quickstart, two workers
fitted threshold-guess's boosted reference 20 times for its 10 folds).

Ctrl-C: workers ignore SIGINT; the driver stops them (SIGKILL) and re-raises, so finished
cells are kept and the run resumes where it stopped. Workers die with the driver
(``PR_SET_PDEATHSIG``). Records come back to the driver, which writes every cell file.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, Pipe, wait
from typing import Any

from treebench.results.cell import Cell
from treebench.execute.cell_run import CellRun, finished_record, note_peak
from treebench.execute.lifetime import die_with_parent, stop_if_terminated
from treebench.execute.limits import Limits, exit_verdict, interrupted, kill_pid
from treebench.execute.limits import reset_peak, vm_kb
from treebench.execute.fit import warm
from treebench.execute.fold import fold_key
import treebench.metrics  # noqa: F401 - loaded once in the driver, before the workers fork


# --------------------------------------------------------------------------- in the worker
def _run_one(conn: Connection, i: int, cell: Cell, data_dirs, context) -> tuple[dict[str, Any], bool]:
    """Run cell ``i`` in this worker. Returns (record, retire)."""
    run = CellRun(cell, data_dirs, context)
    record = run.run(lambda r: _fit_here(conn, i, r))
    return record, run.retire


def _fit_here(conn: Connection, i: int, run: CellRun) -> dict[str, Any]:
    """Fit ``run``'s cell in this worker: tell the driver the fit starts (its clock for
    ``limits.time`` and its memory baseline), fit under the address-space cap, and note the
    worker's peak resident set during the cell."""
    base_kb = vm_kb(os.getpid(), "VmRSS:")
    have_peak = reset_peak()
    sys.stdout.flush()
    sys.stderr.flush()
    conn.send(("fit", i, base_kb, run.runner))  # the driver's clock for limits.time starts here
    with run.limits.address_space():
        outcome = run.fit()
    run.note_peak(vm_kb(os.getpid(), "VmHWM:") if have_peak else 0, base_kb)
    return outcome


def _worker_main(conn: Connection, cells: list[Cell], data_dirs, context) -> None:
    """Body of a forked worker: run the cells the driver sends until told to stop. Never
    returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        faulthandler.disable()  # a crashing solver is a row, not a dump on the runner's stderr
        die_with_parent()
        while True:
            try:
                i = conn.recv()
            except EOFError:
                break
            if i is None:
                break
            record, retire = _run_one(conn, i, cells[i], data_dirs, context)
            conn.send(("done", i, record, retire))
            if retire:
                break
    except MemoryError:
        code = 3
    except BaseException:  # pragma: no cover - reported by the driver as a crashed cell
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# --------------------------------------------------------------------------- in the driver
class CellQueue:
    """The cells not handed out yet (their indices), by the fold they use
    (`treebench.execute.fold.fold_key`); folds in the order of their first cell, each fold's
    cells in their order. `take` gives a worker the next cell of the fold it is on (``last``)
    while one is left, else the next cell of the first fold none of the other workers is on
    (``busy``), else the next cell of the first fold left."""

    def __init__(self, keys: list[Any]):
        self.by_key: dict[Any, deque[int]] = {}
        for i, key in enumerate(keys):
            self.by_key.setdefault(key, deque()).append(i)

    def __bool__(self) -> bool:
        return bool(self.by_key)

    def __len__(self) -> int:
        return sum(len(q) for q in self.by_key.values())

    def take(self, last: Any = None, busy: frozenset | set = frozenset()) -> tuple[int, Any]:
        """The next cell for a worker on fold ``last`` and that cell's fold. Finding a free
        fold looks at no more than ``len(busy) + 1`` folds."""
        if last is not None and last in self.by_key:
            key = last
        else:
            key = next((k for k in self.by_key if k not in busy), next(iter(self.by_key)))
        q = self.by_key[key]
        i = q.popleft()
        if not q:
            del self.by_key[key]
        return i, key


@dataclass
class _Slot:
    pid: int
    conn: Connection
    pidfd: int
    cell: int | None = None  # the cell in flight
    fold: Any = None  # the fold of the last cell it was sent (`fold_key`)
    sent_at: float = 0.0
    fit_at: float | None = None  # when its fit started (driver clock)
    base_kb: int = 0
    runner: dict[str, Any] = field(default_factory=dict)


class CellPool:
    """``n`` forked workers running ``cells``; `run` hands every record to ``take``."""

    def __init__(self, cells: list[Cell], n: int, data_dirs, context: dict[str, Any]):
        self.cells = cells
        self.n = max(1, min(n, len(cells)))
        self.data_dirs = data_dirs
        self.context = context
        self.slots: list[_Slot] = []
        self.forks = 0

    def _spawn(self) -> _Slot:
        parent, child = Pipe(duplex=True)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the worker (coverage does not follow forks)
            parent.close()
            for s in self.slots:  # the other workers' pipes are not this worker's business
                if s.pidfd >= 0:
                    s.conn.close()
                    os.close(s.pidfd)
            _worker_main(child, self.cells, self.data_dirs, self.context)
        child.close()
        self.forks += 1
        return _Slot(pid=pid, conn=parent, pidfd=os.pidfd_open(pid))

    def _record(self, slot: _Slot, status: str, error: str, rusage=None) -> dict[str, Any]:
        """The record of ``slot``'s cell, whose worker died or was killed."""
        runner = dict(slot.runner)
        if rusage is not None:
            note_peak(runner, rusage.ru_maxrss, slot.base_kb)
        return finished_record(self.cells[slot.cell], self.context, runner, slot.sent_at,
                               status, error)

    def _reap(self, slot: _Slot, kill: bool):
        if kill:
            kill_pid(slot.pid)
        try:
            _, st, ru = os.wait4(slot.pid, 0)
        except ChildProcessError:  # pragma: no cover - already reaped
            st, ru = 0, None
        slot.conn.close()
        os.close(slot.pidfd)
        slot.pidfd = -1  # closed: its number may belong to another file from now on
        return st, ru

    def run(self, take: Callable[[dict[str, Any]], None]) -> None:
        pending = CellQueue([fold_key(c) for c in self.cells])
        try:
            for _ in range(self.n):
                self.slots.append(self._spawn())
            for s in list(self.slots):
                self._send(s, pending)
            while self.slots:
                self._step(pending, take)
                stop_if_terminated()
        finally:
            for s in self.slots:
                if s.pidfd >= 0:
                    self._reap(s, kill=True)
            self.slots = []

    def _send(self, slot: _Slot, pending: CellQueue) -> None:
        if not pending:
            try:
                slot.conn.send(None)
            except OSError:
                pass
            self._reap(slot, kill=False)
            self.slots.remove(slot)
            return
        busy = {s.fold for s in self.slots if s is not slot}
        slot.cell, slot.fold = pending.take(slot.fold, busy)
        slot.sent_at = time.perf_counter()
        slot.fit_at = None
        slot.runner = {}
        slot.conn.send(slot.cell)

    def _replace(self, slot: _Slot, pending: CellQueue) -> None:
        """``slot``'s worker is gone (reaped): a fresh one takes its place if work is left."""
        idx = self.slots.index(slot)
        if pending:
            new = self._spawn()
            self.slots[idx] = new
            self._send(new, pending)
        else:
            self.slots.pop(idx)

    def _step(self, pending: CellQueue, take) -> None:
        now = time.perf_counter()
        timeout: float | None = None
        for s in self.slots:
            if s.fit_at is None or s.cell is None:
                continue
            left = Limits.of(self.cells[s.cell].limits).wait_seconds(now - s.fit_at)
            if left is not None:
                timeout = left if timeout is None else min(timeout, left)
        ready = set(wait([s.conn for s in self.slots] + [s.pidfd for s in self.slots], timeout))
        for s in list(self.slots):
            if s.conn in ready or (s.pidfd in ready and s.conn.poll()):
                self._message(s, pending, take)
            elif s.pidfd in ready:
                self._died(s, pending, take)
        self._enforce(pending, take)

    def _message(self, s: _Slot, pending: CellQueue, take) -> None:
        try:
            msg = s.conn.recv()
        except (EOFError, OSError):
            self._died(s, pending, take)
            return
        if msg[0] == "fit":
            _, _, s.base_kb, runner = msg
            s.fit_at = time.perf_counter()
            s.runner = runner
            return
        _, _, record, retire = msg
        s.cell = None
        # the worker gets its next cell before this process writes the record: writing a cell
        # file takes the driver a few milliseconds, which the worker would otherwise wait out
        if retire:  # it ran out of memory and leaves rather than run on a damaged heap
            self._reap(s, kill=False)
            self._replace(s, pending)
        else:
            self._send(s, pending)
        take(record)

    def _died(self, s: _Slot, pending: CellQueue, take) -> None:
        st, ru = self._reap(s, kill=False)
        if s.cell is not None:
            if interrupted(st):
                raise KeyboardInterrupt
            status, error = exit_verdict(st)
            take(self._record(s, status, error, ru))
            s.cell = None
        self._replace(s, pending)

    def _enforce(self, pending: CellQueue, take) -> None:
        now = time.perf_counter()
        for s in list(self.slots):
            if s.fit_at is None or s.cell is None:
                continue
            verdict = Limits.of(self.cells[s.cell].limits).verdict(now - s.fit_at, s.pid, s.base_kb)
            if verdict is None:
                continue
            if s.conn.poll():  # it finished just now: its own record wins
                self._message(s, pending, take)
                continue
            st, ru = self._reap(s, kill=True)
            take(self._record(s, *verdict, rusage=ru))
            s.cell = None
            self._replace(s, pending)


def run_pool(cells: list[Cell], n: int, data_dirs, context: dict[str, Any],
             take: Callable[[dict[str, Any]], None],
             on_warm: Callable[[str, float | None], None] | None = None) -> int:
    """Warm every learner the cells use in this process, fork ``n`` workers and run the cells;
    returns how many workers were forked (replacements included). ``on_warm(learner, None)``
    is called before each learner's warm-up and ``on_warm(learner, seconds)`` after it: the
    first run on a machine compiles the learners' kernels there (minutes), which the progress
    display says rather than showing no cell moving."""
    for alg in dict.fromkeys(c.algorithm for c in cells):
        if on_warm is not None:
            on_warm(alg, None)
        secs = warm(alg)
        if on_warm is not None:
            on_warm(alg, secs)
    pool = CellPool(cells, n, data_dirs, context)
    pool.run(take)
    return pool.forks
