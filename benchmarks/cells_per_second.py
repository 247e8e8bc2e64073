"""Runner and report overhead: start-up, cells per second, report time.

Measures, each in a fresh interpreter (so imports and worker start-up are paid as a user pays
them), on a sweep of tiny cells (iris, depth-1 CART: the fit takes ~1 ms):

* ``start-up``: `treebench run` on a results directory where every cell is already done
  (nothing to run, nothing to warm): the fixed cost of a command;
* ``validate + plan``: `treebench run --dry-run` on a fresh directory: the config checked
  against the registries (which import only the learner, binarizer and dataset modules the
  config names) and expanded into cells, nothing run;
* ``run -j 1`` / ``run -j 2``: the whole sweep without the report, in cells per second;
* ``report``: `treebench report` on the finished sweep (figures included);
* ``report (unchanged)``: the same report again, when no input changed;
* ``cell loop``: the executor alone on the same cells in one warm interpreter (no start-up,
  no tables), per backend: wall cells/s and CPU milliseconds per cell (the driver and every
  process it forked), which a loaded machine disturbs far less than wall time;
* with ``--report-cells N`` (e.g. 3000): the report of a bigger sweep (3 datasets x CART at
  depths 1..4 and Top-k k=2 at depth 2, as many seeds as N needs), built once with ``-j 2``
  (``--keep DIR`` keeps it for another checkout to report on: ``--reuse DIR``).

Prints a table of medians (wall seconds, and CPU seconds of the command with every process it
forked, which a loaded machine disturbs far less); asserts nothing. Re-run:
`.venv/bin/python benchmarks/cells_per_second.py [--cells 120] [--repeats 3] [--backend loky]
[--report-cells 3000]`
(``--treebench DIR`` measures another checkout's package, e.g. before/after a change).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml


def _config(n_cells: int) -> dict:
    return {
        "name": "overhead",
        "datasets": ["iris"],
        "split": {"kind": "holdout", "seeds": list(range(n_cells))},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": 1}}],
        "limits": {"time": 60, "memory": 1000},
        "execution": {"n_jobs": 1},  # the default backend
    }


def _big_config(n_cells: int) -> dict:
    per_seed = 3 * 5  # datasets x settings
    return {
        "name": "overhead-big",
        "datasets": ["iris", "wine", "breast_cancer"],
        "split": {"kind": "holdout", "seeds": list(range(max(1, n_cells // per_seed)))},
        "binarization": {"method": "quantile", "params": {"max_splits": 3}},
        "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2, 3, 4]}},
                       {"name": "topk", "params": {"k": 2, "max_depth": 2}}],
        "limits": {"time": 60, "memory": 1000},
    }


def measure_big_report(n_cells: int, env: dict[str, str], keep: Path | None,
                       reuse: Path | None) -> dict[str, float]:
    """Time the report of a sweep of about ``n_cells`` cells (built here unless ``reuse``)."""
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        res = reuse
        if res is None:
            cfg = Path(d) / "big.yaml"
            cfg.write_text(yaml.safe_dump(_big_config(n_cells)))
            res = keep or Path(d) / "big"
            t = _cli(["run", str(cfg), "-o", str(res), "-q", "--no-report", "-j", "2"], env)
            out[f"build {n_cells} cells -j 2 (s)"] = t
        shutil.rmtree(res / "report", ignore_errors=True)
        out[f"report, {n_cells} cells (s)"] = _cli(["report", str(res)], env)
        out[f"report, {n_cells} cells, unchanged (s)"] = _cli(["report", str(res)], env)
    return out


#: CPU seconds (user + system, the command and every process it forked) of each `_cli` call,
#: by its wall time: on a shared machine, CPU time moves far less with the load than wall time
CPU: dict[float, float] = {}


_LOOP = """
import json, resource, shutil, sys, tempfile, time
from pathlib import Path
from treebench.config import load_config
from treebench.config.cells import expand
from treebench.execute.executor import run_cells
from treebench.execute.fit import warm
from treebench.execute.fold import dataset_for
cells = expand(load_config(sys.argv[1]))
warm("cart"); dataset_for(cells[0], None)
def cpu():
    a = resource.getrusage(resource.RUSAGE_SELF); b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime
res = {}
for backend, n in [("sequential", 1), ("fork", 1), ("fork", 2)]:
    out = Path(tempfile.mkdtemp())
    c0, t0 = cpu(), time.perf_counter()
    run_cells(cells, out, n_jobs=n, backend=backend, data_dirs=None, context={}, show_progress=False)
    res[f"{backend} -j {n}"] = (time.perf_counter() - t0, cpu() - c0)
    shutil.rmtree(out)
print(json.dumps(res))
"""


def measure_loop(cfg: Path, env: dict[str, str]) -> dict[str, tuple[float, float]]:
    """(wall s, CPU s) of the executor alone per backend (``sequential``: a forked child per
    cell, the path ``fork`` took before the worker pool)."""
    import json

    r = subprocess.run([sys.executable, "-c", _LOOP, str(cfg)], env=env, capture_output=True,
                       text=True, check=True, cwd=_cwd(env))
    return json.loads(r.stdout.strip().splitlines()[-1])


def _cwd(env: dict[str, str]) -> str | None:
    """``-m`` and ``-c`` put the working directory first on ``sys.path``: run from the measured
    checkout, or a checkout in the current directory would be measured instead."""
    return env.get("PYTHONPATH") or None


def _cli(args: list[str], env: dict[str, str]) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "treebench.cli", *args], check=False, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=_cwd(env))
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[wall] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall


def measure(n_cells: int, env: dict[str, str], backend: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "c.yaml"
        cfg.write_text(yaml.safe_dump(_config(n_cells)))
        for jobs in (1, 2):
            res = Path(d) / f"o{jobs}"
            out[f"run -j {jobs} (s)"] = _cli(["run", str(cfg), "-o", str(res), "-q", "--no-report",
                                             "-j", str(jobs)], env)
        if backend:
            out[f"run -j 2 --backend {backend} (s)"] = _cli(
                ["run", str(cfg), "-o", str(Path(d) / "ob"), "-q", "--no-report", "-j", "2",
                 "--backend", backend], env)
        out["validate + plan, --dry-run (s)"] = _cli(
            ["run", str(cfg), "-o", str(Path(d) / "dry"), "--dry-run"], env)
        out["start-up, nothing to run (s)"] = _cli(
            ["run", str(cfg), "-o", str(Path(d) / "o1"), "-q", "--no-report"], env)
        shutil.rmtree(Path(d) / "o1" / "report", ignore_errors=True)
        out["report (s)"] = _cli(["report", str(Path(d) / "o1")], env)
        out["report, unchanged (s)"] = _cli(["report", str(Path(d) / "o1")], env)
        out["--help (s)"] = _cli(["--help"], env)
        for key, (wall, cpu) in measure_loop(cfg, env).items():
            out[f"cell loop {key} (s)"] = wall
            CPU[wall] = cpu
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cells", type=int, default=120)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backend", default=None,
                    help="also time `-j 2` with this backend (e.g. loky beside the default)")
    ap.add_argument("--treebench", type=Path, default=None,
                    help="checkout whose treebench package to measure (default: the installed one)")
    ap.add_argument("--report-cells", type=int, default=0,
                    help="also time the report of a sweep of this many cells (e.g. 3000)")
    ap.add_argument("--keep", type=Path, default=None, help="keep the big sweep's results here")
    ap.add_argument("--reuse", type=Path, default=None,
                    help="report on this existing big sweep instead of building one")
    args = ap.parse_args()
    env = dict(os.environ)
    if args.treebench is not None:
        env["PYTHONPATH"] = str(args.treebench.resolve())
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    runs = [measure(args.cells, env, args.backend) for _ in range(args.repeats)]
    if args.report_cells:
        big = measure_big_report(args.report_cells, env, args.keep, args.reuse)
        for r in runs:
            r.update(big)  # measured once: building it is long
    print(f"{'step':38s} {'median s':>9s} {'cells/s':>9s} {'CPU s':>7s}")
    for key in runs[0]:
        med = statistics.median(r[key] for r in runs)
        cpu = statistics.median(CPU.get(r[key], float("nan")) for r in runs)
        cps = f"{args.cells / med:9.1f}" if key.startswith(("run -j", "cell loop")) \
            else f"{'':9s}"
        print(f"{key:38s} {med:9.2f} {cps} {cpu:7.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{args.cells} cells, median of {args.repeats} fresh-interpreter runs on "
          f"{os.cpu_count()} cores (shared machine: compare runs made side by side).")


if __name__ == "__main__":
    main()
