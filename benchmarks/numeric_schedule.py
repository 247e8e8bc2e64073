"""How the constants of the numeric search's anytime schedule weigh on its primal integral.

Under a time limit, `treebench.search.solve_numeric` at depth >= 4 first runs *widened*
searches for at most ``SHARE`` of the limit and at most ``FIRST_RATIO`` times the first one's
time (`treebench.search.numeric_anytime`), then the exact search. This script runs the search
(fewest training errors) on Quant-BnB training files at one depth and time limit under several
``(SHARE, FIRST_RATIO)`` settings, the settings of one file one after the other (so that they
see the same load), after one warm-up search, and prints per file the final training errors and the primal integral
over the limit (Berthold 2013, `treebench.algorithms.traces.primal_integral`) against the best
objective known for the file: the best of these runs and of ``--best FILE=ERRORS`` (e.g. a
peer's final tree, or a proven optimum). Then the geometric mean and the mean of the
integrals per setting: lower is better.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/numeric_schedule.py \\
        [--files avila,eeg] [--depth 4] [--limit 60] \\
        [--settings 0.05:16,0.02:16,0.15:16,0.05:4,0.05:64] [--best page=91,bean=1061]

Run two copies on disjoint ``--files`` to use two cores (one search per core, as the
measurements in the docs). Times are never asserted.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _quantbnb import load  # noqa: E402

#: the nine Quant-BnB training files that no solver finished at depth 4 within 60 s
DEFAULT_FILES = "avila,bean,eeg,fault,htru,magic,page,rice,segment"
DEFAULT_SETTINGS = "0.05:16,0.02:16,0.15:16,0.05:4,0.05:64"


def run(name: str, settings: list[tuple[float, float]], depth: int, limit: float) -> list[dict]:
    """One search per setting on file ``name``: errors, proof and trace of each."""
    import numpy as np

    from treebench.search import numeric_anytime as A
    from treebench.search.numeric import solve_numeric

    X, y = load(name)
    saved = A.SHARE, A.FIRST_RATIO
    out = []
    try:
        for share, ratio in settings:
            A.SHARE, A.FIRST_RATIO = share, ratio
            t = time.perf_counter()
            s = solve_numeric(X, y, None, int(y.max()) + 1, depth, deadline=t + limit,
                              t_start=t)
            end = time.perf_counter() - t
            # the fit's final state closes the trace, as the estimators' traces do
            trace = np.vstack([s.trace, [[end, s.errors, s.errors if s.optimal else 0.0]]])
            out.append({"file": name, "setting": (share, ratio), "errors": s.errors,
                        "optimal": s.optimal, "trace": trace})
            print(f"{name} SHARE {share} FIRST_RATIO {ratio:g}: {s.errors:.0f} errors"
                  f"{' (proven)' if s.optimal else ''} in {end:.1f} s", file=sys.stderr)
    finally:
        A.SHARE, A.FIRST_RATIO = saved
    return out


def warm_up(name: str, depth: int) -> None:
    """Load (or compile) the search's kernels, schedule included, on a slice of ``name``, so
    that the first setting timed does not pay for them."""
    from treebench.search.numeric import solve_numeric

    X, y = load(name)
    X, y = X[:300], y[:300]
    solve_numeric(X, y, None, int(y.max()) + 1, depth, deadline=time.perf_counter() + 5.0)


def table(rows: list[dict], settings: list[tuple[float, float]], best: dict[str, float],
          limit: float) -> str:
    """The markdown table of the runs: per file, errors and integral per setting."""
    from treebench.algorithms.traces import primal_integral

    files = sorted({r["file"] for r in rows})
    ref = {f: min([r["errors"] for r in rows if r["file"] == f]
                  + ([best[f]] if f in best else [])) for f in files}
    head = " | ".join(f"SHARE {s:g}, FIRST_RATIO {q:g}" for s, q in settings)
    lines = [f"| dataset | best known | {head} |", "|---|---|" + "---|" * len(settings)]
    pis: dict[tuple[float, float], list[float]] = {s: [] for s in settings}
    for f in files:
        cells = []
        for s in settings:
            r = next(x for x in rows if x["file"] == f and x["setting"] == s)
            pi = primal_integral(r["trace"], ref[f], limit)
            pis[s].append(pi)
            cells.append(f"{r['errors']:.0f}; {pi:.4f}{' (proven)' if r['optimal'] else ''}")
        lines.append(f"| {f} | {ref[f]:.0f} | " + " | ".join(cells) + " |")

    def gmean(v: list[float]) -> float:  # an integral of 0 (the best held from the start)
        return math.exp(statistics.fmean(math.log(max(x, 1e-6)) for x in v))

    lines.append("| geometric mean | | " + " | ".join(f"{gmean(pis[s]):.4f}" for s in settings)
                 + " |")
    lines.append("| mean | | " + " | ".join(f"{statistics.fmean(pis[s]):.4f}"
                                           for s in settings) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", default=DEFAULT_FILES)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--settings", default=DEFAULT_SETTINGS,
                    help="SHARE:FIRST_RATIO pairs, comma-separated (the first is the default)")
    ap.add_argument("--best", default="", help="FILE=ERRORS pairs: best objectives known")
    a = ap.parse_args()
    settings = [(float(p.split(":")[0]), float(p.split(":")[1]))
                for p in a.settings.split(",") if p]
    best = {p.split("=")[0]: float(p.split("=")[1]) for p in a.best.split(",") if p}
    warm_up([f for f in a.files.split(",") if f][0], a.depth)
    rows = []
    for name in [f for f in a.files.split(",") if f]:
        rows += run(name, settings, a.depth, a.limit)
    print(table(rows, settings, best, a.limit))


if __name__ == "__main__":
    main()
