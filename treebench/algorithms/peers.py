"""Optimal-tree solvers of other projects as baselines (optional extra ``peers``).

* ``dl85``: DL8.5 (Aglin, Nijssen & Schaus 2020) through ``pydl8.5``; optimal accuracy at a
  depth limit, with the search of the paper (and of the Top-k paper's k = d setting):
  ``depth_two_special_algo=False, similar_lb=False, similar_for_branching=False, desc=True,
  repeat_sort=True`` with the hash-cover cache. The package's defaults add a specialised depth-2
  solver and similarity bounds, which return non-optimal trees on some data.
* ``streed``: MurTree/STreeD (Demirović et al. 2022, van der Linden et al. 2023) through
  ``pystreed``, with ``cost_complexity=0`` (pure accuracy at a depth limit) by default.
* ``gosdt-ref``: GOSDT (Lin et al. 2020; McTavish et al. 2022) through the authors' ``gosdt``
  package: regularised objective, error + λ · leaves, optional depth budget and lower-bound
  guess (with the ``reference_LB`` fix). Our own solver is ``gosdt`` (`treebench.algorithms.gosdt`).

Their trees are translated once in `treebench.tree.adapters`; predictions use our own tree, never
the solver's ``predict`` (gosdt 1.0.4's ``predict`` breaks with scikit-learn ≥ 1.8), and leaves
are labelled by treebench's tie rule from their training counts.

Each class declares a ``warmup()`` that imports its solver library (and fits a toy problem, so
that lazily loaded native code is in memory): the runner calls it once per worker, outside the
timed region, so ``fit_seconds`` holds the solver's work and not its import.
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves, by_cost, fixed, gosdt_problem, leaf_size
from treebench.algorithms.solve_info import REFERENCE_BOUND, bound_fields
from treebench.registry import ALGORITHMS
from treebench.search.exactness import warn_unproven
from treebench.tree import adapters


def _toy() -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0]], dtype=np.int32)
    return X, np.array([0, 1, 1, 0])


def _quiet_fit(est, X, y) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)


def lexicographic_cost(n_rows: int, max_depth: int) -> float:
    """A cost per branching node, as a share of the rows (STreeD's ``cost_complexity`` and
    ConTree's ``complexity_cost``: the solver minimises errors + cost * n_rows * branching
    nodes), below one error for the largest tree of the depth limit: 1 / (n_rows * 2^depth),
    so that cost * n_rows * (2^depth - 1) < 1. With whole-number errors, the minimiser then has
    the fewest errors and, among those, the fewest branching nodes (hence nodes)."""
    return 1.0 / (max(n_rows, 1) * 2.0 ** max(max_depth, 0))


#: the most rows `replicate` makes (the solvers index rows with 32-bit ints)
MAX_REPLICATED_ROWS = 2**31 - 1


def replicate(X: np.ndarray, y_index: np.ndarray, sample_weight: np.ndarray, solver: str):
    """Integer sample weights as repeated rows (exact for count-based objectives); the solvers
    take no weights, so other weights are refused with a clear error. (Hence their registry
    entries do not declare the ``weights`` input kind: only whole-number weights work.)"""
    if np.all(sample_weight == 1.0):
        return X, y_index
    w = np.rint(sample_weight)
    if not np.allclose(w, sample_weight):
        raise ValueError(f"{solver} takes only whole-number sample weights (used as repeated rows).")
    if float(np.sum(w)) > MAX_REPLICATED_ROWS:
        raise ValueError(f"{solver} takes whole-number sample weights as repeated rows, and these "
                         f"make {float(np.sum(w)):.3g} rows (at most {MAX_REPLICATED_ROWS:,}); "
                         f"divide the weights by a common factor.")
    reps = w.astype(np.int64)
    return np.repeat(X, reps, axis=0), np.repeat(y_index, reps)


def _timed_fit(est, *args, quiet: bool = True, **kw) -> float:
    """Seconds ``est.fit(*args, **kw)`` takes; ``quiet`` silences the package's warnings and
    printing (its status is read from the fitted object instead)."""
    with contextlib.ExitStack() as stack:
        if quiet:
            stack.enter_context(warnings.catch_warnings())
            warnings.simplefilter("ignore")
            stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        t0 = time.perf_counter()
        est.fit(*args, **kw)
        return time.perf_counter() - t0


class _PeerClassifier(TreeClassifierBase):
    """A solver of another project on 0/1 features: whole-number sample weights become repeated
    rows (`replicate`), the package solves (`_solve`), and its tree is translated once
    (`adapters.from_nested`) with leaves labelled from treebench's own training counts. A
    subclass names the solver in messages (``_solver_name``), says how its nodes read
    (``_describe``, an `adapters.describe_*`) and writes `_solve`; `_info` reads an accuracy
    solver's result and may be replaced."""

    compact_input = True  # 0/1 uint8 matrices are passed on as they are
    _solver_name = ""
    _describe = None

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        Xr, yr = replicate(X, y_index, sample_weight, self._solver_name)
        root, state = self._solve(Xr, yr)
        tree = adapters.from_nested(root, self._describe, len(self.classes_), X, y_index,
                                    sample_weight)
        return tree, self._info(tree, X, y_index, sample_weight, state)

    def _solve(self, Xr, yr) -> tuple[object, dict]:
        """Fit the package on the repeated rows: (the root of its tree, what `_info` reads)."""
        raise NotImplementedError

    def _info(self, tree, X, y_index, sample_weight, state: dict) -> dict:
        """``solve_info_`` of an accuracy solver: ``state`` says whether it proved optimality
        and how long it took; the objective is the tree's weighted training errors."""
        info = {"optimal": state["optimal"], "timed_out": state["timed_out"],
                "objective": float(tree.training_error(X, y_index, sample_weight)),
                "objective_kind": "errors", "solver_seconds": state["seconds"]}
        if "unproven" in state:
            info["unproven"] = state["unproven"]
        return info


@ALGORITHMS.register(
    "dl85", requires=("pydl85",), tags=("optimal", "peer"), inputs=("binary", "multiclass"),
    solves=Solves(leaf_size(fixed("min-errors"), "min_sup"), {"min-errors": {}}, {},
                  unrestricted={"min_sup": 1}),
)
class DL85PeerClassifier(_PeerClassifier):
    """DL8.5 optimal depth-limited tree (pydl8.5), on 0/1 features.

    ``paper_search`` (default true) runs the search of the DL8.5 paper (Aglin, Nijssen & Schaus
    2020, Algorithm 1, with the hash-cover cache): pydl8.5 0.1.8's own defaults add a
    specialised depth-2 solver and similarity lower bounds, and with them the package returns
    trees that are not optimal while saying they are (on small random data, 22 of 1,000 two-class
    fits of at most 12 rows at depths 1-4; none of 6,000 with the paper's search). With
    ``paper_search=False`` the package's defaults run and the fit is not marked optimal
    (``solve_info_["unproven"]`` says why, with an `UnprovenOptimalityWarning`).

    ``time_limit`` (seconds, above 0) is rounded up to whole seconds: pydl8.5 0.1.8 takes whole
    seconds, reads 0 as no limit, and a fraction below 1 as 0."""

    _solver_name, _describe = "dl85", staticmethod(adapters.describe_dl85)
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_sup": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "paper_search": ["boolean"],
    }

    @staticmethod
    def warmup() -> None:
        """Import pydl8.5 and solve a toy problem (outside the timed fit)."""
        from pydl85 import DL85Classifier

        _quiet_fit(DL85Classifier(max_depth=1), *_toy())

    def __init__(self, max_depth=3, min_sup=1, time_limit=None, paper_search=True):
        self.max_depth = max_depth
        self.min_sup = min_sup
        self.time_limit = time_limit
        self.paper_search = paper_search

    def _solve(self, Xr, yr):
        from pydl85 import Cache_Type, DL85Classifier

        kw = {}
        if self.paper_search:
            kw = dict(depth_two_special_algo=False, similar_lb=False, similar_for_branching=False,
                      desc=True, repeat_sort=True, cache_type=Cache_Type.Cache_HashCover)
        est = DL85Classifier(max_depth=self.max_depth, min_sup=self.min_sup,
                             time_limit=int(np.ceil(self.time_limit or 0)), **kw)
        secs = _timed_fit(est, Xr.astype(np.int32), yr)
        if est.tree_ is None:
            raise RuntimeError("dl85 found no tree (time limit too small?)")
        timed_out = bool(getattr(est, "timeout_", False))
        info = {"optimal": not timed_out, "timed_out": timed_out, "seconds": secs}
        if not self.paper_search and not timed_out:
            info["optimal"] = False
            info["unproven"] = DL85_DEFAULTS_UNPROVEN
            warn_unproven("dl85", DL85_DEFAULTS_UNPROVEN, stacklevel=4)
        return est.tree_, info


#: why a `DL85PeerClassifier` fit with ``paper_search=False`` is not marked optimal
DL85_DEFAULTS_UNPROVEN = ("pydl8.5's default search (its depth-2 solver and similarity bounds) "
                          "returns trees that are not optimal on some data while saying they "
                          "are; paper_search=True runs the paper's search")


@ALGORITHMS.register(
    "streed", requires=("pystreed",), tags=("optimal", "peer"), inputs=("binary", "multiclass"),
    solves=Solves(leaf_size(by_cost("cost_complexity"), "min_samples_leaf"), {
        "min-errors": {"cost_complexity": 0.0, "lexicographic": False},
        "min-errors-then-nodes": {"cost_complexity": 0.0, "lexicographic": True},
        "errors+lambda*leaves": {"lexicographic": False},
    }, {"errors+lambda*leaves": "cost_complexity"}, unrestricted={"min_samples_leaf": 1}),
)
class STreeDPeerClassifier(_PeerClassifier):
    """STreeD/MurTree optimal depth-limited tree (pystreed), on 0/1 features.

    With a cost per branching node (``cost_complexity`` above 0, or ``lexicographic``) the
    package's lower bounds are turned off (``use_lower_bound=False``): with them pystreed
    1.4.0 returns, on some data, a tree that is not optimal and says it is (docs/objectives.md,
    "Peers' known defects")."""

    _solver_name, _describe = "streed", staticmethod(adapters.describe_streed)
    _parameter_constraints = {
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "cost_complexity": [Interval(Real, 0, None, closed="left")],
        "lexicographic": ["boolean"],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    @staticmethod
    def warmup() -> None:
        """Import pystreed and solve a toy problem (outside the timed fit)."""
        from pystreed import STreeDClassifier

        _quiet_fit(STreeDClassifier(max_depth=1), *_toy())

    def __init__(self, max_depth=3, cost_complexity=0.0, min_samples_leaf=1, time_limit=None,
                 lexicographic=False):
        self.max_depth = max_depth
        self.cost_complexity = cost_complexity
        self.lexicographic = lexicographic
        self.min_samples_leaf = min_samples_leaf
        self.time_limit = time_limit

    def _solve(self, Xr, yr):
        from pystreed import STreeDClassifier

        cost = self.cost_complexity
        if self.lexicographic:  # fewest errors, then fewest branching nodes
            cost = lexicographic_cost(len(yr), self.max_depth)
        # pystreed ignores cost_complexity unless the task is "cost-complex-accuracy"
        task = "cost-complex-accuracy" if cost > 0 else "accuracy"
        # pystreed 1.4.0's lower bounds of the cost-complexity task cut optimal subtrees (on
        # small random data, 4 of 4,000 fits returned a worse tree said to be optimal; none
        # of 4,000 without them, at the same speed on the DL8.5 suite)
        bounds = {"use_lower_bound": False} if cost > 0 else {}
        est = STreeDClassifier(max_depth=self.max_depth, cost_complexity=cost,
                               optimization_task=task, min_leaf_node_size=self.min_samples_leaf,
                               time_limit=float(self.time_limit or 1e9), **bounds)
        secs = _timed_fit(est, Xr.astype(np.int32), yr, quiet=False)
        optimal = bool(est.fit_result.is_optimal()) if hasattr(est.fit_result, "is_optimal") else None
        return est.get_tree(), {"optimal": optimal, "timed_out": optimal is False, "seconds": secs}


#: ``solve_info_["status"]`` of a `GOSDTPeerClassifier` fit whose regularisation exceeds the
#: largest class's share of the rows: the lone leaf is then the one optimum (`_solve` says why)
#: and is returned without running gosdt 1.0.4, which crashes on such problems
LEAF_PROVEN = "LEAF_PROVEN"


class _Leaf:
    """A lone leaf in gosdt's node shape (what `adapters.describe_gosdt` reads); its label is
    recounted from the training rows like every translated tree's."""

    def __init__(self, prediction: int):
        self.prediction = prediction


@ALGORITHMS.register(
    "gosdt-ref", requires=("gosdt",), tags=("optimal", "peer", "regularized"),
    inputs=("binary", "multiclass"), columns=(REFERENCE_BOUND,),
    solves=Solves(gosdt_problem, {"errors+lambda*leaves": {"lb_guess": None}},
                  {"errors+lambda*leaves": "regularization"}, unrestricted={"lb_guess": None}),
)
class GOSDTPeerClassifier(_PeerClassifier):
    """GOSDT regularised optimal tree, the authors' package (gosdt 1.0.4): minimises
    error/n + regularization · leaves, optional depth budget, optional lower-bound guess.

    ``lb_guess`` (settings of a ``GradientBoostingClassifier(learning_rate=0.1)``, fitted on the
    training rows) gives the package its ``y_ref``; the released Python layer never sets the
    compiled configuration's ``reference_LB`` flag, so the guess would be ignored or end in
    NON_CONVERGENCE: we set ``config_.reference_LB = True`` whenever ``y_ref`` is given (the
    upstream fix). λ is passed as given (``allow_small_reg=True``). The package prints its
    warnings; they are captured and reported in ``solve_info_["status"]``. When λ exceeds the
    largest class's share of the rows, the lone leaf is the one optimum and gosdt 1.0.4 would
    crash the process (a segmentation fault whenever every tree's objective is above 1): the
    leaf is returned without calling it, ``status`` `LEAF_PROVEN`. ``time_limit`` is rounded
    up to whole seconds (gosdt 1.0.4 takes whole seconds).
    """

    _solver_name, _describe = "gosdt-ref", staticmethod(adapters.describe_gosdt)
    _parameter_constraints = {
        "regularization": [Interval(Real, 0, 1, closed="right")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "lb_guess": [dict, None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
    }

    @staticmethod
    def warmup() -> None:
        """Import gosdt (and pandas) and solve a toy problem (outside the timed fit)."""
        import pandas as pd
        from gosdt import GOSDTClassifier

        X, y = _toy()
        _quiet_fit(GOSDTClassifier(regularization=0.3, depth_budget=2), pd.DataFrame(X.astype(np.int8)), y)

    def __init__(self, regularization=0.01, max_depth=None, lb_guess=None, time_limit=None,
                 random_state=None):
        self.regularization = regularization
        self.max_depth = max_depth
        self.lb_guess = lb_guess
        self.time_limit = time_limit
        self.random_state = random_state

    def _solve(self, Xr, yr):
        import pandas as pd
        from gosdt import GOSDTClassifier

        counts = np.bincount(yr)
        if self.regularization * len(yr) > counts.max():
            # λ above the largest class's share: a tree of L leaves misclassifies at least
            # 1 − (the L largest shares), so its objective is at least the lone leaf's,
            # 1 − share + λ, plus λ − share for each further leaf, each positive: the lone
            # leaf is the one optimum, and its objective is above 1. gosdt 1.0.4 ends the
            # process with a segmentation fault when no tree's objective is at most 1, so it is
            # not called; the leaf is returned as proven.
            state = {"est": None, "y_ref": None, "guess_seconds": 0.0, "seconds": 0.0,
                     "rows": (Xr, yr)}
            return _Leaf(int(np.argmax(counts))), state
        y_ref, guess_s = None, 0.0
        if self.lb_guess is not None:
            from treebench.algorithms.gosdt import check_lb_guess, fit_reference

            y_ref, guess_s = fit_reference(Xr, yr, None, check_lb_guess(self.lb_guess),
                                           self.random_state, self.classes_)
        # gosdt 1.0.4 counts a lone leaf as depth 0, as we do (checked by a test)
        est = GOSDTClassifier(regularization=self.regularization, allow_small_reg=True,
                              depth_budget=self.max_depth,
                              time_limit=None if self.time_limit is None else int(np.ceil(self.time_limit)))
        if y_ref is not None:
            make_config = est._GOSDTClassifier__create_configuration

            def _with_reference_lb():
                make_config()
                est.config_.reference_LB = True

            est._GOSDTClassifier__create_configuration = _with_reference_lb
        secs = _timed_fit(est, pd.DataFrame(Xr.astype(np.int8)), yr, y_ref=y_ref)
        return est.trees_[0].tree, {"est": est, "y_ref": y_ref, "guess_seconds": guess_s,
                                    "seconds": secs, "rows": (Xr, yr)}

    def _info(self, tree, X, y_index, sample_weight, state):
        """The regularised objective of the package's tree, its lower bound and status."""
        est, y_ref = state["est"], state["y_ref"]
        err = tree.training_error(X, y_index, sample_weight)
        objective = err / sample_weight.sum() + self.regularization * tree.n_leaves
        if est is None:  # the lone leaf, proven without the package (`_solve`)
            return {"objective": float(objective), "objective_kind": "error_rate+lambda*leaves",
                    "optimal": True, "optimality": "global", "status": LEAF_PROVEN,
                    "timed_out": False, "bound": float(objective), "gap": 0.0, "leaves": 1,
                    "reference_lb": False, "guess_seconds": 0.0, "solver_seconds": 0.0}
        status = str(est.result_.status).split(".")[-1]
        converged = status == "CONVERGED"
        info = {
            "objective": float(objective),
            "objective_kind": "error_rate+lambda*leaves",
            "optimal": converged and y_ref is None,
            "optimality": ("reference" if y_ref is not None else "global") if converged else "none",
            "status": status,
            "timed_out": status == "TIMEOUT",
            **bound_fields(float(est.result_.lowerbound), float(objective), y_ref is not None),
            "leaves": int(tree.n_leaves),
            "reference_lb": y_ref is not None,
            "guess_seconds": state["guess_seconds"],
            "solver_seconds": state["seconds"],
        }
        if y_ref is not None:  # Theorem 4.3's right-hand side for the package's tree
            from treebench.algorithms.gosdt import reference_bound

            Xr, yr = state["rows"]
            info["reference_bound"] = reference_bound(tree, Xr, yr, np.ones(len(yr)), y_ref,
                                                      self.regularization)
        return info
