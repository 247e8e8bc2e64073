"""GOSDT (ours, `gosdt`) against the authors' package (`gosdt-ref`, gosdt 1.0.4 with the
reference_LB fix) on the fits of configs/gosdt-paper.yaml and the breast_cancer cases.

Every fit runs in its own fresh process (``spawn``): the child loads and binarizes the data
(threshold guess, the paper's protocol: KFold(5, shuffle, 2021), GBDT(learning_rate 0.1,
random_state 42) per dataset), warms up (JIT compilation is loaded from numba's cache, never
timed), says "ready", then times ``fit`` alone and reports the fit seconds, the objective R,
the leaves and its peak resident memory (VmHWM). With a lower-bound guess both solvers fit the
same reference GBDT inside ``fit`` with the same code (`treebench.algorithms.gosdt.fit_reference`:
one ``GradientBoostingClassifier.fit`` and one ``predict`` on the training rows); each records
those seconds (``solve_info_["guess_seconds"]``), reported as "ref s", and the rest of ``fit`` is
the search ("search s" = fit - ref). The parent enforces the time limit
(+30 s grace) and a memory cap (default 6 GB, polled with psutil); a killed run is a row with
status ``timeout``/``memout``.

Usage::

    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_vs_ref.py --cases compas,broward,breast_cancer \
        --depths 3,5 --folds 0 --guesses th,th+lb --csv gosdt.csv

Guesses: ``none`` (every midpoint threshold, ``midpoints`` binarizer: the no-guess baseline of
the paper's Figure 1), ``th`` (threshold guess), ``th+lb`` (threshold + lower-bound guess).

The STreeD table (our GOSDT solver vs STreeD's cost-complexity objective vs the package) runs on
the binary DL8.5 files with cases ``dl85:NAME`` and ``--lams``; ``--solvers ours,ref,streed``
(``streed`` = pystreed, ``cost-complex-accuracy`` task, same λ and depth; its R is recomputed
from its tree)::

    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_vs_ref.py --cases dl85:anneal,dl85:tic-tac-toe \
        --lams 0.001,0.01 --depths 3,4,5 --guesses none --solvers ours,ref,streed --time-limit 120

At the end a markdown table gives per fit every solver's seconds (fit, reference, search),
peak RSS and objective, and the ratios ours / peer of the search seconds and of the fit seconds,
with the median and the worst ratio over fits where both finish. Times are never asserted.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402

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


def load_case(name: str, fold: int, guess: str = "th"):
    """The binarized training rows of one fit (paper protocol; ``guess == "none"``: every
    midpoint threshold instead of the threshold guess; ``dl85:NAME``: the binary file as is)."""
    import numpy as np
    import pandas as pd
    from sklearn.model_selection import KFold, train_test_split

    from treebench.binarize.threshold_guess import ThresholdGuess
    from treebench.binarize.thresholds import Midpoints

    if name.startswith("dl85:"):
        import gzip
        import pathlib

        base = pathlib.Path(os.environ["TREEBENCH_DATA_DIR"]) / "binary-dl85"
        stem = name.split(":", 1)[1]
        for p in (base / f"{stem}.txt", base / f"{stem}.txt.gz"):
            if p.exists():
                with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as f:
                    a = np.loadtxt(f, dtype=np.int64)
                return a[:, 1:].astype(np.float64), a[:, 0], None, (20, 3)
        raise FileNotFoundError(f"{stem}: not found in {base}")
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
    if guess == "none":
        b = Midpoints().fit(Xtr, ytr)
    else:
        b = ThresholdGuess(n_estimators=ne, max_depth=md, random_state=42).fit(Xtr, ytr)
    return np.asarray(b.transform(Xtr), dtype=np.float64), np.asarray(ytr), lam, (ne, md)


def _fit_one(solver, name, fold, depth, guess, limit, lam_arg, conn) -> None:
    import numpy as np

    Xb, y, lam, (ne, md) = load_case(name, fold, guess)
    lam = lam if lam_arg is None else lam_arg
    lb = {"n_estimators": ne, "max_depth": md} if guess == "th+lb" else None
    if solver == "ours":
        from treebench.algorithms.gosdt import GOSDTClassifier, warmup

        warmup()
        est = GOSDTClassifier(regularization=lam, max_depth=depth, lb_guess=lb, time_limit=limit,
                              random_state=42)
        # first-call costs of the estimator layer (scikit-learn's input checks discover
        # dataframe plugins once per process) outside the timed fit, as for streed below
        GOSDTClassifier(regularization=lam, max_depth=depth).fit(Xb[:20], y[:20])
    elif solver == "streed":
        from treebench.registry import ALGORITHMS

        if lb is not None or depth is None:
            raise SystemExit("streed takes no lower-bound guess and needs a depth")
        est = ALGORITHMS.get("streed").create(max_depth=depth, cost_complexity=lam,
                                              time_limit=limit)
        est.fit(Xb[:20], y[:20])  # import and load the library outside the timed fit
    else:
        from treebench.registry import ALGORITHMS

        est = ALGORITHMS.get("gosdt-ref").create(regularization=lam, max_depth=depth,
                                                 lb_guess=lb, time_limit=limit, random_state=42)
    conn.send("ready")
    t = time.perf_counter()
    est.fit(Xb, y)
    secs = time.perf_counter() - t
    si = getattr(est, "solve_info_", {}) or {}
    ref_s = float(si.get("guess_seconds", 0.0) or 0.0)
    if solver == "streed":
        obj = est.tree_.training_error(Xb, y) / len(y) + lam * est.tree_.n_leaves
        timed_out = bool(si.get("timed_out")) or secs >= limit
    else:
        obj = si["objective"]
        timed_out = bool(si.get("timed_out"))
    conn.send({"status": "timeout" if timed_out else "ok", "seconds": secs,
               "ref_seconds": ref_s, "search_seconds": secs - ref_s,
               "objective": float(obj), "leaves": int(est.tree_.n_leaves),
               "columns": Xb.shape[1], "optimality": si.get("optimality"), "lam": lam,
               "peak_rss_mb": vm_hwm_mb(), "n": int(np.asarray(y).shape[0]),
               "reference_bound": float(si.get("reference_bound", float("nan")))})
    conn.close()


def run_one(solver, name, fold, depth, guess, limit, mem_gb, lam=None):
    status, res, peak = run_fresh(_fit_one, (solver, name, fold, depth, guess, limit, lam),
                                  limit, mem_gb=mem_gb)
    if res is None:
        return {"status": status, "seconds": float("nan"), "objective": float("nan"),
                "leaves": -1, "peak_rss_mb": peak}
    return res


def _num(v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return v


def _search_seconds(r) -> float:
    """Fit seconds minus the reference GBDT's (``search_seconds``); rows of an older CSV
    without it: the fit seconds when no reference was fitted, else NaN."""
    v = _num(r.get("search_seconds"))
    if math.isnan(v) and r.get("guess") != "th+lb":
        v = _num(r.get("seconds"))
    return v


def _summary(name, qs) -> str:
    return (f"ours/{name} over {len(qs)} fits where both finished: median "
            f"{statistics.median(qs):.3f}, worst {max(qs):.3f}, geometric mean "
            f"{math.exp(sum(map(math.log, qs)) / len(qs)):.3f}")


def table(rows) -> str:
    """Markdown: one line per fit (case, λ, fold, depth, guess) with every solver's fit
    seconds, reference seconds (lower-bound guess), peak MB and R, and the ratios ours / peer
    of the search seconds (fit - reference) and of the fit seconds where both finished."""
    solvers = [s for s in ("ours", "ref", "streed") if any(r["solver"] == s for r in rows)]
    peers = [s for s in solvers if s != "ours"]
    by = {}
    for r in rows:
        key = (r["case"], f"{_num(r.get('lam')):g}", r["fold"], r["depth"], r["guess"])
        by.setdefault(key, {})[r["solver"]] = r
    head = ["case", "λ", "fold", "depth", "guess"]
    for s in solvers:
        head += [f"{s} s", f"{s} ref s", f"{s} MB", f"{s} R"]
    for p in peers:
        head += [f"search ours/{p}", f"fit ours/{p}"]
    lb_rows = any(k == "th+lb" for k in (r["guess"] for r in rows)) and "ref" in peers
    if lb_rows:  # never worse than the package's tree by more than Theorem 4.3 allows
        head += ["ref's Thm 4.3 bound − ours R"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = {p: ([], []) for p in peers}
    margins = []
    for key, d in by.items():
        cells = [str(k) for k in key]
        for s in solvers:
            r = d.get(s, {})
            st = r.get("status")
            sec, mb, obj = _num(r.get("seconds")), _num(r.get("peak_rss_mb")), _num(r.get("objective"))
            ref = _num(r.get("ref_seconds"))
            cells.append("-" if not r else (f"{sec:.3f}" if st == "ok" else f"{st}"))
            cells.append("-" if math.isnan(ref) or key[4] != "th+lb" else f"{ref:.3f}")
            cells.append("-" if math.isnan(mb) else f"{mb:.0f}")
            cells.append("-" if math.isnan(obj) else f"{obj:.6f}")
        o = d.get("ours", {})
        for p in peers:
            f = d.get(p, {})
            if o.get("status") == "ok" and f.get("status") == "ok":
                qs = _search_seconds(o) / _search_seconds(f)
                q = _num(o["seconds"]) / _num(f["seconds"])
                if not math.isnan(qs):
                    ratios[p][0].append(qs)
                ratios[p][1].append(q)
                cells += ["-" if math.isnan(qs) else f"{qs:.3f}", f"{q:.3f}"]
            else:
                cells += ["-", "-"]
        if lb_rows:
            f = d.get("ref", {})
            m = _num(f.get("reference_bound")) - _num(o.get("objective"))
            ok = key[4] == "th+lb" and o.get("status") == "ok" and f.get("status") == "ok"
            if ok and not math.isnan(m):
                margins.append(m)
            cells.append(f"{m:+.6f}" if ok and not math.isnan(m) else "-")
        out.append("| " + " | ".join(cells) + " |")
    for p, (qs, qf) in ratios.items():
        if qs:
            out.append("\nsearch seconds " + _summary(p, qs))
        if qf:
            out.append(("\n" if not qs else "") + "fit seconds " + _summary(p, qf))
    if margins:
        out.append(f"\nTheorem 4.3 with t = the package's tree (ours R ≤ its bound): holds on "
                   f"{sum(m >= -1e-9 for m in margins)} of {len(margins)} fits, smallest "
                   f"margin {min(margins):.6f}")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="compas,broward,breast_cancer",
                    help=f"comma list of {', '.join(CASES)} or dl85:NAME (binary DL8.5 files)")
    ap.add_argument("--folds", default="0")
    ap.add_argument("--depths", default="3,5", help="comma list; 'none' = unlimited")
    ap.add_argument("--guesses", default="th,th+lb",
                    help="none (all midpoints), th (threshold guess) and/or th+lb")
    ap.add_argument("--lams", default=None,
                    help="comma list of λ (default: the paper's per-dataset λ; needed for dl85:)")
    ap.add_argument("--solvers", default="ours,ref", help="ours, ref (gosdt-ref), streed")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--csv", default=None, help="write rows here (appended after every fit)")
    ap.add_argument("--table-from", default=None, help="reprint the table of an earlier --csv")
    a = ap.parse_args(argv)
    if a.table_from:
        with open(a.table_from, newline="") as f:
            print(table(list(csv.DictReader(f))))
        return
    lams = [None] if a.lams is None else [float(v) for v in a.lams.split(",")]
    rows = []
    keys = ["case", "lam", "fold", "depth", "guess", "solver", "status", "seconds", "objective",
            "leaves", "columns", "optimality", "peak_rss_mb", "n", "ref_seconds",
            "search_seconds", "reference_bound"]
    if a.csv and not os.path.exists(a.csv):
        with open(a.csv, "w", newline="") as f:
            csv.DictWriter(f, fieldnames=keys).writeheader()
    for name in a.cases.split(","):
        one = name in ("spiral", "breast_cancer") or name.startswith("dl85:")
        folds = [0] if one else [int(f) for f in a.folds.split(",")]
        for lam in lams:
            if lam is None and name.startswith("dl85:"):
                raise SystemExit(f"{name}: give --lams (the DL8.5 files have no paper λ)")
            for fold in folds:
                for ds in a.depths.split(","):
                    depth = None if ds == "none" else int(ds)
                    for guess in a.guesses.split(","):
                        for solver in a.solvers.split(","):
                            if solver == "streed" and (guess == "th+lb" or depth is None):
                                continue
                            r = run_one(solver, name, fold, depth, guess, a.time_limit,
                                        a.mem_gb, lam)
                            r.update(case=name, fold=fold, depth=ds, guess=guess, solver=solver)
                            r.setdefault("lam", lam if lam is not None else
                                         CASES.get(name, (None, None, float("nan")))[2])
                            rows.append(r)
                            print(f"{name:14s} λ={_num(r['lam']):g} f{fold} d={ds:4s} "
                                  f"{guess:5s} {solver:6s} {r['status']:8s} "
                                  f"{r['seconds']:9.3f}s (ref "
                                  f"{_num(r.get('ref_seconds')):.3f}s) R={r['objective']:.6f} "
                                  f"leaves={r['leaves']} rss={r['peak_rss_mb']:.0f}MB",
                                  flush=True)
                            if a.csv:
                                with open(a.csv, "a", newline="") as f:
                                    csv.DictWriter(f, fieldnames=keys,
                                                   extrasaction="ignore").writerow(r)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
