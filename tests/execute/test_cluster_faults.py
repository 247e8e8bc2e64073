"""A dask sweep outlives its workers: a worker killed before, while or after the datasets
reach it, a worker its nanny restarts (counted once in the summary), the last worker gone with
another joining (it gets the data with its first cell), and no worker at all (said at once,
then one sentence and exit 2 at a stated deadline).

Real processes on 127.0.0.1: a ``dask scheduler``, ``dask worker`` processes and the driver
(the CLI) as a subprocess, each worker in its own directory with no data directory; every
process started here is stopped by its pid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

pytest.importorskip("distributed")

from .test_cluster import (  # noqa: E402
    CONFIG,
    _driver,
    _worker_env,
    dask_cluster,
    start_dask_worker,
)

pytestmark = pytest.mark.cluster

#: 40 cells of 0.3 s on iris, so that a sweep lasts long enough to lose a worker in it
SLOW = {**CONFIG, "name": "faults", "split": {"kind": "holdout", "seeds": list(range(40))},
        "algorithms": [{"name": "test-sleep", "params": {"seconds": 0.3}}]}

#: the driver with a shorter wait for workers (`NO_WORKER_SECONDS`), then the CLI as typed
_SHORT_WAIT = ("import sys\n"
               "from treebench.execute import cluster\n"
               "cluster.NO_WORKER_SECONDS = float(sys.argv[1])\n"
               "from treebench.cli import main\n"
               "sys.argv = ['treebench', *sys.argv[2:]]\n"
               "main()\n")


class Driver:
    """The driver as a subprocess (its own process group), its stdout and stderr read as
    they come; as a context manager, killed on leaving unless it has exited."""

    def __init__(self, tmp: Path, cmd: list[str]):
        env = {**os.environ, "PYTHONPATH": _worker_env()["PYTHONPATH"]}
        self.proc = subprocess.Popen(cmd, cwd=tmp / "driver", env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self.readers = [threading.Thread(target=self._read, args=(s, b), daemon=True)
                        for s, b in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for r in self.readers:
            r.start()

    def __enter__(self) -> Driver:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    @staticmethod
    def _read(stream, into: list[str]) -> None:
        for line in stream:
            into.append(line)

    def said(self, text: str, timeout: float) -> bool:
        """Whether ``text`` appears on stderr within ``timeout`` seconds (False once the
        driver has exited without it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.err):
                return True
            if self.proc.poll() is not None:
                for r in self.readers:
                    r.join(timeout=5)
                return any(text in line for line in self.err)
            time.sleep(0.02)
        return False

    def finish(self, timeout: float) -> tuple[int, str, str]:
        """(exit code, stdout, stderr); the driver is killed if it runs past ``timeout``."""
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop()
            pytest.fail(f"the driver still ran after {timeout} s:\n{''.join(self.err)[-3000:]}")
        for r in self.readers:
            r.join(timeout=10)
        return self.proc.returncode, "".join(self.out), "".join(self.err)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


def _cells(tmp: Path) -> int:
    cells = tmp / "driver" / "out" / "cells"
    return len(list(cells.glob("*.json"))) if cells.exists() else 0


def _wait_cells(tmp: Path, drv: Driver, n: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _cells(tmp) < n and drv.proc.poll() is None:
        time.sleep(0.02)
    assert _cells(tmp) >= n and drv.proc.poll() is None, "".join(drv.err)[-3000:]


def _kill(proc_or_pid) -> None:
    pid = getattr(proc_or_pid, "pid", proc_or_pid)
    os.kill(pid, signal.SIGKILL)
    if hasattr(proc_or_pid, "wait"):
        proc_or_pid.wait(timeout=30)


def _all_cells_once_and_ok(tmp: Path, n: int = 40) -> None:
    import pandas as pd

    df = pd.read_csv(tmp / "driver" / "out" / "results.csv")
    assert len(df) == n and df["cell_id"].is_unique
    assert set(df["status"]) == {"ok"}, df["status"].value_counts()
    assert _cells(tmp) == n


def _received(address: str) -> dict[str, list[int]]:
    """Per worker connected now: how many times it received each dataset."""
    from distributed import Client

    from treebench.execute.cluster_worker import received_counts

    with Client(address, timeout="30s", set_as_default=False) as c:
        return {w: list(got.values()) for w, got in c.run(received_counts).items()}


def _short_wait(tmp: Path, seconds: float, *args: str, config: dict) -> list[str]:
    """The `_driver` command line with `NO_WORKER_SECONDS` set to ``seconds``."""
    cmd = _driver(tmp, *args, config=config)
    return [sys.executable, "-c", _SHORT_WAIT, str(seconds), *cmd[cmd.index("run"):]]


def _on_dask(tmp: Path, address: str, *, config: dict = SLOW,
             wait: float | None = None) -> list[str]:
    """The command line of a run of ``config`` into ``out`` on the scheduler at ``address``;
    with ``wait``, the driver waits that many seconds for a worker (`NO_WORKER_SECONDS`)."""
    args = ("-o", "out", "--backend", "dask", "--address", address)
    if wait is None:
        return _driver(tmp, *args, config=config)
    return _short_wait(tmp, wait, *args, config=config)


def _lose_a_worker(tmp: Path, cmd: list[str], victim, timeout: float) -> tuple[int, str, str]:
    """Run the driver ``cmd``, SIGKILL ``victim`` (a worker process or pid) once 3 cells are
    on disk and let the driver finish (within ``timeout`` s): (exit code, stdout, stderr)."""
    with Driver(tmp, cmd) as drv:
        _wait_cells(tmp, drv, 3)
        _kill(victim)
        return drv.finish(timeout)


@pytest.mark.parametrize("moment", [
    pytest.param("before", marks=pytest.mark.slow),
    "during",
    pytest.param("after", marks=pytest.mark.slow),
])
def test_a_worker_killed_before_while_or_after_the_data_reaches_it(tmp_path, moment):
    """Two workers; one is SIGKILLed when the driver has counted it but not shipped yet
    (before), while the driver's shipment to it hangs (during: the worker is frozen with
    SIGSTOP, the driver says it ships, then the worker is killed), or after it ran cells.
    Before (``scatter(broadcast=True)``): the run stopped at once with exit 2 blaming a lost
    connection to the scheduler (during), or with distributed's ``KeyError: 'tcp://...'``
    traceback (before). Now every cell runs once, the survivor received the dataset once,
    exit 0, no traceback."""
    with dask_cluster(tmp_path) as (address, workers, dirs):
        victim = workers[0]
        if moment == "during":
            os.kill(victim.pid, signal.SIGSTOP)
        with Driver(tmp_path, _on_dask(tmp_path, address)) as drv:
            if moment == "before":
                assert drv.said("running on dask scheduler", 120), "".join(drv.err)
            elif moment == "during":
                assert drv.said("shipping 1 dataset to the dask workers", 120), "".join(drv.err)
                time.sleep(1.0)  # the shipment has started; the frozen worker cannot take it
            else:
                _wait_cells(tmp_path, drv, 3)
            _kill(victim)
            code, out, err = drv.finish(240)
        received = _received(address)
    assert code == 0, err
    assert "Traceback" not in err, err
    _all_cells_once_and_ok(tmp_path)
    assert list(received.values()) == [[1]], received  # the survivor, once
    used = "2 dask workers (2 threads)" if moment == "after" else "1 dask worker (1 thread)"
    assert f"ran 40 now on {used} at {address}." in out, out


@pytest.mark.slow
def test_a_worker_restarted_by_its_nanny_counts_once(tmp_path):
    """Two workers under nannies; one worker process is SIGKILLed mid-sweep and its nanny
    starts a new one, which gets the dataset with its first cell and runs cells. The summary
    and manifest count 2 workers and 2 threads and 1 restart (they said 3 workers and 3
    threads: the new process was counted as a third worker)."""
    from distributed import Client

    cfg = {**SLOW, "algorithms": [{"name": "test-sleep", "params": {"seconds": 1.0}}]}
    with dask_cluster(tmp_path, nanny=True) as (address, workers, dirs):
        with Client(address, timeout="30s", set_as_default=False) as c:
            pids = sorted(c.run(os.getpid).values())
        code, out, err = _lose_a_worker(tmp_path, _on_dask(tmp_path, address, config=cfg),
                                        pids[0], 240)
        received = _received(address)
    assert code == 0, err
    _all_cells_once_and_ok(tmp_path)
    assert f"ran 40 now on 2 dask workers (2 threads, 1 restart) at {address}." in out, out
    man = json.loads((tmp_path / "driver" / "out" / "manifest.json").read_text(encoding="utf-8"))
    got = man["cluster"]
    assert (got["workers_used"], got["threads_used"], got["worker_restarts"]) == (2, 2, 1), got
    assert man["n_jobs_used"] == 2
    # the survivor by the broadcast, the restarted process with its first cell: once each
    assert sorted(received.values()) == [[1], [1]], received


def test_no_worker_at_the_start_is_said_then_the_run_stops_at_the_deadline(tmp_path):
    """A scheduler without workers: the driver says it waits and for how long, then stops with
    one sentence and exit 2 (it waited 60 s, unannounced, and then blamed a lost connection)."""
    with dask_cluster(tmp_path, n_workers=0) as (address, workers, dirs):
        started = time.monotonic()
        with Driver(tmp_path, _on_dask(tmp_path, address, wait=4)) as drv:
            code, out, err = drv.finish(120)
        took = time.monotonic() - started
    assert code == 2, err
    assert (f"no dask worker is connected to the scheduler at {address}; waiting up to 4 s "
            f"for one") in err, err
    assert (f"no dask worker connected to the scheduler at {address} within 4 s; start workers "
            f"(`dask worker {address}`) and run the same command again.") in err, err
    assert "Traceback" not in err and "lost the connection" not in err, err
    assert took < 60
    assert _cells(tmp_path) == 0


def test_the_last_worker_dies_the_run_waits_then_stops_keeping_its_cells(tmp_path):
    """The only worker is SIGKILLed mid-sweep and none comes: the driver says it waits and for
    how long, then cancels the cells and stops with one sentence, exit 2, the finished cells
    on disk. Before: the dataset's only copy died with the worker, dask cancelled the cells
    that needed it, and the run blamed a lost connection to the scheduler."""
    with dask_cluster(tmp_path, n_workers=1) as (address, workers, dirs):
        code, out, err = _lose_a_worker(tmp_path, _on_dask(tmp_path, address, wait=4),
                                        workers[0], 120)
    assert code == 2, err
    assert (f"no dask worker is connected to the scheduler at {address}; waiting up to 4 s "
            f"for one") in err, err
    assert (f"no dask worker was connected to the scheduler at {address} for 4 s; finished "
            f"cells are saved, start workers (`dask worker {address}`) and run the same "
            f"command again to resume.") in err, err
    assert "Traceback" not in err, err
    assert 3 <= _cells(tmp_path) < 40
    assert not list((tmp_path / "driver" / "out" / "cells").glob(".*.tmp"))


@pytest.mark.slow
def test_the_last_worker_dies_and_a_new_one_joins_and_finishes_the_sweep(tmp_path):
    """The only worker is SIGKILLed mid-sweep; while the driver waits (said on the console) a
    new worker joins: it receives the dataset with its first cell, once, and runs the rest;
    every cell once, exit 0 (before, the run stopped as in the test above)."""
    with dask_cluster(tmp_path, n_workers=1) as (address, workers, dirs):
        with Driver(tmp_path, _on_dask(tmp_path, address, wait=90)) as drv:
            _wait_cells(tmp_path, drv, 3)
            _kill(workers[0])
            assert drv.said("no dask worker is connected to the scheduler", 60), \
                "".join(drv.err)
            workers.append(start_dask_worker(address, tmp_path / "late"))
            code, out, err = drv.finish(240)
        received = _received(address)
    assert code == 0, err
    assert f"1 dask worker connected to {address} again; the sweep goes on" in err, err
    _all_cells_once_and_ok(tmp_path)
    assert list(received.values()) == [[1]], received
    assert f"ran 40 now on 2 dask workers (2 threads) at {address}." in out, out
