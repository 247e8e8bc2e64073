"""Load + binarize time and peak memory on KDD99 and the largest paper datasets.

Each (dataset, binarizer) measurement runs in a fresh child process so its peak RSS is its own.
Steps timed: parse from the raw files (cold, parquet cache empty), load from the parquet cache
(warm), and fit + transform of each binarizer on the training rows (the predefined training split
when the dataset has one, else all rows). Writes a table; asserts nothing about times.

    TREEBENCH_DATA_DIR=/path/to/datasets python benchmarks/load_binarize.py [--repeat 3] [--out results/bench]

``--cell`` measures one whole runner cell instead: the KDD Cup 99 CART cell
of ``configs/dpdt-kdd99.yaml`` (depth 10, predefined split, raw features with one-hot
categories) through ``treebench run`` with the default backend, and prints its row's peak
memory against 3x the data's dense float64 size, its time outside the fit (the command's
wall time minus the fit: start-up, load, split, binarize, scoring) against the fit, the load
from the parsed cache (timed in a fresh process) plus preparation (split + binarize) against the
fit, and the row's accuracies and leaf count (unchanged by the memory work):

    TREEBENCH_DATA_DIR=/path/to/datasets python benchmarks/load_binarize.py --cell [--algorithm cart] \
        [--prepared warm|cold|off] [--split predefined|permutation]

``--prepared`` sets the prepared-matrix cache (`treebench.execute.prepared`) for the cell:
``warm`` (default) reads the matrix a previous run wrote (built first if it is missing: the
steady state of any later cell on the dataset), ``cold`` removes the dataset's prepared files
first so the cell builds them, ``off`` turns the cache off (``TREEBENCH_PREPARED_CACHE_GB=0``:
the in-memory preparation of before, for a side-by-side comparison).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATASETS = ["kdd99", "skin", "topk/credit-card", "topk/letter-recognition", "quantbnb/htru", "quantbnb/magic", "avila", "topk/fico-1000"]
METHODS = [("quantile", {"max_columns": 200}), ("midpoints", {"max_columns": 10_000_000}), ("bucketize", {"max_columns": 10_000_000}), ("kmeans", {"n_bins": 5})]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def child(name: str, method: str, params: dict, cache: str) -> dict:
    import pyarrow.parquet  # noqa: F401 - imports are warmed up outside the timed region
    import sklearn.cluster  # noqa: F401
    import sklearn.ensemble  # noqa: F401

    from treebench.binarize import make_binarizer
    from treebench.data.base import data_dirs_from_env
    from treebench.data.catalog import build_dataset, get_entry

    from treebench.binarize._kernels import warm_up

    warm_up()  # JIT compilation stays outside the timed region
    entry = get_entry(name)
    t0 = time.perf_counter()
    ds = build_dataset(entry, data_dirs=data_dirs_from_env(), offline=True, cache_dir=Path(cache))
    load = time.perf_counter() - t0
    rows = ds.train_index if ds.train_index is not None else slice(None)
    X, y = ds.X.iloc[rows], ds.y[rows]
    t0 = time.perf_counter()
    b = make_binarizer(method, params, ds.categorical)
    fit_s = transform_s = None
    try:
        b.fit(X, y)
        fit_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        Z = b.transform(ds.X)
        transform_s = time.perf_counter() - t1
        n_cols, status = Z.shape[1], "ok"
    except Exception as exc:  # a cap exceeded is a result, not a crash
        n_cols, status = getattr(b, "n_columns_", None), f"{type(exc).__name__}: {exc}"[:90]
    return {"dataset": name, "rows": int(ds.n_samples), "features": int(ds.n_features), "method": method,
            "load_s": load, "fit_s": fit_s, "transform_s": transform_s, "binary_features": n_cols,
            "peak_rss_mb": _peak_mb(), "status": status}


def run_child(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        return {"status": f"child failed: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_cell(algorithm: str, params: dict, prepared: str = "warm", split: str = "predefined") -> None:
    import pandas as pd
    import yaml

    env = dict(os.environ)
    if prepared == "off":
        env["TREEBENCH_PREPARED_CACHE_GB"] = "0"
    else:
        env.pop("TREEBENCH_PREPARED_CACHE_GB", None)
    if prepared == "cold":
        from treebench.execute.prepared import SUFFIX, cache_dir

        for f in cache_dir().glob(f"kdd99-*{SUFFIX}"):
            if f.stem.rsplit("-", 1)[0] == "kdd99":
                f.unlink()

    # permutation: the training and test files merged, 80 % of the rows drawn to train
    sp = {"kind": "predefined"} if split == "predefined" else {"kind": split, "test_files": "merge"}
    cfg = {"name": "kdd99-cell", "seed": 0, "datasets": ["kdd99"], "split": sp,
           "binarization": [{"method": "raw"}], "algorithms": [{"name": algorithm, "params": params}],
           "limits": {"time": 3600, "memory": 4000}, "execution": {"n_jobs": 1}}
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "c.yaml"
        path.write_text(yaml.safe_dump(cfg))
        t0 = time.perf_counter()
        # from the measured checkout: `-m` puts the working directory first on sys.path
        subprocess.run([sys.executable, "-m", "treebench.cli", "run", str(path), "-o", f"{d}/o", "-q",
                        "--no-report"], check=True, cwd=os.environ.get("PYTHONPATH") or None, env=env)
        wall = time.perf_counter() - t0
        row = pd.read_parquet(f"{d}/o/results.parquet").iloc[0]
    dense_mb = int(row["n_train"] + row["n_test"]) * int(row["n_features"]) * 8 / 2**20
    fit = float(row["fit_seconds"])
    load = load_seconds("kdd99")
    print(f"{'kdd99 ' + algorithm + ' cell':34s} {'value':>10s}")
    for k, v in [("status", row["status"]), ("split", split), ("prepared-matrix cache", prepared),
                 ("dense float64 size (MB)", dense_mb),
                 ("3x dense size (MB)", 3 * dense_mb), ("peak_rss_mb", row["peak_rss_mb"]),
                 ("cell_rss_mb", row["cell_rss_mb"]), ("command wall (s)", wall), ("fit_seconds", fit),
                 ("prepare_seconds (split+binarize)", row["prepare_seconds"]),
                 ("outside the fit (s)", wall - fit), ("outside / fit", (wall - fit) / fit),
                 ("prepare / fit", float(row["prepare_seconds"]) / fit),
                 ("load from the parsed cache (s)", load),
                 ("(load + prepare) / fit", (load + float(row["prepare_seconds"])) / fit),
                 ("train_accuracy", f"{float(row['train_accuracy']):.6f}"),
                 ("test_accuracy", f"{float(row['test_accuracy']):.6f}"), ("n_leaves", str(row["n_leaves"]))]:
        print(f"{k:34s} {v:>10.3f}" if isinstance(v, float) else f"{k:34s} {v!s:>10s}")


def load_seconds(name: str) -> float:
    """Seconds to load ``name`` in a fresh process (imports done first) from the parsed cache,
    checksums of the source files included (the run above has built the cache)."""
    code = ("import time, pandas, pyarrow, pyarrow.ipc, sklearn.tree\n"
            "from treebench.data.base import load_dataset\n"
            "import treebench.data.catalog\n"
            "t = time.perf_counter()\n"
            f"load_dataset({name!r}, offline=True)\n"
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.environ.get("PYTHONPATH") or None)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported")
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    ap.add_argument("--methods", nargs="*", default=[m for m, _ in METHODS])
    ap.add_argument("--out", default="results/bench", help="directory for load_binarize.csv/.md")
    ap.add_argument("--child", nargs=4, metavar=("NAME", "METHOD", "PARAMS", "CACHE"), help=argparse.SUPPRESS)
    ap.add_argument("--cell", action="store_true", help="measure one whole KDD Cup 99 runner cell")
    ap.add_argument("--algorithm", default="cart", help="the --cell learner (depth 10)")
    ap.add_argument("--prepared", choices=["warm", "cold", "off"], default="warm",
                    help="the --cell's prepared-matrix cache: read it, rebuild it, or turn it off")
    ap.add_argument("--split", choices=["predefined", "permutation"], default="predefined",
                    help="the --cell's split: the dataset's own test file, or a permutation of all rows")
    a = ap.parse_args()
    if a.cell:
        if not os.environ.get("TREEBENCH_DATA_DIR"):
            sys.exit("set TREEBENCH_DATA_DIR to the shared datasets directory")
        params = {"max_depth": 10} if a.algorithm != "dpdt" else {"max_depth": 10, "budgets": {"value": [4]}}
        measure_cell(a.algorithm, params, a.prepared, a.split)
        return
    if a.child:
        name, method, params, cache = a.child
        print(json.dumps(child(name, method, json.loads(params), cache)))
        return
    if not os.environ.get("TREEBENCH_DATA_DIR"):
        sys.exit("set TREEBENCH_DATA_DIR to the shared datasets directory")
    rows = []
    params_of = dict(METHODS)
    for name in a.datasets:
        with tempfile.TemporaryDirectory() as cache:
            # cold: parse from the raw files (cache empty); method 'none'-like cheap step: quantile
            cold = run_child([name, "quantile", json.dumps(params_of["quantile"]), cache])
            for method in a.methods:
                runs = [run_child([name, method, json.dumps(params_of.get(method, {})), cache]) for _ in range(a.repeat)]
                ok = [r for r in runs if "load_s" in r]
                if not ok:
                    rows.append({"dataset": name, "method": method, "status": runs[0]["status"]})
                    continue
                r = dict(ok[0])
                r["load_s"] = statistics.median(x["load_s"] for x in ok)
                for k in ("fit_s", "transform_s"):
                    vals = [x[k] for x in ok if x[k] is not None]
                    r[k] = statistics.median(vals) if vals else None
                r["peak_rss_mb"] = max(x["peak_rss_mb"] for x in ok)
                r["cold_parse_s"] = cold.get("load_s")
                rows.append(r)
                print(json.dumps(r), flush=True)
    import pandas as pd

    df = pd.DataFrame(rows)
    cols = ["dataset", "rows", "features", "method", "cold_parse_s", "load_s", "fit_s", "transform_s", "binary_features", "peak_rss_mb", "status"]
    df = df[[c for c in cols if c in df.columns]]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / "load_binarize.csv", index=False)
    (out / "load_binarize.md").write_text(markdown(df))
    print(df.to_string(index=False))


def markdown(df) -> str:
    """A GitHub markdown table (numbers to 3 significant digits)."""

    def cell(v):
        if isinstance(v, float):
            return "" if v != v else f"{v:.3g}"
        return str(v)

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
