"""NGI family fit time against scikit-learn's CART on the same 0/1 matrices.

Matrices as in the NGI paper's protocol: 5 k-means bins per numeric feature, one-hot (fitted on
all rows), categorical features one-hot; the training part (70 %) of a stratified 70/10/20 split
with seed 0 (spambase 3220 x 285, magic 13314 x 50 as the authors used), letter, and the KDD99 10 %
training set (its own training file, k-means one-hot on those rows). Every method fits with
λ = 1, θ = 0.005; CART is `DecisionTreeClassifier(random_state=0)` on the
same float matrix in the same process. JIT compilation is warmed up outside the timed region.
Each dataset runs in its own child process, so its peak RSS (data + binarizer + fits) is its own.
Reports median fit seconds over ``--repeat`` runs, the ratio to CART and the speed-up over the
authors' times measured on this machine (spambase 20.6 s, magic 7.0 s for ECART). Asserts nothing.

    TREEBENCH_DATA_DIR=<data dir> python benchmarks/ngi_speed.py [--repeat 3] [--out results/bench]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

DATASETS = ["spambase", "magic", "letter", "kdd99"]
METHODS = ["ecart", "ec4.5", "asr", "ip", "bal", "bal-fixed", "c4.5", "cart", "cc4.5", "ccart"]
#: the authors' ECART fit times on this machine, seconds
AUTHORS_SECONDS = {"spambase": 20.6, "magic": 7.0}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def matrix(name: str):
    """The dataset's k-means one-hot training matrix (float 0/1) and labels."""
    import numpy as np

    from treebench.binarize import make_binarizer
    from treebench.data.base import data_dirs_from_env, load_dataset
    from treebench.data.splits import SplitOptions, make_split

    ds = load_dataset(name, {}, data_dirs=data_dirs_from_env(), offline=True)
    y = np.asarray(ds.y)
    if ds.train_index is not None:  # KDD99: its 10 % training file
        rows = np.asarray(ds.train_index)
        X_all, y_all = ds.X.iloc[rows], y[rows]
        train = np.arange(len(rows))
    else:
        X_all, y_all = ds.X, y
        train = make_split(SplitOptions("train-val-test"), y, fold=0, seed=0).train
    b = make_binarizer("kmeans", {"n_bins": 5}, list(ds.categorical))
    b.fit(X_all, y_all)
    X = np.asarray(b.transform(X_all.iloc[train]), dtype=np.float64)
    return X, y_all[train]


def child(name: str, methods: list[str], repeat: int) -> list[dict]:
    import numpy as np
    from sklearn.tree import DecisionTreeClassifier

    from treebench.algorithms.ngi import NGIClassifier, warmup

    warmup()
    X, y = matrix(name)
    n_obj = len(np.unique(X.astype(np.uint8), axis=0))

    def timed(make):
        times, est = [], None
        for _ in range(repeat):
            est = make()
            t0 = time.perf_counter()
            est.fit(X, y)
            times.append(time.perf_counter() - t0)
        return statistics.median(times), est

    cart_s, cart = timed(lambda: DecisionTreeClassifier(random_state=0))
    rows = [{"dataset": name, "method": "sklearn-cart", "rows": X.shape[0], "columns": X.shape[1],
             "objects": n_obj, "fit_s": cart_s, "nodes": int(cart.tree_.node_count),
             "expected_tests": float(np.mean(cart.decision_path(X).sum(axis=1) - 1))}]
    for m in methods:
        s, est = timed(lambda m=m: NGIClassifier(method=m, lam=1.0, theta=0.005))
        rows.append({"dataset": name, "method": m, "rows": X.shape[0], "columns": X.shape[1],
                     "objects": n_obj, "fit_s": s, "nodes": est.tree_.n_nodes,
                     "expected_tests": est.expected_cost_})
    peak = _peak_mb()
    for r in rows:
        r["ratio_to_cart"] = r["fit_s"] / cart_s
        a = AUTHORS_SECONDS.get(name) if r["method"] == "ecart" else None
        r["speedup_vs_authors"] = a / r["fit_s"] if a else None
        r["peak_rss_mb"] = peak
    return rows


def markdown(df) -> str:
    """A GitHub markdown table (numbers to 4 significant digits)."""

    def cell(v) -> str:
        if v is None or (isinstance(v, float) and v != v):
            return ""
        return f"{v:.4g}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="fits per measurement; median reported")
    ap.add_argument("--datasets", nargs="*", default=DATASETS)
    ap.add_argument("--methods", nargs="*", default=METHODS)
    ap.add_argument("--out", default="results/bench", help="directory for ngi_speed.csv/.md")
    ap.add_argument("--child", metavar="DATASET", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.methods, args.repeat)))
        return
    rows: list[dict] = []
    for name in args.datasets:
        cmd = [sys.executable, __file__, "--child", name, "--repeat", str(args.repeat),
               "--methods", *args.methods]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            err = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode
            rows.append({"dataset": name, "method": "-", "status": f"failed: {err}"})
            print(f"{name}: failed: {err}", file=sys.stderr)
            continue
        rows.extend(json.loads(out.stdout.strip().splitlines()[-1]))
    import pandas as pd

    df = pd.DataFrame(rows)
    outdir = Path(args.out)
    outdir.mkdir(parents=True, exist_ok=True)
    df.to_csv(outdir / "ngi_speed.csv", index=False)
    md = markdown(df)
    (outdir / "ngi_speed.md").write_text(md + "\n", encoding="utf-8")
    print(md)


if __name__ == "__main__":
    main()
