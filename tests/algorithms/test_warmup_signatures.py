"""A learner's warm-up compiles exactly what its fit runs: after ``warmup()``, a fit on small
data compiles no numba kernel (every dispatcher in treebench's modules has the same
``.signatures`` before and after the fit), so no JIT time lands in ``fit_seconds`` or the time
limit while ``compile_seconds`` says 0.

Each group runs in a fresh process: in this one earlier tests may have compiled the very
signatures a warm-up forgets. One interpreter imports every learner's module (which compiles
nothing) and forks a child per group, so that the eleven groups pay for the imports (about 2.5 s
with scikit-learn) once; each child starts with no kernel compiled or loaded. Fits cover 0/1 and (where accepted) raw inputs, two and three
classes, with and without sample weights, read-only arrays (numba types them apart), and the
parameter values that select other kernels; each fitted model also predicts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]

#: learner name -> parameter variants (each selects other kernels or kernel arguments)
VARIANTS: dict[str, list[dict]] = {
    "dpdt": [
        {"max_depth": 2}, {"max_depth": 3, "criterion": "entropy"},
        {"max_depth": 2, "tie_break": "sklearn", "random_state": 0},
        {"max_depth": 2, "max_features": 2, "random_state": 0},
        {"max_depth": 2, "alpha": 0.01, "alpha_path": True},
        {"max_depth": 2, "candidates": "topb", "budgets": 2},
        {"max_depth": 2, "candidates": "quantile", "budgets": 2},
        {"max_depth": 2, "candidates": "exhaustive"},
        {"max_depth": 2, "candidates": "exhaustive", "search": "dp"},
        {"max_depth": 2, "time_limit": 60.0},
    ],
    "dpdt-regressor": [{"max_depth": 2}, {"max_depth": 2, "candidates": "topb", "budgets": 2},
                       {"max_depth": 2, "candidates": "exhaustive"}],
    "dpdt-adaboost": [{"n_estimators": 3}],
    "topk": [{"max_depth": 2, "k": 1}, {"max_depth": 3, "k": 2}, {"max_depth": 2, "k": "all"},
             {"max_depth": 2, "criterion": "gini", "tie_break": "first"},
             {"max_depth": 3, "k": 2, "min_improvement": 0.01, "time_limit": 60.0}],
    "gosdt": [{"max_depth": 2}, {"regularization": 0.05}, {"max_depth": 3, "regularization": 0.001},
              {"max_depth": 2, "lb_guess": {"max_depth": 1}}, {"max_depth": 2, "time_limit": 60.0}],
    "greedy": [{}, {"criterion": "gini", "max_depth": 2}, {"criterion": "error"}, {"prune": "mdl"}],
    "optimal-numeric": [{"max_depth": 1}, {"max_depth": 2}, {"max_depth": 3, "time_limit": 60.0},
                        {"max_depth": 3, "objective": "error_rate+lambda*leaves", "lam": 0.01},
                        {"max_depth": 2, "lexicographic": True}],
    "ngi": [{"method": m} for m in ("ec4.5", "ecart", "asr", "ip", "bal", "bal-fixed", "c4.5",
                                    "cart", "cc4.5", "ccart")]
    + [{"d_term": "authors", "min_objects": 2}, {"ccp_alpha": 0.01}],
}

#: learners that share a module and its warm-up are checked in one interpreter
GROUPS = [["dpdt"], ["dpdt-regressor"], ["dpdt-adaboost"], ["topk"], ["gosdt"], ["greedy"],
          ["ngi", "ec4.5", "ecart", "asr", "ip", "bal", "bal-fixed", "ngi-c4.5", "ngi-cart",
           "cc4.5", "ccart"],
          ["cart", "cart-regressor", "random-forest", "gbdt"], ["optimal-numeric"],
          ["dl85", "streed", "gosdt-ref", "contree", "licketysplit", "pytrees-dl85",
           "pytrees-contree", "treefarms", "arborenum"], ["rashomon"]]

CHILD = r"""
import json, os, sys, traceback
import numpy as np
from treebench.registry import ALGORITHMS
from treebench.execute.fit import warmup_for
from treebench.execute.precompile import compiled_signatures as signatures

groups = json.loads(sys.argv[1])  # [[names, variants], ...]


def datasets(entry):
    rng = np.random.default_rng(0)
    kinds = ["binary"] + (["raw"] if "numeric" in entry.inputs else [])
    classes = [2] + ([3] if "multiclass" in entry.inputs else [])
    for kind in kinds:
        for n_classes in classes:
            for weighted in (False, True):
                X = rng.random((40, 5))
                if kind == "binary":
                    X = (X > 0.5).astype(np.uint8)
                y = rng.integers(0, n_classes, 40)
                if "regression" in entry.inputs:
                    y = X[:, 0] * 2.0 + y
                w = rng.integers(1, 4, 40).astype(float) if weighted else None
                if weighted and "weights" not in entry.inputs:
                    continue
                yield f"{kind}, {n_classes} classes, {'weights' if weighted else 'no weights'}", X, y, w
                if n_classes == 2 and (weighted or "weights" not in entry.inputs):
                    # read-only inputs (a memory map, as joblib hands its workers) are typed
                    # apart by numba: the fit must not compile kernels for them
                    frozen = [None if a is None else a.copy() for a in (X, y, w)]
                    for a in frozen:
                        if a is not None:
                            a.setflags(write=False)
                    yield f"{kind}, read-only arrays", *frozen


def check(names, variants):
    found = {}
    for name in names:
        entry = ALGORITHMS.get(name)
        if not entry.available:
            continue
        warmup_for(entry)()
        for params in variants.get(name, [{}]):
            for what, X, y, w in datasets(entry):
                before = signatures()
                est = entry.obj(**params).fit(X, y, sample_weight=w)
                est.predict(X)
                after = signatures()
                new = {k: sorted(v - before.get(k, set())) for k, v in after.items() if v - before.get(k, set())}
                if new:
                    found[f"{name} {params} ({what})"] = new
    return found


assert not any(signatures().values()), "a learner's import compiled a kernel"
list(ALGORITHMS)  # every learner's module imported here, before the forks
results = []
for names, variants in groups:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the group's own process: nothing compiled or loaded yet
        os.close(r)
        try:
            out, code = json.dumps(check(names, variants)), 0
        except BaseException:
            out, code = json.dumps({"error": traceback.format_exc()[-3000:]}), 1
        with os.fdopen(w, "w") as f:
            f.write(out)
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    results.append({"status": status, "found": json.loads(text) if text else {"error": "no output"}})
print(json.dumps(results))
"""


def test_a_fit_after_warmup_compiles_nothing():
    groups = []
    for names in GROUPS:
        variants = {n: VARIANTS[n] for n in names if n in VARIANTS}
        if names[0] == "ngi":  # the NGI family: every method through the generic class
            variants = {"ngi": VARIANTS["ngi"]}
        groups.append([names, variants])
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(groups)],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(results) == len(GROUPS)
    failed = {names[0]: r for names, r in zip(GROUPS, results, strict=True)
              if r["status"] != 0 or r["found"]}
    assert not failed, "compiled during a fit, after the warm-up (or failed), by group: " + \
        json.dumps(failed, indent=1)[:4000]


def test_every_registered_learner_is_checked():
    from treebench.registry import ALGORITHMS

    checked = {n for g in GROUPS for n in g}
    learners = {e.name for e in ALGORITHMS if "test" not in e.tags}
    assert learners <= checked, f"add to GROUPS: {sorted(learners - checked)}"
