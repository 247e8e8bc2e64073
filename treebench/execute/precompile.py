"""Compile every learner's numba kernels into numba's on-disk cache, two processes at once.

A learner compiles its kernels the first time a process fits it (or calls its ``warmup``), one
kernel after the other; on a fresh install that is about seven minutes of one core for the
optimal searches. The kernels fall into two groups that share no compiled function:

* the search engine on 0/1 features (`treebench.search.engine`, one driver for
  Top-k, the GOSDT solver and DPDT's layer search) and the fits of those three learners;
* everything else: the numeric optimal search and DPDT's exact-float search
  (`treebench.search.numeric`), DPDT's dynamic programme (`search.dpdt`) and the NGI
  learners.

`main` runs each group in a process of its own, at the same time, so that a fresh machine with
two cores pays the larger group's time instead of the sum, and no kernel is compiled twice
(two processes that reach the same uncached kernel both compile it). Every group's process but
the first (the longest) runs at a lower priority (`OTHERS_NICE`): on a machine busy with other
work the longest group keeps a core. The processes only fill
the cache; every later process loads the kernels from it. With the cache filled, the command
takes the time of two interpreter starts and cache loads (about 3 s measured).

``python -m treebench.execute.precompile`` (the Makefile's ``run`` and ``test`` targets call
it first) shows, while it runs, each group's step in hand, how many of its steps are done and
the time elapsed (a rich progress display on a terminal; elsewhere a line per finished step),
then one line per group with its seconds; exit code 1 when a group failed (its error printed),
the other group's kernels are still cached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from typing import IO, Any

from treebench.registry import ALGORITHMS


def declared_groups() -> tuple[tuple[str, ...], ...]:
    """The groups of warm-up steps (``module:function``) the learners declare where they
    register (``precompile={group: functions}``, `treebench.registry.Registry.register`),
    plug-ins included; each step once, in the order the learners register them, and the
    groups by name (``0/1-search``, the longest, first: registration order depends on which
    learner a process imported first). Learners whose optional packages are missing are left
    out."""
    groups: dict[str, list[str]] = {}
    for entry in ALGORITHMS.in_order():
        if entry.available:
            for group, step in entry.precompile:
                steps = groups.setdefault(group, [])
                if step not in steps:
                    steps.append(step)
    return tuple(tuple(groups[name]) for name in sorted(groups))


def __getattr__(name: str) -> Any:
    """``GROUPS``, the groups of warm-up steps (one process each, in the order given), read
    from the learners' declarations when first asked for and kept. Reading them imports every
    learner's module (about 2.5 s with scikit-learn): a group's child process (``--steps``)
    imports only the modules of its own steps."""
    if name == "GROUPS":
        groups = declared_groups()
        globals()["GROUPS"] = groups
        return groups
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the niceness of every group's process but the first (the longest): on a machine busy with
#: other work (CI installs packages and runs tests beside the compilation) the longest group,
#: whose end is when every kernel is ready, keeps a core; the shorter ones take what is left.
#: On a machine that does nothing else the groups run as fast as before.
OTHERS_NICE = 5


def run_steps(steps: list[str], report: IO[str] | None = None) -> float:
    """Import and call each ``module:function`` of ``steps``, in order, in this process;
    returns the seconds they took. With ``report``, a line ``done <i>`` is written to it (and
    flushed) after step ``i`` (from 1): the parent process reads them as the group's progress."""
    import importlib

    t = time.perf_counter()
    for i, step in enumerate(steps, 1):
        module, _, name = step.partition(":")
        getattr(importlib.import_module(module), name)()
        if report is not None:
            print(f"done {i}", file=report, flush=True)
    return time.perf_counter() - t


def steps_done(text: str) -> int:
    """How many steps a group's child has reported done in its output ``text``."""
    return sum(1 for line in text.splitlines() if line.startswith("done "))


def step_name(step: str) -> str:
    """A step as people read it: ``topk.warmup`` for ``treebench.algorithms.topk:warmup``."""
    module, _, name = step.partition(":")
    return f"{module.rpartition('.')[2]}.{name}"


class PrecompileProgress:
    """What `precompile` shows while the groups compile: per group the step in hand, the steps
    done of all and the seconds elapsed. On a terminal (``console.is_terminal``) a rich progress
    display, one bar per group; elsewhere (a log, CI) a line per finished step, so that a cold
    run that compiles for minutes is never silent."""

    def __init__(self, groups: tuple[tuple[str, ...], ...], console: Any = None):
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.groups = groups
        self.console = console if console is not None else Console(stderr=True, soft_wrap=True)
        self.done = [0] * len(groups)
        self.t0 = time.perf_counter()
        self.bar = None
        self.console.print(f"precompile: compiling the learners' numba kernels in {len(groups)} "
                           "processes (minutes on a fresh machine; seconds once cached)")
        if self.console.is_terminal:
            self.bar = Progress(TextColumn("group {task.fields[group]}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), console=self.console)
            self.tasks = [self.bar.add_task(self.describe(i), total=len(g), group=i + 1)
                          for i, g in enumerate(groups)]
            self.bar.start()

    def describe(self, i: int) -> str:
        """Group ``i``'s step in hand (or that it is finished)."""
        steps = self.groups[i]
        if self.done[i] >= len(steps):
            return "done"
        return f"compiling {step_name(steps[self.done[i]])}"

    def update(self, i: int, done: int) -> None:
        """Group ``i`` has finished ``done`` steps."""
        before, self.done[i] = self.done[i], max(self.done[i], min(done, len(self.groups[i])))
        if self.bar is not None:
            self.bar.update(self.tasks[i], completed=self.done[i], description=self.describe(i))
            return
        secs = time.perf_counter() - self.t0
        for k in range(before, self.done[i]):  # a line per step, also when several ended at once
            self.console.print(f"precompile: group {i + 1}: {k + 1}/{len(self.groups[i])} "
                               f"steps done ({step_name(self.groups[i][k])}), "
                               f"{secs:.0f} s elapsed")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def compiled_signatures() -> dict[str, set[str]]:
    """The signatures each numba dispatcher of treebench's loaded modules holds in this process
    (compiled here or loaded from the cache), by ``module.qualname``: what a step compiled is
    the difference of two calls."""
    from numba.core.registry import CPUDispatcher

    out: dict[str, set[str]] = {}
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("treebench") and mod is not None:
            for obj in list(vars(mod).values()):
                if isinstance(obj, CPUDispatcher):
                    key = f"{obj.py_func.__module__}.{obj.py_func.__qualname__}"
                    out[key] = {str(sig) for sig in obj.signatures}
    return out


def precompile(groups: tuple[tuple[str, ...], ...], progress: PrecompileProgress | None = None
               ) -> list[tuple[int, float, str]]:
    """Run each group in a child process of its own, all at once; (exit code, seconds, error
    output) per group, in the order of ``groups``. ``progress`` is told each group's finished
    steps as the children report them."""
    t0 = time.perf_counter()
    # files, not pipes: a pipe could fill and block the child
    errs = [tempfile.TemporaryFile(mode="w+") for _ in groups]
    outs = [tempfile.NamedTemporaryFile(mode="w+") for _ in groups]
    procs = [subprocess.Popen([sys.executable, "-m", "treebench.execute.precompile",
                               *(["--nice", str(OTHERS_NICE)] if i else []), "--steps", *group],
                              stdout=out, stderr=err)
             for i, (group, out, err) in enumerate(zip(groups, outs, errs))]
    ends: dict[int, float] = {}
    try:
        while len(ends) < len(procs):  # each group's own finishing time
            for i, p in enumerate(procs):
                if i not in ends and p.poll() is not None:
                    ends[i] = time.perf_counter() - t0
                if progress is not None:
                    with open(outs[i].name) as f:
                        progress.update(i, steps_done(f.read()))
            time.sleep(0.1)
    finally:
        for p in procs:
            if p.poll() is None:  # an interrupt: no child outlives this process
                p.kill()
    out = []
    for i, p in enumerate(procs):
        errs[i].seek(0)
        out.append((p.returncode, ends[i], errs[i].read()))
        errs[i].close()
        outs[i].close()
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--nice"]:  # a group after the first: at a lower priority (`OTHERS_NICE`)
        if hasattr(os, "nice"):
            os.nice(int(args[1]))
        args = args[2:]
    if args[:1] == ["--steps"]:
        run_steps(args[1:], report=sys.stdout)
        return 0
    status = 0
    groups = sys.modules[__name__].GROUPS  # set by a caller, else declared (`__getattr__`)
    progress = PrecompileProgress(groups)
    try:
        results = precompile(groups, progress)
    finally:
        progress.close()
    for i, (code, secs, err) in enumerate(results):
        what = ", ".join(step_name(s) for s in groups[i])
        if code:
            status = 1
            print(f"precompile: group {i + 1} ({what}) failed with exit code {code}:\n{err}",
                  file=sys.stderr)
        else:
            print(f"precompile: group {i + 1} ({what}) ready after {secs:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
