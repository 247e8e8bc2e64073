"""DPDT's own memory on the paper's Table 3 setting (Kohler, Akrour & Preux, KDD 2025): KDD Cup
99, 10 % training file, depth 10, B = (4,). Measures the fit alone, without the runner: the
child process loads the training rows (categorical columns as integer codes, as float64), warms
the kernels up, resets the kernel's peak-RSS mark (``/proc/self/clear_refs``, Linux), records
its resident memory, fits, and reports the peak during the fit (``VmHWM``) minus that baseline:
the fit's own peak, next to the size of X.

Usage::

    TREEBENCH_DATA_DIR=/path/to/datasets python benchmarks/dpdt_memory.py

Numbers are printed, never asserted.
"""

from __future__ import annotations

import multiprocessing as mp
import pathlib
import sys


def _status_mb(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    return float("nan")


def _child(queue):
    import gc
    import time

    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    from treebench.algorithms.dpdt import DPDTClassifier, warmup
    from treebench.data.base import load_dataset

    ds = load_dataset("kdd99")
    Xdf = ds.X.iloc[ds.train_index].copy()
    for c in ds.categorical:
        Xdf[c] = pd.Categorical(Xdf[c]).codes
    X = np.ascontiguousarray(Xdf.to_numpy(dtype=np.float64))
    y = np.asarray(ds.y)[ds.train_index]
    del ds, Xdf
    warmup()
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # peak RSS mark := current RSS
    base = _status_mb("VmRSS")
    c0 = time.process_time()
    est = DPDTClassifier(max_depth=10, budgets=(4,), random_state=0).fit(X, y)
    cpu = time.process_time() - c0
    peak = _status_mb("VmHWM")
    queue.put(dict(n=X.shape[0], p=X.shape[1], x_mb=X.nbytes / 2**20, base_mb=base,
                   peak_mb=peak, cpu_s=cpu, states=est.solve_info_["states"],
                   acc=est.solve_info_["training_accuracy"]))


def main():
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    proc = ctx.Process(target=_child, args=(q,))
    proc.start()
    r = q.get(timeout=3600)
    proc.join()
    print("| rows×features | X MB | RSS before fit MB | peak during fit MB | fit's own peak MB "
          "| fit cpu s | states | train acc |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {r['n']}×{r['p']} | {r['x_mb']:.0f} | {r['base_mb']:.0f} | {r['peak_mb']:.0f} "
          f"| {r['peak_mb'] - r['base_mb']:.0f} | {r['cpu_s']:.1f} | {r['states']} "
          f"| {r['acc']:.5f} |")


if __name__ == "__main__":
    main()
