"""GOSDT (ours, `gosdt`) against the authors' package (`gosdt-ref`, gosdt 1.0.4 with the
reference_LB fix) on the fits of configs/gosdt-paper.yaml and the breast_cancer cases.

Every fit runs in its own fresh process (``spawn``): the child loads and binarizes the data
(threshold guess, the paper's protocol: KFold(5, shuffle, 2021), GBDT(learning_rate 0.1,
random_state 42) per dataset), warms up (JIT compilation is loaded from numba's cache, never
timed), says "ready", then times ``fit`` alone (with a lower-bound guess the reference GBDT is
fitted inside ``fit`` by both solvers, so it is in both times) and reports the fit seconds, the
objective R, the leaves and its peak resident memory (VmHWM). The parent enforces the time limit
(+30 s grace) and a memory cap (default 6 GB, polled with psutil); a killed run is a row with
status ``timeout``/``memout``.

Usage::

    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_vs_ref.py --cases compas,broward,breast_cancer \
        --depths 3,5 --folds 0 --guesses th,th+lb --csv gosdt.csv

At the end a markdown table gives per fit both solvers' seconds, peak RSS and objective, the
time ratio ours / ref, with the median and the worst ratio over fits where both finish. Times
are never asserted.
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing as mp
import os
import statistics
import time

# name -> (file, (n_estimators, max_depth) of the GBDT, λ)
CASES = {
    "compas": ("compas.csv", (20, 3), 0.001),
    "broward": ("broward_general_2y.csv", (40, 1), 0.005),
    "fico": ("fico.csv.gz", (40, 1), 0.0005),
    "coupon_carryout": ("coupon_carryout.csv.gz", (50, 2), 0.001),
    "coupon_rest20": ("coupon_rest20.csv.gz", (50, 2), 0.001),
    "spiral": ("spiral.csv", (20, 3), 0.01),
    "breast_cancer": (None, (40, 1), 0.005),
}


def load_case(name: str, fold: int):
    """The binarized training rows of one fit (paper protocol)."""
    import numpy as np
    import pandas as pd
    from sklearn.model_selection import KFold, train_test_split

    from treebench.binarize.threshold_guess import ThresholdGuess

    fname, (ne, md), lam = CASES[name]
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer()
        X = pd.DataFrame(data.data, columns=data.feature_names)
        Xtr, _, ytr, _ = train_test_split(X, data.target, test_size=0.2, random_state=2021)
    else:
        path = os.path.join(os.environ["TREEBENCH_DATA_DIR"], "papers", "gosdt", fname)
        df = pd.read_csv(path)
        X, y = df.iloc[:, :-1], df.iloc[:, -1].to_numpy()
        if name == "spiral":
            tr = np.arange(len(y))
        else:
            tr = list(KFold(n_splits=5, shuffle=True, random_state=2021).split(X))[fold][0]
        Xtr, ytr = X.iloc[tr], y[tr]
    b = ThresholdGuess(n_estimators=ne, max_depth=md, random_state=42).fit(Xtr, ytr)
    return np.asarray(b.transform(Xtr), dtype=np.float64), np.asarray(ytr), lam, (ne, md)


def _fit_one(solver, name, fold, depth, guess, limit, conn) -> None:
    Xb, y, lam, (ne, md) = load_case(name, fold)
    lb = {"n_estimators": ne, "max_depth": md} if guess == "th+lb" else None
    if solver == "ours":
        from treebench.algorithms.gosdt import GOSDTClassifier, warmup

        warmup()
        est = GOSDTClassifier(regularization=lam, max_depth=depth, lb_guess=lb, time_limit=limit,
                              random_state=42)
    else:
        from treebench.registry import ALGORITHMS

        est = ALGORITHMS.get("gosdt-ref").create(regularization=lam, max_depth=depth,
                                                 lb_guess=lb, time_limit=limit, random_state=42)
    conn.send("ready")
    t = time.perf_counter()
    est.fit(Xb, y)
    secs = time.perf_counter() - t
    si = est.solve_info_
    conn.send({"status": "timeout" if si.get("timed_out") else "ok", "seconds": secs,
               "objective": si["objective"], "leaves": int(est.tree_.n_leaves),
               "columns": Xb.shape[1], "optimality": si.get("optimality"),
               "peak_rss_mb": _vm_hwm_mb()})
    conn.close()


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_one(solver, name, fold, depth, guess, limit, mem_gb):
    import psutil

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_fit_one, args=(solver, name, fold, depth, guess, limit, child))
    p.start()
    child.close()
    t0 = time.perf_counter()
    status, peak, res, ready = "ok", 0.0, None, False
    proc = psutil.Process(p.pid)
    while True:
        if parent.poll(0.1):
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg == "ready":
                ready, t0 = True, time.perf_counter()
                continue
            res = msg
            break
        if not p.is_alive():
            break
        try:
            rss = proc.memory_info().rss / 2**30
        except psutil.NoSuchProcess:
            break
        peak = max(peak, rss)
        if rss > mem_gb:
            status = "memout"
            p.kill()
            break
        if time.perf_counter() - t0 > (limit + 30 if ready else 900):
            status = "timeout"
            p.kill()
            break
    p.join()
    if res is None:
        return {"status": status if status != "ok" else f"crash({p.exitcode})",
                "seconds": float("nan"), "objective": float("nan"), "leaves": -1,
                "peak_rss_mb": peak * 1024}
    return res


def table(rows) -> str:
    by = {}
    for r in rows:
        by.setdefault((r["case"], r["fold"], r["depth"], r["guess"]), {})[r["solver"]] = r
    out = ["| case | fold | depth | guess | ours s | ref s | ours/ref | ours MB | ref MB | "
           "ours R | ref R |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    for key, d in by.items():
        o, f = d.get("ours", {}), d.get("ref", {})

        def cell(r, k, fmt):
            v = r.get(k)
            if r.get("status") not in ("ok", None) and k == "seconds":
                return r["status"]
            return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt.format(v)

        ratio = "-"
        if o.get("status") == "ok" and f.get("status") == "ok":
            q = o["seconds"] / f["seconds"]
            ratios.append(q)
            ratio = f"{q:.3f}"
        out.append(f"| {key[0]} | {key[1]} | {key[2]} | {key[3]} | "
                   f"{cell(o, 'seconds', '{:.3f}')} | {cell(f, 'seconds', '{:.3f}')} | {ratio} | "
                   f"{cell(o, 'peak_rss_mb', '{:.0f}')} | "
                   f"{cell(f, 'peak_rss_mb', '{:.0f}')} | {cell(o, 'objective', '{:.6f}')} | "
                   f"{cell(f, 'objective', '{:.6f}')} |")
    if ratios:
        out.append(f"\nours/ref time ratio over {len(ratios)} fits where both finished: median "
                   f"{statistics.median(ratios):.3f}, worst {max(ratios):.3f}, geometric mean "
                   f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="compas,broward,breast_cancer")
    ap.add_argument("--folds", default="0")
    ap.add_argument("--depths", default="3,5", help="comma list; 'none' = unlimited")
    ap.add_argument("--guesses", default="th,th+lb", help="th (threshold guess) and/or th+lb")
    ap.add_argument("--solvers", default="ours,ref")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args(argv)
    rows = []
    for name in a.cases.split(","):
        folds = [0] if name in ("spiral", "breast_cancer") else [int(f) for f in a.folds.split(",")]
        for fold in folds:
            for ds in a.depths.split(","):
                depth = None if ds == "none" else int(ds)
                for guess in a.guesses.split(","):
                    for solver in a.solvers.split(","):
                        r = run_one(solver, name, fold, depth, guess, a.time_limit, a.mem_gb)
                        r.update(case=name, fold=fold, depth=ds, guess=guess, solver=solver)
                        rows.append(r)
                        print(f"{name:14s} f{fold} d={ds:4s} {guess:5s} {solver:4s} "
                              f"{r['status']:8s} {r['seconds']:9.3f}s R={r['objective']:.6f} "
                              f"leaves={r['leaves']} rss={r['peak_rss_mb']:.0f}MB", flush=True)
    if a.csv:
        keys = sorted({k for r in rows for k in r})
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
