"""Seconds of Rashomon-set fits (`RashomonClassifier`, the optimal tree for the first bound
included) on fixed problems: the before/after table of a change to the enumeration. The
comparison with the `treefarms` package, on one problem with its conventions and in fresh
processes, is `rashomon_vs_treefarms.py`.

Each fit is a ``<dataset>:<depth>:<features>:<lam>:<epsilon>`` with ``features`` ``binary`` or
``numeric`` (raw features at midpoints). Every version is warmed up once on a depth-1 fit
(numba compiles or loads its kernels), then each fit is timed ``--repeat`` times (wall clock, ``time.perf_counter``); the table gives the median and the
set's size, so that two versions can be checked to count the same trees.

``--baseline FILE`` times, in the same run, a second version of
``treebench/search/rashomon.py`` (for instance ``git show HEAD~1:treebench/search/rashomon.py >
old.py``): its ``enumerate_set`` replaces the current one inside the learner.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/rashomon_speed.py [--repeat 3] \\
        [--fits compas-binary:3:binary:0.01:0.05,...] [--baseline old.py]

Times are never asserted.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time

DEFAULT_FITS = ("compas-binary:3:binary:0.01:0.05,compas-binary:4:binary:0.01:0.05,"
                "gosdt/spiral:3:numeric:0.02:0.1")


def _load(name: str):
    import numpy as np

    from treebench.data.base import load_dataset

    ds = load_dataset(name, offline=True)
    return np.asarray(ds.X, dtype=float), np.asarray(ds.y).astype(int)


def _enumerate_from(path: str):
    """The ``enumerate_set`` of another version of the enumeration module."""
    spec = importlib.util.spec_from_file_location("rashomon_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module.enumerate_set


def _ours(X, y, depth, features, lam, eps, enumerate_set):
    import treebench.algorithms.rashomon as learner

    learner.enumerate_set = enumerate_set
    est = learner.RashomonClassifier(max_depth=depth, features=features, regularization=lam,
                                     epsilon=eps)
    est.fit(X, y)
    return est.set_.count


def _median(fit, repeat):
    times, value = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fit()
        times.append(time.perf_counter() - t)
    return statistics.median(times), value


def run(fits: list[str], repeat: int, baseline: str | None) -> list[dict]:
    import treebench.algorithms.rashomon as learner

    versions = {"current": learner.enumerate_set}
    if baseline:
        versions = {"baseline": _enumerate_from(baseline), **versions}
    rows = []
    for spec in fits:
        parts = spec.split(":")
        if len(parts) != 5 or parts[2] not in ("binary", "numeric"):
            raise SystemExit(f"a fit is <dataset>:<depth>:binary|numeric:<lam>:<epsilon>, "
                             f"got {spec!r}")
        name, depth, features, lam, eps = (parts[0], int(parts[1]), parts[2], float(parts[3]),
                                           float(parts[4]))
        X, y = _load(name)
        row = {"fit": spec}
        for label, enum in versions.items():
            _ours(X, y, 1, features, lam, eps, enum)  # warm-up
            row[label], row[f"{label} count"] = _median(
                lambda: _ours(X, y, depth, features, lam, eps, enum), repeat)
            print(f"{spec} {label}: {row[label]:.3f} s", file=sys.stderr, flush=True)
        learner.enumerate_set = versions["current"]
        rows.append(row)
    return rows


def table(rows: list[dict]) -> str:
    cols = [c for c in ("baseline", "current") if any(c in r for r in rows)]
    out = ["| fit | " + " | ".join(f"{c} s | {c} trees" for c in cols) + " |",
           "|---|" + "---|---|" * len(cols)]
    for r in rows:
        cells = []
        for c in cols:
            cells += ([f"{r[c]:.3f}", str(r[f'{c} count'])] if c in r else ["-", "-"])
        out.append(f"| {r['fit']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fits", default=DEFAULT_FITS)
    ap.add_argument("--baseline", default=None,
                    help="another version of treebench/search/rashomon.py to time against")
    args = ap.parse_args()
    print(table(run(args.fits.split(","), args.repeat, args.baseline)))


if __name__ == "__main__":
    main()
