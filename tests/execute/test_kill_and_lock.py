"""Killed runs leave no stuck folder: the results folder's lock (`treebench.execute.lock`),
SIGTERM handled like Ctrl-C (`treebench.execute.lifetime`), workers that die with the driver,
and temporary files of killed writers removed by the next run or report.

Every test drives `treebench` as a user would (a subprocess, or typer's runner), bounds each
wait, and stops every process it started by its pid."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.store import read_table

from runs import tiny_config

ROOT = Path(__file__).resolve().parents[2]


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, **extra}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "treebench.cli", *args]


def _start(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """A `treebench` driver in its own session, its output in files (a pipe would be held
    open by any process it leaves behind)."""
    return subprocess.Popen(_cli(*args), cwd=tmp, env=env or _env(), start_new_session=True,
                            stdout=open(tmp / "stdout.txt", "w"),  # noqa: SIM115
                            stderr=open(tmp / "stderr.txt", "w"))  # noqa: SIM115


def _wait_for(cond, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def _alive(procs: list[psutil.Process]) -> list[psutil.Process]:
    out = []
    for p in procs:
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p)
        except psutil.NoSuchProcess:
            pass
    return out


def _gone_within(procs: list[psutil.Process], seconds: float) -> list[psutil.Process]:
    """The processes of ``procs`` still running after ``seconds`` (zombies count as gone)."""
    deadline = time.monotonic() + seconds
    while _alive(procs) and time.monotonic() < deadline:
        time.sleep(0.05)
    return _alive(procs)



def _stop(drv, below, send, *, wait: float, grace: float):
    """``send`` a signal to the driver ``drv``; return its exit code and the processes of
    ``below`` still alive ``grace`` seconds later. Nothing is left running, whatever happens."""
    try:
        send()
        rc = drv.wait(timeout=wait)
        return rc, _gone_within(below, grace)
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.wait()
        _kill_all(below)

def _kill_all(procs: list[psutil.Process]) -> None:
    for p in _alive(procs):
        try:
            p.kill()
        except psutil.NoSuchProcess:
            pass


def _n_cells(out: Path) -> int:
    d = out / "cells"
    return len([p for p in d.glob("*.json") if not p.name.startswith(".")]) if d.is_dir() else 0


def _write(tmp: Path, cfg: dict) -> Path:
    p = tmp / "exp.yaml"
    p.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return p


# ----------------------------------------------------------------------------- the lock
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_run_killed_while_its_figures_draw_leaves_no_process_and_no_lock(tmp_path, sig):
    """kill -9 (or SIGTERM) while the report's forked workers draw: they die with the driver
    (before, they lived on holding the folder's lock, and every rerun exited 2 until found and
    killed)."""
    cfg = tiny_config(datasets=["iris", "wine", "breast_cancer"],
                      algorithms=[{"name": "cart", "params": {"max_depth": [1, 2, 3]}}])
    _write(tmp_path, cfg)
    out = tmp_path / "out"
    drv = _start(tmp_path, "run", "exp.yaml", "-o", "out", "-q")
    workers: list[psutil.Process] = []
    try:
        me = psutil.Process(drv.pid)
        # the report makes report/figures/ right before it forks its drawing workers
        _wait_for(lambda: drv.poll() is not None or (
            (out / "report" / "figures").is_dir() and len(me.children()) >= 2), 120,
            "the figure workers")
        assert drv.poll() is None, "the run ended before its figures were drawn"
        workers = me.children(recursive=True)
        os.kill(drv.pid, sig)
        rc = drv.wait(timeout=30)
        left = _gone_within(workers, 5.0)
        assert not left, f"figure workers outlived the killed run: {[p.pid for p in left]}"
        assert rc == (-9 if sig == signal.SIGKILL else 143), (tmp_path / "stderr.txt").read_text()
    finally:
        if drv.poll() is None:
            drv.kill()
            drv.wait()
        _kill_all(workers)
    again = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q"), cwd=tmp_path, env=_env(),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert (out / "report" / "index.html").is_file()
    assert not list((out / "report" / "figures").glob(".*.tmp"))


def boot_id() -> str:
    return Path("/proc/sys/kernel/random/boot_id").read_text().strip()


def _record(pid: int, start: int | None, command: str = "treebench run exp.yaml") -> str:
    return json.dumps({"pid": pid, "start": start, "boot": boot_id(),
                       "host": socket.gethostname(), "command": command})


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_stale_lock_of_a_dead_run_is_taken_over_with_a_note(tmp_path):
    _write(tmp_path, tiny_config())
    (tmp_path / "out").mkdir()
    dead = _dead_pid()
    (tmp_path / "out" / ".lock").write_text(_record(dead, 12345), encoding="utf-8")
    r = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q", "--no-report"), cwd=tmp_path,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "took over" in line]
    assert len(notes) == 1 and f"pid {dead}" in notes[0], r.stderr
    assert (tmp_path / "out" / ".lock").read_text() == ""  # released normally: no record


_STRAY = """
import fcntl, json, os, socket, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
stat = open("/proc/self/stat").read()
start = int(stat[stat.rfind(")") + 2:].split()[19])  # field 22: start time in ticks
boot = open("/proc/sys/kernel/random/boot_id").read().strip()
os.write(fd, json.dumps({"pid": os.getpid(), "start": start, "boot": boot,
                         "host": socket.gethostname(),
                         "command": "treebench run exp.yaml"}).encode())
child = os.fork()  # a child that keeps the lock's descriptor, as a leftover worker would
if child == 0:
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    time.sleep(120)
    os._exit(0)
print(child, flush=True)
os._exit(0)  # the owner dies; its child holds the lock on
"""


def test_leftover_processes_of_a_killed_run_holding_its_lock_are_stopped(tmp_path):
    _write(tmp_path, tiny_config())
    (tmp_path / "out").mkdir()
    made = subprocess.run([sys.executable, "-c", _STRAY, str(tmp_path / "out" / ".lock"),
                           str(ROOT)], capture_output=True, text=True, timeout=30)
    stray = psutil.Process(int(made.stdout.split()[0]))
    try:
        r = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q", "--no-report"),
                           cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        notes = [line for line in r.stderr.splitlines() if "took over" in line]
        assert len(notes) == 1 and f"pid {stray.pid}" in notes[0], r.stderr
        assert "stopped 1 leftover process" in notes[0]
        assert not _gone_within([stray], 5.0)
        assert _n_cells(tmp_path / "out") == 6
    finally:
        _kill_all([stray])


_HOLD = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from treebench import api
with api.lock_results(Path(sys.argv[1])):  # as `treebench run` takes it
    print("locked", flush=True)
    time.sleep(60)
"""


@contextmanager
def _live_run(out: Path):
    """A process holding ``out``'s lock as a running treebench does."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out), str(ROOT)],
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_a_live_run_keeps_its_lock_and_is_named(tmp_path):
    """The owner on file is alive: refused (exit 2) with its pid; nothing is stopped."""
    _write(tmp_path, tiny_config())
    with _live_run(tmp_path / "out") as holder:
        r = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q", "--no-report"),
                           cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, r.stderr
        assert f"another treebench run (pid {holder.pid}" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr and holder.poll() is None
        assert _n_cells(tmp_path / "out") == 0


def test_report_waits_for_the_run_that_writes_the_folder(tmp_path):
    """`treebench report` takes the folder's lock: it never reads tables a run is rewriting."""
    _write(tmp_path, tiny_config())
    r = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q", "--no-report"), cwd=tmp_path,
                       env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    with _live_run(tmp_path / "out") as holder:
        rep = subprocess.run(_cli("report", "out"), cwd=tmp_path, env=_env(),
                             capture_output=True, text=True, timeout=120)
        assert rep.returncode == 2, rep.stderr
        assert f"pid {holder.pid}" in rep.stderr and "then write the report" in rep.stderr
        assert not list((tmp_path / "out" / "report").iterdir())  # nothing written


# ----------------------------------------------------------------------------- SIGTERM
SLEEPY = tiny_config(
    algorithms=[{"name": "test-sleep", "params": {"seconds": [0.1, 0.2, 30]}}],
)  # 3 folds x 3 = 9 cells; the 30 s cells are still running when the signal comes


def _running(tmp_path: Path, backend: str, *extra: str) -> tuple[subprocess.Popen, list]:
    """A run on ``backend`` with two workers, once two cells are finished; returns the driver
    and every process under it then."""
    _write(tmp_path, {**SLEEPY, "execution": {"n_jobs": 2, "backend": backend}})
    drv = _start(tmp_path, "run", "exp.yaml", "-o", "out", "-q", *extra)
    try:
        _wait_for(lambda: drv.poll() is not None or _n_cells(tmp_path / "out") >= 2, 90,
                  "two finished cells")
        assert drv.poll() is None, (tmp_path / "stderr.txt").read_text()
        me = psutil.Process(drv.pid)  # (sequential: a cell's child exists while it runs)
        _wait_for(lambda: drv.poll() is not None or me.children(), 30, "a worker process")
        return drv, me.children(recursive=True)
    except BaseException:
        drv.kill()
        drv.wait()
        raise


@pytest.mark.parametrize("backend, to_group", [("fork", False), ("loky", False),
                                               ("fork", True), ("sequential", True)])
def test_sigterm_stops_a_run_like_ctrl_c_with_exit_143(tmp_path, backend, to_group):
    """What a batch scheduler sends, to the driver or to every process of the job: finished
    cells kept (the cells in flight are not recorded), tables written from them, every worker
    stopped, exit 143 (before: the driver died at once, exit -15, no tables, and loky's
    workers lived on for minutes)."""
    drv, below = _running(tmp_path, backend)
    assert below, "no worker processes"
    send = (lambda: os.killpg(drv.pid, signal.SIGTERM)) if to_group else \
        (lambda: drv.send_signal(signal.SIGTERM))
    rc, left = _stop(drv, below, send, wait=60, grace=5.0)
    err = (tmp_path / "stderr.txt").read_text()
    assert rc == 143, err
    assert "terminated (SIGTERM): finished cells are saved" in err
    assert not left, f"processes outlived the run: {[p.pid for p in left]}"
    out = tmp_path / "out"
    df = read_table(out / "results.parquet")
    assert 2 <= len(df) == _n_cells(out) < 9 and (df["status"] == "ok").all()
    again = subprocess.run(_cli("run", "exp.yaml", "-o", "out", "-q", "--no-report",
                                "--time-limit", "1"), cwd=tmp_path, env=_env(),
                           capture_output=True, text=True, timeout=120)
    assert f"ran {9 - len(df)} now" in again.stdout, again.stdout + again.stderr


def test_loky_workers_die_within_seconds_of_a_killed_driver(tmp_path):
    """kill -9 of the driver: loky's workers (fresh interpreters, which no PDEATHSIG of ours
    reaches) and their cells' children end within seconds, not after loky's 300 s idle
    timeout. The grace is 60 s, a fifth of that timeout: on a loaded machine (the suite's other
    worker running cluster tests, the SLURM tests and the reproductions beside it) a worker
    that was starting at the kill and loky's resource tracker (which waits for every worker to
    close its pipe) were once still there 5 s after it, and once 20 s after it."""
    drv, below = _running(tmp_path, "loky", "--no-report")
    assert len(below) >= 2
    _, left = _stop(drv, below, lambda: os.kill(drv.pid, signal.SIGKILL), wait=10, grace=60.0)
    assert not left, f"outlived the killed driver: {[(p.pid, p.cmdline()[-3:]) for p in left]}"


# ----------------------------------------------------------------------------- temp files
def _tmp_files(out: Path, pid: int) -> list[Path]:
    return [out / f".results.parquet.{pid}.tmp", out / f".results.csv.{pid}.tmp",
            out / "report" / "figures" / f".iris__test_accuracy_vs_max_depth.png.{pid}.tmp",
            out / "report" / "figures" / f".iris__fit_seconds_vs_max_depth.svg.{pid}.tmp",
            out / "report" / f".index.html.{pid}.tmp",
            out / "cells" / f".0123456789abcdef.json.{pid}.tmp"]


def _plant(out: Path, pid: int) -> list[Path]:
    files = _tmp_files(out, pid)
    for p in files:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"")
    return files


def test_temp_files_of_killed_writers_are_removed_by_the_next_run_and_report(tmp_path):
    """Only those whose process is gone: a live process's temp files stay (it may be a writer
    of another folder sharing a name, never of this one: the folder is locked)."""
    cfg = _write(tmp_path, tiny_config())
    out = tmp_path / "out"
    runner = CliRunner()
    args = ["run", str(cfg), "-o", str(out), "-q", "--no-report"]
    assert runner.invoke(app, args).exit_code == 0
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # (cells/ is emptied of every temp file under the lock, as before)
        dead, kept = _plant(out, _dead_pid()), _plant(out, live.pid)[:-1]
        next(p for p in (out / "cells").glob("*.json") if not p.name.startswith(".")).unlink()
        r = runner.invoke(app, args)
        assert r.exit_code == 0, r.output
        assert not [p for p in dead if p.exists()]
        assert all(p.exists() for p in kept)
        assert "removed 6 temporary file(s)" in r.stderr
        dead = _plant(out, _dead_pid())
        r = runner.invoke(app, ["report", str(out)])
        assert r.exit_code == 0, r.output
        assert not [p for p in dead if p.exists()] and all(p.exists() for p in kept)
    finally:
        live.kill()
        live.wait()


@pytest.mark.cluster
def test_sigterm_stops_a_local_ray_run_like_ctrl_c(tmp_path):
    """ray.init sets a SIGTERM handler of its own (exit at once, exit code 15, no tables);
    the run keeps SIGTERM a Ctrl-C: exit 143, tables written, ray's processes stopped."""
    pytest.importorskip("ray")
    drv, below = _running(tmp_path, "ray", "--no-report")
    rc, left = _stop(drv, below, lambda: drv.send_signal(signal.SIGTERM), wait=90, grace=20.0)
    err = (tmp_path / "stderr.txt").read_text()
    if rc == 1 and "Tried to complete task that was not pending" in err:
        # ray's core worker aborts now and then when a driver is interrupted with tasks in
        # flight; Ctrl-C (SIGINT) hits it as often (about 1 run in 6 here), with or without
        # treebench's SIGTERM handling
        pytest.xfail("ray aborted the driver on interruption (a ray check failure)")
    assert rc == 143, f"exit {rc}: {err}"
    df = read_table(tmp_path / "out" / "results.parquet")
    assert 2 <= len(df) == _n_cells(tmp_path / "out") < 9
    assert not left, f"outlived the run: {[(p.pid, p.name()) for p in left]}"


@pytest.mark.parametrize("code", [0, 1, 2])
def test_a_sigterm_swallowed_by_python_still_exits_143(monkeypatch, code):
    """SIGTERM raises `Terminated` in the main thread; where Python ignores exceptions (a
    finalizer, logging's lock release: "Exception ignored in ...") the command goes on and
    finishes. The handler has recorded the signal, so the entry point still exits 143."""
    from treebench import cli
    from treebench.execute import lifetime

    def finished_after_a_swallowed_sigterm():
        monkeypatch.setattr(lifetime, "_RECEIVED", [signal.SIGTERM])
        raise SystemExit(code)

    monkeypatch.setattr(cli, "app", finished_after_a_swallowed_sigterm)
    with pytest.raises(SystemExit) as info:
        cli.main()
    assert info.value.code == lifetime.TERMINATED


@pytest.mark.parametrize("backend", ["sequential", "fork"])
def test_a_run_whose_sigterm_was_swallowed_stops_at_the_next_cell(tmp_path, monkeypatch, backend):
    """A `Terminated` lost in a finalizer must not let the run go on through its remaining
    cells (before: a sequential run ran every cell, 30 s sleeps included, and a batch
    scheduler's stop took minutes): the cell loops check for a received SIGTERM at each cell,
    and the command exits 143 with the tables of what finished."""
    from treebench.execute import lifetime

    monkeypatch.setattr(lifetime, "_RECEIVED", [signal.SIGTERM])  # as the handler leaves it
    _write(tmp_path, tiny_config(execution={"n_jobs": 2, "backend": backend}))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "exp.yaml", "-o", "out", "-q", "--no-report"])
    assert r.exit_code == lifetime.TERMINATED, r.output
    assert _n_cells(tmp_path / "out") <= 2, "the run went on after SIGTERM"
