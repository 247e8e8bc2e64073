"""DPDT's exhaustive generator on raw numeric features: backward induction (``search="dp"``)
against the numeric optimal-tree search (``search="numeric"``, what ``search="auto"`` runs;
for ``alpha > 0`` its exact-float search), on the Quant-BnB training files.

Both return the same tree (checked here: features, thresholds, children, class counts). Every
fit runs in a fresh process: data loaded and kernels warmed up before the clock starts, a time
limit, peak resident memory (VmHWM) reported. Needs ``TREEBENCH_DATA_DIR`` (``quantbnb/``).

    python benchmarks/dpdt_numeric.py --datasets raisin,bank,wilt --depths 2 --time-limit 120
    python benchmarks/dpdt_numeric.py --datasets raisin,bank --depths 2 --alphas 0,0.01,0.1
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402
from _quantbnb import load  # noqa: E402


def _fit_one(search: str, name: str, depth: int, limit: float, alpha: float, conn) -> None:
    """Child process: load, warm up, say "ready", fit once, send a result dict."""
    from treebench.algorithms.dpdt import DPDTClassifier, warmup

    X, y = load(name)
    warmup()
    conn.send("ready")
    est = DPDTClassifier(max_depth=depth, candidates="exhaustive", search=search,
                         time_limit=limit, cache_limit_mb=4096, alpha=alpha)
    t = time.perf_counter()
    est.fit(X, y)
    sec = time.perf_counter() - t
    tr = est.tree_
    conn.send({"seconds": sec, "errors": est.solve_info_["training_error"],
               "objective": est.solve_info_["objective"],
               "timed_out": bool(est.solve_info_["timed_out"]),
               "tree": (tr.feature.tolist(), tr.threshold.tolist(), tr.left.tolist(),
                        tr.right.tolist(), tr.value.tolist()),
               "peak_rss_mb": vm_hwm_mb()})
    conn.close()


def _run(search, name, depth, limit, alpha):
    _, res, _ = run_fresh(_fit_one, (search, name, depth, limit, alpha), limit, grace=60,
                          startup=600)
    return res


def _cell(r, limit):
    if r is None or r["timed_out"]:
        return math.nan, f">{limit:g}"
    return r["seconds"], f"{r['seconds']:.4f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="raisin,bank,wilt")
    ap.add_argument("--depths", default="2")
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--alphas", default="0", help="comma-separated values of alpha")
    a = ap.parse_args(argv)
    print("| dataset | depth | α | dp s | numeric s | numeric/dp | same tree? | errors | "
          "peak MB dp / numeric |\n|---|---|---|---|---|---|---|---|---|", flush=True)
    cases = [(name, int(d), float(al)) for name in a.datasets.split(",")
             for d in a.depths.split(",") for al in a.alphas.split(",")]
    for name, depth, alpha in cases:
        _row(name, depth, alpha, a.time_limit)


def _row(name, depth, alpha, limit):
    """Fit both searches in fresh processes and print one table row ("same tree" also
    compares the objectives with ==)."""
    dp, num = (_run(s, name, depth, limit, alpha) for s in ("dp", "numeric"))
    sd, td = _cell(dp, limit)
    sn, tn = _cell(num, limit)
    same = "-"
    if dp and num and not (dp["timed_out"] or num["timed_out"]):
        ok = dp["tree"] == num["tree"] and dp["objective"] == num["objective"]
        same = "yes" if ok else "NO"
    errs = f"{num['errors']:g}" if num else "-"
    mb = f"{dp['peak_rss_mb']:.0f} / {num['peak_rss_mb']:.0f}" if dp and num else "-"
    ratio = f"{sn / sd:.5f}" if sd == sd and sn == sn else "-"
    print(f"| {name} | {depth} | {alpha:g} | {td} | {tn} | {ratio} | {same} | {errs} | {mb} |",
          flush=True)


if __name__ == "__main__":
    main()
