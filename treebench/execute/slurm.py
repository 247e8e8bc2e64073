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

import pickle
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.utils.atomic import read_json_object, write_json
from treebench.results.cell import Cell
from treebench.config import SlurmSpec
from treebench.execute import slurm_jobs as sj
from treebench.execute.executor import CellProgress
from treebench.execute.lifetime import Terminated
from treebench.execute.slurm_submit import SUBMISSIONS, Request, submissions, submit
from treebench.execute.slurm_task import PAYLOAD, file_key, read_task_files
from treebench.results.cellfile import cells_dir, read_cell
from treebench.results.rows import build_record
from treebench.results.store import write_cell

#: seconds between two looks at the array while the driver follows it
POLL_SECONDS = 2.0
#: a cell whose task dies this many times is recorded ``crashed``
STRIKES = 3


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
              context: dict[str, Any], detach: bool = False,
              on_result: Callable[[dict[str, Any]], None] | None = None,
              show_progress: bool = True,
              on_start: Callable[[SlurmRun], None] | None = None,
              planned_ns: int = 0) -> Counter:
    """Run ``cells`` (those without a result) as SLURM job arrays; returns status counts of
    the cells that finished while the driver followed them. With ``detach``, submit and
    return; the jobs are named after ``context["experiment"]``. Raises `Terminated` when tasks
    were cancelled or preempted before every cell ran (a rerun resumes), KeyboardInterrupt
    (after cancelling its jobs) on Ctrl-C. ``planned_ns`` is when the caller read the cells'
    statuses (`time.time_ns`): a cell file modified since is a result of this run's cells,
    even when no task of this run is seen writing it."""
    run = SlurmRun(detached=detach)
    if on_start is not None:
        on_start(run)
    by_id = {c.id: c for c in cells}
    states, held = live_tasks(out)
    before = {c.id: _key_at_planning(file_key(out, c.id), planned_ns) for c in cells}
    strikes, _ = account_dead_tasks(out, set(states))
    again = [c.id for c in cells if len(strikes.get(c.id) or []) >= STRIKES
             and file_key(out, c.id) is not None]  # recorded crashed, asked for again (--retry)
    if again:
        strikes = {k: v for k, v in strikes.items() if k not in again}
        write_json(strikes_path(out), strikes)
    todo = _crash_struck(cells, strikes, out, context, held)
    run.followed = sorted({held[c.id] for c in cells if c.id in held})
    new = [c for c in todo if c.id not in held]
    if new:
        job, req = _submit(run, out, new, spec, data_dirs, context)
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
            strikes, orphaned = account_dead_tasks(out, set(live_tasks(out)[0]))
            missing = [by_id[i] for i in by_id if i not in seen]
            retry = [c for c in _crash_struck(missing, strikes, out, context, {})
                     if c.id in orphaned]
            _follow(out, [c.id for c in cells], before, seen, progress, on_result, run)
            retry = [c for c in retry if c.id not in seen]
            if retry:
                job, _ = _submit(run, out, retry, spec, data_dirs, context)
                _say(f"{len(retry)} cell(s) of tasks that died: submitted again as SLURM job "
                     f"{job}", show_progress)
                continue
            break
    except KeyboardInterrupt:
        sj.cancel(run.jobs)
        raise
    finally:
        progress.close()
    left = [i for i in by_id if i not in seen]
    if left:
        _say(f"{len(left)} cell(s) were not run: their tasks were cancelled or preempted, or "
             f"ended before treebench started in them (their logs: {out / SUBMISSIONS}/*/logs/); "
             f"finished cells are saved", show_progress)
        raise Terminated()
    return progress.counts


#: how far a file's modification time may lag the clock that `planned_ns` reads: the kernel
#: stamps files from a coarse clock (one scheduler tick, a few ms, behind `time.time_ns`), so a
#: file written just after the planning may carry a time just before it
MTIME_LAG_NS = 50_000_000


def _key_at_planning(key: list[int] | None, planned_ns: int) -> list[int] | None:
    """The key `_follow` compares a cell file's `treebench.utils.atomic.stat_key` ``key`` (read now)
    with: None when the file was modified at or after ``planned_ns`` less `MTIME_LAG_NS`
    (``planned_ns`` 0: never), by a task of a submission still running then, so it is a result
    of this run; else ``key``, so the file counts once it changes. From one status read of the
    file: a second could see a file written in between and take it for an earlier one."""
    if key is not None and planned_ns and key[2] >= planned_ns - MTIME_LAG_NS:  # st_mtime_ns
        return None
    return key


def _submit(run: SlurmRun, out: Path, cells: list[Cell], spec: SlurmSpec,
            data_dirs: list[str] | None, context: dict[str, Any]) -> tuple[str, Request]:
    """Submit ``cells`` as one job array named after ``context["experiment"]`` and count it
    in ``run``; (job id, its request)."""
    job, req = submit(out, cells, spec, data_dirs=data_dirs, context=context,
                      name=str(context["experiment"]))
    run.jobs.append(job)
    run.n_tasks += req.n_tasks
    return job, req


def _crash_struck(cells: list[Cell], strikes: dict[str, list[str]], out: Path,
                  context: dict[str, Any], held: dict[str, str]) -> list[Cell]:
    """Record ``crashed`` the cells (not held by a live task) with `STRIKES` strikes; the
    others."""
    keep = []
    for c in cells:
        got = strikes.get(c.id) or []
        if len(got) >= STRIKES and c.id not in held:
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
