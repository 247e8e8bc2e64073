"""The Rashomon-set counts of the peer packages `treefarms` (Xin et al., NeurIPS 2022) and
`arborenum`, in treebench's conventions, for oracle tests and comparisons with `rashomon`.

Conventions of the peers, translated here (tests/algorithms/test_rashomon_peers.py and
test_rashomon_conventions.py check each against brute force; docs/rashomon.md has the table):

* depth: treebench's ``max_depth`` counts tests (a lone leaf has depth 0); TreeFARMS'
  ``depth_budget`` counts the leaf level too (``max_depth + 1``); arborenum's ``depth_budget``
  counts tests, as treebench does;
* the per-leaf price: TreeFARMS takes ``regularization`` as a float32 and compares float32
  objectives; arborenum rounds ``lambda_reg * n`` to a whole number of errors per leaf (halves
  away from zero, `arborenum_price`); treebench reads ``lam`` and ``epsilon`` as the decimals
  they print as and compares exactly;
* the bound: both take the multiplier of TreeFARMS (``(1 + m) * optimum``); arborenum compares
  in whole units and admits ``(1 + m) * optimum`` rounded to the nearest whole number (halves
  away from zero);
* a split into two leaves that predict the same class ("trivial extension"): TreeFARMS leaves
  such trees out (``rashomon_ignore_trivial_extensions``, default true), as `rashomon` does
  by default; arborenum counts them (``keep_redundant=True``), and with
  ``majority_leaf_only=False`` (its default) it also counts every leaf with each other label,
  which treebench never does;
* numeric features (arborenum's exact mode, `arborenum_numeric_count`): arborenum's
  thresholds are the midpoints of a feature over all rows, and two that split a node's rows
  alike are two trees; treebench takes the midpoints of the node's rows and counts one
  (`global_threshold_columns` gives arborenum's cutpoints as 0/1 features);
* a leaf whose classes tie: TreeFARMS labels it with the highest class index, treebench with
  the class of the larger total (then the lower index). The label decides whether a split is
  redundant, so the default counts differ where a tied leaf sits beside a leaf of the class the
  other rule picks (COMPAS at depth 3: 381 and 376). `treefarms_spec` gives treebench's
  `SetSpec` under TreeFARMS' rule (``leaf_ties="last"``), which counts as TreeFARMS does
  wherever its departures below do not arise.

Where treefarms 0.2.4 departs from the set's definition (every tree within the bound), found
on small problems and pinned in tests/algorithms/test_rashomon_conventions.py:

* it groups a node's trees by objective value, and drops a split's pair of groups whole when
  both groups hold a leaf of one label, not only the pair of two leaves: when a leaf and a
  deeper subtree of one node tie in objective, trees without any redundant split are lost;
* it decides trees whose objective equals the bound in float32 arithmetic, so such a tree may
  be in or out (treebench counts it in: the definition's ``<=``, in exact arithmetic);
* its configuration is process-global: a key left out of a fit keeps the previous fit's
  value, so `treefarms_count` passes every key it relies on;
* data whose every feature is constant, and some fits with a large regularization, abort the
  Python process (a C++ exception or a segmentation fault) instead of raising.

With the trivial-extension filter off (``keep_redundant=True``), treefarms' counts and
treebench's agree on every small problem without a tree at the bound in float32.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.peers import replicate
from treebench.algorithms.rashomon import RASHOMON_COLUMNS
from treebench.registry import ALGORITHMS
from treebench.search.rashomon import SetSpec
from treebench.tree import adapters


def treefarms_count(X01: np.ndarray, y: np.ndarray, regularization: float, multiplier: float,
                    max_depth: int, keep_redundant: bool = False) -> int:
    """Trees in TreeFARMS' Rashomon set (package `treefarms`) of 0/1 features ``X01``; with
    ``keep_redundant`` its trivial-extension filter is off."""
    return int(_treefarms_fit(X01, y, regularization, multiplier, max_depth,
                              keep_redundant).get_tree_count())


def treefarms_trees(X01: np.ndarray, y: np.ndarray, regularization: float, multiplier: float,
                    max_depth: int, picks=None, keep_redundant: bool = False):
    """TreeFARMS' count on 0/1 features ``X01`` and its trees of indices ``picks`` (every tree
    when None) as `TreeArrays`, laid out by `describe_treefarms` with ``value`` counted from
    ``(X01, y)``. Leaves are labelled by treebench's tie rule, which changes no training error:
    only a leaf whose classes tie can be labelled otherwise."""
    model = _treefarms_fit(X01, y, regularization, multiplier, max_depth, keep_redundant)
    count = int(model.get_tree_count())
    y = np.asarray(y).astype(np.int64)
    return count, [adapters.from_nested(model[int(i)].source, describe_treefarms, 2, X01, y)
                   for i in (range(count) if picks is None else picks)]


def _treefarms_fit(X01, y, regularization: float, multiplier: float, max_depth: int,
                   keep_redundant: bool):
    """The fitted ``TREEFARMS`` model of 0/1 features ``X01`` and class indices ``y``."""
    import pandas as pd
    from treefarms import TREEFARMS

    X01 = np.asarray(X01)
    frame = pd.DataFrame(X01.astype(int), columns=[f"x{j}" for j in range(X01.shape[1])])
    # every key that decides the count, since the package keeps the previous fit's values
    model = TREEFARMS({"regularization": float(regularization),
                       "rashomon_bound_multiplier": float(multiplier),
                       "rashomon_bound": 0.0, "rashomon_bound_adder": 0.0,
                       "rashomon_ignore_trivial_extensions": not keep_redundant,
                       "depth_budget": int(max_depth) + 1})
    with _silenced():  # it prints its progress and trees, from Python and from C++
        model.fit(frame, pd.Series(np.asarray(y).astype(int), name="class"))
    return model


@contextlib.contextmanager
def _silenced():
    """Standard output silenced for Python and for native code (file descriptor 1): the
    packages print their progress from C++, which `contextlib.redirect_stdout` does not
    catch. Output of other threads during the block is lost too."""
    sys.stdout.flush()
    saved = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        try:
            import ctypes

            ctypes.CDLL(None).fflush(None)  # what C stdio holds goes to the null device
        except (OSError, AttributeError):
            pass
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


def treefarms_spec(regularization: float, multiplier: float, max_depth: int,
                   keep_redundant: bool = False) -> SetSpec:
    """treebench's `SetSpec` under TreeFARMS' conventions: ``depth_budget = max_depth + 1``,
    the bound ``(1 + multiplier) * optimum`` and a tied leaf labelled with the highest class
    index (the label that decides whether a split is a trivial extension)."""
    return SetSpec(int(max_depth), float(regularization), epsilon=float(multiplier),
                   keep_redundant=keep_redundant, leaf_ties="last")


def arborenum_count(X01: np.ndarray, y: np.ndarray, regularization: float, multiplier: float,
                    max_depth: int) -> tuple[int, float]:
    """Trees in arborenum's exact Rashomon set of 0/1 features ``X01`` (majority leaves only,
    as treebench counts) and the objective bound it used, half an error above its whole-unit
    bound, in treebench's units: ``rashomon(bound=...)`` with `arborenum_price` as the
    regularization and ``keep_redundant=True`` gives the same set (costs there are whole
    numbers of errors)."""
    model, _, bound = _arborenum_fit(X01, y, regularization, multiplier, max_depth)
    return int(model.count_trees()), (bound + 0.5) / np.asarray(X01).shape[0]


def _arborenum_fit(X01, y, regularization: float, multiplier: float, max_depth: int):
    """The fitted ``ArborEnum`` of 0/1 features ``X01`` (majority leaves only), its optimum
    and its bound in whole units (errors + ``round(lambda * n)`` x leaves)."""
    from arborenum import ArborEnum

    X01 = np.asarray(X01, dtype=np.uint8)
    with _silenced():
        model = ArborEnum().fit_binarized(
            X01, np.asarray(y).astype(int), lambda_reg=float(regularization),
            depth_budget=int(max_depth), rashomon_mult=float(multiplier),
            majority_leaf_only=True)
    optimum = int(model.get_min_objective())  # errors + round(lambda * n) * leaves
    return model, optimum, llround(optimum * (1.0 + float(multiplier)))  # as it computes its own


def arborenum_numeric_count(X: np.ndarray, y: np.ndarray, regularization: float,
                            multiplier: float, max_depth: int) -> tuple[int, float]:
    """Trees in arborenum's exact Rashomon set of raw numeric features ``X`` (its exact mode:
    every cutpoint, ``proxy_mode="continuous"``, ``lookahead_k = max_depth - 1``, exact keys;
    majority leaves only) and the bound it used, as `arborenum_count` gives them.

    Its thresholds are the midpoints between consecutive distinct values of a feature over all
    rows, and two thresholds that split a node's rows alike make two trees; treebench's numeric
    mode takes the midpoints of the node's own rows and counts such a pair once. On the 0/1
    columns of `global_threshold_columns`, ``rashomon(keep_redundant=True, bound=...)`` with
    `arborenum_price` counts as arborenum does."""
    from arborenum import ArborEnum

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    with _silenced():
        model = ArborEnum().fit(
            X, np.asarray(y).astype(int), proxy_mode="continuous",
            lookahead_k=max(int(max_depth) - 1, 0), lambda_reg=float(regularization),
            depth_budget=int(max_depth), rashomon_mult=float(multiplier), key_mode="exact",
            max_number_thresholds_per_feature=None, majority_leaf_only=True)
    optimum = int(model.get_min_objective())
    bound = llround(optimum * (1.0 + float(multiplier)))
    return int(model.count_trees()), (bound + 0.5) / n


def global_threshold_columns(X: np.ndarray) -> np.ndarray:
    """The 0/1 columns ``x > t`` (0 goes left: ``x <= t``) of every feature of ``X`` at every
    midpoint between consecutive distinct values of the feature over all rows: arborenum's
    cutpoints as treebench's 0/1 features."""
    X = np.asarray(X, dtype=np.float64)
    cols = []
    for f in range(X.shape[1]):
        v = np.unique(X[:, f])
        for t in v[:-1] + (v[1:] - v[:-1]) / 2.0:
            cols.append(X[:, f] > t)
    return (np.column_stack(cols) if cols else np.zeros((X.shape[0], 0), bool)).astype(np.int8)


def arborenum_price(regularization: float, n: int) -> float:
    """The per-leaf price arborenum uses, as an error rate: ``lambda * n`` rounded to a whole
    number of errors, halves away from zero (C++ ``llround``: 0.1 on 5 rows is 1 error, where
    Python's ``round`` gives 0), over ``n``."""
    return llround(float(regularization) * n) / n


def llround(x: float) -> int:
    """``x`` rounded to the nearest whole number, halves away from zero, exactly (C++
    ``llround``; ``floor(x + 0.5)`` rounds 0.49999999999999994 up)."""
    whole = math.floor(abs(x))
    return int(math.copysign(whole + (abs(x) - whole >= 0.5), x))


# ----------------------------------------------------------------------------- the learners
# `treefarms` and `arborenum` as learners beside `rashomon`: the same parameters, the peer's
# own depth convention translated, and the count columns `rashomon` declares, so that one
# experiment compares set sizes and times on identical folds (docs/rashomon.md).

#: the columns of `rashomon` that the peers' learners fill (the same names, so the report and
#: the results table compare them)
PEER_COLUMNS = tuple(c for c in RASHOMON_COLUMNS if c.name in (
    "rashomon_count", "rashomon_complete", "rashomon_bound", "rashomon_objective_min"))


class _PeerSetClassifier(TreeClassifierBase):
    """A Rashomon-set peer on 0/1 features and two classes: whole-number sample weights become
    repeated rows (`treebench.algorithms.peers.replicate`), `_enumerate` fits the package and
    returns its best tree (nested, as `_describe` reads it) and its count columns; the tree is
    laid out with leaves labelled from treebench's own training counts. A peer whose
    `_enumerate` states no objective gets that tree's (weighted error rate + λ·leaves) as
    ``rashomon_objective_min``, and ``(1 + epsilon)`` times it as ``rashomon_bound``."""

    _solver_name = ""
    _describe = None

    _parameter_constraints = {
        "regularization": [Interval(Real, 0, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def _fit_tree(self, X, y_index, ctx):
        Xr, yr = replicate(X, y_index, ctx.sample_weight, self._solver_name)
        t0 = time.perf_counter()
        root, info = self._enumerate(np.asarray(Xr, dtype=np.uint8), np.asarray(yr))
        info["solver_seconds"] = time.perf_counter() - t0
        tree = adapters.from_nested(root, self._describe, len(self.classes_), X, y_index,
                                    ctx.sample_weight)
        if "objective" not in info:
            w = np.asarray(ctx.sample_weight, dtype=np.float64)
            objective = (tree.training_error(X, y_index, w) / float(w.sum())
                         + float(self.regularization) * tree.n_leaves)
            info.update({"objective": objective, "rashomon_objective_min": objective,
                         "rashomon_bound": (1.0 + float(self.epsilon)) * objective})
        info.update({"objective_kind": "error_rate+lambda*leaves", "optimal": True,
                     "timed_out": False, "regularization": float(self.regularization)})
        return tree, info

    def _enumerate(self, X01, y) -> tuple[object, dict]:
        raise NotImplementedError


def describe_treefarms(node: dict):
    """A node of a treefarms tree (``model[i].source``): ``"true"`` holds the rows with the
    feature equal to 1, ``"false"`` those equal to 0; a leaf's ``prediction`` is the class as
    passed to ``fit`` (a class index here)."""
    if "prediction" in node:
        return ("leaf", int(node["prediction"]))
    return ("split", int(node["feature"]), node["false"], node["true"])


@ALGORITHMS.register("treefarms", requires=("treefarms",), tags=("optimal", "peer", "rashomon"),
                     inputs=("binary",), columns=PEER_COLUMNS, solves="rashomon-set")
class TreeFARMSPeerClassifier(_PeerSetClassifier):
    """The Rashomon set of TreeFARMS (Xin et al., NeurIPS 2022, package ``treefarms``) on 0/1
    features, with `rashomon`'s parameters: ``regularization`` (λ), ``max_depth`` (tests on a
    path; passed as ``depth_budget = max_depth + 1``, which counts the leaf level), ``epsilon``
    (``rashomon_bound_multiplier``), ``keep_redundant`` (the trivial-extension filter off).

    ``rashomon_count`` is ``get_tree_count()``: it equals `rashomon`'s count with
    ``leaf_ties="last"`` (treefarms' tie rule) except where treefarms 0.2.4's departures
    (module docstring) arise. ``predict`` uses the first tree of treefarms' group of least
    objective (an optimal tree of the set). ``rashomon_objective_min`` is that tree's
    objective computed by treebench, ``rashomon_bound`` ``(1 + epsilon)`` times it (treefarms
    decides the bound in float32). The package's configuration is process-global, so every key
    that decides a count is passed on each fit."""

    _solver_name, _describe = "treefarms", staticmethod(describe_treefarms)
    _parameter_constraints = {**_PeerSetClassifier._parameter_constraints,
                              "keep_redundant": ["boolean"]}

    def __init__(self, regularization=0.01, max_depth=2, epsilon=0.05, keep_redundant=False):
        self.regularization = regularization
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.keep_redundant = keep_redundant

    @staticmethod
    def warmup() -> None:
        """Import treefarms and enumerate a toy set (outside the timed fit)."""
        _treefarms_fit(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), np.array([0, 1, 1, 0]),
                       0.1, 0.1, 1, False)

    def _enumerate(self, X01, y):
        if not np.any(X01.min(axis=0) != X01.max(axis=0)):
            # every split has an empty side, so the set is the one leaf (arborenum counts 1
            # too); treefarms 0.2.4 aborts the whole process on such data (C++
            # ``Bitmask::empty``), so the adapter answers without it
            return {"prediction": int(np.argmax(np.bincount(y, minlength=2)))}, {
                "rashomon_count": 1.0, "rashomon_count_exact": "1", "rashomon_complete": True}
        model = _treefarms_fit(X01, y, self.regularization, self.epsilon, self.max_depth,
                               bool(self.keep_redundant))
        sets = model.model_set
        metrics = sets.available_metrics
        offset, best, best_value = 0, 0, math.inf
        for pointer, value in zip(metrics["metric_pointers"], metrics["metric_values"]):
            if value[0] < best_value:
                best, best_value = offset, value[0]
            offset += sets.get_model_set(pointer)["count"]
        root = sets.get_tree_at_idx_raw(best)
        count = int(model.get_tree_count())
        return root, {"rashomon_count": float(count), "rashomon_count_exact": str(count),
                      "rashomon_complete": not bool(getattr(model, "timeout", False))}


def arborenum_paths_tree(paths, labels, depth: int = 0):
    """arborenum's tree (``get_tree_paths``: per leaf, its path of signed 1-based features,
    ``+f`` for feature ``f - 1`` equal to 1, and its label) as nested
    ``("leaf", class)`` / ``("split", feature, child_when_0, child_when_1)`` tuples."""
    if len(paths) == 1 and len(paths[0]) == depth:
        return ("leaf", int(labels[0]))
    feature = abs(int(paths[0][depth])) - 1
    ones = [i for i, p in enumerate(paths) if p[depth] > 0]
    zeros = [i for i, p in enumerate(paths) if p[depth] < 0]
    return ("split", feature,
            arborenum_paths_tree([paths[i] for i in zeros], [labels[i] for i in zeros], depth + 1),
            arborenum_paths_tree([paths[i] for i in ones], [labels[i] for i in ones], depth + 1))


@ALGORITHMS.register("arborenum", requires=("arborenum",), tags=("optimal", "peer", "rashomon"),
                     inputs=("binary",), columns=PEER_COLUMNS, solves="rashomon-set")
class ArborEnumPeerClassifier(_PeerSetClassifier):
    """The exact Rashomon set of ``arborenum`` on 0/1 features (``fit_binarized``, majority
    leaves only), with `rashomon`'s parameters: ``regularization`` (``lambda_reg``),
    ``max_depth`` (``depth_budget``, which counts tests as treebench does), ``epsilon``
    (``rashomon_mult``).

    arborenum's conventions (module docstring): the price per leaf is ``λ·n`` rounded to whole
    errors, the bound ``(1 + epsilon) * optimum`` rounded to whole errors, and a split into two
    leaves of one class is counted; ``rashomon_count`` equals `rashomon`'s with
    ``keep_redundant=True``, ``regularization`` = `arborenum_price` and ``bound`` =
    `arborenum_count`'s. ``rashomon_objective_min`` and ``rashomon_bound`` are arborenum's
    optimum and bound in its units (errors + rounded price x leaves) over ``n``. ``predict``
    uses arborenum's tree 0, whose objective is the optimum."""

    _solver_name, _describe = "arborenum", staticmethod(lambda node: node)

    def __init__(self, regularization=0.01, max_depth=2, epsilon=0.05):
        self.regularization = regularization
        self.max_depth = max_depth
        self.epsilon = epsilon

    @staticmethod
    def warmup() -> None:
        """Import arborenum and enumerate a toy set (outside the timed fit)."""
        _arborenum_fit(np.array([[0, 1], [1, 0], [1, 1], [0, 0]]), np.array([0, 1, 1, 0]),
                       0.1, 0.1, 1)

    def _enumerate(self, X01, y):
        model, optimum, bound = _arborenum_fit(X01, y, self.regularization, self.epsilon,
                                               self.max_depth)
        if int(model.get_tree_objective(0)[0]) != optimum:
            raise RuntimeError("arborenum's tree 0 is not optimal; its best tree is unknown")
        paths, labels = model.get_tree_paths(0)
        count = int(model.count_trees())
        n = len(y)
        return arborenum_paths_tree([list(p) for p in paths], list(labels)), {
            "objective": optimum / n, "rashomon_count": float(count),
            "rashomon_count_exact": str(count), "rashomon_complete": True,
            "rashomon_bound": bound / n, "rashomon_objective_min": optimum / n}
