"""Runner overhead: cells per second on a sweep of a few hundred tiny cells.

Runs the same sweep (iris, a depth-1 CART per cell: the fit itself takes ~1 ms) through
treebench's executor with each backend, and reports, next to it, the cost of the naive design
(one fresh Python interpreter per cell) measured on a handful of cells. Prints a table; asserts
nothing. Re-run: `.venv/bin/python benchmarks/cells_per_second.py [--cells 300]`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from treebench import api


def _config(n_cells: int, backend: str, n_jobs: int) -> dict:
    return {
        "name": "overhead",
        "datasets": ["iris"],
        "split": {"kind": "holdout", "seeds": list(range(n_cells))},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": 1}}],
        "limits": {"time": 60, "memory": 1000},
        "execution": {"n_jobs": n_jobs, "backend": backend},
    }


def run_sweep(n_cells: int, backend: str, n_jobs: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "c.yaml"
        cfg.write_text(yaml.safe_dump(_config(n_cells, backend, n_jobs)))
        t0 = time.perf_counter()
        s = api.run_experiment(cfg, out=Path(d) / "o", progress=False, report=False)
        wall = time.perf_counter() - t0
        assert s.counts["ok"] == n_cells
        import pandas as pd

        df = pd.read_parquet(Path(d) / "o" / "results.parquet")
        return wall, float(df["fit_seconds"].sum())


def fresh_interpreter_per_cell(n: int) -> float:
    code = (
        "from sklearn.datasets import load_iris; from sklearn.tree import DecisionTreeClassifier;"
        "X,y=load_iris(return_X_y=True); DecisionTreeClassifier(max_depth=1).fit(X,y)"
    )
    t0 = time.perf_counter()
    for _ in range(n):
        subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - t0) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cells", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for backend, n_jobs in (("sequential", 1), ("loky", 2), ("threading", 2)):
        walls, overheads = [], []
        for _ in range(args.repeats):
            wall, fit = run_sweep(args.cells, backend, n_jobs)
            walls.append(wall)
            overheads.append((wall * n_jobs - fit) / args.cells)
        w = statistics.median(walls)
        rows.append((f"treebench {backend} (n_jobs={n_jobs})", args.cells / w, statistics.median(overheads)))
    per = fresh_interpreter_per_cell(5)
    rows.append(("fresh interpreter per cell (1 job)", 1.0 / per, per))
    print(f"{'executor':42s} {'cells/s':>9s} {'overhead s/cell (core-s)':>26s} {'ratio vs fresh':>15s}")
    for name, cps, ovh in rows:
        print(f"{name:42s} {cps:9.1f} {ovh:26.4f} {cps * per:15.1f}x")
    print(f"\n{args.cells} cells per sweep, median of {args.repeats} runs; wall time includes worker start-up.")


if __name__ == "__main__":
    main()
