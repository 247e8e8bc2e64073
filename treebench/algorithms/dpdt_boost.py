"""`dpdt-adaboost`: scikit-learn's AdaBoost (SAMME) over `DPDTClassifier` trees, as in the
boosting experiments of Kohler, Akrour & Preux (KDD 2025, §6.3).

No boosting loop of our own: this is `sklearn.ensemble.AdaBoostClassifier` whose default base
estimator is a DPDT tree built from this class's own parameters (``max_depth``, ``budgets``,
``alpha``). Pass ``estimator=DPDTClassifier(...)`` instead to control every tree parameter; then
``set_params(estimator__max_depth=...)``, cloning and ``GridSearchCV`` work through scikit-learn's
meta-estimator protocol. Sample weights reach each tree (DPDT optimises the weighted error with
weighted transitions, so the boosting weights mean what SAMME needs).
"""

from __future__ import annotations

from numbers import Integral, Real

from sklearn.ensemble import AdaBoostClassifier
from sklearn.utils._param_validation import Interval

from treebench.algorithms.dpdt import DPDTClassifier
from treebench.registry import ALGORITHMS
from treebench.algorithms.dpdt import PRECOMPILE
from treebench.algorithms.dpdt import warmup as dpdt_warmup


class DPDTAdaBoostClassifier(AdaBoostClassifier):
    """AdaBoost (SAMME, scikit-learn) with DPDT trees as weak learners (KDD 2025 §6.3).

    Parameters
    ----------
    estimator : DPDTClassifier or None
        Base tree; None builds ``DPDTClassifier(max_depth, budgets=budgets, alpha=alpha)``.
    n_estimators, learning_rate, random_state
        As in `sklearn.ensemble.AdaBoostClassifier`.
    max_depth, budgets, alpha
        Parameters of the default base tree (ignored when ``estimator`` is given).
    """

    _parameter_constraints = {
        **AdaBoostClassifier._parameter_constraints,
        "max_depth": [Interval(Integral, 0, None, closed="left")],
        "budgets": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "alpha": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_estimators=50,
        learning_rate=1.0,
        random_state=None,
        max_depth=3,
        budgets=(4, 2),
        alpha=0.0,
    ):
        super().__init__(
            estimator=estimator,
            n_estimators=n_estimators,
            learning_rate=learning_rate,
            random_state=random_state,
        )
        self.max_depth = max_depth
        self.budgets = budgets
        self.alpha = alpha

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False  # DPDT trees take dense X
        return tags

    def _validate_estimator(self):
        default = DPDTClassifier(max_depth=self.max_depth, budgets=self.budgets, alpha=self.alpha)
        super(AdaBoostClassifier, self)._validate_estimator(default=default)


def warmup() -> float:
    """Compile DPDT's kernels outside the timed fit (the runner calls this once per worker)."""
    return dpdt_warmup()


ALGORITHMS.register(
    "dpdt-adaboost", tags=("dpdt", "ensemble", "blackbox"),
    inputs=("binary", "numeric", "weights", "multiclass"), solves="ensemble",
    warmup=warmup, precompile=PRECOMPILE,
)(DPDTAdaBoostClassifier)
