"""Where and why ours and the authors' package differ on one fit with the lower-bound guess
(docs/gosdt-vs-ref.md, "The five fits where ours was worse").

For one fit of the paper protocol (``CASE:FOLD:DEPTH``, threshold guess + lower-bound guess,
the reference GBDT fitted once and given to both solvers) it walks both trees from the root
while they agree and prints, at the first node where they split differently, each solver's
subtree and, for the root feature of each, its two children **solved alone** (the child's rows
as the whole problem, with the same reference errors and the same per-leaf penalty in count
units) by both solvers. Costs are in count units: errors + λN per leaf. ``--path 4=1 8=1``
solves that one subproblem alone in both solvers instead.

Usage::

    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_lb_diff.py fico:3:5
    TREEBENCH_DATA_DIR=... python benchmarks/gosdt_lb_diff.py fico:3:5 --path 4=1 8=1

Nothing is timed.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gosdt_vs_ref import load_case  # noqa: E402


def ours_alone(X, y, ref_wrong, lam_count, depth):
    """Our search on (X, y) with these reference errors: (cost, root feature, tree arrays)."""
    from treebench.search import gosdt as G
    from treebench.search import engine as E
    from treebench.algorithms.gosdt import warmup
    from treebench.search.bitset import pack_rows
    from treebench.search.cache import entries_for_mb
    from treebench.search.state import bitset_data

    warmup()
    n, d = X.shape
    nc = int(y.max()) + 1
    out = E.fit_gosdt(G.gosdt_problem(bitset_data(X, y, nc), depth, lam_count,
                                      max_entries=entries_for_mb(1024, (n + 63) // 64),
                                      ref_wrong=pack_rows(ref_wrong)))
    return float(out[0]), int(out[2][0])


def package_alone(X, y, y_ref, lam_count, depth):
    """The package (reference_LB set) on (X, y) with these reference labels: (cost, root
    feature), the cost recounted from its tree."""
    import pandas as pd
    from gosdt import GOSDTClassifier

    from treebench.tree import adapters

    n = len(y)
    est = GOSDTClassifier(regularization=lam_count / n, allow_small_reg=True, depth_budget=depth)
    make = est._GOSDTClassifier__create_configuration

    def with_reference_lb():
        make()
        est.config_.reference_LB = True

    est._GOSDTClassifier__create_configuration = with_reference_lb
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        est.fit(pd.DataFrame(X.astype(np.int8)), y, y_ref=y_ref)
    nc = int(y.max()) + 1
    tree = adapters.from_nested(est.trees_[0].tree, adapters.describe_gosdt, nc,
                                X.astype(float), y, np.ones(n))
    err = tree.training_error(X.astype(float), y, np.ones(n))
    return float(err + lam_count * tree.n_leaves), int(tree.feature[0])


def describe(tree, i, X, y, ref_pred, rows, lam_count):
    """Nested summary of node ``i`` of a `TreeArrays` on ``rows``."""
    f = int(tree.feature[i])
    yy = y[rows]
    leaf_err = len(yy) - int(np.bincount(yy).max()) if len(yy) else 0
    node = {"f": f, "n": len(rows), "e": leaf_err, "b": int((ref_pred[rows] != yy).sum())}
    if f < 0:
        node.update(cost=leaf_err + lam_count, leaves=1)
        return node
    kids = [describe(tree, c, X, y, ref_pred, rows[X[rows, f] == v], lam_count)
            for c, v in ((tree.left[i], 0), (tree.right[i], 1))]
    node.update(cost=kids[0]["cost"] + kids[1]["cost"],
                leaves=kids[0]["leaves"] + kids[1]["leaves"], kids=kids)
    return node


def text(node) -> str:
    if node["f"] < 0:
        return f"leaf(n={node['n']}, e={node['e']}, ref={node['b']})"
    a, b = node["kids"]
    return (f"[x{node['f']} n={node['n']} ref={node['b']} cost={node['cost']:.3f}: "
            f"{text(a)} | {text(b)}]")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("fit", help="CASE:FOLD:DEPTH, e.g. coupon_carryout:0:3")
    ap.add_argument("--path", nargs="*", default=None,
                    help="FEATURE=VALUE steps from the root: solve that subproblem alone")
    a = ap.parse_args(argv)
    from treebench.algorithms.gosdt import GOSDTClassifier, fit_reference
    from treebench.registry import ALGORITHMS

    name, fold, depth = a.fit.split(":")
    fold, depth = int(fold), int(depth)
    Xf, y, lam, (ne, md) = load_case(name, fold, "th")
    X = Xf.astype(np.uint8)
    classes = np.unique(y)
    yi = np.searchsorted(classes, y)
    guess = {"n_estimators": ne, "max_depth": md}
    ref_pred, _ = fit_reference(Xf, yi, None, guess, 42, classes)
    lam_count = lam * len(y)
    print(f"{a.fit}: N={len(y)}, λN={lam_count:g}, reference errors {(ref_pred != yi).sum()}")

    def both(rows, budget, label):
        rw = ref_pred[rows] != yi[rows]
        o = ours_alone(X[rows], yi[rows], rw, lam_count, budget)
        try:
            p = package_alone(X[rows], yi[rows], ref_pred[rows], lam_count, budget)
            pt = f"{p[0]:.4f} (x{p[1]})"
        except ValueError as exc:  # e.g. a reference that predicts one class there
            pt = f"refused ({exc})"
        print(f"  {label} (n={len(rows)}, budget {budget}, ref errors {int(rw.sum())}) alone: "
              f"ours {o[0]:.4f} (x{o[1]}), package {pt}")

    rows = np.arange(len(y))
    if a.path:
        budget = depth
        for step in a.path:
            f, v = (int(t) for t in step.split("="))
            rows = rows[X[rows, f] == v]
            budget -= 1
        both(rows, budget, " ".join(a.path))
        return
    ours = GOSDTClassifier(regularization=lam, max_depth=depth, lb_guess=guess,
                           random_state=42).fit(Xf, y)
    pkg = ALGORITHMS.get("gosdt-ref").create(regularization=lam, max_depth=depth, lb_guess=guess,
                                             random_state=42).fit(Xf, y)
    print(f"R: ours {ours.solve_info_['objective']:.6f}, package {pkg.solve_info_['objective']:.6f}")
    s_o = describe(ours.tree_, 0, X, yi, ref_pred, rows, lam_count)
    s_p = describe(pkg.tree_, 0, X, yi, ref_pred, rows, lam_count)
    path, budget = [], depth
    while s_o["f"] == s_p["f"] and s_o["f"] >= 0:
        # follow the side where the subtrees differ
        side = 0 if text(s_o["kids"][0]) != text(s_p["kids"][0]) else 1
        path.append(f"{s_o['f']}={side}")
        rows = rows[X[rows, s_o["f"]] == side]
        s_o, s_p, budget = s_o["kids"][side], s_p["kids"][side], budget - 1
    if text(s_o) == text(s_p):
        print("same tree")
        return
    print(f"first difference at {' '.join(path) or 'the root'} (budget {budget}):")
    print(f"  ours    {text(s_o)}")
    print(f"  package {text(s_p)}")
    for label, s in (("ours", s_o), ("package", s_p)):
        if s["f"] >= 0:
            for v in (0, 1):
                both(rows[X[rows, s["f"]] == v], budget - 1, f"{label}'s x{s['f']}={v}")


if __name__ == "__main__":
    main()
