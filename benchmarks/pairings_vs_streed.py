"""treebench's optimal searches against STreeD on the same problem, for each problem both solve.

The pairings (`docs/objectives.md`; every learner is built from its registry entry with the
settings `treebench.algorithms.objectives.ask` gives for the problem, as a config's
``objective:`` does):

* ``min-errors``: ``topk`` (k = all, first tree found) against ``streed`` (``cost_complexity=0``);
* ``min-errors-then-nodes``: the ``gosdt`` solver (``lexicographic``: a per-leaf penalty below
  one error per tree) and ``topk`` (``min_improvement=0``, ties to fewer nodes) against
  ``streed`` (``lexicographic``: a cost per branching node below one error per tree);
* ``errors+lambda*leaves``: the ``gosdt`` solver (no guess) against ``streed``
  (``cost_complexity=λ``), λ from ``--lam``.

Every fit runs in its own fresh process (`_fresh.run_fresh`): the child loads the DL8.5-suite
file, warms the learner up (imports, JIT from numba's cache) and fits a toy problem, untimed,
then times one fit. treebench's time is its whole ``fit`` (input checks, search, tree); STreeD's
is pystreed's ``fit`` alone (the adapter's translation is not counted against it). The problem's
objective is computed from each returned tree the same way and compared: ``same`` must be yes on
every row where both finish. Peak memory is each child's VmHWM; an unmeasured fit of each
pairing runs first, so that a kernel changed since numba last cached it is compiled there and
not in a measured child (a compile peaks far above any fit: 1,194 MB against 285 MB).

Prints a markdown table per pairing (dataset, depth, seconds of both, ratio, objective equal,
peak MB of both) and the geometric-mean ratio; asserts nothing. ``--repeat N`` times fits
under a second up to N times in the same process and reports their median; ``--learners
gosdt`` runs only the GOSDT solver's rows (``min-errors-then-nodes`` has one for each of our
two learners). Re-run::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/pairings_vs_streed.py \
        --datasets breast-wisconsin,diabetes --depths 4,5 --pairings all --time-limit 30
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fresh import run_fresh, vm_hwm_mb  # noqa: E402
from topk_vs_peers import load_dl85  # noqa: E402

SUITE = ["anneal", "audiology", "australian-credit", "breast-wisconsin", "diabetes",
         "german-credit", "heart-cleveland", "hepatitis", "hypothyroid", "ionosphere",
         "kr-vs-kp", "lymph", "mushroom", "pendigits", "primary-tumor", "segment", "soybean",
         "splice-1", "tic-tac-toe", "vehicle", "vote", "yeast", "zoo-1"]
#: (problem, our learner): each section of the table
PAIRINGS = [("min-errors", "topk"), ("min-errors-then-nodes", "gosdt"),
            ("min-errors-then-nodes", "topk"), ("errors+lambda*leaves", "gosdt")]


def objective(problem: str, est, X, y, lam: float) -> tuple:
    """The value of ``problem`` for a fitted tree (errors as whole numbers)."""
    import numpy as np

    errors = int(np.sum(est.predict(X) != y))
    if problem == "min-errors":
        return (errors,)
    if problem == "min-errors-then-nodes":
        return (errors, int(est.tree_.n_nodes))
    return (round(errors / len(y) + lam * int(est.tree_.n_leaves), 12),)


def _fit(name: str, problem: str, dataset: str, depth: int, lam: float, limit: float,
         repeat: int, conn) -> None:
    import numpy as np

    from treebench.algorithms.objectives import PROBLEM_PARAMETER, ask
    from treebench.registry import ALGORITHMS

    X, y = load_dl85(dataset)
    X = X.astype(np.float64)
    entry = ALGORITHMS.get(name)
    params = {"max_depth": depth, "time_limit": limit}
    if problem in PROBLEM_PARAMETER:
        params[PROBLEM_PARAMETER[problem]] = lam
    params = ask(name, problem, params)
    if hasattr(entry.obj, "warmup"):
        entry.obj.warmup()
    entry.create(**{**params, "max_depth": 2}).fit(X[:60], y[:60])  # untimed warm fit
    conn.send("ready")
    times = []
    while True:  # fits under a second again, up to `repeat` in all: their median
        est = entry.create(**params)
        t = time.perf_counter()
        est.fit(X, y)
        seconds = time.perf_counter() - t
        info = getattr(est, "solve_info_", {}) or {}
        times.append(info.get("solver_seconds", seconds))
        if len(times) >= repeat or seconds >= 1.0:
            break
    conn.send({"seconds": sorted(times)[len(times) // 2],
               "objective": objective(problem, est, X, y, lam),
               "timed_out": bool(info.get("timed_out")), "peak_mb": vm_hwm_mb()})
    conn.close()


def run(name, problem, dataset, depth, lam, limit, repeat=1):
    status, res, _ = run_fresh(_fit, (name, problem, dataset, depth, lam, limit, repeat),
                               limit + repeat)
    if res is None or res.get("timed_out"):
        return {"status": "timeout" if res else status, "seconds": math.nan, "objective": None,
                "peak_mb": math.nan if res is None else res["peak_mb"]}
    return {"status": "ok", **res}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default=",".join(SUITE))
    ap.add_argument("--depths", default="4,5")
    ap.add_argument("--pairings", default="all", help="comma list of problems, or all")
    ap.add_argument("--lam", type=float, default=0.01, help="λ of errors+lambda*leaves")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--repeat", type=int, default=1,
                    help="fits under a second are repeated in the same process, up to this "
                         "many in all, and their median is reported (a single millisecond "
                         "fit's time varies several-fold from process to process)")
    ap.add_argument("--learners", default="all",
                    help="comma list of our learners to run (topk, gosdt), or all")
    a = ap.parse_args(argv)
    wanted = {p for p, _ in PAIRINGS} if a.pairings == "all" else set(a.pairings.split(","))
    learners = {o for _, o in PAIRINGS} if a.learners == "all" else set(a.learners.split(","))
    for problem, ours in PAIRINGS:
        if problem not in wanted or ours not in learners:
            continue
        print(f"\n### {problem}: {ours} against streed"
              + (f" (λ = {a.lam})" if problem == "errors+lambda*leaves" else ""))
        print(f"\n| dataset | depth | {ours} s | streed s | ratio | same objective | "
              f"{ours} MB | streed MB |\n|---|---|---|---|---|---|---|---|")
        ratios = []
        # one unmeasured process first: it fills numba's on-disk cache if a kernel changed, so
        # that no measured process compiles (compiling peaks far above any fit's memory)
        run(ours, problem, a.datasets.split(",")[0], 2, a.lam, a.time_limit)
        for dataset in a.datasets.split(","):
            for depth in (int(d) for d in a.depths.split(",")):
                us = run(ours, problem, dataset, depth, a.lam, a.time_limit, a.repeat)
                them = run("streed", problem, dataset, depth, a.lam, a.time_limit, a.repeat)
                both = us["status"] == them["status"] == "ok"
                ratio = us["seconds"] / max(them["seconds"], 1e-6) if both else math.nan
                if both:
                    ratios.append(ratio)
                same = ("yes" if us["objective"] == them["objective"] else
                        f"NO {us['objective']} vs {them['objective']}") if both else "-"
                print(f"| {dataset} | {depth} | {_s(us)} | {_s(them)} | {ratio:.2f} | {same} | "
                      f"{us['peak_mb']:.0f} | {them['peak_mb']:.0f} |", flush=True)
        if ratios:
            geo = math.exp(sum(math.log(max(r, 1e-9)) for r in ratios) / len(ratios))
            print(f"\ngeometric mean ratio {geo:.2f} over {len(ratios)} fits both finished; "
                  f"worst {max(ratios):.2f}")
    return 0


def _s(r) -> str:
    return f"{r['seconds']:.3f}" if r["status"] == "ok" else r["status"]


if __name__ == "__main__":
    sys.exit(main())
