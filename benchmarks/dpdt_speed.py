"""DPDT speed and memory on the paper's Table 1 (Kohler, Akrour & Preux, KDD 2025): depth 3,
"light" B = (16, 1, 1) and "full" B = (16, 16, 16), on the 15 Quant-BnB training files.

Every (dataset, configuration) runs in a fresh process (``spawn``): the child loads the data,
warms up the kernels (numba's cache; never timed), times ``fit`` alone (wall and CPU seconds:
on a shared machine the CPU time is the honest measure, wall time includes waiting for a core),
and reports the peak resident memory of the whole process (``ru_maxrss``), the number of MDP
states solved, the paper's operation count and the training accuracy. The same child times
scikit-learn's CART at depth 3 on the same data as a machine-speed yardstick. The table puts the
authors' times (their pure-Python code, measured on this kind of 2-core machine) next
to ours; the goal is full >= 10x faster than theirs everywhere, light < 0.3 s, peak RSS < 1 GB.

DPDT's CART calls follow the authors' convention (scikit-learn's tie-breaking, their default
random_state 42), as in the paper's operation counts; ``--ties index`` times the seed-free rule.

``--regression`` times ``dpdt-regressor`` (B = (16, 16, 16), depths 4 and 5) instead, on
scikit-learn's diabetes (354 rows: a 5-fold training fold) and a Friedman #1 problem (800 rows,
noise 1), next to scikit-learn's DecisionTreeRegressor (CART) at the same depth, with training
R² for both (no exhaustive regression peer is installed).

Usage::

    TREEBENCH_DATA_DIR=/path/to/datasets python benchmarks/dpdt_speed.py [--datasets bank,magic]
        [--configs light,full] [--ties sklearn|index] [--csv out.csv]
    python benchmarks/dpdt_speed.py --regression

Times are never asserted.
"""

from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import pathlib
import sys

DATASETS = ["bank", "raisin", "wilt", "rice", "segment", "page", "bidding", "fault", "room",
            "occupancy", "htru", "magic", "eeg", "avila", "bean"]
CONFIGS = {"light": (16, 1, 1), "full": (16, 16, 16)}
# Table 1 of the paper (accuracy, operations) per config
PAPER = {
    "bank": ((.971, 271), (.980, 7990)), "raisin": ((.879, 295), (.886, 20900)),
    "wilt": ((.994, 274), (.995, 11300)), "rice": ((.934, 298), (.937, 25500)),
    "segment": ((.812, 220), (.879, 16300)), "page": ((.970, 298), (.970, 22400)),
    "bidding": ((.985, 256), (.993, 9360)), "fault": ((.672, 295), (.674, 24200)),
    "room": ((.991, 286), (.992, 16100)), "occupancy": ((.991, 280), (.994, 16300)),
    "htru": ((.979, 295), (.980, 25300)), "magic": ((.822, 298), (.828, 28000)),
    "eeg": ((.689, 289), (.706, 26000)), "avila": ((.574, 268), (.585, 24700)),
    "bean": ((.812, 295), (.853, 25900)),
}
# the authors' reference code, full (16, 16, 16), seconds; light: 0.2-2.4 s
AUTHORS_FULL = {"magic": 44.7, "bean": 52.3, "avila": 50.0, "htru": 28.4, "eeg": 26.8,
                "rice": 11.2, "fault": 10.7, "segment": 9.2}


def load(name):
    import numpy as np

    base = pathlib.Path(os.environ["TREEBENCH_DATA_DIR"]) / "quantbnb" / "train"
    for p in (base / f"{name}.txt", base / f"{name}.txt.gz"):
        if p.exists():
            A = np.loadtxt(p)
            return A[:, 1:], A[:, 0].astype(int)
    raise FileNotFoundError(f"quantbnb/train/{name} not found under TREEBENCH_DATA_DIR")


def _child(name, budgets, ties, queue):
    import resource
    import time

    from sklearn.tree import DecisionTreeClassifier

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from treebench.algorithms.dpdt import DPDTClassifier, warmup

    X, y = load(name)
    warmup()
    c0, t0 = time.process_time(), time.perf_counter()
    est = DPDTClassifier(max_depth=3, budgets=budgets, tie_break=ties, random_state=42).fit(X, y)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    c0 = time.process_time()
    for _ in range(3):
        DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    cart_cpu = (time.process_time() - c0) / 3
    info = est.solve_info_
    queue.put({
        "n": X.shape[0], "p": X.shape[1], "wall_s": wall, "cpu_s": cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "states": info["states"], "operations": info["operations"],
        "accuracy": info["training_accuracy"], "cart_cpu_s": cart_cpu,
    })


REGRESSION = {"diabetes": 354, "friedman1": 800}


def _load_regression(name):
    from sklearn.datasets import load_diabetes, make_friedman1

    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True)
        return X[:REGRESSION[name]], y[:REGRESSION[name]]
    return make_friedman1(n_samples=REGRESSION[name], noise=1.0, random_state=0)


def _child_regression(name, depth, queue):
    import resource
    import time

    from sklearn.tree import DecisionTreeRegressor

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from treebench.algorithms.dpdt import DPDTRegressor, warmup

    X, y = _load_regression(name)
    warmup()
    c0, t0 = time.process_time(), time.perf_counter()
    est = DPDTRegressor(max_depth=depth, budgets=(16, 16, 16)).fit(X, y)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    c0 = time.process_time()
    for _ in range(3):
        cart = DecisionTreeRegressor(max_depth=depth, random_state=0).fit(X, y)
    queue.put({
        "n": X.shape[0], "p": X.shape[1], "cpu_s": cpu, "wall_s": wall,
        "cart_cpu_s": (time.process_time() - c0) / 3,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "states": est.solve_info_["states"], "r2": est.score(X, y), "cart_r2": cart.score(X, y),
    })


def _spawn(target, args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, q))
    proc.start()
    proc.join(timeout=1800)
    if proc.is_alive():
        proc.kill()
        return {"status": "timeout"}
    return {"status": "ok", **q.get()} if proc.exitcode == 0 else {"status": "error"}


def main_regression():
    head = ("| dataset | N×p | depth | dpdt-regressor cpu s | wall s | CART cpu s | dpdt/CART "
            "| peak RSS MB | states | train R² dpdt | train R² CART |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name in REGRESSION:
        for depth in (4, 5):
            r = _spawn(_child_regression, (name, depth))
            if r["status"] != "ok":
                print(f"| {name} | | {depth} | {r['status']} |")
                continue
            print(f"| {name} | {r['n']}×{r['p']} | {depth} | {r['cpu_s']:.3f} | {r['wall_s']:.3f} "
                  f"| {r['cart_cpu_s']:.4f} | {r['cpu_s'] / max(r['cart_cpu_s'], 1e-9):.0f}× "
                  f"| {r['peak_rss_mb']:.0f} | {r['states']} | {r['r2']:.4f} | {r['cart_r2']:.4f} |",
                  flush=True)


def run_one(name, config, ties="sklearn"):
    return _spawn(_child, (name, CONFIGS[config], ties))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated names")
    ap.add_argument("--configs", default="light,full", help="light and/or full")
    ap.add_argument("--ties", default="sklearn", choices=["sklearn", "index"],
                    help="DPDT's CART tie rule (sklearn: the authors' convention, seed 42)")
    ap.add_argument("--regression", action="store_true",
                    help="time dpdt-regressor against scikit-learn's CART instead")
    ap.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    args = ap.parse_args(argv)
    if args.regression:
        main_regression()
        return
    rows = []
    head = ("| dataset | N×p | config | fit cpu s | fit wall s | authors s | authors/ours | "
            "peak RSS MB | states | ops (paper) | acc (paper) | sklearn CART d3 cpu s |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for name in args.datasets.split(","):
        for config in args.configs.split(","):
            r = run_one(name, config, args.ties)
            r.update(dataset=name, config=config)
            rows.append(r)
            if r["status"] != "ok":
                print(f"| {name} | | {config} | {r['status']} |")
                continue
            pacc, pops = PAPER[name][0 if config == "light" else 1]
            auth = AUTHORS_FULL.get(name) if config == "full" else None
            ratio = f"{auth / r['cpu_s']:.1f}×" if auth else ""
            r.update(paper_accuracy=pacc, paper_operations=pops, authors_s=auth or "")
            print(f"| {name} | {r['n']}×{r['p']} | {config} | {r['cpu_s']:.3f} | {r['wall_s']:.3f} "
                  f"| {auth or ''} | {ratio} | {r['peak_rss_mb']:.0f} | {r['states']} "
                  f"| {r['operations']} ({pops}) | {r['accuracy']:.3f} ({pacc:.3f}) "
                  f"| {r['cart_cpu_s']:.3f} |", flush=True)
    if args.csv:
        keys = sorted({k for r in rows for k in r})
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
