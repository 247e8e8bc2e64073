"""Memory and CPU of one optimal-search fit in this process (docs/search-speed.md,
"Compact cache keys").

Loads a binary DL8.5 dataset, warms the kernels up (untimed), fits Top-k at k = all
(``tie_break="first"``) or the GOSDT solver (no guess), and prints one JSON line: wall and CPU
seconds of the fit, the process's peak resident memory (VmHWM), the search cache's entries
and peak bytes, whether it timed out, and the objective. Run it from two checkouts
(``PYTHONPATH`` set to each) to compare code versions on the same fit::

    TREEBENCH_DATA_DIR=... python benchmarks/search_memory.py topk splice-1 5 --time-limit 120
    TREEBENCH_DATA_DIR=... python benchmarks/search_memory.py gosdt pendigits 5 --lam 0.001

One fit per process: VmHWM is the whole process's peak (interpreter, imports, data, search).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _fresh import vm_hwm_mb  # noqa: E402
from topk_vs_peers import load_dl85  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("algorithm", choices=("topk", "gosdt"))
    ap.add_argument("dataset", help="a binary-dl85 dataset, e.g. splice-1")
    ap.add_argument("depth", type=int)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--lam", type=float, default=0.001, help="GOSDT's λ")
    a = ap.parse_args(argv)
    import numpy as np

    X, y = load_dl85(a.dataset)
    Xf = X.astype(np.float64)
    if a.algorithm == "topk":
        from treebench.algorithms.topk import TopKClassifier, warmup

        warmup()
        TopKClassifier(k="all", max_depth=2, tie_break="first").fit(Xf[:50], y[:50])
        est = TopKClassifier(k="all", max_depth=a.depth, time_limit=a.time_limit,
                             tie_break="first")
    else:
        from treebench.algorithms.gosdt import GOSDTClassifier, warmup

        warmup()
        GOSDTClassifier(regularization=a.lam, max_depth=2).fit(Xf[:50], y[:50])
        est = GOSDTClassifier(regularization=a.lam, max_depth=a.depth, time_limit=a.time_limit)
    t, c = time.perf_counter(), time.process_time()
    est.fit(Xf, y)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    si = est.solve_info_
    print(json.dumps({
        "algorithm": a.algorithm, "dataset": a.dataset, "depth": a.depth,
        "lam": a.lam if a.algorithm == "gosdt" else None,
        "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "peak_mb": int(vm_hwm_mb()),
        "timed_out": bool(si.get("timed_out")), "cache_entries": si.get("cache_entries"),
        "cache_mb": round(si.get("cache_peak_bytes", 0) / 2**20, 1),
        "objective": si.get("objective"),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
