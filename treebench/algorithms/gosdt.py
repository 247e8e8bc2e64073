"""`gosdt`: our solver for the GOSDT objective with the guesses of McTavish, Zhong, Achermann,
Karimalis, Chen, Rudin and Seltzer, "Fast Sparse Decision Tree Optimization via Reference
Ensembles" (AAAI 2022), on the bounds of GOSDT (Lin, Zhong, Hu, Rudin and Seltzer, ICML 2020).

Objective (McTavish et al. §3, eq. (3)): ``R(t) = (misclassified weight) / (total weight) +
λ · leaves(t)``, optionally with a depth budget (at most ``max_depth`` tests on any path; a lone
leaf has depth 0), multi-class labels, 0/1 features. λ is used as given (the authors' package
raises it to 1/n unless told otherwise; we never change it).

The three guesses (§4): thresholds are the `threshold-guess` binarizer's job (a config step
before this learner); the depth guess is ``max_depth``; the lower-bound guess is ``lb_guess``:
settings of a scikit-learn ``GradientBoostingClassifier(learning_rate=0.1)`` fitted inside
`fit` on the (binary) training rows it is given; in each subproblem the guessed bound
``lb_guess(s) = (reference errors in s)/N + λ`` (eq. 4) replaces the equivalent-points bound.
The result is then optimal relative to the reference (Theorem 4.3: R(t_guess) <= (|reference
errors| + errors of t on rows the reference gets right)/N + λ·leaves(t) for every tree t of the
same depth budget), not necessarily globally; ``solve_info_["optimality"]`` says which.

pydl8.5 cannot take a lower-bound guess: it accepts an initial upper bound (``max_error``,
``stop_after_better``) and custom leaf-error functions, no per-subproblem lower bound, so `dl85`
has no ``lb_guess``; the authors' package (`gosdt-ref`) takes one as ``y_ref``.

The search (`search.gosdt`, on `treebench.search`) is exact without ``lb_guess``: every fit
that finishes returns the true optimum. With ``time_limit`` it is anytime: on timeout it returns
the best tree found, with a lower bound and the gap.
"""

from __future__ import annotations

import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.search import gosdt as G
from treebench.search.engine import fit_gosdt
from treebench.algorithms.base import TreeClassifierBase
from treebench.algorithms.objectives import Solves, gosdt_problem
from treebench.algorithms.solve_info import REFERENCE_BOUND, bound_fields
from treebench.algorithms.traces import TRACE_KEY, fit_trace
from treebench.registry import ALGORITHMS
from treebench.search.bitset import pack_rows, warmup_problem
from treebench.search.cache import entries_for_mb
from treebench.search.readback import to_tree
from treebench.search.state import bitset_data
from treebench.search.state import S_CAP_HIT, S_ENTRIES, S_EXPANDED, S_PEAK_BYTES, S_SCORED
from treebench.search.state import S_TIMED_OUT
from treebench.search.clock import now_seconds
from treebench.search.exactness import EXACT_INT, EXACT_SUM, on_grid, price_grid
from treebench.search.exactness import warn_unproven, whole_weights
from treebench.search.numeric import lexicographic_penalty
from treebench.search.trace import read_trace

_WARM = False


def check_lb_guess(lb_guess) -> dict:
    if lb_guess is None:
        return {}
    if not isinstance(lb_guess, dict):
        raise ValueError(
            "lb_guess must be None or a dict of GradientBoostingClassifier settings such as "
            f"{{'n_estimators': 20, 'max_depth': 3}}, got {lb_guess!r}."
        )
    allowed = {"n_estimators", "max_depth", "learning_rate", "subsample", "max_features",
               "min_samples_leaf"}
    bad = sorted(set(lb_guess) - allowed)
    if bad:
        raise ValueError(
            f"lb_guess has the unknown setting {bad[0]!r}; allowed: {', '.join(sorted(allowed))}."
        )
    return dict(lb_guess)


def row_groups(X01: np.ndarray) -> np.ndarray:
    """Group id (0..G-1) of each row of a 0/1 matrix, equal ids for equal rows. The rows are
    packed to bits and compared as one integer (<= 64 columns) or one byte string each, much
    faster than ``np.unique(X01, axis=0)`` (0.13 s on fico's 8367 x 24)."""
    n, d = X01.shape
    if d == 0:
        return np.zeros(n, dtype=np.int64)
    packed = np.packbits(np.asarray(X01) != 0, axis=1)
    nb = packed.shape[1]
    if nb <= 8:
        wide = np.zeros((n, 8), dtype=np.uint8)
        wide[:, :nb] = packed
        keys = wide.view(np.uint64).ravel()
    else:
        keys = np.ascontiguousarray(packed).view(np.dtype((np.void, nb))).ravel()
    _, inv = np.unique(keys, return_inverse=True)
    return np.asarray(inv, dtype=np.int64).ravel()


def equivalence_groups(X01: np.ndarray, y_index: np.ndarray):
    """Rows whose feature vector is shared with a row of another class ("equivalent points",
    Lin et al. 2020 §3): (mask of those rows, group id per row in 0..G-1 (-1 elsewhere), G)."""
    n = X01.shape[0]
    if n == 0:
        return np.zeros(0, bool), np.full(0, -1, np.int64), 0
    inv = row_groups(X01)
    n_groups = int(inv.max()) + 1
    lo = np.full(n_groups, np.iinfo(np.int64).max)
    hi = np.full(n_groups, -1)
    np.minimum.at(lo, inv, y_index)
    np.maximum.at(hi, inv, y_index)
    mixed = lo != hi
    mask = mixed[inv]
    remap = np.full(n_groups, -1, dtype=np.int64)
    remap[mixed] = np.arange(int(mixed.sum()))
    grp = np.where(mask, remap[inv], -1).astype(np.int64)
    return mask, grp, int(mixed.sum())


def fit_reference(X, y_index, sw, params: dict, random_state, classes):
    """The lower-bound guess's reference (McTavish et al. §4.3): a scikit-learn
    ``GradientBoostingClassifier`` (``learning_rate=0.1`` unless given) fitted on the binary
    training rows; returns (its predicted class indices, seconds). A reference that never
    predicts one of the training classes is refused with a clear ValueError."""
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.utils import check_random_state

    t0 = time.perf_counter()
    present = np.unique(y_index)
    if present.size < 2:
        return np.asarray(y_index).copy(), time.perf_counter() - t0
    seed = random_state
    if seed is not None and not isinstance(seed, Integral):
        seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
    kw = {"learning_rate": 0.1, **params}
    try:
        ref = GradientBoostingClassifier(random_state=seed, **kw)
        ref.fit(X, y_index, sample_weight=sw)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"lb_guess: the reference model could not be fitted ({exc}).") from exc
    pred = ref.predict(X).astype(np.int64)
    missing = np.setdiff1d(present, np.unique(pred))
    if missing.size:
        label = np.asarray(classes)[missing[0]].tolist()
        raise ValueError(
            f"lb_guess: the reference model never predicts class {label!r} on the "
            "training rows, so it cannot guide the search; give it more capacity "
            "(n_estimators, max_depth) or drop lb_guess."
        )
    return pred, time.perf_counter() - t0


def reference_bound(tree, X, y_index, sw, ref_pred, lam: float) -> float:
    """The right-hand side of Theorem 4.3 (McTavish et al. 2022, §4.3) for ``tree``: (the
    reference's errors + the tree's errors on the rows the reference gets right) / N
    + λ·leaves, with rows weighted by ``sw``. Any tree returned with the lower-bound guess has
    an objective at most this bound for *every* tree of its depth budget, so the bound of
    another solver's tree says how much worse than that tree a guessed run may be."""
    sw = np.asarray(sw, dtype=np.float64)
    ref_wrong = np.asarray(ref_pred) != y_index
    tree_wrong = tree.predict_index(X) != y_index
    charged = float(sw[ref_wrong].sum() + sw[tree_wrong & ~ref_wrong].sum())
    return charged / float(sw.sum()) + lam * int(tree.n_leaves)


class GOSDTClassifier(TreeClassifierBase):
    """Optimal sparse tree for ``error rate + regularization · leaves`` (GOSDT, Lin et al. 2020)
    with the guesses of McTavish et al. (AAAI 2022), on 0/1 features.

    Parameters
    ----------
    regularization : float >= 0
        Per-leaf penalty λ (used as given, never raised).
    max_depth : int >= 0 or None
        Depth budget (tests on any path; a lone leaf has depth 0); None = unlimited. This is
        the paper's depth guess.
    lb_guess : dict or None
        Lower-bound guess: settings of the reference ``GradientBoostingClassifier``
        (``learning_rate=0.1`` unless given, ``random_state`` from this estimator), e.g.
        ``{"n_estimators": 20, "max_depth": 3}``; fitted inside ``fit`` on the training rows.
        The tree is then optimal relative to the reference (Theorem 4.3).
    time_limit : float > 0 or None
        Seconds; on timeout the best tree found is returned with ``solve_info_["timed_out"]``,
        the lower bound and the gap.
    cache_limit_mb : float > 0
        Memory cap of the subproblem memo (never exceeded; when full, new entries are not
        stored: slower, never wrong).
    random_state : int, RandomState or None
        Seed of the reference model only (the search is deterministic).
    lexicographic : bool
        Solve "fewest training errors, then fewest leaves" instead (``regularization`` is then
        not used): the per-leaf penalty becomes a power of two below one error for the largest
        tree the depth budget allows (`lexicographic_penalty`), so no tree with more errors can
        win and, among the trees with the fewest, the one with the fewest leaves (hence nodes)
        does. Exact for sample weights that a power of two turns into whole numbers (others,
        and totals past exact sums, are refused).

    Notes
    -----
    ``optimal`` (``optimality`` "global") is a proof: the counts are the sample weights in the
    power-of-two unit that makes them whole numbers (sums exact up to 2^53), and the price per
    leaf ``regularization * W`` is rounded to the finest power-of-two grid on which every cost
    is an exact multiple (`treebench.search.exactness.price_grid`, one unit in the last place
    at most). Weights without such a unit give ``optimality`` "unproven", the reason in
    ``solve_info_["unproven"]`` and an `UnprovenOptimalityWarning`.
    """

    binary_features_only = True

    _parameter_constraints = {
        "regularization": [Interval(Real, 0, None, closed="left")],
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "lb_guess": [dict, None],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
        "cache_limit_mb": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "lexicographic": ["boolean"],
    }

    def __init__(self, regularization=0.01, max_depth=None, lb_guess=None, time_limit=None,
                 cache_limit_mb=2048, random_state=None, lexicographic=False):
        self.lexicographic = lexicographic
        self.regularization = regularization
        self.max_depth = max_depth
        self.lb_guess = lb_guess
        self.time_limit = time_limit
        self.cache_limit_mb = cache_limit_mb
        self.random_state = random_state

    def _fit_tree(self, X, y_index, ctx):
        t_start = time.perf_counter()
        params = check_lb_guess(self.lb_guess)
        lam_rate = float(self.regularization)
        sw = np.asarray(ctx.sample_weight, dtype=np.float64)
        n_classes = len(self.classes_)
        compile_s = warmup()
        prior = np.bincount(y_index, weights=sw, minlength=n_classes)
        keep = sw > 0
        if keep.all():  # no copy of X (the reference GBDT then sees the very rows gosdt-ref's does)
            Xk, yk, swk = X, y_index, sw
        else:
            Xk, yk, swk = X[keep], y_index[keep], sw[keep]
        n, d = Xk.shape
        counts, unit, weighted, exact = _count_weights(swk)
        w_total = float(counts.sum())  # total weight in the solver's count units
        lam_count = lam_rate * w_total  # the per-leaf penalty in count units
        if self.lexicographic:  # exact in count units; the rate is only reported
            lam_count = lexicographic_penalty(counts, self.max_depth)
            lam_rate = lam_count / w_total
            if 2.0 * (w_total + 1.0) / lam_count > EXACT_SUM:
                raise ValueError(
                    f"the lexicographic objective counts an error as {1 / lam_count:.0f} "
                    f"leaves, and the training weight (in its whole unit) times that exceeds "
                    f"2**52, where the search's sums stop being exact; use a regularization "
                    f"instead.")
        guess_s = 0.0
        use_ref = self.lb_guess is not None
        ref_wrong = groups = None
        if use_ref:
            # unweighted rows go in without a weight vector, exactly as `gosdt-ref` fits it
            pred, guess_s = fit_reference(Xk, yk, swk if weighted else None, params,
                                          self.random_state, self.classes_)
            ref_wrong = pack_rows(pred != yk)  # its errors replace the equivalent-points bound
        else:
            eq_mask, grp, n_groups = equivalence_groups(Xk, yk)
            groups = (pack_rows(eq_mask), grp, n_groups)
        data = bitset_data(Xk, yk, n_classes, counts if weighted else None)
        limited = self.max_depth is not None
        H = min(int(self.max_depth), d) if limited else d
        leaves = min(2 ** min(H, 62), n) if limited else n
        unproven = None
        if not self.lexicographic:  # (its price is a power of two, exact: checked above)
            lam_count, unproven = _exact_price(exact, lam_count, w_total, leaves)
        max_entries = entries_for_mb(self.cache_limit_mb, data.F.shape[0])
        deadline = ctx.deadline_for(self.time_limit)
        t0 = time.perf_counter()
        clock: list = []
        obj, lb, feat, left, right, value, stats = fit_gosdt(G.gosdt_problem(
            data, H, lam_count, limited, max_entries,
            -1.0 if deadline is None else float(deadline), ref_wrong, groups), clock)
        search_s = time.perf_counter() - t0
        tree, err = to_tree(feat, left, right, value, unit, prior)
        total = float(sw.sum())
        n_leaves = int((feat < 0).sum())
        objective = err / total + lam_rate * n_leaves
        timed_out = bool(stats[S_TIMED_OUT])
        bound = min(float(lb) / w_total, objective)
        optimality = "none" if timed_out else ("reference" if use_ref else "global")
        if optimality == "global" and unproven is not None:
            optimality = "unproven"
        info = {
            "objective": objective,
            "objective_kind": ("error_rate+penalty*leaves" if self.lexicographic
                               else "error_rate+lambda*leaves"),
            **bound_fields(bound, objective, use_ref),
            "upper_bound": objective,
            "optimal": optimality == "global",
            "optimality": optimality,
            "regularization": lam_rate,
            "leaves": n_leaves,
            "training_error": err,
            "training_accuracy": 1.0 - err / total,
            "subproblems": int(stats[S_EXPANDED]),
            "operations": int(stats[S_SCORED]),
            "cache_entries": int(stats[S_ENTRIES]),
            "cache_peak_bytes": int(stats[S_PEAK_BYTES]),
            "cache_full": bool(stats[S_CAP_HIT] > 0),
            "guess_seconds": guess_s,
            "search_seconds": search_s,
            "seconds": time.perf_counter() - t_start - compile_s,
            "timed_out": timed_out,
            "compile_seconds": compile_s,
        }
        if use_ref:
            info["reference_bound"] = reference_bound(tree, Xk, yk, swk, pred, lam_rate)
        if optimality == "unproven":
            info["unproven"] = unproven
            warn_unproven("gosdt", unproven)
        rows = read_trace(clock[0], t_start + compile_s)
        rows[:, 1:] /= w_total  # count units to the objective's rate
        if use_ref:  # a guessed bound bounds no objective: the trace's bound is the trivial 0
            rows[:, 2] = 0.0
        info[TRACE_KEY] = fit_trace(rows, info)
        return tree, info


def _count_weights(sw):
    """The weights the search counts with: ``(counts, unit, weighted, exact)``. Constant
    weights are rows counted by popcount (``counts`` all 1, ``unit`` the weight); others are
    multiplied by the power of two that makes them whole numbers (`whole_weights`), ``unit``
    turning them back, and their sums are exact (``exact``) while they total at most 2^53;
    weights with no such unit are kept as given (``unit`` 1, not ``exact``)."""
    scale = float(sw[0])
    if np.all(sw == scale):
        return np.ones(sw.shape[0]), scale, False, sw.shape[0] <= EXACT_SUM
    whole = whole_weights(sw, EXACT_SUM)
    if whole is None:
        return sw, 1.0, True, False
    return whole[0], whole[1], True, True


def _exact_price(exact: bool, lam_count: float, w_total: float, leaves: int):
    """The price per leaf the search uses, and why its tree cannot be proven optimal (None
    when it can): with whole-number counts, the price rounded to the finest power-of-two grid
    on which every cost is an exact multiple below 2^52 (`price_grid`; at most one unit in
    the last place of the largest cost away), so that every sum and comparison is exact."""
    if not exact:
        return lam_count, ("the sample weights have no power-of-two unit in which they are "
                           "whole numbers totalling at most 2**53, so sums of weights round")
    if lam_count <= 0.0:
        return lam_count, None
    grid = price_grid(lam_count, w_total, leaves, EXACT_INT)
    if grid is None:
        return lam_count, ("with a price per leaf, the costs pass 2**52 in the weights' whole "
                           "unit, where sums of costs with a fractional price round")
    return on_grid(lam_count, grid), None


def warmup() -> float:
    """Compile (or load from numba's cache) the kernels on tiny data; the seconds spent when
    this call did the work, else 0."""
    global _WARM
    if _WARM:
        return 0.0
    t = time.perf_counter()
    X, y, _, _, weights = warmup_problem()
    mask, grp, ng = equivalence_groups(X, y)
    groups = (pack_rows(mask), grp, ng)
    for sw in (None, weights[1]):
        data = bitset_data(X, y, 3, sw)
        for limited in (False, True):
            fit_gosdt(G.gosdt_problem(data, 3 if limited else 5, 0.4, limited, 1000,
                                        ref_wrong=None if sw is None else pack_rows(y == 0),
                                        groups=groups))
    fit_gosdt(G.gosdt_problem(bitset_data(X, y, 3), 2, 0.4, True, 1000,
                                time.perf_counter() + 100.0, groups=groups))
    now_seconds()
    _WARM = True
    return time.perf_counter() - t


ALGORITHMS.register(
    "gosdt", tags=("optimal", "regularized", "gosdt"), columns=(REFERENCE_BOUND,),
    solves=Solves(gosdt_problem, {
        "min-errors-then-nodes": {"lb_guess": None, "lexicographic": True},
        "errors+lambda*leaves": {"lb_guess": None, "lexicographic": False},
    }, {"errors+lambda*leaves": "regularization"}, unrestricted={"lb_guess": None}),
    warmup=warmup, precompile={"0/1-search": warmup},
)(GOSDTClassifier)
