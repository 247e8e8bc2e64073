"""`rashomon`: every near-optimal tree (the Rashomon set) for GOSDT's objective, enumerated into a
shared-subtree DAG (`treebench.search.rashomon`), counted exactly and indexable.

The set holds every tree of depth <= ``max_depth`` whose objective ``error rate +
regularization * leaves`` is at most ``(1 + epsilon) * optimum`` (TreeFARMS'
``rashomon_bound_multiplier``; Xin et al., NeurIPS 2022, Definition 3.1) or, with ``bound``, at
most that absolute value. The optimum comes first from `gosdt` (0/1 features) or
`optimal-numeric` (raw numeric features, every midpoint threshold), then from the enumeration
itself. ``predict`` uses the best tree (the set's tree 0); ``predict_all`` gives the labels of
every tree, or of chosen ones, on a block of rows.
"""

from __future__ import annotations

import json
import math
import time
from fractions import Fraction
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.gosdt import GOSDTClassifier
from treebench.algorithms.gosdt import warmup as gosdt_warmup
from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
from treebench.algorithms.optimal_numeric import warmup as numeric_warmup
from treebench.columns import declare
from treebench.registry import ALGORITHMS
from treebench.search.numeric import MAX_DEPTH
from treebench.search.rashomon import NODE_BYTES, SetSpec, enumerate_set
from treebench.tree.export import export_text

#: the epsilons at which a set's size is recorded (`rashomon_count_by_epsilon`): those below
#: the set's own, then the set's own
EPSILON_GRID = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)

#: results columns of the set (group "solver"): from the fit's solve info, and the
#: ``rashomon_test_*`` ones from `RashomonClassifier.test_columns` on the cell's test rows
RASHOMON_COLUMNS = declare(
    "`rashomon` (`solve_info_`)", "solver",
    ("rashomon_count", "Float64", "trees in the Rashomon set (exact below 2^53; the exact "
     "integer is in the cell's solve info)"),
    ("rashomon_complete", "boolean", "whether the enumeration finished (false: it stopped at "
     "its time or memory limit and the count is of the trees found)"),
    ("rashomon_bound", "Float64", "the set's objective bound"),
    ("rashomon_objective_min", "Float64", "least objective in the set (the optimum)"),
    ("rashomon_objective_max", "Float64", "largest objective in the set"),
    ("rashomon_count_by_epsilon", "string", "set size at smaller bounds, JSON {epsilon: trees "
     "with objective <= (1 + epsilon) x optimum}: at 0, 0.001, 0.002, 0.005, 0.01, 0.02, "
     "0.05, 0.1, ... below the set's own epsilon, then at the set's own (the count)"),
    ("rashomon_trees_analysed", "Int64", "trees the set's analyses read (all of them, or a "
     "uniform sample of `max_analysed`)"),
    ("rashomon_sampled", "boolean", "whether the analyses read a uniform sample of the set "
     "(`rashomon_trees_analysed` trees, drawn with a fixed seed) instead of every tree"),
    ("rashomon_feature_usage", "string", "split-usage importance, JSON {input column: [min, "
     "median, max]} of the splits on the column per analysed tree, for the columns some "
     "analysed tree splits on"),
    ("rashomon_test_ambiguity", "Float64", "share of the test rows that some analysed tree "
     "labels otherwise than the best tree (Marx, Calmon and Ustun 2020)"),
    ("rashomon_test_discrepancy", "Float64", "largest share of the test rows that one "
     "analysed tree labels otherwise than the best tree (Marx et al. 2020)"),
    ("rashomon_test_accuracy_min", "Float64", "least test accuracy of a tree of the set (the "
     "analysed trees and the best one); describes the set, selects no tree"),
    ("rashomon_test_accuracy_max", "Float64", "largest test accuracy of a tree of the set (the "
     "analysed trees and the best one); describes the set, selects no tree"),
    ("rashomon_dag_nodes", "Int64", "subproblems in the set's shared-subtree DAG"),
)


@ALGORITHMS.register("rashomon", tags=("optimal", "regularized", "rashomon"),
                     inputs=("binary", "numeric", "weights", "multiclass"),
                     columns=RASHOMON_COLUMNS, solves="rashomon-set")
class RashomonClassifier(TreeClassifierBase):
    """Every tree of depth <= ``max_depth`` within a bound of the optimum of ``error rate +
    regularization * leaves`` (the Rashomon set, Xin et al. 2022), counted exactly.

    Parameters
    ----------
    regularization : float >= 0
        Per-leaf penalty λ, read as the decimal it prints as (0.05 is 1/20), so that a
        tree exactly at the bound is in the set.
    max_depth : int, 0 to 16
        Tests on any path (a lone leaf has depth 0).
    epsilon : float >= 0
        The set's bound is ``(1 + epsilon) * optimum`` (TreeFARMS' ``rashomon_bound_multiplier``).
    bound : float > 0 or None
        An absolute bound on the objective instead (``epsilon`` is then not used).
    features : {"auto", "binary", "numeric"}
        "binary": 0/1 columns (left is ``x = 0``); "numeric": raw features at every midpoint
        threshold of a node's rows; "auto": "binary" when every value is 0 or 1.
    time_limit : float > 0 or None
        Seconds for the enumeration; on reaching it the set holds the trees found so far and
        ``complete_`` is False.
    memory_limit_mb : float > 0
        Estimated memory of the DAG at which the enumeration stops the same way.
    max_analysed : int >= 1
        The analyses (feature usage, ambiguity, discrepancy, accuracy range) read every tree of
        a set of at most this many trees, else a uniform sample of this many
        (``set_.sample(max_analysed, seed)``; ``solve_info_["rashomon_sampled"]`` says which).
    random_state : int or None
        Seed of that sample (None: 0, so that a fit analyses the same trees every time; the
        runner passes the cell's seed).
    keep_redundant : bool
        Count trees with a split into two leaves that predict the same class (such a tree
        predicts as the tree with one leaf there, for one leaf more). TreeFARMS leaves them
        out, and so does this learner by default; arborenum counts them. With True the set is
        every tree within the bound (the paper's definition) and ``leaf_ties`` plays no part.
    leaf_ties : {"prior", "last"}
        The class of a leaf whose classes tie, which decides whether a split is redundant:
        "prior" (treebench's rule everywhere: the class with more training rows, then the
        first) or "last" (the highest class index, TreeFARMS' rule; with it the counts equal
        treefarms' on COMPAS: 25, 381 and 1,105 at depths 2-4).

    Notes
    -----
    ``set_`` is the `treebench.search.rashomon.RashomonSet`: ``set_.count`` (exact Python
    integer), ``set_.tree(i)`` (tree ``i`` in the order of objective), ``set_.sample(n, seed)``
    (indices). A split with an empty side is never part of a tree, and two thresholds of one
    numeric feature that split a node's rows alike are one split. ``solve_info_["optimal"]``
    holds when the enumeration finished; tree 0 is then optimal. `test_columns` gives the
    set's results columns measured on the cell's test rows (the runner calls it after the fit).
    """

    _parameter_constraints = {
        "regularization": [Interval(Real, 0, None, closed="left")],
        "max_depth": [Interval(Integral, 0, MAX_DEPTH, closed="both")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
        "bound": [Interval(Real, 0, None, closed="neither"), None],
        "features": [StrOptions({"auto", "binary", "numeric"})],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "memory_limit_mb": [Interval(Real, 0, None, closed="neither")],
        "max_analysed": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left"), None],
        "keep_redundant": ["boolean"],
        "leaf_ties": [StrOptions({"prior", "last"})],
    }

    def __init__(self, regularization=0.01, max_depth=2, epsilon=0.05, bound=None,
                 features="auto", time_limit=None, memory_limit_mb=1024, max_analysed=1000,
                 random_state=None, keep_redundant=False, leaf_ties="prior"):
        self.regularization = regularization
        self.max_depth = max_depth
        self.epsilon = epsilon
        self.bound = bound
        self.features = features
        self.time_limit = time_limit
        self.memory_limit_mb = memory_limit_mb
        self.max_analysed = max_analysed
        self.random_state = random_state
        self.keep_redundant = keep_redundant
        self.leaf_ties = leaf_ties

    def _fit_tree(self, X, y_index, ctx):
        t_start = time.perf_counter()
        binary = self.features == "binary" or (
            self.features == "auto" and bool(np.all((X == 0) | (X == 1))))
        sw = np.asarray(ctx.sample_weight, dtype=np.float64)
        deadline = ctx.deadline_for(self.time_limit)
        upper = ref = None
        compile_s = 0.0
        if self.bound is None:  # an optimal tree makes the first bound tight
            ref = (GOSDTClassifier(regularization=self.regularization, max_depth=self.max_depth,
                                   time_limit=self.time_limit) if binary else
                   OptimalNumericClassifier(max_depth=self.max_depth,
                                            objective="error_rate+lambda*leaves",
                                            lam=self.regularization, time_limit=self.time_limit))
            ref.fit(X, y_index, sample_weight=sw)
            compile_s = float(ref.solve_info_.get("compile_seconds", 0.0))
            upper = (ref.tree_.training_error(X, y_index, sw), ref.tree_.n_leaves)
        words = (X.shape[0] + 63) // 64
        max_nodes = max(1, int(self.memory_limit_mb * 2**20 // (NODE_BYTES + 8 * words)))
        t0 = time.perf_counter()
        spec = SetSpec(int(self.max_depth), float(self.regularization),
                       epsilon=float(self.epsilon), bound=self.bound, binary=binary,
                       max_nodes=max_nodes, deadline=deadline,
                       keep_redundant=bool(self.keep_redundant), leaf_ties=self.leaf_ties)
        rset = enumerate_set(X, y_index, sw, len(self.classes_), spec, upper_tree=upper)
        search_s = time.perf_counter() - t0
        self.set_ = rset
        self.complete_ = rset.complete
        count = rset.count
        if count == 0 and not self.complete_ and ref is not None:
            return self._reference_fit(ref, rset, search_s, time.perf_counter() - t_start - compile_s,
                                       compile_s)
        if count == 0:
            raise ValueError(
                f"the Rashomon set is empty: no tree of depth <= {self.max_depth} has an "
                f"objective within the bound {self.bound}" if self.complete_ else
                "the Rashomon search stopped at its limit before finding any tree; raise "
                "time_limit or memory_limit_mb.")
        seed = 0 if self.random_state is None else int(self.random_state)
        self.analysed_ = rset.sample(int(self.max_analysed), seed)
        self.feature_usage_ = self._feature_usage(X.shape[1])
        tree = rset.tree(0)
        levels = rset.levels()[0]
        best = rset.objective(levels[0])
        fitted, optimal = best, rset.complete
        if not rset.complete and ref is not None:
            if ref.solve_info_["objective"] < best and 0 <= rset.known < levels[0]:
                # stopped before it reached a tree as good as the reference solver's: that
                # tree is the fit (its predictions and objective)
                tree, fitted = ref.tree_, float(ref.solve_info_["objective"])
            # optimal when the fit's tree is as good as the reference solver's proven optimum
            optimal = bool(ref.solve_info_.get("optimal", False)) and \
                fitted <= float(ref.solve_info_["objective"])
        info = {
            "objective": fitted,
            "objective_kind": "error_rate+lambda*leaves",
            "optimal": optimal,
            "timed_out": rset.stop_reason == "time",
            "regularization": float(self.regularization),
            "rashomon_count": float(count),
            "rashomon_count_exact": str(count),
            "rashomon_complete": rset.complete,
            "rashomon_stop": rset.stop_reason,
            "rashomon_bound": rset.objective(rset.bound),
            "rashomon_objective_min": best,
            "rashomon_objective_max": rset.objective(levels[-1]),
            "rashomon_count_by_epsilon": json.dumps(self._count_by_epsilon()),
            "rashomon_trees_analysed": len(self.analysed_),
            "rashomon_sampled": len(self.analysed_) < count,
            "rashomon_sample_seed": seed,
            "rashomon_dag_nodes": len(rset.enum.memo),
            "rashomon_size_curve": self._size_curve(),
            "rashomon_feature_usage": json.dumps(
                {str(f): [_whole(x) for x in v] for f, v in self.feature_usage_.items()
                 if v[2] > 0}),
            "search_seconds": search_s,
            "seconds": time.perf_counter() - t_start - compile_s,
            "compile_seconds": compile_s,
        }
        return tree, info

    def _reference_fit(self, ref, rset, search_s: float, seconds: float, compile_s: float):
        """The fit of a search that stopped at its limit before it found any tree of the set:
        the reference solver's tree, with its objective and optimality, beside an empty,
        incomplete set (no tree analysed, every count 0)."""
        self.analysed_ = []
        self.feature_usage_ = {}
        epsilon = "inf" if self.bound is not None else f"{float(self.epsilon):g}"
        info = {
            "objective": float(ref.solve_info_["objective"]),
            "objective_kind": "error_rate+lambda*leaves",
            "optimal": bool(ref.solve_info_.get("optimal", False)),
            "timed_out": rset.stop_reason == "time",
            "regularization": float(self.regularization),
            "rashomon_count": 0.0, "rashomon_count_exact": "0",
            "rashomon_complete": False, "rashomon_stop": rset.stop_reason,
            "rashomon_bound": rset.objective(rset.bound),
            "rashomon_objective_min": None, "rashomon_objective_max": None,
            "rashomon_count_by_epsilon": json.dumps({epsilon: 0}),
            "rashomon_trees_analysed": 0, "rashomon_sampled": False,
            "rashomon_sample_seed": 0 if self.random_state is None else int(self.random_state),
            "rashomon_dag_nodes": len(rset.enum.memo),
            "rashomon_size_curve": {}, "rashomon_feature_usage": json.dumps({}),
            "search_seconds": search_s, "seconds": seconds, "compile_seconds": compile_s,
        }
        return ref.tree_, info

    def _size_curve(self) -> dict[str, int]:
        """Set size against the bound: for each objective value of the set (ascending), the
        number of trees at most that objective, keyed by the relative excess over the optimum
        (``(objective - optimum) / optimum``, 6 decimals): the curve of set size against
        epsilon, read off the root's histogram."""
        levels, counts = self.set_.levels()
        opt = levels[0]
        out, total = {}, 0
        for v, k in zip(levels, counts):
            total += k
            out[f"{(v - opt) / opt:.6f}" if opt else "inf"] = total
        return out

    def _count_by_epsilon(self) -> dict[str, int]:
        """The set's size at the epsilons of `EPSILON_GRID` below its own and at its own (the
        count), keyed by epsilon (``%g``): a smaller epsilon's set is the trees of cost at most
        ``floor(optimum * (1 + epsilon))`` (whole units, epsilon read as the decimal it prints
        as), the bound the enumeration would apply, so each entry is the count a fit at that
        epsilon gives (of the trees found, when the set is incomplete: its optimum is then the
        least cost known, the reference solver's tree's when the set holds none as good)."""
        rset = self.set_
        opt = rset.optimum
        if not rset.complete and 0 <= rset.known < opt:  # the set lacks the best tree known
            opt = rset.known
        if self.bound is None:
            own = float(self.epsilon)
        elif opt > 0:
            own = (rset.bound - opt) / opt
        else:
            own = 0.0 if rset.bound == opt else math.inf
        key = f"{own:g}"
        out = {f"{e:g}": rset.count_within(math.floor(opt * (1 + Fraction(repr(e)))))
               for e in EPSILON_GRID if e < own and f"{e:g}" != key}
        out[key] = rset.count
        return out

    def _feature_usage(self, n_features: int) -> dict[int, tuple[float, float, float]]:
        """Per feature: (min, median, max) over the analysed trees of the splits on it."""
        use = np.zeros((len(self.analysed_), n_features))
        group = self.set_.enum.prob.group
        for r, i in enumerate(self.analysed_):
            for c, _ in self.set_.tree_nodes(i):
                if c >= 0:
                    use[r, int(group[c])] += 1
        return {f: (float(use[:, f].min()), float(np.median(use[:, f])), float(use[:, f].max()))
                for f in range(n_features)}

    def predict_all(self, X, trees=None) -> np.ndarray:
        """Labels of the set's trees on the rows of ``X``: an array (trees x rows), for the tree
        indices ``trees`` (default: the analysed trees, every tree of a set of at most
        ``max_analysed``)."""
        X = self._check_X(X)
        idx = self.analysed_ if trees is None else [int(i) for i in trees]
        out = np.empty((len(idx), X.shape[0]), dtype=self.classes_.dtype)
        for r, i in enumerate(idx):
            out[r] = self.classes_[self.set_.tree(i).predict_index(X)]
        return out

    def rashomon_scores(self, X, y, sample_weight=None) -> dict[str, float]:
        """Predictive multiplicity over the analysed trees on the rows ``(X, y)`` (Marx, Calmon
        and Ustun, ICML 2020, §3, with the best tree as the reference model): ``ambiguity``,
        the share of rows that some tree labels otherwise than the best tree;
        ``discrepancy``, the largest share of rows one tree labels otherwise; and the least and
        largest accuracy of a tree of the set (the analysed trees and the best tree).

        Notes
        -----
        The accuracy range is a description of the set on these rows, not a choice of a tree
        by them. Over a sample (``solve_info_["rashomon_sampled"]``) the ambiguity and the
        discrepancy are at most the whole set's, and the accuracy range lies within its. The
        trees are read one at a time (no trees x rows matrix)."""
        check_is_fitted(self)
        X = self._check_X(X)
        y = np.asarray(y)
        w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        total = float(w.sum())
        if total <= 0:
            nan = float("nan")
            return {"ambiguity": nan, "discrepancy": nan, "accuracy_min": nan,
                    "accuracy_max": nan}
        pos = np.minimum(np.searchsorted(self.classes_, y), len(self.classes_) - 1)
        y_index = np.where(self.classes_[pos] == y, pos, -1)  # -1: a class never seen
        best = self.tree_.predict_index(X)
        some = np.zeros(len(y), dtype=bool)
        discrepancy = 0.0
        lo = hi = float(w[best == y_index].sum()) / total
        for i in self.analysed_:
            labels = self.set_.tree(i).predict_index(X)
            differs = labels != best
            some |= differs
            discrepancy = max(discrepancy, float(w[differs].sum()) / total)
            acc = float(w[labels == y_index].sum()) / total
            lo, hi = min(lo, acc), max(hi, acc)
        return {"ambiguity": float(w[some].sum()) / total, "discrepancy": discrepancy,
                "accuracy_min": lo, "accuracy_max": hi}

    def test_columns(self, X, y, sample_weight=None) -> dict[str, float]:
        """The set's results columns measured on the cell's test rows: `rashomon_scores` as
        ``rashomon_test_ambiguity``, ``rashomon_test_discrepancy``,
        ``rashomon_test_accuracy_min`` and ``rashomon_test_accuracy_max``. The runner calls it
        with the test split after the fit (`treebench.execute.fit`); the best tree's own test
        accuracy is the cell's ``test_accuracy``."""
        return {f"rashomon_test_{k}": v
                for k, v in self.rashomon_scores(X, y, sample_weight).items()}

    def export_text(self, feature_names=None, class_names=None, tree=None) -> str:
        """Tree ``tree`` of the set (default: the best one) as indented if/else rules."""
        if tree is None:
            return super().export_text(feature_names, class_names)
        check_is_fitted(self)
        return export_text(self.set_.tree(int(tree)),
                           *self._export_args(feature_names, class_names))


def _whole(x: float) -> int | float:
    return int(x) if float(x).is_integer() else float(x)


def warmup() -> float:
    """Compile the kernels of the solvers that give the first bound (`gosdt`,
    `optimal-numeric`); the seconds spent."""
    return gosdt_warmup() + numeric_warmup()
