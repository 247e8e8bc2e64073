"""`threshold-guess`: GOSDT-guesses §4.1 column elimination with a boosted reference model."""

from __future__ import annotations

import numpy as np

from treebench.binarize._common import TableBinarizer, check_float, check_int, numeric_values
from treebench.tree.columns import BinaryColumn
from treebench.errors import ParameterError
from treebench.registry import BINARIZERS


def _gbdt(params, random_state):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(random_state=random_state, **params)


def _accuracy(model, X, y, w) -> float:
    return float(np.average(model.predict(X) == y, weights=w))


def float32_tie_cut(t: float) -> float:
    """The float64 cut that splits the rows as the reference's threshold ``t`` does.

    scikit-learn's trees compare float32 copies of the features with ``t``, the midpoint (exact
    in float64) of two float32 values. When those two are adjacent float32 numbers, ``t`` is
    where float32 rounding turns, and a float64 value at exactly ``t`` rounds to the even of
    the two: to the upper one (the reference sends it right) when ``t`` rounds up. ``x <= t``
    on the float64 values would send it left, so the column could not express the
    reference's split (odd integers above 2**24 are such values). The cut is then the float64
    just below ``t``; every other threshold is ``t`` itself, since no float64 value that
    rounds to either neighbour lies on the other side of it."""
    if not abs(t) < float(np.finfo(np.float32).max):
        return t  # beyond float32 (or not a number): no float32 value rounds to it
    up = np.float32(t)
    if float(up) <= t:
        return t
    down = np.nextafter(up, np.float32(-np.inf))
    if (float(down) + float(up)) / 2 != t:
        return t
    return float(np.nextafter(t, -np.inf))


@BINARIZERS.register("threshold-guess", tags=("numeric",))
class ThresholdGuess(TableBinarizer):
    """Thresholds of a gradient-boosted reference, pruned by column elimination (GOSDT-guesses §4.1).

    1) Fit scikit-learn's GBDT (``n_estimators``, ``max_depth``, ``learning_rate``,
    ``random_state``) on the numeric features and collect every (feature, threshold) its trees use;
    each gives a column ``x <= t`` (the tree's left branch); these columns express the reference
    model exactly. 2) Refit the GBDT on the columns (``start_accuracy_``). 3) Repeatedly drop the
    column of least Gini importance (in the latest accepted refit) and refit, while the refit's
    training accuracy does not drop below the reference's (the paper stops at any drop); columns of
    zero importance are dropped together first. ``final_accuracy_`` is the accuracy reachable on the
    kept columns (never below ``reference_accuracy_``).
    Paper settings: (n_estimators, max_depth) = (20, 3) for COMPAS and spiral, (40, 1) for Broward
    and FICO, (50, 2) for the coupon datasets. Fitted attributes: ``reference_accuracy_``,
    ``start_accuracy_``, ``final_accuracy_``, ``n_reference_thresholds_``, ``n_refits_``.
    """

    name = "threshold-guess"

    def __init__(
        self,
        n_estimators: int = 40,
        max_depth: int = 1,
        learning_rate: float = 0.1,
        random_state: int | None = 0,
        max_refits: int | None = None,
    ):
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.random_state = random_state
        self.max_refits = max_refits

    def _check_params(self):
        check_int(self.name, "n_estimators", self.n_estimators, 1)
        check_int(self.name, "max_depth", self.max_depth, 1)
        check_float(self.name, "learning_rate", self.learning_rate, 1e-12, 1e6)
        check_int(self.name, "max_refits", self.max_refits, 0, allow_none=True)

    def _fit_columns(self, X, y, w):
        if y is None:
            raise ParameterError("binarizer `threshold-guess` needs the labels y in fit.")
        feats = [str(f) for f in X.columns]
        A = np.column_stack([numeric_values(X[f], f) for f in X.columns])
        # the reference sees a missing value as below the feature's minimum; the columns, like
        # every binarizer's, give 0 for it
        A_ref = A
        if np.isnan(A).any():
            low = np.nan_to_num(np.nanmin(np.where(np.isnan(A), np.inf, A), axis=0), posinf=0.0) - 1.0
            A_ref = np.where(np.isnan(A), low, A)
        params = {"n_estimators": self.n_estimators, "max_depth": self.max_depth, "learning_rate": self.learning_rate}
        y = np.asarray(y)
        if np.unique(y).size < 2:
            self._record(0.0, 1.0, 1.0, 1.0, 0)
            return [[] for _ in feats]
        ref = _gbdt(params, self.random_state).fit(A_ref, y, sample_weight=w)
        self.reference_accuracy_ = _accuracy(ref, A_ref, y, w)
        pairs = set()
        for est in ref.estimators_.ravel():
            t = est.tree_
            internal = t.children_left >= 0
            pairs.update(zip(t.feature[internal].tolist(), t.threshold[internal].tolist(), strict=True))
        pairs = sorted((j, float32_tie_cut(t)) for j, t in pairs)
        self.n_reference_thresholds_ = len(pairs)
        if not pairs:
            self._record(self.reference_accuracy_, self.reference_accuracy_, self.reference_accuracy_, 0, 0)
            return [[] for _ in feats]
        B = np.column_stack([A[:, j] <= t for j, t in pairs]).astype(np.uint8)
        keep = np.arange(len(pairs))
        model = _gbdt(params, self.random_state).fit(B, y, sample_weight=w)
        start = _accuracy(model, B, y, w)
        # The full column set expresses the reference model exactly, so it keeps the reference's
        # accuracy; a smaller set is accepted only when a refit on it reaches that accuracy.
        baseline = self.reference_accuracy_
        acc = max(start, baseline)
        refits = 0
        while keep.size > 1 and (self.max_refits is None or refits < self.max_refits):
            imp = model.feature_importances_
            zero = imp <= 0
            drop = zero if zero.any() and not zero.all() else (imp == imp.min()) & (np.cumsum(imp == imp.min()) == 1)
            cand = keep[~drop]
            cmodel = _gbdt(params, self.random_state).fit(B[:, cand], y, sample_weight=w)
            refits += 1
            cacc = _accuracy(cmodel, B[:, cand], y, w)
            if cacc < baseline:
                break
            keep, model, acc = cand, cmodel, cacc
        self._record(self.reference_accuracy_, start, acc, len(pairs), refits)
        kept = sorted(pairs[i] for i in keep)
        out: list[list[BinaryColumn]] = [[] for _ in feats]
        for j, t in kept:
            out[j].append(BinaryColumn(feats[j], "<=", float(t)))
        return out

    def _record(self, ref, start, final, n_ref, refits):
        self.reference_accuracy_ = float(ref)
        self.start_accuracy_ = float(start)
        self.final_accuracy_ = float(final)
        self.n_reference_thresholds_ = int(n_ref)
        self.n_refits_ = int(refits)
