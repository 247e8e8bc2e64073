"""Search seconds of our GOSDT (`solve_info_["search_seconds"]`: the branch-and-bound alone,
without the reference GBDT or the data set-up) on the paper's fits, median of ``--repeat`` fits
in one process after the JIT warm-up, with the objective and the number of subproblems: the
quick before/after check for a change of the search (run it from two checkouts).

Usage::

    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_search_seconds.py compas:0:3 compas:0:5 \
        --guesses th+lb --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gosdt_vs_ref import CASES, load_case  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fits", nargs="+", help="CASE:FOLD:DEPTH, e.g. compas:0:3")
    ap.add_argument("--guesses", default="th+lb", help="th and/or th+lb (comma list)")
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args(argv)
    from treebench.algorithms.gosdt import GOSDTClassifier, warmup

    warmup()
    print("| fit | guess | search s (median) | min | R | leaves | subproblems |")
    print("|---|---|---|---|---|---|---|")
    for spec in a.fits:
        name, fold, depth = spec.split(":")
        if name not in CASES:
            raise SystemExit(f"unknown case {name!r}")
        X, y, lam, (ne, md) = load_case(name, int(fold), "th")
        for guess in a.guesses.split(","):
            lb = {"n_estimators": ne, "max_depth": md} if guess == "th+lb" else None
            ts = []
            for _ in range(a.repeat):
                est = GOSDTClassifier(regularization=lam, max_depth=int(depth), lb_guess=lb,
                                      random_state=42).fit(X, y)
                si = est.solve_info_
                ts.append(si["search_seconds"])
            print(f"| {spec} | {guess} | {statistics.median(ts):.4f} | {min(ts):.4f} | "
                  f"{si['objective']:.6f} | {si['leaves']} | {si['subproblems']} |", flush=True)


if __name__ == "__main__":
    main()
