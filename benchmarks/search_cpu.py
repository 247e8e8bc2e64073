"""CPU seconds of the optimal searches on fixed fits: the before/after table of a change to the
search drivers (run it on both versions, one after the other, on the same machine).

Each fit is warmed up once, then timed ``--repeat`` times with ``time.process_time`` (the fit's
CPU, the estimator's input checks included); the table gives the minimum and the median, and
a fingerprint of the tree (features and thresholds) with the objective, so that two versions
can be checked to return the same trees. Numeric fits (``num:<file>:<depth>``) run
`treebench.search.numeric.solve_numeric` (fewest errors) on a Quant-BnB training file,
``numa:<file>:<depth>:<alpha>`` its exact-float search with a price per test
(`solve_numeric_alpha`, DPDT's ``E + alpha * L``); 0/1 fits
(``<dl85 file>:<depth>:<learner>``) run a learner on a DL8.5 file, ``learner`` one of
``topk`` (Top-k k = all, its default tie rule), ``first`` (k = all, ties to the first
feature: minimum error), ``lex`` (k = all, ``min_improvement: 0``, ties to smaller trees:
error then fewest nodes), ``k2`` (Top-k k = 2), ``glam`` (GOSDT λ = 0.01), ``glex``
(GOSDT lexicographic) and ``dpdt`` (DPDT's exhaustive generator, α = 0.01: the layer search).

``--time-limit S`` gives the 0/1 learners that take one that time limit (Top-k at k = all then
runs its anytime schedule, `treebench.search.anytime`: the way to measure what it costs).

``--against DIR`` makes it a before/after: DIR is another checkout of treebench (a git work
tree of the commit before a change, ``git worktree add ../before COMMIT``). Each round runs
the fits once in a fresh interpreter on each version, the order alternating between rounds;
the table gives each version's median of its round medians, the range of the round medians,
their ratio, and whether both returned the same objective and tree. On a shared machine one
version's round medians can differ by 15-30 % between rounds: a change is only shown by
several alternated rounds (``--rounds``, 4 by default), never by one run after the other.

Usage::

    TREEBENCH_DATA_DIR=path/to/datasets python benchmarks/search_cpu.py [--repeat 3] \\
        [--time-limit 60] [--fits num:raisin:3,numa:raisin:3:0.01,anneal:4:topk,...] \\
        [--against ../before --rounds 4]

Times are never asserted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

DEFAULT_FITS = ("num:raisin:3,num:bank:3,num:rice:3,num:page:3,anneal:4:topk,"
                "audiology:4:first,german-credit:4:lex,hypothyroid:4:lex,anneal:4:k2,"
                "diabetes:4:glam,german-credit:4:glex,audiology:5:glex,heart-cleveland:4:first,"
                "hepatitis:4:dpdt,diabetes:4:dpdt")


def _fingerprint(feature, threshold) -> str:
    import numpy as np

    data = np.concatenate([np.asarray(feature, float), np.asarray(threshold, float)])
    return hashlib.md5(data.tobytes()).hexdigest()[:10]


def _numeric(name: str, depth: int):
    from _quantbnb import load

    from treebench.search.numeric import solve_numeric

    X, y = load(name)
    n_classes = int(y.max()) + 1

    def fit():
        sol = solve_numeric(X, y, None, n_classes, depth)
        return sol.objective, _fingerprint(sol.tree.feature, sol.tree.threshold)

    return fit


def _numeric_alpha(name: str, depth: int, alpha: float):
    from _quantbnb import load

    from treebench.search.numeric import solve_numeric_alpha

    X, y = load(name)
    n_classes = int(y.max()) + 1

    def fit():
        sol = solve_numeric_alpha(X, y, None, n_classes, depth, alpha)
        return sol.objective, _fingerprint(sol.tree.feature, sol.tree.threshold)

    return fit


def _binary(name: str, depth: int, learner: str, time_limit: float | None = None):
    from topk_vs_peers import load_dl85

    from treebench.algorithms.dpdt import DPDTClassifier
    from treebench.algorithms.gosdt import GOSDTClassifier
    from treebench.algorithms.topk import TopKClassifier

    X, y = load_dl85(name)
    make = {
        "topk": lambda: TopKClassifier(k="all", max_depth=depth),
        "first": lambda: TopKClassifier(k="all", max_depth=depth, tie_break="first"),
        "lex": lambda: TopKClassifier(k="all", max_depth=depth, min_improvement=0.0,
                                      tie_break="smaller"),
        "k2": lambda: TopKClassifier(k=2, max_depth=depth),
        "glam": lambda: GOSDTClassifier(max_depth=depth, regularization=0.01),
        "glex": lambda: GOSDTClassifier(max_depth=depth, lexicographic=True),
        "dpdt": lambda: DPDTClassifier(max_depth=depth, candidates="exhaustive", alpha=0.01),
    }
    if learner not in make:
        raise SystemExit(f"unknown learner {learner!r}: one of {sorted(make)}")
    est = make[learner]()
    if time_limit is not None and "time_limit" in est.get_params():
        est.set_params(time_limit=time_limit)

    def fit():
        est.fit(X, y)
        tree = est.tree_
        return int((est.predict(X) != y).sum()), _fingerprint(tree.feature, tree.threshold)

    return fit


def run(fits: list[str], repeat: int, time_limit: float | None = None) -> list[dict]:
    rows = []
    for spec in fits:
        parts = spec.split(":")
        if parts[0] == "num" and len(parts) == 3:
            fit = _numeric(parts[1], int(parts[2]))
        elif parts[0] == "numa" and len(parts) == 4:
            fit = _numeric_alpha(parts[1], int(parts[2]), float(parts[3]))
        elif len(parts) == 3:
            fit = _binary(parts[0], int(parts[1]), parts[2], time_limit)
        else:
            raise SystemExit(f"a fit is num:<file>:<depth>, numa:<file>:<depth>:<alpha> or "
                             f"<file>:<depth>:<learner>, got {spec!r}")
        fit()  # warm-up (compilation, or numba's cache)
        times = []
        for _ in range(repeat):
            t = time.process_time()
            value, tree = fit()
            times.append(time.process_time() - t)
        rows.append({"fit": spec, "min": min(times), "median": statistics.median(times),
                     "value": value, "tree": tree})
        print(f"{spec}: {min(times):.4f} s", file=sys.stderr, flush=True)
    return rows


def table(rows: list[dict]) -> str:
    out = ["| fit | min CPU s | median CPU s | objective / errors | tree |",
           "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['fit']} | {r['min']:.4f} | {r['median']:.4f} | {r['value']} | "
                   f"{r['tree']} |")
    return "\n".join(out)


def _version_rows(root: pathlib.Path, argv: list[str]) -> list[dict]:
    """The rows of one run of this script in a fresh interpreter importing treebench from
    ``root`` (first on the path)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, __file__, *argv, "--json", "--root", str(root)],
                          env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"the fits on {root} failed (exit code {done.returncode}); its "
                         "messages are above")
    return json.loads(done.stdout)


def compare(this: pathlib.Path, other: pathlib.Path, argv: list[str], rounds: int) -> str:
    """The before/after table: ``rounds`` alternated rounds of the fits on both versions."""
    medians: dict = {}
    answers: dict = {}
    for r in range(rounds):
        for name, root in (("this", this), ("other", other))[::(1 if r % 2 == 0 else -1)]:
            for row in _version_rows(root, argv):
                medians.setdefault((row["fit"], name), []).append(row["median"])
                answers.setdefault(row["fit"], {})[name] = (row["value"], row["tree"])
            print(f"round {r + 1}: {name} done", file=sys.stderr, flush=True)
    out = [f"this: {this}; other: {other}; {rounds} alternated rounds, each fit's median CPU "
           "seconds per round",
           "",
           "| fit | other: median of rounds [range] | this: median of rounds [range] | "
           "this / other | same objective and tree |",
           "|---|---|---|---|---|"]
    for fit, ans in answers.items():
        cells = []
        for name in ("other", "this"):
            m = medians[(fit, name)]
            cells.append(f"{statistics.median(m):.4f} [{min(m):.4f}, {max(m):.4f}]")
        ratio = statistics.median(medians[(fit, "this")]) / statistics.median(
            medians[(fit, "other")])
        same = "yes" if ans.get("this") == ans.get("other") else f"no: {ans}"
        out.append(f"| {fit} | {cells[0]} | {cells[1]} | {ratio:.3f} | {same} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fits", default=DEFAULT_FITS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds: the time_limit of the 0/1 learners that take one (Top-k at "
                         "k = all then runs its anytime schedule)")
    ap.add_argument("--against", default=None,
                    help="another checkout of treebench: time both, alternated in rounds")
    ap.add_argument("--rounds", type=int, default=4, help="rounds with --against")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.time_limit is not None and not args.time_limit > 0:
        ap.error("--time-limit must be a positive number of seconds")
    if args.repeat < 1 or args.rounds < 1:
        ap.error("--repeat and --rounds must be at least 1")
    own = ["--fits", args.fits, "--repeat", str(args.repeat)]
    own += [] if args.time_limit is None else ["--time-limit", str(args.time_limit)]
    if args.against is not None:
        other = pathlib.Path(args.against).resolve()
        if not (other / "treebench" / "__init__.py").is_file():
            ap.error(f"--against {args.against}: not a checkout of treebench (no "
                     "treebench/__init__.py there)")
        this = pathlib.Path(__file__).resolve().parents[1]
        print(compare(this, other, own, args.rounds))
        return
    if args.root is not None:
        import treebench

        here = pathlib.Path(treebench.__file__).resolve().parents[1]
        if here != pathlib.Path(args.root).resolve():
            raise SystemExit(f"treebench was imported from {here}, not from {args.root}")
    rows = run([f for f in args.fits.split(",") if f], args.repeat, args.time_limit)
    print(json.dumps(rows) if args.json else table(rows))


if __name__ == "__main__":
    main()
