"""Compile every learner's numba kernels into numba's on-disk cache, two processes at once.

A learner compiles its kernels the first time a process fits it (or calls its ``warmup``), one
kernel after the other; on a fresh install that is about seven minutes of one core for the
optimal searches. The kernels fall into two groups that share no compiled function:

* the search engine on 0/1 features (`treebench.algorithms._search_engine`, one driver for
  Top-k, the GOSDT solver and DPDT's layer search) and the fits of those three learners;
* everything else: the numeric optimal search and DPDT's exact-float search
  (`treebench.search.numeric`), DPDT's dynamic programme (`_dpdt_kernels`) and the NGI
  learners.

`main` runs each group in a process of its own, at the same time, so that a fresh machine with
two cores pays the larger group's time instead of the sum, and no kernel is compiled twice
(two processes that reach the same uncached kernel both compile it). The processes only fill
the cache; every later process loads the kernels from it. With the cache filled, the command
takes the time of two interpreter starts and cache loads (about 3 s measured).

``python -m treebench.execute.precompile`` (the Makefile's ``run`` and ``test`` targets call
it first) prints one line per group with its seconds; exit code 1 when a group failed (its
error printed), the other group's kernels are still cached.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time

#: the groups of warm-up steps (``module:function``), one process each, in the order given
GROUPS: tuple[tuple[str, ...], ...] = (
    (
        "treebench.algorithms._dpdt_layer_fit:warmup_kernels",
        "treebench.algorithms.topk:warmup",
        "treebench.algorithms.gosdt:warmup",
    ),
    (
        "treebench.search.numeric:warmup_both",
        "treebench.algorithms.dpdt:warmup_dp_kernels",
        "treebench.algorithms.ngi:warmup",
    ),
)


def run_steps(steps: list[str]) -> float:
    """Import and call each ``module:function`` of ``steps``, in order, in this process;
    returns the seconds they took."""
    import importlib

    t = time.perf_counter()
    for step in steps:
        module, _, name = step.partition(":")
        getattr(importlib.import_module(module), name)()
    return time.perf_counter() - t


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


def precompile(groups: tuple[tuple[str, ...], ...]) -> list[tuple[int, float, str]]:
    """Run each group in a child process of its own, all at once; (exit code, seconds, error
    output) per group, in the order of ``groups``."""
    t0 = time.perf_counter()
    errs = [tempfile.TemporaryFile(mode="w+") for _ in groups]  # a pipe could fill and block
    procs = [subprocess.Popen([sys.executable, "-m", "treebench.execute.precompile", "--steps",
                               *group], stdout=subprocess.DEVNULL, stderr=err)
             for group, err in zip(groups, errs)]
    ends: dict[int, float] = {}
    while len(ends) < len(procs):  # each group's own finishing time
        for i, p in enumerate(procs):
            if i not in ends and p.poll() is not None:
                ends[i] = time.perf_counter() - t0
        time.sleep(0.05)
    out = []
    for i, p in enumerate(procs):
        errs[i].seek(0)
        out.append((p.returncode, ends[i], errs[i].read()))
        errs[i].close()
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--steps"]:
        run_steps(args[1:])
        return 0
    status = 0
    for i, (code, secs, err) in enumerate(precompile(GROUPS)):
        what = ", ".join(s.rpartition(".")[2] for s in GROUPS[i])
        if code:
            status = 1
            print(f"precompile: group {i + 1} ({what}) failed with exit code {code}:\n{err}",
                  file=sys.stderr)
        else:
            print(f"precompile: group {i + 1} ({what}) ready after {secs:.1f} s")
    return status


if __name__ == "__main__":
    sys.exit(main())
