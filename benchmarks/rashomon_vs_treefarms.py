"""Rashomon sets against the `treefarms` package on TreeFARMS-style settings: the goals' table
of time (median of repeats, with the spread), memory and counts, each fit in a fresh process.

Both sides solve one problem: every tree of at most ``depth`` tests on a path whose objective
(error rate + λ·leaves, GOSDT's) is at most ``(1 + ε)`` times the optimum, on the same 0/1
features and rows, with TreeFARMS' conventions on our side (``leaf_ties="last"``, trivial
extensions left out), so the two counts must be equal: a row whose counts differ is marked.
treefarms' ``depth_budget`` is ``depth + 1`` (it counts the leaf level). Where the counts
differ, the treefarms child reads up to 300 of its trees after the timing (drawn with seed 0)
and counts those whose objective, computed exactly in rationals on the training rows, is above
our bound: the table says how many.

Each (learner, setting) runs in a spawned process (`_fresh.run_fresh`): it loads the data and
warms up on a depth-1 fit (numba compiles or loads its kernels; treefarms loads its library),
then times ``--repeat`` fits with ``time.perf_counter`` and stops repeating once a fit took
longer than ``--limit`` seconds; the parent kills a child that exceeds the limit by 30 s.
Memory is the child's peak resident memory (VmHWM) less its resident memory just before the
first timed fit, so the imports and the warm-up, which differ between the two, do not count.
Our learner runs with ``max_analysed=1`` (the analyses read one tree: treefarms does none) by
default; ``--analysed N`` times the learner as a runner cell would use it.

The summary line gives the geometric mean of the time ratios over the settings both finished
within the limit, and the largest memory difference.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/rashomon_vs_treefarms.py \\
        [--repeat 3] [--limit 60] [--settings compas-binary:3:0.01:0.05,...] [--analysed 1]

Times are never asserted.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402

#: <dataset>:<depth>:<regularization>:<epsilon>; the datasets are 0/1 data sets of the TreeFARMS
#: and GOSDT papers (MONK 1 and 2, COMPAS, FICO, coupon Bar-7, tic-tac-toe, coupon Takeaway),
#: the λ and ε values those of treefarms' own example (λ 0.01, ε 0.05) and nearby
DEFAULT_SETTINGS = (
    "gosdt/monk1:3:0.02:0.1,gosdt/monk1:4:0.02:0.1,gosdt/monk1:5:0.02:0.1,"
    "gosdt/monk2:3:0.02:0.1,gosdt/monk2:4:0.02:0.1,gosdt/monk2:5:0.02:0.1,"
    "compas-binary:3:0.01:0.05,compas-binary:4:0.01:0.05,compas-binary:5:0.01:0.05,"
    "fico-binary:3:0.01:0.05,fico-binary:4:0.01:0.05,"
    "coupon-bar-7:3:0.01:0.05,coupon-bar-7:4:0.01:0.05,"
    "gosdt/tic-tac-toe:3:0.01:0.05,gosdt/tic-tac-toe:4:0.01:0.05,"
    "gosdt/coupon-carryout:3:0.01:0.05")


def _vm_rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _load01(name: str):
    import numpy as np

    from treebench.data.base import load_dataset

    ds = load_dataset(name, offline=True)
    X = np.asarray(ds.X, dtype=float)
    if not np.all((X == 0) | (X == 1)):
        raise SystemExit(f"{name} has features other than 0/1; treefarms takes 0/1 features")
    y = np.asarray(ds.y)
    if len(np.unique(y)) != 2:
        raise SystemExit(f"{name} has {len(np.unique(y))} classes; treefarms takes two")
    return X.astype(np.int8), np.unique(y, return_inverse=True)[1].astype(np.int64)


def _fitter(tool: str, X, y, lam: float, eps: float, analysed: int):
    """``fit(depth)``: the set's size; ours also gives its bound as an exact objective."""
    if tool == "treefarms":
        from treebench.algorithms.peers_rashomon import treefarms_count

        return lambda depth: (treefarms_count(X, y, lam, eps, depth), None)
    from treebench.algorithms.rashomon import RashomonClassifier

    def fit(depth):
        est = RashomonClassifier(max_depth=depth, regularization=lam, epsilon=eps,
                                 features="binary", leaf_ties="last", max_analysed=analysed,
                                 memory_limit_mb=16384)
        est.fit(X, y)
        s = est.set_
        return (s.count if s.complete else None), s.exact_objective(s.bound)
    return fit


def _above(X, y, lam, eps, depth, bound, count, sample=300):
    """Of up to ``sample`` trees of treefarms' set of ``count`` trees (drawn with seed 0), how
    many have an objective (exact, in rationals) above ``bound``, and how many were read."""
    from fractions import Fraction

    from treebench.algorithms.peers_rashomon import treefarms_trees

    picks = None if count <= sample else np.random.default_rng(0).choice(count, sample, False)
    _, trees = treefarms_trees(X, y, lam, eps, depth, picks=picks)
    price, n, ones = Fraction(repr(lam)), len(y), np.ones(len(y))
    above = sum(Fraction(round(t.training_error(X, y, ones)), n) + price * t.n_leaves > bound
                for t in trees)
    return above, len(trees)


def _child(tool, name, depth, lam, eps, repeat, limit, analysed, check, conn):
    import time

    X, y = _load01(name)
    fit = _fitter(tool, X, y, lam, eps, analysed)
    fit(1)  # warm-up: numba's kernels, treefarms' library
    before = _vm_rss_mb()
    conn.send("ready")
    times, count, bound = [], None, None
    for _ in range(repeat):
        t = time.perf_counter()
        count, bound = fit(depth)
        times.append(time.perf_counter() - t)
        if times[-1] > limit:
            break
    res = {"times": times, "count": count, "mem": vm_hwm_mb() - before, "bound": bound}
    if check is not None and count != check[0]:  # after the timing: which trees differ
        res["above"] = _above(X, y, lam, eps, depth, check[1], count)
    conn.send(res)


def measure(settings: list[str], repeat: int, limit: float, analysed: int) -> list[dict]:
    rows = []
    for spec in settings:
        parts = spec.split(":")
        if len(parts) != 4:
            raise SystemExit(f"a setting is <dataset>:<depth>:<regularization>:<epsilon>, "
                             f"got {spec!r}")
        name, depth, lam, eps = parts[0], int(parts[1]), float(parts[2]), float(parts[3])
        row = {"setting": spec}
        for tool in ("ours", "treefarms"):
            check = None
            if tool == "treefarms" and row["ours"]:
                check = (row["ours"]["count"], row["ours"]["bound"])
            status, res, _ = run_fresh(_child, (tool, name, depth, lam, eps, repeat, limit,
                                                analysed, check), limit * repeat, grace=30.0)
            if status != "ok" or res is None or res["times"][-1] > limit:
                row[tool] = None
                row[f"{tool} status"] = status if status != "ok" else f"> {limit:g} s"
            else:
                row[tool] = res
            print(f"{spec} {tool}: {status} {res and res['times']}", file=sys.stderr,
                  flush=True)
        rows.append(row)
    return rows


def _time(res) -> str:
    t = res["times"]
    med = statistics.median(t)
    return f"{med:.3f} [{min(t):.3f}, {max(t):.3f}]" if len(t) > 1 else f"{med:.3f}"


def table(rows: list[dict]) -> str:
    out = ["| setting (data:depth:λ:ε) | trees (ours) | trees (treefarms) | ours s [min, max] | "
           "treefarms s [min, max] | ours / treefarms | ours MB | treefarms MB |",
           "|---|---|---|---|---|---|---|---|"]
    ratios, mem_excess = [], []
    for r in rows:
        o, t = r["ours"], r["treefarms"]
        cells = [r["setting"]]
        cells += [str(o["count"]) if o else r["ours status"],
                  str(t["count"]) if t else r["treefarms status"]]
        if o and t and o["count"] != t["count"]:
            k, read = t.get("above", ("?", "?"))
            cells[2] += f" (differs: {k} of {read} of its trees read are above the bound)"
        cells += [_time(o) if o else "-", _time(t) if t else "-"]
        if o and t:
            ratio = statistics.median(o["times"]) / statistics.median(t["times"])
            ratios.append(ratio)
            mem_excess.append(o["mem"] - t["mem"])
            cells.append(f"{ratio:.2f}")
        else:
            cells.append("-")
        cells += [f"{o['mem']:.0f}" if o else "-", f"{t['mem']:.0f}" if t else "-"]
        out.append("| " + " | ".join(cells) + " |")
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        out.append(f"\ngeometric mean of ours / treefarms over {len(ratios)} settings both "
                   f"finished: {gm:.3f} (largest {max(ratios):.2f}); ours' memory less "
                   f"treefarms' at most {max(mem_excess):+.0f} MB")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--limit", type=float, default=60.0, help="seconds per fit")
    ap.add_argument("--settings", default=DEFAULT_SETTINGS)
    ap.add_argument("--analysed", type=int, default=1,
                    help="trees the learner's analyses read (max_analysed)")
    args = ap.parse_args()
    print(table(measure(args.settings.split(","), args.repeat, args.limit, args.analysed)))


if __name__ == "__main__":
    main()
