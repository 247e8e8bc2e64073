"""Run one cell in a forked child process with a hard wall-clock limit and a memory cap.

The warm worker (a joblib worker that has already imported everything, run the learner's
warm-up and cached the binarized fold) forks a child per cell, so a cell costs a fork, not a
fresh interpreter. The child fits and scores, writes its payload to a private temporary file in
the worker's own temporary directory and exits; the worker waits on a pidfd, enforces the
limits, and returns the cell's record (`treebench.results.rows.build_record`); the driver writes
the cell file. Every outcome becomes a row: ``ok``, ``timeout``, ``oom``, ``error`` (the fit
raised) or ``crashed`` (the child died).

Time limit (issue 8, A14): ``limits.time`` seconds count from the fork, so they cover the fit and
its scoring, never the worker's warm-up, imports or data preparation; those are reported on the
row as ``warmup_seconds`` and ``prepare_seconds``, and preparation has its own budget,
``limits.prepare`` (a cell over it is a ``timeout`` whose error says so; the fit does not run).

Memory cap: ``limits.memory`` megabytes on top of the warm worker's footprint at fork time
(imports and the loaded dataset are shared and not charged to the cell). It is enforced twice:
``RLIMIT_AS`` in the child (allocations beyond it raise ``MemoryError``) and a resident-set check
by the worker every 20 ms (the child is killed when it goes over).
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import resource
import select
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from treebench.cells import Cell

POLL_SECONDS = 0.02
#: held while a cell warms its learner, prepares its data and forks: a dask worker with several
#: threads runs several cells at once, the worker caches are not thread-safe, and a fork while
#: another thread imports or compiles could leave a lock held in the child (issue 15)
PREPARE_LOCK = threading.RLock()
_PR_SET_PDEATHSIG = 1


def _vm_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(key.encode()):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - non-Linux
        pass


def atomic_write_json(path: Path, payload: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        # json.dumps, not json.dump: dump streams through the pure-Python encoder, dumps
        # runs the C one (5-10x less CPU on a Top-k record; same text)
        fh.write(json.dumps(payload, default=str, allow_nan=True))
        # no fsync: the rename is atomic, and a killed process (SIGKILL included) loses nothing
        # the kernel already holds; only a power cut could, at a cost of ~10 ms per cell.
    os.replace(tmp, path)


def _child(cell: Cell, prep: Any, tmp: Path, mem_mb: float | None) -> None:
    """Body of the forked child. Never returns."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        faulthandler.disable()  # a crashing solver is a row, not a dump on the runner's stderr
        _die_with_parent()
        if mem_mb:
            base = _vm_kb(os.getpid(), "VmSize:") * 1024
            cap = int(base + mem_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        from joblib import parallel_config

        from treebench.execute.worker import fit_and_score

        try:
            # An estimator's own n_jobs runs on threads here: the backend inherited from a dask
            # or ray worker would send work over the parent's connections and hang the child.
            with parallel_config(backend="threading"):
                payload = fit_and_score(cell, prep)
            payload["status"] = "timeout" if payload["row"].get("timed_out") else "ok"
        except MemoryError as exc:
            payload = {"status": "oom", "error": f"MemoryError: {exc}".rstrip(": ")}
        except Exception as exc:
            payload = {
                "status": "error",
                "error": f"{type(exc).__name__}: {exc}".splitlines()[0][:500],
                "traceback": traceback.format_exc(limit=20),
            }
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(payload, default=str))  # the C encoder (see atomic_write_json)
    except MemoryError:
        code = 3
    except BaseException:  # pragma: no cover - last resort, reported as crashed
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run_cell(cell: Cell, data_dirs: list[str] | None, context: dict[str, Any]) -> dict[str, Any] | None:
    """Run ``cell`` supervised and return its record (the driver writes it), or None when the
    run was interrupted (Ctrl-C) before the cell finished."""
    import treebench.metrics  # noqa: F401 - imported once here, not in every forked child
    import treebench.tree.simplify  # noqa: F401
    from treebench.execute.worker import prepare, warm
    from treebench.results.rows import build_record

    started = time.perf_counter()
    runner: dict[str, Any] = {}

    def finish(status: str, error: str | None, measured=None, payload=None) -> dict[str, Any]:
        runner["wall_seconds"] = time.perf_counter() - started
        return build_record(cell, context, status=status, error=error, measured=measured,
                            runner=runner, payload=payload)

    try:
        with PREPARE_LOCK:
            runner["warmup_seconds"] = warm(cell.algorithm)
            t0 = time.perf_counter()
            prep = prepare(cell, data_dirs)
            runner["prepare_seconds"] = time.perf_counter() - t0
    except KeyboardInterrupt:
        return None
    except MemoryError as exc:
        return finish("oom", f"MemoryError while preparing data: {exc}")
    except Exception as exc:
        msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:500]
        return finish("error", msg, payload={"traceback": traceback.format_exc(limit=20)})

    limits = cell.limits or {}
    budget = limits.get("prepare")
    if budget and runner["prepare_seconds"] > float(budget):
        return finish("timeout", f"data preparation took {runner['prepare_seconds']:.3g} s, over "
                      f"its budget limits.prepare = {float(budget):g} s (the fit did not run)")
    time_limit = limits.get("time")
    mem_mb = limits.get("memory")
    hard = None if not time_limit else float(time_limit) + max(2.0, 0.1 * float(time_limit))
    fd, tmp_name = tempfile.mkstemp(prefix=f"treebench-{cell.id}-", suffix=".child")
    os.close(fd)
    tmp = Path(tmp_name)
    base_rss = _vm_kb(os.getpid(), "VmRSS:")
    sys.stdout.flush()
    sys.stderr.flush()
    with PREPARE_LOCK:
        forked = time.perf_counter()
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (coverage does not follow forks)
        _child(cell, prep, tmp, mem_mb)
    status, error = None, None
    measured: dict[str, Any] = {}
    payload: dict[str, Any] = {}
    try:
        status, error, rusage, exit_status = _wait(pid, forked, hard, mem_mb, base_rss)
    except KeyboardInterrupt:
        _kill(pid)
        tmp.unlink(missing_ok=True)
        return None
    if rusage is not None:
        # ru_maxrss of the child: its own peak, which includes the pages it shares with the
        # worker; cell_rss_mb is what the cell added on top of the worker at fork time
        runner["peak_rss_mb"] = rusage.ru_maxrss / 1024.0
        runner["cell_rss_mb"] = max(rusage.ru_maxrss - base_rss, 0) / 1024.0
    if status is None:  # the child exited by itself
        if exit_status == 0 and tmp.stat().st_size > 0:
            try:
                payload = json.loads(tmp.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                payload = {"status": "crashed", "error": f"unreadable child result: {exc}"}
            status = payload.pop("status")
            error = payload.pop("error", None)
            measured = payload.pop("row", {}) or {}
        elif os.WIFSIGNALED(exit_status) and os.WTERMSIG(exit_status) == signal.SIGINT:
            tmp.unlink(missing_ok=True)
            return None
        elif os.WIFEXITED(exit_status) and os.WEXITSTATUS(exit_status) == 3:
            status, error = "oom", "MemoryError in the cell process"
        else:
            status, error = "crashed", _describe_exit(exit_status)
    tmp.unlink(missing_ok=True)
    return finish(status, error, measured, payload)


def _wait(pid: int, started: float, hard: float | None, mem_mb: float | None, base_rss_kb: int):
    """Wait for the child; enforce limits. Returns (status|None, error, rusage, exit_status)."""
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            timeout = POLL_SECONDS if mem_mb else None
            if hard is not None:
                left = hard - (time.perf_counter() - started)
                if left <= 0:
                    _kill(pid)
                    _, st, ru = os.wait4(pid, 0)
                    return ("timeout", f"killed after {hard:.3g} s, over the fit's time limit "
                            f"(limits.time plus a grace period)", ru, st)
                timeout = left if timeout is None else min(timeout, left)
            ready, _, _ = select.select([pidfd], [], [], timeout)
            if ready:
                _, st, ru = os.wait4(pid, 0)
                return None, None, ru, st
            if mem_mb:
                rss = _vm_kb(pid, "VmRSS:")
                if rss and rss - base_rss_kb > mem_mb * 1024:
                    _kill(pid)
                    _, st, ru = os.wait4(pid, 0)
                    return "oom", f"killed above the {mem_mb:g} MB memory limit", ru, st
    finally:
        os.close(pidfd)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        hint = " (possibly the system's out-of-memory killer)" if sig == signal.SIGKILL else ""
        return f"the cell process died from signal {name}{hint}"
    return f"the cell process exited with code {os.WEXITSTATUS(status)} and no result"
