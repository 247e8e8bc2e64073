"""Run one cell with its fit in a forked child process (the joblib and cluster backends).

The warm worker (a joblib or cluster worker that has already imported everything, run the
learner's warm-up and cached the binarized fold) runs the cell's `CellRun` up to the fit and
forks a child for the fit, so a cell costs a fork, not a fresh interpreter. The child fits and
scores under its address-space cap, writes its outcome to a private temporary file and exits;
the worker waits on a pidfd, applies the cell's `Limits` from outside (time from the fork,
resident set every 20 ms) and returns the cell's record; the driver writes the cell file.
``ru_maxrss`` of the child is the cell's peak memory.

`PREPARE_LOCK` serialises the warm-up, the preparation and the fork: a dask worker with several
threads runs several cells at once, the process's caches are not thread-safe, and a fork while
another thread imports or compiles could leave a lock held in the child.
"""

from __future__ import annotations

import faulthandler
import json
import os
import select
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from treebench.results.cell import Cell
from treebench.execute.cell_run import CellRun
from treebench.execute.lifetime import die_with_parent, stop_if_terminated
from treebench.execute.limits import Limits, exit_verdict, interrupted, kill_pid
from treebench.execute.limits import vm_kb
import treebench.metrics  # noqa: F401 - loaded once here, not in every forked child
import treebench.tree.simplify  # noqa: F401

#: held while a cell warms its learner, prepares its data and forks (see the module's text)
PREPARE_LOCK = threading.RLock()


def run_cell(cell: Cell, data_dirs: list[str] | None, context: dict[str, Any]) -> dict[str, Any] | None:
    """Run ``cell`` supervised and return its record (the driver writes it), or None when the
    run was interrupted (Ctrl-C) before the cell finished."""
    return CellRun(cell, data_dirs, context).run(_fit_in_child, lock=PREPARE_LOCK)


def _fit_in_child(run: CellRun) -> dict[str, Any] | None:
    """Fork a child that fits ``run``'s cell; wait for it under the cell's limits. Returns the
    outcome (as `CellRun.fit` returns it), or None when interrupted."""
    fd, tmp_name = tempfile.mkstemp(prefix=f"treebench-{run.cell.id}-", suffix=".child")
    os.close(fd)
    tmp = Path(tmp_name)
    base_rss = vm_kb(os.getpid(), "VmRSS:")
    sys.stdout.flush()
    sys.stderr.flush()
    with PREPARE_LOCK:
        forked = time.perf_counter()
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (coverage does not follow forks)
        _child(run, tmp)
    try:
        verdict, rusage, exit_status = _wait(pid, forked, run.limits, base_rss)
    except KeyboardInterrupt:
        kill_pid(pid)
        tmp.unlink(missing_ok=True)
        return None
    if rusage is not None:
        # ru_maxrss of the child: its own peak, which includes the pages it shares with the
        # worker; cell_rss_mb is what the cell added on top of the worker at fork time
        run.note_peak(rusage.ru_maxrss, base_rss)
    try:
        if verdict is not None:
            return {"status": verdict[0], "error": verdict[1]}
        if exit_status == 0 and tmp.stat().st_size > 0:
            return _read_outcome(tmp)
        if interrupted(exit_status):
            return None
        status, error = exit_verdict(exit_status)
        return {"status": status, "error": error}
    finally:
        tmp.unlink(missing_ok=True)


def _read_outcome(tmp: Path) -> dict[str, Any]:
    try:
        return json.loads(tmp.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {"status": "crashed", "error": f"unreadable child result: {exc}"}


def _child(run: CellRun, tmp: Path) -> None:
    """Body of the forked child. Never returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        faulthandler.disable()  # a crashing solver is a row, not a dump on the runner's stderr
        die_with_parent()
        with run.limits.address_space():
            outcome = run.fit()
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(outcome))  # json.dumps runs the C encoder
    except MemoryError:
        code = 3
    except BaseException:  # pragma: no cover - last resort, reported as crashed
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, started: float, limits: Limits, base_rss_kb: int):
    """Wait for the child, killing it when it goes over ``limits``. Returns
    ((status, error) of the kill or None, rusage, exit status)."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            elapsed = time.perf_counter() - started
            verdict = limits.verdict(elapsed, pid, base_rss_kb)
            if verdict is not None:
                kill_pid(pid)
                _, st, ru = os.wait4(pid, 0)
                return verdict, ru, st
            ready, _, _ = select.select([pidfd], [], [], limits.wait_seconds(elapsed))
            stop_if_terminated()
            if ready:
                _, st, ru = os.wait4(pid, 0)
                return None, ru, st
    finally:
        os.close(pidfd)
