"""The runner's own cost: where a sweep of small cells spends its time, and before/after tables.

Three grids of small CART cells (no numba, so nothing compiles):

* ``tiny``: 120 cells, CART depth 1-3 x gini/entropy on iris and wine, 10 holdout seeds (a fit
  takes about 1 ms);
* ``10ms``: 120 cells of about 10 ms each (CART on digits, depths 6-8 x 2 criteria, 20 seeds), for
  the speed-up of a second worker;
* ``3000``: 3,000 tiny cells (iris, wine, breast_cancer x CART depths 1-5 x 2 criteria x 100
  seeds), for the cost per cell at scale and the report of a big table.

For each checkout given (``--checkout NAME=DIR``; the default measures this one), in rounds that
alternate the checkouts, each command in a fresh interpreter as a user runs it: ``run -j 1`` and
``run -j 2`` without the report, the first report, the report again unchanged. Then, for this
checkout only, a breakdown of one ``run -j 2`` and one report of each grid, profiled in the
driver by phase (planning, data checks, manifest, warm-up, waiting for workers, writing cell
files, table builds, report parts) with the workers' own time per cell read from the rows
(preparation, fit, scoring and the rest of the cell), and the per-cell overhead: (run wall -
the sum of the cells' worker wall / workers) / cells.

Then the floors: fresh interpreters importing only the libraries every run of these grids needs
(scikit-learn's trees; pandas and matplotlib's Agg for a report), and the CPU of the cheapest
figure matplotlib draws at the report's size; from them the bounds no runner can beat here: the
cells per second such an import alone allows, the ``-j 2 / -j 1`` speed-up when that import
does not divide among workers and everything else halves, and the first report when its
figures cost no more than the cheapest one. Prints tables (medians over the rounds, with
min-max); asserts nothing. Re-run:
`.venv/bin/python benchmarks/runner_overhead.py --rounds 3 --checkout before=../before
--checkout now=.` (a checkout is a work tree whose ``treebench`` package is measured, e.g. one
made with `git worktree add ../before c491fba` beside this repository).
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[1]

GRIDS = {
    "tiny": {
        "name": "tiny", "datasets": ["iris", "wine"],
        "split": {"kind": "holdout", "test_size": 0.3, "seeds": list(range(10))},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2, 3],
                                                   "criterion": ["gini", "entropy"]}}],
    },
    "10ms": {
        "name": "tenms", "datasets": ["digits"],
        "split": {"kind": "holdout", "test_size": 0.3, "seeds": list(range(20))},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": [6, 7, 8],
                                                   "criterion": ["gini", "entropy"]}}],
    },
    "3000": {
        "name": "big", "datasets": ["iris", "wine", "breast_cancer"],
        "split": {"kind": "holdout", "test_size": 0.3, "seeds": list(range(100))},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2, 3, 4, 5],
                                                   "criterion": ["gini", "entropy"]}}],
    },
}
N_CELLS = {"tiny": 120, "10ms": 120, "3000": 3000}

#: driver functions whose cumulative time is a phase of the breakdown (module path, function)
PHASES = [
    ("start-up and config", None),
    ("planning (expansion, fingerprints, statuses)", ("treebench/api.py", "plan")),
    ("data checks before the run", ("treebench/api.py", "preflight_datasets")),
    ("manifest", ("treebench/api.py", "write_manifest")),
    ("warm-up of the learners", ("treebench/execute/fit.py", "warm")),
    ("waiting for workers", ("~", "<method 'poll' of 'select.poll' objects>")),
    ("writing cell files", ("treebench/results/store.py", "write_cell")),
    ("progress display", ("treebench/execute/executor.py", "update")),
    ("scan of the cell files", ("treebench/results/index.py", "scan")),
    ("table build and write", ("treebench/results/store.py", "refresh_tables")),
    ("report", ("treebench/api.py", "write_report")),
]


def _env(checkout: Path) -> dict[str, str]:
    """The environment of a measured command: ``checkout`` first on the path, and bytecode
    written and read as a user's interpreter does (a shell that sets PYTHONDONTWRITEBYTECODE
    makes every command compile the modules that have no cached bytecode: 0.2-0.3 s each)."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _cli(args: list[str], checkout: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "treebench.cli", *args], check=True,
                   env=_env(checkout), cwd=checkout, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


#: fresh-interpreter imports that bound a whole command from below, whatever the runner does:
#: a CART cell cannot finish before some process has imported scikit-learn's trees, and a first
#: report draws its figures with matplotlib's Agg backend and reads the table with pandas
FLOORS = {
    "import sklearn.tree (any process fitting CART)": "import sklearn.tree",
    "import pandas + sklearn.tree": "import pandas, sklearn.tree",
    "import pandas + matplotlib Agg (a report's figures)":
        "import pandas, matplotlib.figure, matplotlib.backends.backend_agg",
}


#: figures drawn by the first report, by (grid, checkout), as `rounds` saw them
FIGURES: dict[tuple[str, str], int] = {}

#: the CPU seconds of the cheapest figure a report could draw with matplotlib at the report's
#: size and resolution (four short lines with markers, axis labels, a title, a legend, no
#: layout engine, saved as PNG), per figure, after one warm-up figure in the same process
MINIMAL_FIGURE = """
import io, time
import matplotlib
matplotlib.use("Agg")
from matplotlib.figure import Figure
from treebench.report.figures import DPI, FIGSIZE
def one():
    fig = Figure(figsize=FIGSIZE, dpi=DPI)
    ax = fig.add_subplot()
    for k in range(4):
        ax.plot([1, 2, 3], [0.9, 0.92 - 0.01 * k, 0.95], marker="o", label=f"cart {k}")
    ax.set_xlabel("max_depth"); ax.set_ylabel("test accuracy"); ax.set_title("iris")
    ax.legend()
    fig.savefig(io.BytesIO(), format="png")
one()
t = time.process_time()
for _ in range(10):
    one()
print((time.process_time() - t) / 10)
"""


def minimal_figure_seconds(n_rounds: int) -> list[float]:
    """`MINIMAL_FIGURE`'s CPU seconds per figure in a fresh interpreter, ``n_rounds`` times."""
    return [float(subprocess.run([sys.executable, "-c", MINIMAL_FIGURE], check=True,
                                 env=_env(HERE), cwd=HERE, capture_output=True,
                                 text=True).stdout.split()[-1]) for _ in range(n_rounds)]


def print_bounds(times: dict[tuple[str, str, str], list[float]], bounds: dict[str, list[float]],
                 figure_cpu: list[float], grids: list[str], name: str) -> None:
    """What no runner can beat on this machine, from the floors: cells per second (the
    import of scikit-learn's trees), the ``-j 2 / -j 1`` speed-up (that import does not
    divide among workers, the rest at best halves: ``T1 / (S + (T1 - S) / 2)`` with ``T1``
    the measured ``-j 1`` wall), and the first report (its imports, then its figures at the
    minimal figure's CPU each on two drawing processes)."""
    cart = statistics.median(bounds["import sklearn.tree (any process fitting CART)"])
    both = statistics.median(bounds["import pandas + sklearn.tree"])
    plot = statistics.median(bounds["import pandas + matplotlib Agg (a report's figures)"])
    fig = statistics.median(figure_cpu)
    print(f"  a minimal matplotlib figure of the report's size, PNG, CPU per figure "
          f"{fig:6.3f} s [{min(figure_cpu):.3f}-{max(figure_cpu):.3f}]")
    cores = min(2, os.cpu_count() or 1)
    for grid in grids:
        t1 = statistics.median(times[(grid, "run -j 1", name)])
        n_fig = FIGURES.get((grid, name), 0)
        print(f"  {grid}: no run of its {N_CELLS[grid]} CART cells can end before that "
              f"import: at most {N_CELLS[grid] / cart:.0f} cells/s whatever the runner does; "
              f"-j 2 / -j 1 at most {t1 / (both + (t1 - both) / cores):.2f}x with a perfect "
              f"second worker; a first report of its {n_fig} figures at least "
              f"{plot + n_fig * fig / cores:.2f} s")


def floors(n_rounds: int) -> dict[str, list[float]]:
    """Wall seconds of each `FLOORS` import in a fresh interpreter, ``n_rounds`` times."""
    out: dict[str, list[float]] = {}
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for _ in range(n_rounds):
        for label, code in FLOORS.items():
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            out.setdefault(label, []).append(time.perf_counter() - t0)
    return out


def rounds(checkouts: dict[str, Path], grids: list[str], n_rounds: int,
           work: Path) -> dict[tuple[str, str, str], list[float]]:
    """Wall seconds by (grid, step, checkout), checkouts alternating within each round."""
    out: dict[tuple[str, str, str], list[float]] = {}
    for co in checkouts.values():  # cached bytecode for every checkout before any timing
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(co / "treebench")],
                       check=True, env=_env(co), stdout=subprocess.DEVNULL)
    for r in range(n_rounds):
        order = list(checkouts.items())
        if r % 2:
            order.reverse()
        for grid in grids:
            cfg = work / f"{grid}.yaml"
            for name, co in order:
                res = work / f"{grid}-{name}-{r}"
                for jobs in (1, 2):
                    shutil.rmtree(res, ignore_errors=True)
                    t = _cli(["run", str(cfg), "-o", str(res), "-q", "--no-report", "-j",
                              str(jobs)], co)
                    out.setdefault((grid, f"run -j {jobs}", name), []).append(t)
                t = _cli(["report", str(res)], co)
                out.setdefault((grid, "report, first", name), []).append(t)
                FIGURES[(grid, name)] = len(list((res / "report" / "figures").glob("*.png")))
                t = _cli(["report", str(res)], co)
                out.setdefault((grid, "report, unchanged", name), []).append(t)
                shutil.rmtree(res, ignore_errors=True)
    return out


#: runs one `run` in a fresh interpreter and prints, as JSON, when its phases ended: the
#: driver's own clock around `run_experiment` and around each finished cell's hand-over
TIMELINE = """
import json, sys, time
t0 = time.perf_counter()
from treebench import api
from treebench.execute import executor
stamps = []
take = executor._take
def timed(rec, *a, **k):
    t = time.perf_counter()
    take(rec, *a, **k)
    stamps.append((t, time.perf_counter(), rec["row"]["wall_seconds"] if rec else 0.0))
executor._take = timed
cfg, out, jobs = sys.argv[1], sys.argv[2], int(sys.argv[3])
t1 = time.perf_counter()
try:
    from treebench.execute.plan_cache import RunOptions
    api.run_experiment(cfg, RunOptions(out=out, n_jobs=jobs, report=False, progress=False))
except ImportError:  # a checkout from before RunOptions
    api.run_experiment(cfg, out=out, n_jobs=jobs, report=False, progress=False)
t2 = time.perf_counter()
first = stamps[0][0] - stamps[0][2]
print(json.dumps({"import": t1 - t0, "start": first - t1, "cells": stamps[-1][1] - first,
                  "after": t2 - stamps[-1][1], "walls": sum(s[2] for s in stamps),
                  "take": sum(s[1] - s[0] for s in stamps), "n": len(stamps)}))
"""


def timeline(cfg: Path, res: Path, jobs: int, checkout: Path) -> dict[str, float]:
    """The phases of one ``run -j jobs`` in a fresh interpreter (seconds): importing the API,
    start-up until the first cell started (config, planning, data checks, learners' imports
    and warm-up, forking the workers), the cells phase (first cell started to last cell file
    written), and the tables after it; ``walls`` is the cells' own wall seconds summed and
    ``take`` the driver's time writing cell files and updating progress."""
    shutil.rmtree(res, ignore_errors=True)
    p = subprocess.run([sys.executable, "-c", TIMELINE, str(cfg), str(res), str(jobs)],
                       check=True, env=_env(checkout), cwd=checkout, capture_output=True,
                       text=True)
    shutil.rmtree(res, ignore_errors=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def timelines(checkouts: dict[str, Path], grids: list[str], n_rounds: int,
              work: Path) -> None:
    """Print the phases of ``run -j 1`` and ``run -j 2`` per grid and checkout (medians over
    alternating rounds): the cells phase's throughput and the driver's gap per cell, apart from
    the start-up that a fresh interpreter pays once (importing scikit-learn, SciPy among it)."""
    got: dict[tuple[str, str, int], list[dict[str, float]]] = {}
    for r in range(n_rounds):
        order = list(checkouts.items())[::(-1 if r % 2 else 1)]
        for grid in grids:
            for name, co in order:
                for jobs in (1, 2):
                    got.setdefault((grid, name, jobs), []).append(
                        timeline(work / f"{grid}.yaml", work / f"{grid}-{name}-tl", jobs, co))
    print(f"\n{'grid':6s} {'checkout':8s} {'-j':>2s} {'import':>7s} {'start-up':>9s} "
          f"{'cells':>7s} {'tables':>7s} {'cells/s':>8s} {'gap/cell':>9s} {'write/cell':>10s}")
    med = statistics.median
    for (grid, name, jobs), runs in got.items():
        n = runs[0]["n"]
        cells = med(r["cells"] for r in runs)
        gap = med((r["cells"] - r["walls"] / jobs) / n for r in runs)
        print(f"{grid:6s} {name:8s} {jobs:2d} {med(r['import'] for r in runs):6.2f}s "
              f"{med(r['start'] for r in runs):8.2f}s {cells:6.2f}s "
              f"{med(r['after'] for r in runs):6.2f}s {n / cells:8.0f} {1000 * gap:7.2f}ms "
              f"{1000 * med(r['take'] for r in runs) / n:8.2f}ms")
    for name in checkouts:
        for grid in grids:
            one = med(r["cells"] for r in got[(grid, name, 1)])
            two = med(r["cells"] for r in got[(grid, name, 2)])
            print(f"{name}: {grid}: cells phase, -j 2 / -j 1 speed-up {one / two:.2f}x")


def profiled(args: list[str], stats_path: Path) -> float:
    """Run the command in a fresh interpreter under cProfile; its wall seconds."""
    code = (f"import cProfile, sys\nfrom treebench.cli import app\nprof = cProfile.Profile()\n"
            f"prof.enable()\ntry:\n    app({args!r}, standalone_mode=False)\n"
            f"except SystemExit:\n    pass\nprof.disable()\nprof.dump_stats({str(stats_path)!r})\n")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(HERE), cwd=HERE,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def phase_times(stats_path: Path) -> dict[str, float]:
    st = pstats.Stats(str(stats_path)).stats  # type: ignore[attr-defined]
    total = max(v[3] for v in st.values())
    found: dict[str, float] = {}
    for label, key in PHASES:
        if key is None:
            continue
        path, func = key
        found[label] = sum(v[3] for (f, _, fn), v in st.items()
                           if fn == func and (path == "~" or f.endswith(path)))
    accounted = sum(v for k, v in found.items() if k != "report")
    found["start-up and config"] = max(0.0, total - accounted - found.get("report", 0.0))
    return found


def breakdown(grid: str, work: Path) -> list[tuple[str, float]]:
    """Phases of one `run -j 2` and one report of ``grid`` in this checkout, and the workers'
    own time from the rows."""
    import pandas as pd

    res = work / f"{grid}-profiled"
    shutil.rmtree(res, ignore_errors=True)
    stats = work / f"{grid}-run.prof"
    wall = profiled(["run", str(work / f"{grid}.yaml"), "-o", str(res), "-q", "--no-report",
                     "-j", "2"], stats)
    rows = [(f"run -j 2 wall (fresh interpreter)", wall)]
    rows += [(f"  driver: {k}", v) for k, v in phase_times(stats).items() if k != "report"]
    t = pd.read_parquet(res / "results.parquet")
    n = len(t)
    cell_wall = float(t["wall_seconds"].sum())
    rows += [("  workers: cells' wall, summed", cell_wall),
             ("  workers: preparation (load, split, binarize)", float(t["prepare_seconds"].sum())),
             ("  workers: fit", float(t["fit_seconds"].sum()))]
    overhead_ms = 1000 * (wall - cell_wall / 2) / n
    rows.append(("per-cell overhead, ms ((wall - cells' wall / 2) / cells)", overhead_ms))
    stats = work / f"{grid}-report.prof"
    rows.append(("report, first (fresh interpreter)",
                 profiled(["report", str(res)], stats)))
    st = pstats.Stats(str(stats)).stats  # type: ignore[attr-defined]
    parts: dict[str, float] = {}
    for (f, _, fn), v in st.items():
        if "treebench/report/" in f and fn in ("write_report", "write_figures", "write_tables",
                                               "load_results", "write_html", "summary_tables"):
            parts[f"  report: {Path(f).stem}.{fn}"] = v[3]
    rows += sorted(parts.items(), key=lambda kv: -kv[1])
    rows.append(("report, unchanged (fresh interpreter)",
                 profiled(["report", str(res)], work / f"{grid}-report2.prof")))
    shutil.rmtree(res, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--checkout", action="append", default=[],
                    help="NAME=DIR: a work tree whose treebench to measure (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--grids", default="tiny,10ms,3000")
    ap.add_argument("--no-breakdown", action="store_true")
    args = ap.parse_args()
    checkouts = {c.split("=", 1)[0]: Path(c.split("=", 1)[1]).resolve() for c in args.checkout}
    if not checkouts:
        checkouts = {"this": HERE}
    grids = [g for g in args.grids.split(",") if g]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        for g in grids:
            (work / f"{g}.yaml").write_text(yaml.safe_dump(GRIDS[g]))
        timelines(checkouts, grids, args.rounds, work)
        times = rounds(checkouts, grids, args.rounds, work)
        bounds = floors(args.rounds)
        names = list(checkouts)
        print(f"\n{'grid':6s} {'step':18s} " + " ".join(f"{n:>22s}" for n in names)
              + ("   cells/s (" + names[-1] + ")"))
        for (grid, step) in dict.fromkeys((g, s) for g, s, _ in times):
            cols = []
            for n in names:
                v = times[(grid, step, n)]
                cols.append(f"{statistics.median(v):8.2f} s [{min(v):.2f}-{max(v):.2f}]")
            last = statistics.median(times[(grid, step, names[-1])])
            cps = f"{N_CELLS[grid] / last:8.1f}" if step.startswith("run") else ""
            print(f"{grid:6s} {step:18s} " + " ".join(f"{c:>22s}" for c in cols) + f"   {cps}")
        for n in names:
            for grid in grids:
                one = statistics.median(times[(grid, "run -j 1", n)])
                two = statistics.median(times[(grid, "run -j 2", n)])
                print(f"{n}: {grid}: -j 2 / -j 1 speed-up {one / two:.2f}x")
        print("\nfloors (fresh interpreter, no treebench code; median [min-max] of the rounds):")
        for label, v in bounds.items():
            print(f"  {label:52s} {statistics.median(v):6.2f} s [{min(v):.2f}-{max(v):.2f}]")
        print_bounds(times, bounds, minimal_figure_seconds(args.rounds), grids, names[-1])
        if not args.no_breakdown:
            for grid in grids:
                print(f"\nbreakdown of {grid} ({N_CELLS[grid]} cells), this checkout:")
                for label, v in breakdown(grid, work):
                    unit = "" if "ms" in label else " s"
                    print(f"  {label:62s} {v:9.3f}{unit}")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{args.rounds} rounds, checkouts alternating, on {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
