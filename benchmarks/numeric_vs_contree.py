"""`optimal-numeric` (treebench) against ConTree (pycontree) on the Quant-BnB training files.

Both solve the same problem: the depth-D tree with the fewest training errors over every
threshold of the raw numeric features; with ``--lexicographic`` the fewest errors, then the
fewest nodes (``min-errors-then-nodes``: ours with ``lexicographic=True``, ConTree with a cost
per branching node below one error for the whole tree, as the ``contree`` adapter asks). Every fit runs in its own fresh process (``spawn``, see
`_fresh`): the child loads the file and warms up (JIT compilation loaded from numba's cache;
for both solvers one fit on the file's first 50 rows), says "ready", then times ``fit`` alone
(the estimator's input checks included, for both) and reports the fit seconds, the training
errors and its peak resident memory (``VmHWM`` of the whole process). The parent enforces the
time limit (+30 s grace).

Usage (files from ``quantbnb/train/`` of the data directory, label in column 0; any other name
is loaded as treebench's dataset of that name, its numeric columns)::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/numeric_vs_contree.py \
        --depths 2,3 [--depth4] [--datasets raisin,bank] [--time-limit 60] [--repeat 3] \
        [--lexicographic] [--csv out.csv]

The table gives, per file and depth, both times, the ratio ours / ConTree (measured in the same
run, one after the other), whether the training errors are equal (with ``--lexicographic``:
errors and node counts; when not, and ConTree merged
distinct values of some features, how many: it then solved a coarser problem), and both peak
memories;
then, per depth, the largest and the median ratio over the rows where ConTree finished. Times
are never asserted. ``--table-from out.csv`` reprints the table of an earlier run.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402

FILES = ["avila", "bank", "bean", "bidding", "eeg", "fault", "htru", "magic", "occupancy",
         "page", "raisin", "rice", "room", "segment", "wilt"]
SOLVERS = ("contree", "ours")


def load(name: str):
    """A Quant-BnB training file (label in column 0), or any other dataset treebench knows by
    that name (`treebench datasets`): its numeric columns, rows with a missing value dropped,
    labels numbered 0..k-1 in sorted order."""
    import numpy as np

    base = pathlib.Path(os.environ["TREEBENCH_DATA_DIR"]) / "quantbnb" / "train"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as fh:
                a = np.loadtxt(fh)
            return np.ascontiguousarray(a[:, 1:]), a[:, 0].astype(np.int64)
    return _registered(name)


def _registered(name: str):
    import numpy as np
    import pandas as pd

    from treebench.data.base import load_dataset

    ds = load_dataset(name)
    X = ds.X
    if isinstance(X, pd.DataFrame):
        skip = set(ds.categorical or [])
        X = X[[c for c in X.columns
               if c not in skip and pd.api.types.is_numeric_dtype(X[c])]].to_numpy(float)
    X = np.asarray(X, dtype=float)
    keep = np.isfinite(X).all(axis=1)
    _, y = np.unique(np.asarray(ds.y)[keep], return_inverse=True)
    return np.ascontiguousarray(X[keep]), y.astype(np.int64)


def _fit_one(solver: str, name: str, depth: int, limit: float, lex: bool, conn) -> None:
    """Child process: load and warm up, say "ready", fit once, send a result dict."""
    import warnings

    import numpy as np

    X, y = load(name)
    out = {"timed_out": False}
    if solver == "ours":
        from treebench.algorithms.optimal_numeric import OptimalNumericClassifier, warmup

        warmup()
        OptimalNumericClassifier(max_depth=2).fit(X[:50], y[:50])  # as ConTree's warm-up fit
        est = OptimalNumericClassifier(max_depth=depth, time_limit=limit, lexicographic=lex)
        conn.send("ready")
        t = time.perf_counter()
        est.fit(X, y)
        out["seconds"] = time.perf_counter() - t
        out["timed_out"] = bool(est.solve_info_["timed_out"])
        out["errors"] = int(round(est.solve_info_["training_error"]))
        out["nodes"] = int(est.tree_.n_nodes)
    else:
        from pycontree import ConTree

        yi = y.astype(np.intc)
        ConTree(max_depth=2).fit(X[:50], yi[:50])
        from treebench.algorithms.peers import lexicographic_cost

        cost = lexicographic_cost(len(yi), depth) if lex else 0.0
        est = ConTree(max_depth=depth, complexity_cost=cost, time_limit=limit)
        conn.send("ready")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            est.fit(X, yi)
            out["seconds"] = time.perf_counter() - t
        out["timed_out"] = any("time limit" in str(w.message) for w in caught)
        out["errors"] = int(np.sum(est.predict(X) != yi))
        from treebench.algorithms.peers_continuous import _describe_float32, float32_merges
        from treebench.tree.adapters import from_threshold_nested

        out["nodes"] = int(from_threshold_nested(est.tree_, _describe_float32(X), int(yi.max()) + 1,
                                                 X, y).n_nodes)

        out["merged"] = float32_merges(X)  # features whose distinct values ConTree merges
    out["peak_mb"] = vm_hwm_mb()
    out["n"], out["f"] = X.shape
    conn.send(out)


def _fit_fresh(solver, name, depth, limit, repeat, lex=False):
    """The run with the median fit time among ``repeat`` fresh-process runs (the first that
    did not finish, if any)."""
    runs = []
    for _ in range(repeat):
        status, res, _ = run_fresh(_fit_one, (solver, name, depth, limit, lex), limit)
        res = res or {}
        if status == "ok" and res.get("timed_out"):
            status = "timeout"
        if status != "ok":
            return status, res
        runs.append(res)
    runs.sort(key=lambda r: r["seconds"])
    return "ok", runs[len(runs) // 2]


def run(names, depths, limit: float, repeat: int = 1, lex: bool = False):
    rows = []
    for name in names:
        for depth in depths:
            row = {"dataset": name, "depth": depth, "lexicographic": lex}
            for solver in SOLVERS:
                status, res = _fit_fresh(solver, name, depth, limit, repeat, lex)
                row.update({"n": res.get("n", row.get("n")), "f": res.get("f", row.get("f")),
                            f"{solver}_status": status, f"{solver}_s": res.get("seconds"),
                            f"{solver}_errors": res.get("errors"),
                            f"{solver}_nodes": res.get("nodes"),
                            f"{solver}_merged": res.get("merged"),
                            f"{solver}_mb": res.get("peak_mb")})
                print(f"{name} d{depth} {solver}: {status} {res.get('seconds')} "
                      f"errors={res.get('errors')} nodes={res.get('nodes')}", file=sys.stderr,
                      flush=True)
            rows.append(row)
    return rows


def _cell(row, solver):
    if row[f"{solver}_status"] != "ok":
        return row[f"{solver}_status"]
    return f"{float(row[f'{solver}_s']):.4f}"


def _merged(row) -> str:
    """Why the errors may differ: ConTree solves on 32-bit floats and takes neighbouring values
    less than 1e-7 apart as one (`peers_continuous.float32_merges`), a coarser problem."""
    k = row.get("contree_merged")
    return f"; ConTree merges values of {k} features" if k not in (None, "", "0", 0) else ""


def table(rows) -> str:
    head = ("| dataset | n | f | depth | ConTree s | ours s | ours/ConTree | errors equal? "
            "| peak MB ConTree / ours |")
    out = [head, "|---|---|---|---|---|---|---|---|---|"]
    ratios: dict[int, list[float]] = {}
    for r in rows:
        both = r["contree_status"] == "ok" and r["ours_status"] == "ok"
        ratio = float(r["ours_s"]) / float(r["contree_s"]) if both else None
        if r["contree_status"] == "ok":
            ratios.setdefault(int(r["depth"]), []).append(ratio if ratio is not None else
                                                          float("inf"))
        lex = r.get("lexicographic") in (True, "True")  # errors, then node counts
        said = [f"{r[f'{s}_errors']}" + (f" errors, {r[f'{s}_nodes']} nodes" if lex else "")
                for s in SOLVERS]
        equal = ("yes" if said[0] == said[1] else
                 f"no (ConTree {said[0]} / ours {said[1]}{_merged(r)})" if lex else
                 f"no ({said[0]} / {said[1]}{_merged(r)})")
        mb = "/".join(f"{float(r[f'{s}_mb']):.0f}" if r.get(f"{s}_mb") not in (None, "") else "-"
                      for s in SOLVERS)
        out.append(f"| {r['dataset']} | {r['n']} | {r['f']} | {r['depth']} | "
                   f"{_cell(r, 'contree')} | {_cell(r, 'ours')} | "
                   f"{'-' if ratio is None else f'{ratio:.2f}'} | {equal} | {mb} |")
    out.append("")
    for d, rs in sorted(ratios.items()):
        out.append(f"depth {d}: {len(rs)} files where ConTree finished; ours/ConTree largest "
                   f"{max(rs):.2f}, median {statistics.median(rs):.2f}")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(FILES))
    ap.add_argument("--depths", default="2,3")
    ap.add_argument("--depth4", action="store_true", help="also run depth 4")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=1,
                    help="fresh-process runs per fit; the median time is kept")
    ap.add_argument("--lexicographic", action="store_true",
                    help="both solvers: fewest errors, then fewest nodes")
    ap.add_argument("--csv", default=None, help="write the rows to this CSV file")
    ap.add_argument("--table-from", default=None, help="reprint the table of an earlier CSV")
    a = ap.parse_args(argv)
    if a.table_from:
        with open(a.table_from) as fh:
            print(table(list(csv.DictReader(fh))))
        return
    depths = [int(d) for d in a.depths.split(",")] + ([4] if a.depth4 else [])
    rows = run(a.datasets.split(","), depths, a.time_limit, a.repeat, a.lexicographic)
    if a.csv:
        with open(a.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    print(table(rows))


if __name__ == "__main__":
    main()
