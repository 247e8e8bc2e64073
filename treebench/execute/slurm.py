"""Run cells as SLURM job arrays on a cluster whose nodes share the results folder's file system.

The driver (``treebench run ... --backend slurm``, on a login node) packs the cells to run into
the tasks of one job array (``cells_per_task`` each), writes a submission folder
``<results>/slurm/<nnnn>/`` (the cells as a payload, the batch script, the tasks' logs) and
submits it with ``sbatch``. Each task runs its cells as the local ``fork`` backend does, each
under its limits, and writes each record into the results folder as it finishes
(`treebench.execute.slurm_task`); so the nodes need the results folder, treebench's Python
environment and the data on a shared file system, as every SLURM cluster has. A cell's file is
written once: a task leaves out every cell whose file changed since the submission.

Without ``--detach`` the driver follows the array (``squeue``) and shows the cells as their
files appear; with it, it submits and returns, and ``treebench status DIR`` tells queued /
running / done / failed. Rerunning the same command resumes: it follows the submissions still
queued or running and submits only cells that have no result and are in none of them.

Faults: SIGTERM (preemption, ``scancel``, the ``--signal=B:TERM@120`` sent before the time
limit) stops a task cleanly (its finished cells are kept, the running cell is not run). A
task that dies without that (node failure, the scheduler's out-of-memory kill) leaves no end
in its task file; the driver then counts a strike against the cells it was running (the first
``cpus_per_task`` of its cells without a result) with the scheduler's account of the task's
end, and submits that task's remaining cells again; a cell with `STRIKES` strikes is recorded
``crashed`` with the scheduler's reasons (``strikes.json`` keeps the count across runs).

The array respects the cluster's ``MaxArraySize`` and ``MaxJobCount`` (``scontrol show
config``): more tasks than they allow are packed into fewer, larger tasks.
"""

from __future__ import annotations

import math
import pickle
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.atomic import read_json_object, write_json
from treebench.cell import Cell
from treebench.config import SlurmSpec
from treebench.errors import UserError
from treebench.execute import slurm_jobs as sj
from treebench.execute.executor import CellProgress
from treebench.execute.lifetime import Terminated
from treebench.execute.slurm_task import PAYLOAD, file_key, read_task_files
from treebench.results.cellfile import cells_dir, read_cell
from treebench.results.rows import build_record
from treebench.results.store import write_cell

#: seconds a task is given on top of its cells' limits: interpreter, imports, warm-up, data
STARTUP_SECONDS = 300
#: a task's default request holds as many cells as fit in this many hours of their limits
TASK_HOURS = 4.0
#: seconds before its time limit that SLURM sends a task SIGTERM (``--signal=B:TERM@...``)
SIGNAL_SECONDS = 120
#: megabytes a task asks for besides its cells' ``limits.memory`` (the worker itself)
WORKER_MB = 1024
#: seconds between two looks at the array while the driver follows it
POLL_SECONDS = 2.0
#: a cell whose task dies this many times is recorded ``crashed``
STRIKES = 3
#: cells per task when the cells have no time limit and none is configured
UNTIMED_CELLS_PER_TASK = 100
SUBMISSIONS = "slurm"


@dataclass(frozen=True)
class Request:
    """What one submission asks SLURM for: ``n_tasks`` array tasks of ``cells_per_task``
    cells, each with ``time`` (SLURM's format; None: the partition's default), ``memory_mb``
    (None: the partition's default) and ``cpus`` CPUs; ``packed`` says why the cells per task
    were raised above the configured or derived number (a cluster limit), else None."""

    n_cells: int
    n_tasks: int
    cells_per_task: int
    cpus: int
    time: str | None
    memory_mb: float | None
    packed: str | None = None

    def describe(self) -> str:
        parts = [f"--cpus-per-task={self.cpus}"]
        parts.append(f"--time={self.time}" if self.time else "--time: the partition's default")
        if self.memory_mb:
            parts.append(f"--mem={math.ceil(self.memory_mb)}M")
        text = (f"1 job array of {self.n_tasks} task(s) x up to {self.cells_per_task} cell(s) "
                f"({self.n_cells} cells), each task {' '.join(parts)}")
        return text + (f"; {self.packed}" if self.packed else "")


def cell_seconds(cells: list[Cell]) -> float | None:
    """The longest a cell may take: its fit's limit plus the kill's grace period (10 %, at
    least 2 s) and its preparation's limit; None when a cell has no time limit."""
    worst = 0.0
    for c in cells:
        t = c.limits.get("time")
        if t is None:
            return None
        t = float(t)
        worst = max(worst, t + max(2.0, 0.1 * t) + float(c.limits.get("prepare") or 0.0))
    return worst


def format_time(seconds: float) -> str:
    """SLURM's ``D-HH:MM:SS`` (``HH:MM:SS`` under a day), rounded up to the minute."""
    minutes = math.ceil(seconds / 60)
    d, rest = divmod(minutes, 24 * 60)
    h, m = divmod(rest, 60)
    return (f"{d}-" if d else "") + f"{h:02d}:{m:02d}:00"


def request_for(cells: list[Cell], spec: SlurmSpec,
                limits: sj.ClusterLimits | None) -> Request:
    """The array for ``cells`` under ``spec`` and the cluster's ``limits`` (None: not known)."""
    n = len(cells)
    cpus = spec.cpus_per_task
    per_cell = cell_seconds(cells)
    if spec.cells_per_task is not None:
        cpt = spec.cells_per_task
    elif per_cell is None:
        cpt = UNTIMED_CELLS_PER_TASK
    else:
        cpt = max(1, int(TASK_HOURS * 3600 * cpus // per_cell))
    cpt = max(1, min(cpt, n))
    packed = None
    if limits is not None:
        most = max(1, min(limits.max_array_size, limits.max_job_count))
        if math.ceil(n / cpt) > most:
            cpt = math.ceil(n / most)
            packed = (f"packed into {math.ceil(n / cpt)} tasks: the cluster allows "
                      f"MaxArraySize={limits.max_array_size}, MaxJobCount={limits.max_job_count}")
    n_tasks = math.ceil(n / cpt) if n else 0
    time_req = spec.time
    if time_req is None and per_cell is not None:
        time_req = format_time(math.ceil(cpt / cpus) * per_cell + STARTUP_SECONDS)
    mem = spec.memory
    mems = [c.limits.get("memory") for c in cells]
    if mem is None and mems and all(m is not None for m in mems):
        mem = cpus * max(float(m) for m in mems) + WORKER_MB
    return Request(n, n_tasks, cpt, cpus, time_req, mem, packed)


def plan_lines(cells: list[Cell], spec: SlurmSpec) -> list[str]:
    """What ``--dry-run`` says a SLURM run of ``cells`` would submit."""
    try:
        limits: sj.ClusterLimits | None = sj.cluster_limits()
        where = f"MaxArraySize={limits.max_array_size}, MaxJobCount={limits.max_job_count}"
    except UserError as exc:  # no SLURM here: the plan says so
        limits, where = None, f"the cluster's array limits were not read: {exc}"
    req = request_for(cells, spec, limits)
    return [f"slurm: {req.describe()} ({where})"]


# ----------------------------------------------------------------------------- submissions
def submissions(out: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The submission folders of ``out`` with their ``submission.json``, oldest first."""
    root = out / SUBMISSIONS
    found = []
    for d in sorted(root.glob("[0-9]*")):
        try:
            found.append((d, read_json_object(d / "submission.json")))
        except (OSError, ValueError):
            continue  # a submission that never reached sbatch
    return found


def _script(sub: Path, req: Request, spec: SlurmSpec, name: str) -> str:
    lines = ["#!/bin/bash", f"#SBATCH --job-name={shlex.quote('treebench-' + name)}"]
    throttle = f"%{spec.max_running}" if spec.max_running else ""
    lines.append(f"#SBATCH --array=0-{req.n_tasks - 1}{throttle}")
    lines.append(f"#SBATCH --cpus-per-task={req.cpus}")
    if req.time:
        lines.append(f"#SBATCH --time={req.time}")
    if req.memory_mb:
        lines.append(f"#SBATCH --mem={math.ceil(req.memory_mb)}M")
    if spec.partition:
        lines.append(f"#SBATCH --partition={spec.partition}")
    if spec.account:
        lines.append(f"#SBATCH --account={spec.account}")
    lines.append(f"#SBATCH --output={sub / 'logs' / '%A_%a.out'}")
    lines.append("#SBATCH --open-mode=append")
    lines.append(f"#SBATCH --chdir={Path.cwd()}")
    lines.append(f"#SBATCH --signal=B:TERM@{SIGNAL_SECONDS}")
    lines += [f"#SBATCH {x}" for x in spec.sbatch]
    lines += list(spec.setup)
    python = spec.python or sys.executable
    lines.append(f"exec {shlex.quote(python)} -m treebench.execute.slurm_task "
                 f"{shlex.quote(str(sub))}")
    return "\n".join(lines) + "\n"


def submit(out: Path, cells: list[Cell], spec: SlurmSpec, *, data_dirs: list[str] | None,
           context: dict[str, Any], name: str) -> tuple[str, Request]:
    """Write a submission folder for ``cells`` and submit its array; (job id, request)."""
    req = request_for(cells, spec, sj.cluster_limits())
    root = out / SUBMISSIONS
    root.mkdir(parents=True, exist_ok=True)
    number = 1 + max([int(p.name) for p in root.glob("[0-9]*") if p.name.isdigit()] or [0])
    sub = (root / f"{number:04d}").resolve()
    (sub / "logs").mkdir(parents=True)
    ids = [c.id for c in cells]
    chunks = [ids[i:i + req.cells_per_task] for i in range(0, len(ids), req.cells_per_task)]
    payload = {"out": str(out.resolve()), "cells": cells, "chunks": chunks,
               "before": {i: file_key(out, i) for i in ids}, "context": context,
               "data_dirs": [str(Path(d).resolve()) for d in data_dirs or []] or None,
               "cpus_per_task": req.cpus}
    with open(sub / PAYLOAD, "wb") as fh:
        pickle.dump(payload, fh, protocol=pickle.HIGHEST_PROTOCOL)
    script = sub / "submit.sh"
    script.write_text(_script(sub, req, spec, name))
    job = sj.submit(str(script))
    write_json(sub / "submission.json", {"job": job, "n_tasks": req.n_tasks, "chunks": chunks,
                                         "submitted": time.time(), "request": req.describe()})
    return job, req


# ----------------------------------------------------------------------------- faults
def strikes_path(out: Path) -> Path:
    return out / SUBMISSIONS / "strikes.json"


def account_dead_tasks(out: Path, live: set[tuple[str, int]]) -> tuple[dict[str, list[str]],
                                                                         set[str]]:
    """Look at every task file without an end whose task the scheduler no longer runs: count a
    strike (with the scheduler's reason) against the cells it was running, mark the file
    looked at. Returns every cell's strikes so far and the cells without a result of the
    tasks found dead now."""
    p = strikes_path(out)
    try:
        strikes: dict[str, list[str]] = read_json_object(p) if p.is_file() else {}
    except (OSError, ValueError):
        strikes = {}
    orphaned: set[str] = set()
    changed = False
    for sub, info in submissions(out):
        before = _payload_before(sub)
        for tf, task in read_task_files(sub):
            if task.get("ended") or task.get("examined"):
                continue
            job, index = str(task.get("job")), int(task.get("task", -1))
            if (job, index) in live:
                continue
            reason = sj.task_end(job, index)
            missing = [c for c in task.get("cells") or [] if file_key(out, c) == before.get(c)]
            for c in missing[:max(1, int(task.get("workers") or 1))]:
                strikes.setdefault(c, []).append(
                    f"task {job}_{index} on {task.get('host')} died: {reason}")
            orphaned.update(missing)
            task["examined"] = True
            write_json(tf, task)
            changed = True
    if changed:
        write_json(p, strikes)
    return strikes, orphaned


def _payload_before(sub: Path) -> dict[str, Any]:
    try:
        with open(sub / PAYLOAD, "rb") as fh:
            return pickle.load(fh)["before"]
    except (OSError, ValueError, KeyError, pickle.UnpicklingError, EOFError):
        return {}


def live_tasks(out: Path) -> tuple[dict[tuple[str, int], tuple[str, str]], dict[str, str]]:
    """The queued or running tasks of ``out``'s submissions ((job, task) -> (state, reason))
    and the cells they hold (cell id -> job)."""
    subs = submissions(out)
    states = sj.task_states([info["job"] for _, info in subs]) if subs else {}
    held: dict[str, str] = {}
    for _, info in subs:
        for i, chunk in enumerate(info.get("chunks") or []):
            if (info["job"], i) in states:
                for c in chunk:
                    held[c] = info["job"]
    return states, held


# ----------------------------------------------------------------------------- the driver
@dataclass
class SlurmRun:
    """What a SLURM run submitted and what ran its cells (for the summary and the manifest)."""

    jobs: list[str] = field(default_factory=list)  # submitted by this run
    followed: list[str] = field(default_factory=list)  # submitted earlier, still live
    n_tasks: int = 0
    hosts: set[str] = field(default_factory=set)
    detached: bool = False

    @property
    def n_threads_used(self) -> int:
        return max(1, self.n_tasks)

    def describe(self) -> str:
        jobs = ", ".join(self.jobs + self.followed) or "no job"
        hosts = f" on {len(self.hosts)} node(s)" if self.hosts else ""
        return f"SLURM job(s) {jobs} ({self.n_tasks} array task(s){hosts})"

    def to_manifest(self) -> dict[str, Any]:
        return {"backend": "slurm", "jobs": self.jobs, "followed": self.followed,
                "tasks": self.n_tasks, "hosts_used": len(self.hosts),
                "detached": self.detached, "describe": self.describe()}


def run_slurm(cells: list[Cell], out: Path, *, spec: SlurmSpec, data_dirs: list[str] | None,
              context: dict[str, Any], name: str, detach: bool = False,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              show_progress: bool = True,
              on_start: Callable[[SlurmRun], None] | None = None) -> Counter:
    """Run ``cells`` (those without a result) as SLURM job arrays; returns status counts of
    the cells that finished while the driver followed them. With ``detach``, submit and
    return. Raises `Terminated` when tasks were cancelled or preempted before every cell ran
    (a rerun resumes), KeyboardInterrupt (after cancelling its jobs) on Ctrl-C."""
    run = SlurmRun(detached=detach)
    if on_start is not None:
        on_start(run)
    before = {c.id: file_key(out, c.id) for c in cells}
    by_id = {c.id: c for c in cells}
    states, held = live_tasks(out)
    strikes, _ = account_dead_tasks(out, set(states))
    todo = _crash_struck(cells, strikes, out, context, held)
    run.followed = sorted({held[c.id] for c in cells if c.id in held})
    new = [c for c in todo if c.id not in held]
    if new:
        job, req = submit(out, new, spec, data_dirs=data_dirs, context=context, name=name)
        run.jobs.append(job)
        run.n_tasks += req.n_tasks
        _say(f"submitted SLURM job {job}: {req.describe()}", show_progress)
    if run.followed:
        _say(f"following SLURM job(s) {', '.join(run.followed)} submitted earlier",
             show_progress)
    if detach:
        return Counter()
    progress = CellProgress(len(cells), show_progress)
    seen: set[str] = set()
    try:
        while True:
            _follow(out, [c.id for c in cells], before, seen, progress, on_result, run)
            strikes, orphaned = account_dead_tasks(out, set(states))
            missing = [by_id[i] for i in by_id if i not in seen]
            retry = [c for c in _crash_struck(missing, strikes, out, context, {})
                     if c.id in orphaned]
            _follow(out, [c.id for c in cells], before, seen, progress, on_result, run)
            retry = [c for c in retry if c.id not in seen]
            if retry:
                job, req = submit(out, retry, spec, data_dirs=data_dirs, context=context,
                                  name=name)
                run.jobs.append(job)
                run.n_tasks += req.n_tasks
                _say(f"{len(retry)} cell(s) of tasks that died: submitted again as SLURM job "
                     f"{job}", show_progress)
                states = {}
                continue
            break
    except KeyboardInterrupt:
        sj.cancel(run.jobs)
        raise
    finally:
        progress.close()
    left = [i for i in by_id if i not in seen]
    if left:
        _say(f"{len(left)} cell(s) were not run: their tasks were cancelled or preempted "
             f"(finished cells are saved)", show_progress)
        raise Terminated()
    return progress.counts


def _crash_struck(cells: list[Cell], strikes: dict[str, list[str]], out: Path,
                  context: dict[str, Any], held: dict[str, str]) -> list[Cell]:
    """Record ``crashed`` the cells (not held by a live task) with `STRIKES` strikes; the
    others."""
    keep = []
    for c in cells:
        got = strikes.get(c.id) or []
        if len(got) >= STRIKES and c.id not in held and file_key(out, c.id) is None:
            error = f"killed its SLURM task {len(got)} times; last: {got[-1]}"
            write_cell(out, build_record(c, context, status="crashed", error=error, runner={}))
        elif len(got) < STRIKES:
            keep.append(c)
    return keep


def _follow(out: Path, ids: list[str], before: dict[str, Any], seen: set[str],
            progress: CellProgress, on_result, run: SlurmRun) -> None:
    """Wait until no task of ``out``'s submissions is queued or running, taking each cell file
    that appears (``seen``)."""
    jobs_done = False
    while not jobs_done:
        states = sj.task_states(run.jobs + run.followed)
        jobs_done = not states
        for i in ids:
            if i in seen or file_key(out, i) == before.get(i):
                continue
            try:
                record, _ = read_cell(cells_dir(out) / f"{i}.json")
            except (OSError, ValueError):
                continue  # being replaced: next look
            seen.add(i)
            row = record["row"]
            progress.update(row)
            if on_result is not None:
                on_result(row)
        if not jobs_done:
            time.sleep(POLL_SECONDS)
    for sub, _ in submissions(out):
        for _, task in read_task_files(sub):
            if str(task.get("job")) in run.jobs + run.followed and task.get("host"):
                run.hosts.add(str(task["host"]))


def _say(text: str, enabled: bool) -> None:
    if enabled:
        print(f"treebench: {text}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- status
@dataclass
class Status:
    """`status`'s counts for a results folder: the cells of its submissions by state."""

    done: int = 0  # a result with status ok
    failed: int = 0  # a result with another status
    queued: int = 0  # no result, its task pending
    running: int = 0  # no result, its task running
    missing: int = 0  # no result and no live task: a rerun submits them
    jobs: dict[str, Counter] = field(default_factory=dict)  # job -> task states

    def lines(self, out: Path) -> list[str]:
        total = self.done + self.failed + self.queued + self.running + self.missing
        head = (f"{out}: {total} cells submitted to SLURM: {self.queued} queued, "
                f"{self.running} running, {self.done} done, {self.failed} failed, "
                f"{self.missing} not run")
        rest = [f"job {j}: " + ", ".join(f"{n} task(s) {s.lower()}" for s, n in sorted(c.items()))
                for j, c in self.jobs.items() if c]
        if self.missing:
            rest.append("run the same command again to submit the cells not run")
        return [head] + rest


def status(out: Path, statuses: dict[str, str]) -> Status:
    """The cells of ``out``'s submissions by state; ``statuses`` maps cell id to the status of
    its usable result (`treebench.results.store.existing_status`)."""
    subs = submissions(out)
    states = sj.task_states([info["job"] for _, info in subs]) if subs else {}
    st = Status()
    placed: dict[str, str] = {}
    for _, info in subs:
        job = info["job"]
        st.jobs[job] = Counter(s for (j, _), (s, _) in states.items() if j == job)
        for i, chunk in enumerate(info.get("chunks") or []):
            live = states.get((job, i))
            for c in chunk:
                if live is not None:
                    placed[c] = "running" if live[0] == "RUNNING" else "queued"
                else:
                    placed.setdefault(c, "missing")
    for c, where in placed.items():
        s = statuses.get(c)
        if s == "ok":
            st.done += 1
        elif s is not None and where == "missing":
            st.failed += 1
        elif where == "running":
            st.running += 1
        elif where == "queued":
            st.queued += 1
        else:
            st.missing += 1
    return st
