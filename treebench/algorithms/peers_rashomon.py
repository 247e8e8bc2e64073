"""The Rashomon-set counts of the peer packages `treefarms` (Xin et al., NeurIPS 2022) and
`arborenum`, in treebench's conventions, for oracle tests and comparisons with `rashomon`.

Conventions of the peers, translated here (each checked by tests/algorithms/
test_rashomon_peers.py against brute force):

* depth: treebench's ``max_depth`` counts tests (a lone leaf has depth 0); TreeFARMS'
  ``depth_budget`` counts the leaf level too (``max_depth + 1``); arborenum's ``depth_budget``
  counts tests, as treebench does;
* the per-leaf price: TreeFARMS takes ``regularization`` as a float (it stores a float32);
  arborenum rounds ``lambda_reg * n`` to a whole number of errors per leaf;
* the bound: both take the multiplier of TreeFARMS (``(1 + m) * optimum``); arborenum compares
  in whole units and admits ``(1 + m) * optimum`` rounded to the nearest whole number (halves
  up);
* TreeFARMS leaves out trees with a split into two leaves that predict the same class (the
  default of `rashomon`, ``keep_redundant=False``); arborenum counts them
  (``keep_redundant=True``), and with ``majority_leaf_only=False`` (its default) it also counts
  every leaf with each other label, which treebench never does;
* a leaf whose classes tie: each package has its own rule, so counts may differ where a tie
  decides whether a split is redundant (the oracle tests use problems without ties).
"""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np


def treefarms_count(X01: np.ndarray, y: np.ndarray, regularization: float, multiplier: float,
                    max_depth: int) -> int:
    """Trees in TreeFARMS' Rashomon set (package `treefarms`) of 0/1 features ``X01``."""
    import pandas as pd
    from treefarms import TREEFARMS

    X01 = np.asarray(X01)
    frame = pd.DataFrame(X01.astype(int), columns=[f"x{j}" for j in range(X01.shape[1])])
    model = TREEFARMS({"regularization": float(regularization),
                       "rashomon_bound_multiplier": float(multiplier),
                       "depth_budget": int(max_depth) + 1})
    with contextlib.redirect_stdout(io.StringIO()):  # it prints its progress and trees
        model.fit(frame, pd.Series(np.asarray(y).astype(int), name="class"))
    return int(model.get_tree_count())


def arborenum_count(X01: np.ndarray, y: np.ndarray, regularization: float, multiplier: float,
                    max_depth: int) -> tuple[int, float]:
    """Trees in arborenum's exact Rashomon set of 0/1 features ``X01`` (majority leaves only,
    as treebench counts) and the objective bound it used, half an error above its whole-unit
    bound, in treebench's units: ``rashomon(bound=...)`` with `arborenum_price` as the
    regularization and ``keep_redundant=True`` gives the same set (costs there are whole
    numbers of errors)."""
    from arborenum import ArborEnum

    X01 = np.asarray(X01, dtype=np.uint8)
    n = X01.shape[0]
    with contextlib.redirect_stdout(io.StringIO()):
        model = ArborEnum().fit_binarized(
            X01, np.asarray(y).astype(int), lambda_reg=float(regularization),
            depth_budget=int(max_depth), rashomon_mult=float(multiplier),
            majority_leaf_only=True)
    optimum = int(model.get_min_objective())  # errors + round(lambda * n) * leaves
    bound = math.floor(optimum * (1.0 + float(multiplier)) + 0.5)
    return int(model.count_trees()), (bound + 0.5) / n


def arborenum_price(regularization: float, n: int) -> float:
    """The per-leaf price arborenum uses, as an error rate: ``round(lambda * n) / n``."""
    return round(float(regularization) * n) / n
