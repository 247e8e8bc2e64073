"""Top-k (treebench) against pydl8-5, pystreed and scikit-learn CART on the binary-dl85 datasets.

Every fit runs in its own fresh process (``spawn``), the way the paper's C++ timings were taken:
the child loads the data, warms up (JIT compilation is loaded from numba's cache and is never
timed), then times ``fit`` alone and reports the fit seconds, the training accuracy and its peak
resident memory (``ru_maxrss``, the whole process). The parent enforces the time limit (+30 s
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

    TREEBENCH_DATA_DIR=/work/shared/datasets python benchmarks/topk_vs_peers.py \
        --datasets tic-tac-toe,kr-vs-kp --depths 3,4 --ks 1,4,16,all --csv /tmp/topk.csv

The table prints fit seconds, training accuracy and ``ratio`` = treebench time / dl85-paper time
at k = all (and / dl85-default), measured in the same run. Times are never asserted.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import math
import multiprocessing as mp
import os
import pathlib
import time

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
    import resource

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
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    conn.send(out)
    conn.close()


def run_one(solver, name, depth, k, limit, mem_gb, cache_mb, tie_break="smaller"):
    import psutil

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_fit_one,
                    args=(solver, name, depth, k, limit, cache_mb, tie_break, child))
    p.start()
    child.close()
    t0 = time.perf_counter()
    status, peak = "ok", 0.0
    proc = psutil.Process(p.pid)
    res = None
    ready = False
    while True:
        if parent.poll(0.1):
            try:
                msg = parent.recv()
            except EOFError:
                res = None
                break
            if msg == "ready":  # the time limit starts now (loading/compiling excluded)
                ready = True
                t0 = time.perf_counter()
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
                "seconds": float("nan"), "accuracy": float("nan"), "peak_rss_mb": peak * 1024}
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
    a = ap.parse_args(argv)
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


def _summary(rows):
    rat = [r["ratio_dl85_paper"] for r in rows if r.get("ratio_dl85_paper")]
    ratb = [r["ratio_dl85_default"] for r in rows if r.get("ratio_dl85_default")]
    if rat:
        gm = math.exp(sum(math.log(x) for x in rat) / len(rat))
        print(f"\nk=all vs dl85-paper: geometric-mean ratio {gm:.3f} over {len(rat)} cells, "
              f"worst {max(rat):.3f}; identical accuracy in "
              f"{sum(bool(r.get('same_acc_dl85_paper')) for r in rows)} cells")
    if ratb:
        gm = math.exp(sum(math.log(x) for x in ratb) / len(ratb))
        print(f"k=all vs dl85-default: geometric-mean ratio {gm:.3f}, worst {max(ratb):.3f}")


if __name__ == "__main__":
    main()
