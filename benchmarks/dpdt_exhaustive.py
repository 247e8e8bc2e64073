"""DPDT's exhaustive generator: backward induction (``search="dp"``) vs branch-and-bound on the
search layer (``search="layer"``) on the binary DL8.5 datasets.

Every fit runs in a fresh process (spawn): the data are loaded and the kernels warmed up
before the clock starts, the fit has a time limit, and the process reports its peak resident
memory (VmHWM). Prints one row per (dataset, depth, α): seconds of both, their ratio
(layer / dp), whether the two trees are identical (features, thresholds, children, values),
both objectives, peak memory. Needs ``TREEBENCH_DATA_DIR`` (``binary-dl85/``).

    nice -n 10 python benchmarks/dpdt_exhaustive.py --depths 2,3,4 --alphas 0,0.01 \\
        --time-limit 60 --csv dpdt-exhaustive.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402
from topk_vs_peers import DATASETS, load_dl85  # noqa: E402


def _fit_one(search, name, depth, alpha, limit, conn):
    """Child process: load, warm up, say "ready", fit once, send a result dict."""
    import numpy as np

    from treebench.algorithms.dpdt import DPDTClassifier, warmup

    X, y = load_dl85(name)
    X = X.astype(np.float64)
    warmup()
    conn.send("ready")
    est = DPDTClassifier(max_depth=depth, candidates="exhaustive", alpha=alpha, search=search,
                         time_limit=limit, cache_limit_mb=2048)
    t = time.perf_counter()
    est.fit(X, y)
    sec = time.perf_counter() - t
    info = est.solve_info_
    tr = est.tree_
    conn.send({
        "seconds": sec,
        "objective": info["objective"],
        "timed_out": bool(info["timed_out"]),
        "states": info["states"],
        "search": info["search"],
        "tree": (tr.feature.tolist(), tr.threshold.tolist(), tr.left.tolist(),
                 tr.right.tolist(), tr.value.tolist()),
        "peak_rss_mb": vm_hwm_mb(),
    })
    conn.close()


def run_one(search, name, depth, alpha, limit):
    _, res, _ = run_fresh(_fit_one, (search, name, depth, alpha, limit), limit, grace=60,
                          startup=600)
    if res is None:
        return {"seconds": math.nan, "objective": math.nan, "timed_out": True, "tree": None,
                "peak_rss_mb": math.nan, "states": -1, "search": search}
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--depths", default="2,3,4")
    ap.add_argument("--alphas", default="0,0.01")
    ap.add_argument("--searches", default="dp,layer")
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    a = ap.parse_args(argv)
    searches = a.searches.split(",")
    rows = []
    head = (f"{'dataset':14s} {'d':>2s} {'alpha':>6s} {'dp s':>9s} {'layer s':>9s} "
            f"{'ratio':>7s} {'equal':>5s} {'objective dp':>14s} {'objective layer':>16s} "
            f"{'MB dp':>7s} {'MB layer':>8s}")
    print(head, flush=True)
    for name in a.datasets.split(","):
        for depth in [int(x) for x in a.depths.split(",")]:
            for alpha in [float(x) for x in a.alphas.split(",")]:
                res = {s: run_one(s, name, depth, alpha, a.time_limit) for s in searches}
                dp, ly = res.get("dp"), res.get("layer")

                def sec(r):
                    if r is None:
                        return math.nan, "-"
                    if r["timed_out"]:
                        return math.nan, f">{a.time_limit:g}"
                    return r["seconds"], f"{r['seconds']:.3f}"

                sd, td = sec(dp)
                sl, tl = sec(ly)
                ratio = sl / sd if sd == sd and sl == sl and sd > 0 else math.nan
                equal = "-"
                if dp and ly and dp["tree"] is not None and ly["tree"] is not None and not (
                        dp["timed_out"] or ly["timed_out"]):
                    equal = "yes" if (dp["tree"] == ly["tree"]
                                      and dp["objective"] == ly["objective"]) else "NO"
                od = f"{dp['objective']!r}" if dp else "-"
                ol = f"{ly['objective']!r}" if ly else "-"
                md = f"{dp['peak_rss_mb']:.0f}" if dp else "-"
                ml = f"{ly['peak_rss_mb']:.0f}" if ly else "-"
                print(f"{name:14s} {depth:2d} {alpha:6g} {td:>9s} {tl:>9s} "
                      f"{ratio:7.3f} {equal:>5s} {od:>14s} {ol:>16s} {md:>7s} {ml:>8s}",
                      flush=True)
                rows.append({"dataset": name, "depth": depth, "alpha": alpha,
                             "dp_seconds": sd, "layer_seconds": sl, "ratio": ratio,
                             "equal": equal, "dp_objective": od, "layer_objective": ol,
                             "dp_timed_out": dp["timed_out"] if dp else "",
                             "layer_timed_out": ly["timed_out"] if ly else "",
                             "dp_peak_mb": md, "layer_peak_mb": ml})
    ratios = [r["ratio"] for r in rows if r["ratio"] == r["ratio"]]
    if ratios:
        ratios.sort()
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\nlayer/dp time ratio over {len(ratios)} fits both finish: geometric mean "
              f"{gm:.4f}, median {ratios[len(ratios) // 2]:.4f}, worst {ratios[-1]:.4f}; "
              f"trees equal on {sum(r['equal'] == 'yes' for r in rows)} of "
              f"{sum(r['equal'] in ('yes', 'NO') for r in rows)} compared")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
