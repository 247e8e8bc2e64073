"""`dpdt`: Dynamic Programming Decision Trees (Kohler, Akrour & Preux, "Breiman meets Bellman",
KDD 2025).

§4: a tree of depth <= D is a policy of a finite MDP whose states are (training rows reaching a
node, depth). Actions are "leaf" (predict the majority class; reward = − its misclassified mass)
and the splits ``x_f <= t`` proposed by a candidate generator (reward − α per row, i.e. − α·w(S)
in mass units); a split moves to the two children with probabilities equal to their share of the
(weighted) rows. Proposition 4.1: the return of a policy is − (training error + α · E[number of
tests on a training row's path]); backward induction (Algorithm 1) gives the best tree whose
splits all come from the generator. We solve it in mass units: minimise ``E + α·L`` with ``E``
the weighted misclassified mass and ``L = Σ_i w_i · depth(leaf(x_i))``.

Generators (§5.2): ``cart`` (default) fits a best-first CART with ``max_leaf_nodes = B_d`` on the
state's rows and proposes every internal node's split (applied to the whole state); ``B_d`` comes
from ``budgets`` (per depth; depths beyond the tuple use 2; 1 counts as 2). ``topb`` proposes
the best Gini threshold of each of the B best features (Blanc et al. 2023); ``quantile`` the
thresholds nearest B−1 quantiles of every feature; ``exhaustive`` every midpoint of every
feature (the MDP then contains every tree: the result is the optimal depth-D tree).

Exact rules: comparisons are on weighted masses (float64 sums of the weights: integers for unit
weights), a split must be strictly better than the leaf (ties go to the leaf) and than earlier
candidates (ties go to the first in generator order). States are memoised by (depth, row set)
(order-free 128-bit Zobrist key plus size). ``operations`` is the paper's count for Table 1: the
sum over every CART call of the unmemoised MDP of the CART tree's node count (Top-B / quantile /
exhaustive: the number of candidate splits), computed exactly from the memoised DAG;
``operations_distinct`` counts only the calls actually made.

The α path (``alpha_path=True``): each state's optimal cost as a function of α is the lower
envelope of the lines ``E_T + α L_T`` of the trees ``T`` in its search space, so it is concave and
piecewise linear; it is computed exactly (leaf point, Minkowski sums of the children's envelopes
for each split, lower hull of the union) and ``alpha_path_`` lists every breakpoint with its tree.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import is_regressor
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions

from treebench.search import dpdt as K
from treebench.algorithms import _dpdt_layer_fit as LAYER
from treebench.algorithms import _dpdt_numeric as NUMERIC
from treebench.algorithms._dpdt_solver import Solver, to_arrays, tree_stats
from treebench.algorithms.base import TreeClassifierBase, TreeRegressorBase
from treebench.algorithms.objectives import Solves, leaf_size
from treebench.algorithms.traces import TRACE_KEY, fit_trace
from treebench.columns import Column
from treebench.registry import ALGORITHMS
from treebench.search.exactness import EXACT_SUM, warn_unproven, whole_weights
from treebench.search.numeric import warmup_both as numeric_warmups
from treebench.search.trace import read_trace
from treebench.tree.labels import recount

GENERATORS = ("cart", "topb", "quantile", "exhaustive")
#: the results column that says which search solved a fit (``solve_info_["search"]``)
SEARCH = Column("search", "string", "which search solved the DPDT fit: dp (backward "
                "induction), layer (0/1 branch-and-bound) or numeric (the numeric optimal-tree "
                "search); all three return the same tree where they apply",
                "the learner (`solve_info_`)", "solver")
#: from this many (rows x features) on, states are segments of one global sorted order,
#: partitioned in place and merged back, instead of sorted copies along the DFS path
INPLACE_ENTRIES = 20_000_000
_WARM = False


#: why a DP over sample weights whose sums round does not mark its tree optimal
UNEXACT_SUMS = ("the sample weights have no power-of-two unit in which they are whole numbers "
                "totalling at most 2**53, so the DP's sums of weights round and a tree that "
                "misclassifies less may look no better")


def exact_sums(sw) -> bool:
    """Whether the DP's sums of the (positive) weights ``sw`` are exact enough to rank trees by
    their errors: whole numbers after one power of two (`whole_weights`) with a total of at
    most 2^53, or one weight shared by every row (sums of ``k`` copies then round by far less
    than one copy for fewer than 2^26 rows). With ``alpha > 0`` the DP's objective is its own
    float expression (``docs/dpdt-exhaustive.md``), which every DPDT search computes the same
    way."""
    sw = np.asarray(sw, dtype=np.float64)
    if sw.shape[0] == 0 or (np.all(sw == sw[0]) and sw.shape[0] < 2**26):
        return True
    return whole_weights(sw, EXACT_SUM) is not None


def check_budgets(budgets) -> None:
    """One clear ValueError unless ``budgets`` is an int >= 1 or a non-empty sequence of them."""
    if isinstance(budgets, Integral) and not isinstance(budgets, bool):
        ok = budgets >= 1
    else:
        try:
            seq = list(budgets)
        except TypeError:
            seq = []
        ok = len(seq) > 0 and all(
            isinstance(b, Integral) and not isinstance(b, bool) and b >= 1 for b in seq
        )
    if not ok:
        raise ValueError(
            f"budgets must be an int >= 1 or a non-empty list of ints >= 1 (one B per depth, "
            f"e.g. [16, 1, 1]), got {budgets!r}."
        )


_COMMON_CONSTRAINTS = {
    "max_depth": [Interval(Integral, 0, None, closed="left"), None],
    "candidates": [StrOptions(set(GENERATORS))],
    "budgets": [Interval(Integral, 1, None, closed="left"), "array-like"],
    "alpha": [Interval(Real, 0, None, closed="left")],
    "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
    "max_features": [
        Interval(Integral, 1, None, closed="left"),
        Interval(Real, 0, 1, closed="right"),
        StrOptions({"sqrt", "log2"}),
        None,
    ],
    "alpha_path": ["boolean"],
    "random_state": ["random_state"],
    "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    "cache_limit_mb": [Interval(Real, 0, None, closed="neither")],
    "tie_break": [StrOptions({"index", "sklearn"})],
    "search": [StrOptions({"auto", "dp", "layer", "numeric"})],
}


def _check_row_limit(n_rows: int, n_classes: int) -> None:
    """Refuse more rows than a packed state holds: a state packs value rank * shift + class
    into int32 (`search.dpdt`)."""
    shift = K.QSHIFT
    while shift < n_classes:
        shift *= 2
    if n_rows * shift >= 2**31:
        raise ValueError(
            f"DPDT handles at most {(2**31 - 1) // shift:,} training rows with "
            f"{n_classes} classes (got {n_rows:,}); subsample the training set."
        )


def _check_path_mass(sample_weight, max_depth: int) -> None:
    """Refuse weights whose path mass ``L = Σ w_i · depth`` (at most total weight ×
    ``max_depth``) overflows a float: the objective ``E + α·L``, the training error read back
    from it and the expected path length would be inf or NaN."""
    with np.errstate(over="ignore"):
        mass = float(np.sum(sample_weight)) * max_depth
    if not np.isfinite(mass):
        raise ValueError(
            f"the total sample weight times max_depth={max_depth} (the largest path mass a tree "
            f"can have) pass the largest float ({np.finfo(float).max:.3g}); scale the "
            f"weights down."
        )


def _run_dp(solver, RSk):
    """Solve the root state: (cost, tree, operations, hull, root class totals)."""
    S = K.presort(solver.Xt)
    st = RSk.sum(axis=0)
    h1, h2 = K.row_hash(S[0], solver.Z1, solver.Z2)
    m = S.shape[1]
    if solver.terminal(st, m, 0):
        return (*solver.leaf_entry(st), st)
    Q = K.pack_ranks(solver.Xt, S, solver.yc) if solver.packed else None
    seg = None
    if S.size >= INPLACE_ENTRIES:  # large input: in-place states (see search.dpdt)
        solver.G, solver.T = K.inplace_orders(
            solver.Xt, S, Q if Q is not None else np.zeros((1, 1), np.int32), solver.flag)
        seg = (0, m)
    return (*solver.solve(S, Q, st, 0, (0, m, int(h1), int(h2)), seg), st)


def _alpha_path(hull, weight, W, n_cols, task, prior) -> list[dict]:
    """The trees of the lower convex hull of (path mass, error), by increasing α: from the
    most accurate tree to the lone leaf, each with the α interval where it is optimal."""
    path = []
    for i, (Lv, Ev, tv) in enumerate(hull):
        # vertex i is optimal for α between the slopes to its neighbours
        hi = np.inf if i == 0 else (Ev - hull[i - 1][1]) / (hull[i - 1][0] - Lv)
        lo = 0.0 if i == len(hull) - 1 else (hull[i + 1][1] - Ev) / (Lv - hull[i + 1][0])
        _, nleaves = tree_stats(tv, weight)
        path.append({
            "alpha_min": float(lo), "alpha_max": float(hi),
            "training_error": float(Ev), "path_mass": float(Lv),
            "expected_path_length": float(Lv / W) if W > 0 else 0.0,
            "n_leaves": int(nleaves),
            "tree": to_arrays(tv, n_cols, task, prior),
        })
    path.reverse()  # α increasing: from the most accurate tree to the lone leaf
    return path


class _DPDTMixin:
    """Parameters and fit logic shared by the classifier and the regressor.

    One ``__init__`` for both (scikit-learn reads the parameters from its signature); the one
    parameter whose default depends on the task, ``criterion``, defaults to None: the task's
    own criterion (Gini for classification, squared error for regression), chosen at fit.
    """

    def __init__(
        self,
        max_depth=3,
        candidates="cart",
        budgets=(16, 16, 16),
        alpha=0.0,
        criterion=None,
        min_samples_leaf=1,
        max_features=None,
        alpha_path=False,
        random_state=None,
        time_limit=None,
        cache_limit_mb=512,
        tie_break="index",
        search="auto",
    ):
        self.max_depth = max_depth
        self.candidates = candidates
        self.budgets = budgets
        self.alpha = alpha
        self.criterion = criterion
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.alpha_path = alpha_path
        self.random_state = random_state
        self.time_limit = time_limit
        self.cache_limit_mb = cache_limit_mb
        self.tie_break = tie_break
        self.search = search

    def _validate_params(self):
        """The parameter constraints, then what a ``search`` asked for by name cannot solve
        whatever the data (the generator, the α path, ``max_features``, the depth, the
        task): refused here, so that a config asking for it fails before any cell runs."""
        super()._validate_params()
        search = getattr(self, "search", "auto")
        if search not in ("layer", "numeric") or self.max_depth is None:
            return
        regression = is_regressor(self)
        if search == "layer":
            why = LAYER.eligible(np.zeros((1, 1)), np.ones(1), regression, self.candidates,
                                 bool(self.alpha_path), self.max_features)
        else:
            why = NUMERIC.eligible(np.ones(1), regression, self.candidates, self.alpha, {
                "max_depth": self.max_depth, "alpha_path": bool(self.alpha_path),
                "max_features": self.max_features, "min_samples_leaf": self.min_samples_leaf})
        if why is not None:
            raise ValueError(f"search={search!r} cannot fit this problem: {why}; use "
                             f"search='auto' or 'dp'.")

    def _solve(self, X, RS, crit, regression, ctx, prior):
        if self.max_depth is None:
            raise ValueError(
                "max_depth=None is not supported: DPDT solves a finite-horizon MDP, so give "
                "max_depth an integer (the paper uses 2 to 10)."
            )
        check_budgets(self.budgets)
        _check_path_mass(ctx.sample_weight, self.max_depth)
        search = getattr(self, "search", "dp")
        if search in ("auto", "layer"):
            why = LAYER.eligible(X, ctx.sample_weight, regression, self.candidates,
                                 bool(self.alpha_path), self.max_features)
            if search == "layer" and why is not None:
                raise ValueError(
                    f"search='layer' cannot fit this problem: {why}; use search='auto' or "
                    f"'dp'."
                )
            if why is None:
                return self._solve_layer(X, RS, ctx, prior)
        if search in ("auto", "numeric"):
            why = NUMERIC.eligible(ctx.sample_weight, regression, self.candidates, self.alpha, {
                "max_depth": self.max_depth, "alpha_path": bool(self.alpha_path),
                "max_features": self.max_features, "min_samples_leaf": self.min_samples_leaf})
            if search == "numeric" and why is not None:
                raise ValueError(
                    f"search='numeric' cannot fit this problem: {why}; use search='auto' or "
                    f"'dp'."
                )
            if why is None:
                tree, info = NUMERIC.fit_numeric(X, np.argmax(RS, axis=1), ctx.sample_weight,
                                                 RS.shape[1], self.max_depth,
                                                 ctx.deadline_for(self.time_limit),
                                                 alpha=self.alpha)
                return tree, info, None
        t_start = time.perf_counter()
        compile_s = warmup()
        seed, sk_seed = self._seeds()
        _check_row_limit(X.shape[0], RS.shape[1])
        sw = ctx.sample_weight
        if np.all(sw > 0):
            Xk, RSk = X, np.ascontiguousarray(RS)
        else:  # zero-weight rows influence nothing: drop them
            keep = np.flatnonzero(sw > 0)
            Xk, RSk = X[keep], np.ascontiguousarray(RS[keep])
        deadline = ctx.deadline_for(self.time_limit)
        t0 = time.perf_counter()
        solver = Solver(Xk, RSk, crit, regression, self, self.alpha, deadline, seed,
                         bool(self.alpha_path), sk_seed)
        cost, tree, ops, hull, st = _run_dp(solver, RSk)
        task = "regression" if regression else "classification"
        n_cols = 3 if regression else RS.shape[1]
        arrays = to_arrays(tree, n_cols, task, prior)
        W = solver.weight(st)
        L, _ = tree_stats(tree, solver.weight)
        # (classification: summed at the leaves; objective - alpha * L rounds, 54.00000000000001
        # for 54 errors on wine at depth 1, alpha 0.29)
        err = cost - self.alpha * L if regression else arrays.leaf_errors
        info = self._dp_info(solver, cost, err, L, W, ops, regression)
        info["search_seconds"] = time.perf_counter() - t0
        info["seconds"] = time.perf_counter() - t_start - compile_s
        info["compile_seconds"] = compile_s
        info["search"] = "dp"
        if not regression:
            info["training_accuracy"] = 1.0 - float(err) / W if W > 0 else 1.0
            if info["optimal"] and not exact_sums(sw[sw > 0]):
                info["optimal"] = False
                info["unproven"] = UNEXACT_SUMS
                warn_unproven("dpdt", UNEXACT_SUMS)
        # the DP has no incumbent before it ends: its trace is the fit's final state alone
        info[TRACE_KEY] = fit_trace(np.empty((0, 3)), info)
        path = None
        if hull is not None:
            path = _alpha_path(hull, solver.weight, W, n_cols, task, prior)
            info["alpha_path_length"] = len(path)
        return arrays, info, path

    def _seeds(self) -> tuple[int, int]:
        """(the solver's seed, scikit-learn's splitter seed) from ``random_state``."""
        seed = int(check_random_state(self.random_state).randint(0, 2**31 - 1))
        # scikit-learn's splitter seed for random_state=rs: RandomState(rs).randint(0, 2^31 - 1)
        sk_rs = self.random_state if isinstance(self.random_state, Integral) else seed
        return seed, int(np.random.RandomState(sk_rs).randint(0, K.SK_RAND_R_MAX))

    def _dp_info(self, solver, cost, err, L, W, ops, regression) -> dict:
        """``solve_info_`` of a DP search, without its times."""
        stats = solver.stats
        return {
            "objective": float(cost),
            "objective_kind": "sse+alpha*path" if regression else "errors+alpha*path",
            "training_error": float(err),
            "expected_path_length": float(L / W) if W > 0 else 0.0,
            "operations": int(ops),
            "operations_distinct": int(stats["operations_distinct"]),
            "states": int(stats["states"]),
            "candidate_splits": int(stats["candidates"]),
            "generator_calls": int(stats["generator_calls"]),
            "cache_hits": int(stats["cache_hits"]),
            "cache_entries": len(solver.memo),
            "cache_full": bool(stats["cache_full"]),
            "timed_out": bool(stats["timed_out"]),
            "optimal": bool(self.candidates == "exhaustive" and not stats["timed_out"]),
            "optimal_for_mdp": not bool(stats["timed_out"]),
        }

    def _solve_layer(self, X, RS, ctx, prior):
        """The exhaustive generator on the search layer (`search.dpdt_layer`): the DP's tree and
        objective, by branch-and-bound on bitsets. ``operations`` (the paper's count over the
        unmemoised MDP) is NaN: a pruned search does not visit every state;
        ``operations_distinct`` counts the candidate splits it scored."""
        t_start = time.perf_counter()
        compile_s = warmup()
        deadline = ctx.deadline_for(self.time_limit)
        t0 = time.perf_counter()
        n_classes = RS.shape[1]
        y_index = np.argmax(RS, axis=1)
        clock: list = []
        tree, obj, st = LAYER.fit_layer(X, y_index, n_classes, self.max_depth, self.alpha,
                                        self.min_samples_leaf, self.cache_limit_mb, deadline,
                                        clock)
        arrays = to_arrays(tree, n_classes, "classification", prior)
        W = float(X.shape[0])
        L, _ = tree_stats(tree, lambda s: float(s.sum()))
        err = arrays.leaf_errors
        info = {
            "objective": float(obj),
            "objective_kind": "errors+alpha*path",
            "training_error": float(err),
            "expected_path_length": float(L / W) if W > 0 else 0.0,
            "operations": float("nan"),
            "operations_distinct": st["operations_distinct"],
            "states": st["states"],
            "candidate_splits": st["operations_distinct"],
            "generator_calls": st["states"],
            "cache_hits": st["cache_hits"],
            "cache_entries": st["cache_entries"],
            "cache_full": st["cache_full"],
            "timed_out": st["timed_out"],
            "optimal": not st["timed_out"],
            "optimal_for_mdp": not st["timed_out"],
            "search_seconds": time.perf_counter() - t0,
            "seconds": time.perf_counter() - t_start - compile_s,
            "compile_seconds": compile_s,
            "search": "layer",
            "training_accuracy": 1.0 - float(err) / W if W > 0 else 1.0,
        }
        info[TRACE_KEY] = fit_trace(read_trace(clock[0], t_start + compile_s), info)
        return arrays, info, None


class DPDTClassifier(_DPDTMixin, TreeClassifierBase):
    """DPDT (Kohler, Akrour & Preux, KDD 2025): the best depth-D tree whose splits come from
    CART calls (or Top-B / quantile / all midpoints) at every state, by dynamic programming.

    Parameters
    ----------
    max_depth : int >= 0
        Depth D (tests on any path). None is refused: the MDP needs a horizon.
    candidates : {"cart", "topb", "quantile", "exhaustive"}
        Split generator (§5.2); "exhaustive" yields the optimal depth-D tree (small data only).
    budgets : int >= 1 or sequence of ints >= 1
        B per depth (``cart_nodes_list``): CART leaves (cart), features (topb) or thresholds per
        feature at the i/(B+1) quantiles (quantile). Depths beyond the tuple use 2. Table 1 "light" is
        (16, 1, 1), "full" (16, 16, 16).
    alpha : float >= 0
        Price of one test per training row: minimises error + α · E[path length] (Eq. 1).
    criterion : {"gini", "entropy", "log_loss"} or None
        Impurity of the CART generator; None (default): "gini".
    min_samples_leaf : int >= 1
        Both children of every split keep this many rows (generator and DP).
    max_features : int, float, "sqrt", "log2" or None
        Features drawn at each CART node (scikit-learn's meaning); None: all.
    alpha_path : bool
        Also compute the exact α path (``alpha_path_``).
    random_state : int, RandomState or None
        Seeds the row hashes and the CART feature draws (with ``max_features``).
    time_limit : float > 0 or None
        Seconds; on timeout unexpanded states become leaves (a complete policy) and
        ``solve_info_["timed_out"]`` is True.
    cache_limit_mb : float > 0
        Cap of the state memo; when full, new states are solved but not stored.
    tie_break : {"index", "sklearn"}
        How the CART generator breaks ties between equal-impurity splits and between open
        nodes of equal priority: "index" (lower feature index, smaller threshold, node created
        first; needs no seed) or "sklearn" (scikit-learn's ``DecisionTreeClassifier(
        max_leaf_nodes=B, random_state=random_state)``: its per-node random feature order and
        its best-first heap, as in the authors' code; the paper's Table 1 operation counts
        come from ``random_state=42``, the authors' default). Only matters on data with ties.
    search : {"auto", "dp", "layer"}
        How the exhaustive generator is solved. "dp": backward induction over every state
        (Algorithm 1). "layer": branch-and-bound on the shared search layer
        (`treebench.search.dpdt_layer`), which returns the same tree and bit-identical
        objective; it needs ``candidates="exhaustive"``, 0/1 features, unit sample weights,
        ``alpha_path=False`` and ``max_features=None`` (a ValueError otherwise), and reports
        ``operations`` as NaN (the paper's count is over every state of the unmemoised MDP,
        which a pruned search does not visit; ``operations_distinct`` counts the candidate
        splits it scored). "numeric": the numeric optimal-tree search
        (`treebench.algorithms._dpdt_numeric`), which returns the DP's tree on raw numeric
        features (with ``alpha > 0`` its exact-float variant); it needs ``max_depth <= 16``,
        ``candidates="exhaustive"``, ``alpha_path=False``,
        ``max_features=None``, ``min_samples_leaf=1`` and whole-number sample weights
        summing to at most 2**52 (``operations`` NaN as for "layer"). "auto" (default): "layer" when
        eligible, else "numeric" when eligible, else "dp". ``solve_info_["search"]`` says
        which one ran.
    """

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "criterion": [StrOptions({"gini", "entropy", "log_loss"}), None],
    }

    def _fit_tree(self, X, y_index, ctx):
        n_classes = len(self.classes_)
        sw = ctx.sample_weight
        RS = np.zeros((X.shape[0], n_classes))
        RS[np.arange(X.shape[0]), y_index] = sw
        prior = np.bincount(y_index, weights=sw, minlength=n_classes)
        crit = K.ENTROPY if self.criterion in ("entropy", "log_loss") else K.GINI  # None: gini
        tree, info, path = self._solve(X, RS, crit, False, ctx, prior)
        # the solver's counts of a child are its parent's minus its sibling's, which rounding
        # can split (1.2 - 0.2 = 1.0000000000000002): counted again from the training rows,
        # a tie is a tie and goes by the one rule, as for every learner
        for t in [tree] + [seg["tree"] for seg in path or []]:
            recount(t, X, y_index, sw, prior=prior)
        if path is not None:
            self.alpha_path_ = path
        return tree, info

    def predict_at_alpha(self, X, alpha):
        """Predictions of the α-path tree optimal at ``alpha`` (needs ``alpha_path=True``)."""
        X = self._check_X(X)
        return self.classes_[self.tree_at_alpha(alpha).predict_index(X)]

    def tree_at_alpha(self, alpha):
        """The α-path tree whose interval contains ``alpha``."""
        if not hasattr(self, "alpha_path_"):
            raise ValueError("fit with alpha_path=True to query trees at other α values.")
        for seg in self.alpha_path_:
            if seg["alpha_min"] <= alpha <= seg["alpha_max"]:
                return seg["tree"]
        return self.alpha_path_[-1]["tree"]


class DPDTRegressor(_DPDTMixin, TreeRegressorBase):
    """DPDT for regression: squared-error leaves (reward − weighted squared error), CART
    (squared error) candidates; same parameters as `DPDTClassifier` (``criterion``
    "squared_error" or None, its default, meaning the same; ``tie_break="sklearn"`` follows
    ``DecisionTreeRegressor``; ``search`` "auto" always runs the DP, "layer" and "numeric"
    raise a ValueError)."""

    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "criterion": [StrOptions({"squared_error"}), None],
    }

    def _fit_tree(self, X, y, ctx):
        sw = ctx.sample_weight
        shift = _target_shift(y, sw)
        yc = y - shift
        RS = np.column_stack([sw, sw * yc, sw * yc * yc])
        tree, info, path = self._solve(X, RS, K.MSE, True, ctx, None)
        if shift:  # each tree once (a path's entry may be the fitted tree itself)
            for t in {id(t): t for t in [tree, *(e["tree"] for e in path or ())]}.values():
                _unshift(t, shift)
        if path is not None:
            self.alpha_path_ = path
        return tree, info


def _target_shift(y: np.ndarray, sw: np.ndarray) -> float:
    """The constant the DP subtracts from the targets before summing them: their weighted mean
    when it is more than 1,000 times their weighted standard deviation, else 0.

    The DP computes a node's squared error from its sums, ``Σw·y² - (Σw·y)² / Σw``, and calls
    a node pure when that is within ``1e-12 · Σw·y²``. Both lose the error to cancellation when
    the targets share an offset large against their spread: targets ``1e6 + 0.25 k`` made every
    node pure, and a lone leaf was claimed optimal. The sums of centred targets keep those
    digits. No tree's squared error depends on the shift. The candidate generators read the
    same centred sums: on such targets CART's splitter rounds its choices away too
    (scikit-learn's own CART returns a lone leaf on targets ``1e8 + 0.25 k``). Targets of
    ordinary spread are summed as given, so their rounding and tie-breaking, and every tree on
    them, stay as before."""
    keep = sw > 0
    if not keep.any():
        return 0.0
    mean = float(np.average(y[keep], weights=sw[keep]))
    std = float(np.sqrt(np.average((y[keep] - mean) ** 2, weights=sw[keep])))
    return mean if np.isfinite(mean) and abs(mean) > 1e3 * std else 0.0


def _unshift(tree, shift: float) -> None:
    """Turn the node sums of ``tree`` (``[Σw, Σw·(y-c), Σw·(y-c)²]`` for the shift ``c``)
    back into the sums of the targets as given, in place."""
    v = tree.value
    w, s1 = v[:, 0].copy(), v[:, 1].copy()
    v[:, 1] = s1 + shift * w
    v[:, 2] = v[:, 2] + 2.0 * shift * s1 + shift * shift * w


def warmup() -> float:
    """Compile (or load from numba's cache) every kernel on tiny data, with the argument types
    the solver passes (`_dpdt_solver.Solver.candidates` always passes ``inplace``, so
    `cart_candidates` is called here with all 9 arguments too: a call that leaves the default
    out is a different signature, which the timed fit would otherwise compile);
    `tests/algorithms/test_warmup_signatures.py` checks that a fit compiles nothing after this.
    Returns the seconds spent when this call did the work, else 0."""
    global _WARM
    if _WARM:
        return 0.0
    t = time.perf_counter()
    warmup_dp_kernels()
    LAYER.warmup_kernels()
    NUMERIC.numeric_warmup(alpha=True)
    _WARM = True
    return time.perf_counter() - t


def warmup_dp_kernels() -> None:
    """The dynamic programme's kernels (`search.dpdt`) of `warmup`, without the search
    engine's and the numeric search's (`treebench.execute.precompile` compiles those in
    another process at the same time)."""
    rng = np.random.default_rng(0)
    X = rng.random((30, 3))
    Xt = np.ascontiguousarray(X.T)
    S = K.presort(Xt)
    flag = np.zeros(30, np.uint8)
    Z = np.ones(30, np.uint64)
    y = rng.integers(0, 2, 30)
    cls = np.ascontiguousarray(np.eye(2)[y])
    reg = np.column_stack([np.ones(30), X[:, 0], X[:, 0] ** 2])
    Q = K.pack_ranks(Xt, S, y)
    noq = np.zeros((1, 1), np.int32)
    for RS, crits in ((cls, (K.GINI, K.ENTROPY)), (cls * 1.5, (K.GINI,)), (reg, (K.MSE,))):
        RS = np.ascontiguousarray(RS)
        yc = y if crits[0] != K.MSE else np.zeros(30, np.int64)
        for crit in crits:
            for ties in (K.TIES_INDEX, K.TIES_SKLEARN):
                for mf in (3, 2):
                    cfg = K.cart_settings(4, crit, 1, mf, 0, ties, 1)
                    K.cart_candidates(Xt, RS, yc, S, noq, False, cfg, flag, False)
                    if crit != K.MSE:
                        K.cart_candidates(Xt, RS, yc, S, Q, True, cfg, flag, False)
            f, th = K.topb_candidates(Xt, RS, yc, S, 2, 1, crit)
            K.child_stats(Xt, RS, yc, S, f, th, Z, Z, RS.sum(axis=0), crit)
            K.leaf_error(RS[0], crit)
    K.midpoint_candidates(Xt, S, 1, 0)
    fq, tq = K.cart_candidates(Xt, cls, y, S, Q, True, K.cart_settings(4, K.GINI, 1, 3, 0, 0, 1),
                               flag, False)[:2]
    K.leaf_child_stats_packed(Xt, S, Q, fq, tq, np.ones(2))
    for packed in (True, False):
        K.partition_side(S, Q, Xt, 0, 0.5, flag, packed, packed)
        G, T = K.inplace_orders(Xt, S.copy(), Q.copy(), flag)
        GS, GQ = G.work, G.Qw
        mid = K.partition_inplace(G, 5, 25, 1, 0.5, T, packed)
        K.merge_back(GS, GQ, 5, mid, 25, 1, Xt, T.tmp_i, T.tmp_q, packed)
        # non-contiguous state views (segments of the in-place orders)
        Sv, Qv = GS[:, 5:25], GQ[:, 5:25]
        for ties in (K.TIES_INDEX, K.TIES_SKLEARN):
            cfg = K.cart_settings(4, K.GINI, 1, 3, 0, ties, 1)
            fv, tv = K.cart_candidates(Xt, cls, y, Sv, Qv, True, cfg, flag, False)[:2]
            K.cart_candidates(Xt, cls, y, Sv, Qv, True, cfg, flag, True)
            K.cart_candidates(Xt, cls, y, Sv, noq, False, cfg, flag, False)
            K.cart_candidates(Xt, np.ascontiguousarray(reg), y * 0, Sv, noq, False,
                              K.cart_settings(4, K.MSE, 1, 3, 0, ties, 1), flag, False)
        K.leaf_child_stats_packed(Xt, Sv, Qv, fv, tv, np.ones(2))
        for crit, RS in ((K.GINI, cls), (K.MSE, np.ascontiguousarray(reg))):
            f, th = K.topb_candidates(Xt, RS, y, Sv, 2, 1, crit)
            K.child_stats(Xt, RS, y, Sv, f, th, Z, Z, RS.sum(axis=0), crit)
        K.midpoint_candidates(Xt, Sv, 1, 0)
        K.row_hash(Sv[0], Z, Z)
    K.row_hash(S[0], Z, Z)


def problem(p) -> str:
    """The problem DPDT solves with the parameters ``p`` (docs/objectives.md)."""
    if p.get("candidates") != "exhaustive":
        return "candidate-split-dp"
    return "errors+alpha*path" if float(p.get("alpha") or 0.0) > 0 else "min-errors"


def regression_problem(p) -> str:
    """The problem DPDT's regressor solves with the parameters ``p``."""
    return "sse+alpha*path" if p.get("candidates") == "exhaustive" else "candidate-split-dp"


#: the kernels DPDT's fits compile: the layer search (the 0/1 search engine's group), then the
#: exact-float search and the dynamic programme (`treebench.execute.precompile`)
PRECOMPILE = {"0/1-search": LAYER.warmup_kernels, "other": (numeric_warmups, warmup_dp_kernels)}

ALGORITHMS.register(
    "dpdt", tags=("dpdt", "anytime"), inputs=("binary", "numeric", "weights", "multiclass"),
    columns=(SEARCH,),
    solves=Solves(leaf_size(problem, "min_samples_leaf"), {
        "min-errors": {"candidates": "exhaustive", "alpha": 0.0},
        "errors+alpha*path": {"candidates": "exhaustive"},
    }, {"errors+alpha*path": "alpha"},
        unrestricted={"candidates": "exhaustive", "min_samples_leaf": 1}),
    warmup=warmup, precompile=PRECOMPILE,
)(DPDTClassifier)
ALGORITHMS.register(
    "dpdt-regressor", tags=("dpdt",), inputs=("binary", "numeric", "weights", "regression"),
    columns=(SEARCH,),
    solves=Solves(leaf_size(regression_problem, "min_samples_leaf"), {}, {"sse+alpha*path": "alpha"},
                  unrestricted={"candidates": "exhaustive", "min_samples_leaf": 1}),
    warmup=warmup, precompile=PRECOMPILE,
)(DPDTRegressor)
