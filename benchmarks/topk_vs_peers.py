"""Top-k (treebench) against pydl8-5, pystreed and scikit-learn CART on the binary-dl85 datasets.

Every fit runs in its own fresh process (``spawn``), the way the paper's C++ timings were taken:
the child loads the data, warms up (JIT compilation is loaded from numba's cache and is never
timed), then times ``fit`` alone and reports the fit seconds, the training accuracy and its peak
resident memory (``VmHWM``, the whole process: interpreter, imports, data and solver). The parent enforces the time limit (+30 s
grace) and a memory cap (default 6 GB, polled with psutil); a killed run is a row with status
``timeout``/``memout``, never a missing row.

Peers, all at k = all (optimal trees of depth <= h):

* ``dl85-paper``: pydl8-5 with the search of the Top-k paper's code base
  (``depth_two_special_algo=False, similar_lb=False, similar_for_branching=False, desc=True,
  repeat_sort=True, cache_type=Cache_HashCover``);
* ``dl85-default``: pydl8-5's defaults (specialised depth-2 solver, similarity bounds);
* ``streed``: pystreed (MurTree/STreeD) minimising misclassifications (``cost_complexity=0``);
* ``cart``: scikit-learn's CART with entropy (context for k = 1).

Usage (limit the grid on a shared machine; the full grid can take hours)::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/topk_vs_peers.py \
        --datasets tic-tac-toe,kr-vs-kp --depths 3,4 --ks 1,4,16,all --csv topk.csv

At the end a markdown table gives, per dataset and depth, the fit seconds and training accuracy
of every solver and the ratios treebench / peer at k = all, measured in the same run, with the
geometric means; ``--table-from results.csv`` reprints it from an earlier run. Times are never
asserted. A STreeD fit that returns without a proof of optimality (its time limit) is a
``timeout`` row. The before/after tables of the optimal-search work (Top-k k = all against STreeD, depths
3-5, 120 s) are in ``docs/search-speed.md``.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import os
import pathlib
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402

DATASETS = ["tic-tac-toe", "kr-vs-kp", "mushroom", "splice-1", "pendigits", "segment", "anneal",
            "german-credit"]


def load_dl85(name: str):
    import numpy as np

    base = pathlib.Path(os.environ["TREEBENCH_DATA_DIR"]) / "binary-dl85"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as f:
                a = np.loadtxt(f, dtype=np.int64)
            return np.ascontiguousarray(a[:, 1:]), a[:, 0]
    raise FileNotFoundError(f"{name}: not found in {base}")


def _fit_one(solver: str, name: str, depth: int, k, limit: float, cache_mb: float, tie_break,
             conn) -> None:
    """Child process: load and warm up, say "ready", fit once, send a result dict."""
    import numpy as np

    X, y = load_dl85(name)
    out = {"status": "ok", "timed_out": False}
    if solver == "topk":
        from treebench.algorithms.topk import TopKClassifier, warmup

        warmup()
        conn.send("ready")
        est = TopKClassifier(k=k, max_depth=depth, time_limit=limit, cache_limit_mb=cache_mb,
                             tie_break=tie_break)
        Xf = X.astype(np.float64)
        t = time.perf_counter()
        est.fit(Xf, y)
        out["seconds"] = time.perf_counter() - t
        out["accuracy"] = est.solve_info_["training_accuracy"]
        out["timed_out"] = est.solve_info_["timed_out"]
        out["cache_mb"] = est.solve_info_["cache_peak_bytes"] / 2**20
    elif solver.startswith("dl85"):
        from pydl85 import Cache_Type, DL85Classifier

        conn.send("ready")

        kw = dict(max_depth=depth, min_sup=1, time_limit=int(math.ceil(limit)))
        if solver == "dl85-paper":
            kw.update(depth_two_special_algo=False, similar_lb=False, similar_for_branching=False,
                      desc=True, repeat_sort=True, cache_type=Cache_Type.Cache_HashCover)
        est = DL85Classifier(**kw)
        Xi = X.astype(np.int32)
        t = time.perf_counter()
        est.fit(Xi, y)
        out["seconds"] = time.perf_counter() - t
        out["accuracy"] = float(np.mean(est.predict(Xi) == y))
        out["timed_out"] = bool(getattr(est, "timeout_", False))
    elif solver == "streed":
        from pystreed import STreeDClassifier

        conn.send("ready")

        est = STreeDClassifier(max_depth=depth, max_num_nodes=None, cost_complexity=0.0,
                               time_limit=limit)
        Xi = X.astype(np.int32)
        t = time.perf_counter()
        est.fit(Xi, y)
        out["seconds"] = time.perf_counter() - t
        out["accuracy"] = float(np.mean(est.predict(Xi) == y))
        # at the time limit pystreed returns its best tree without a proof of optimality
        fr = getattr(est, "fit_result", None)
        out["timed_out"] = bool(fr is not None and not fr.is_optimal())
    elif solver == "cart":
        from sklearn.tree import DecisionTreeClassifier

        conn.send("ready")

        est = DecisionTreeClassifier(criterion="entropy", max_depth=depth, random_state=0)
        t = time.perf_counter()
        est.fit(X, y)
        out["seconds"] = time.perf_counter() - t
        out["accuracy"] = float(est.score(X, y))
    else:  # pragma: no cover
        raise ValueError(solver)
    out["peak_rss_mb"] = vm_hwm_mb()
    conn.send(out)
    conn.close()


def run_one(solver, name, depth, k, limit, mem_gb, cache_mb, tie_break="smaller"):
    status, res, peak = run_fresh(_fit_one, (solver, name, depth, k, limit, cache_mb, tie_break),
                                  limit, mem_gb=mem_gb)
    if res is None:
        return {"status": status, "seconds": float("nan"), "accuracy": float("nan"),
                "peak_rss_mb": peak}
    if res.get("timed_out"):
        res["status"] = "timeout"
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--depths", default="3,4,5")
    ap.add_argument("--ks", default="1,2,4,8,16,all")
    ap.add_argument("--peers", default="dl85-paper,dl85-default,streed,cart")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--mem-gb", type=float, default=6.0)
    ap.add_argument("--cache-mb", type=float, default=2048.0)
    ap.add_argument("--tie-break", default="auto", choices=["auto", "smaller", "first"],
                    help="TopKClassifier(tie_break=...); auto: 'first' at k=all (an error-only "
                    "optimal search like DL8.5's), the default 'smaller' at k < all")
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    ap.add_argument("--table-from", default=None, metavar="CSV",
                    help="print the summary table of an earlier run's CSV and exit")
    a = ap.parse_args(argv)
    if a.table_from:
        with open(a.table_from, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            for key in ("seconds", "accuracy", "peak_rss_mb", "ratio_dl85_paper",
                        "ratio_dl85_default"):
                r[key] = float(r[key]) if r.get(key) not in (None, "") else None
            r["depth"] = int(r["depth"])
        _summary(rows)
        return
    from treebench.algorithms.topk import warmup

    warmup()  # fill numba's on-disk cache once, so that children only load it
    rows = []
    peers = [p for p in a.peers.split(",") if p]
    ks = [k if k == "all" else int(k) for k in a.ks.split(",")]
    for name in a.datasets.split(","):
        for depth in [int(d) for d in a.depths.split(",")]:
            cell = {}
            for k in ks:
                tb = a.tie_break
                if tb == "auto":
                    tb = "first" if k == "all" else "smaller"
                cell[("topk", k)] = run_one("topk", name, depth, k, a.time_limit, a.mem_gb,
                                            a.cache_mb, tb)
                _print_row(name, depth, f"topk k={k}", cell[("topk", k)], None)
            for peer in peers:
                cell[(peer, "all")] = run_one(peer, name, depth, "all", a.time_limit, a.mem_gb,
                                              a.cache_mb)
                _print_row(name, depth, peer, cell[(peer, "all")], None)
            ok = {key: r for key, r in cell.items() if r["status"] == "ok"}
            ref = ok.get(("dl85-paper", "all"))
            refb = ok.get(("dl85-default", "all"))
            ours = ok.get(("topk", "all"))
            for (solver, k), r in cell.items():
                row = {"dataset": name, "depth": depth, "solver": solver, "k": k, **r}
                if solver == "topk" and k == "all" and ours and ref:
                    row["ratio_dl85_paper"] = r["seconds"] / ref["seconds"]
                    row["same_acc_dl85_paper"] = abs(r["accuracy"] - ref["accuracy"]) < 1e-9
                if solver == "topk" and k == "all" and ours and refb:
                    row["ratio_dl85_default"] = r["seconds"] / refb["seconds"]
                rows.append(row)
            if ours:
                msg = [f"   -> {name} depth {depth}: topk(all) {ours['seconds']:.3f}s"]
                for label, r in (("dl85-paper", ref), ("dl85-default", refb),
                                 ("streed", ok.get(("streed", "all")))):
                    if r:
                        msg.append(f"/{label} = {ours['seconds'] / r['seconds']:.3f}")
                    elif (label, "all") in cell:
                        msg.append(f"{label}: {cell[(label, 'all')]['status']}")
                print(", ".join(msg), flush=True)
    _summary(rows)
    if a.csv:
        keys = sorted({k for r in rows for k in r})
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


def _print_row(name, depth, label, r, _):
    print(f"{name:14s} h={depth} {label:14s} {r['status']:8s} "
          f"{r['seconds']:9.3f}s acc={r['accuracy']:.6f} rss={r.get('peak_rss_mb', 0):8.1f}MB",
          flush=True)


def _fmt(r):
    if r is None:
        return "-"
    if r["status"] != "ok":
        acc = r.get("accuracy")
        tail = f" ({acc:.4f})" if acc is not None and acc == acc else ""
        return f"{r['status']}{tail}"
    return f"{r['seconds']:.3f}s ({r['accuracy']:.4f})"


def _summary(rows):
    """Markdown table: one line per (dataset, depth); seconds (training accuracy)."""
    cells = {}
    for r in rows:
        cells.setdefault((r["dataset"], int(r["depth"])), {})[(r["solver"], str(r["k"]))] = r
    ks = sorted({str(r["k"]) for r in rows if r["solver"] == "topk"},
                key=lambda k: (k == "all", int(k) if k != "all" else 0))
    peers = [p for p in ("dl85-paper", "dl85-default", "streed", "cart")
             if any(r["solver"] == p for r in rows)]
    head = ([f"topk k={k}" for k in ks] + peers
            + ["all/dl85-paper", "all/dl85-default", "all/streed", "rss topk/dl85-paper MB",
               "rss topk/streed MB"])
    print("\n| dataset | h | " + " | ".join(head) + " |")
    print("|" + "---|" * (len(head) + 2))
    rat, ratb, worst = [], [], []
    for (name, depth), c in cells.items():
        line = [_fmt(c.get(("topk", k))) for k in ks] + [_fmt(c.get((p, "all"))) for p in peers]
        ours = c.get(("topk", "all"))
        for p, acc in (("dl85-paper", rat), ("dl85-default", ratb), ("streed", worst)):
            ref = c.get((p, "all"))
            if ours and ref and ours["status"] == "ok" and ref["status"] == "ok":
                x = ours["seconds"] / ref["seconds"]
                acc.append(x)
                same = "" if abs(ours["accuracy"] - ref["accuracy"]) < 1e-9 else " (acc differs!)"
                line.append(f"{x:.3f}{same}")
            else:
                line.append("-")
        ref = c.get(("dl85-paper", "all"))
        line.append(f"{ours['peak_rss_mb']:.0f}/{ref['peak_rss_mb']:.0f}" if ours and ref else "-")
        ref = c.get(("streed", "all"))
        line.append(f"{ours['peak_rss_mb']:.0f}/{ref['peak_rss_mb']:.0f}" if ours and ref else "-")
        print(f"| {name} | {depth} | " + " | ".join(line) + " |")
    for label, xs in (("dl85-paper (a)", rat), ("dl85-default (b)", ratb), ("streed", worst)):
        if xs:
            gm = math.exp(sum(math.log(x) for x in xs) / len(xs))
            med = sorted(xs)[len(xs) // 2] if len(xs) % 2 else (
                sorted(xs)[len(xs) // 2 - 1] + sorted(xs)[len(xs) // 2]) / 2
            print(f"k=all time ratio to {label}: geometric mean {gm:.3f}, median {med:.3f}, "
                  f"worst {max(xs):.3f} over {len(xs)} cells where both finished")


if __name__ == "__main__":
    main()
