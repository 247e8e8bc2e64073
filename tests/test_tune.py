"""`treebench.execute.tune`: the selection rules on a stub whose validation score is a table."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from treebench.execute.tune import check_steps, tune


class Stub(ClassifierMixin, BaseEstimator):
    """Validation accuracy = ``table[param]`` on 100 validation rows (exact to 1/100)."""

    def __init__(self, a=0, b=0, table=None):
        self.a = a
        self.b = b
        self.table = table

    def fit(self, X, y):
        self.classes_ = np.array([0, 1])
        self.fits_ = 1
        return self

    def predict(self, X):
        acc = self.table[(self.a, self.b)]
        n_right = int(round(acc * len(X)))
        return np.r_[np.zeros(n_right), np.ones(len(X) - n_right)].astype(int)


X = np.zeros((100, 1))
Y = np.zeros(100, dtype=int)


def run(table, steps):
    return tune(Stub(table=table), X, Y, X, Y, steps)


def test_scan_down_tol_stops_at_first_drop_and_keeps_last_accepted():
    table = {(a, 0): s for a, s in zip([5, 4, 3, 2, 1], [0.80, 0.81, 0.80, 0.78, 0.99])}
    est, trace = run(table, [{"param": "a", "grid": [5, 4, 3, 2, 1], "metric": "val_accuracy",
                              "rule": "scan_down_tol", "tol": 0.01}])
    # 0.81 ≥ 0.80 − tol, 0.80 ≥ 0.81 − tol, 0.78 < 0.80 − tol: stop (1 never tried)
    assert trace[0]["values"] == [5, 4, 3, 2]
    assert trace[0]["chosen"] == 3 and est.a == 3


def test_argmax_ties_go_to_the_first_grid_value_and_steps_are_sequential():
    table = {(a, b): 0.5 + 0.1 * (a == 2) + 0.1 * (b in (7, 8)) for a in (1, 2, 3)
             for b in (0, 6, 7, 8)}
    est, trace = run(table, [
        {"param": "a", "grid": [1, 2, 3], "metric": "val_accuracy"},
        {"param": "b", "grid": [6, 8, 7], "metric": "val_accuracy", "rule": "argmax"},
    ])
    assert [t["chosen"] for t in trace] == [2, 8]
    assert (est.a, est.b) == (2, 8)
    assert trace[1]["scores"] == pytest.approx([0.6, 0.7, 0.7])


@pytest.mark.parametrize("steps, match", [
    ([], "non-empty"),
    ([{"param": "a"}], "required"),
    ([{"param": "a", "grid": []}], "grid"),
    ([{"param": "a", "grid": [1], "rule": "best"}], "unknown rule"),
    ([{"param": "a", "grid": [1], "metric": "auc"}], "unknown metric"),
    ([{"param": "a", "grid": [1], "tol": -1}], "tol"),
    ([{"param": "a", "grid": [1], "step": 2}], "unknown key"),
    ([{"param": "c", "grid": [1]}], "no parameter"),
])
def test_bad_plans_are_refused_in_one_sentence(steps, match):
    with pytest.raises(ValueError, match=match) as err:
        check_steps(steps, known_params=["a", "b"])
    assert "\n" not in str(err.value)


def test_validation_rows_and_costs_come_from_the_fit_context():
    from treebench.algorithms.context import FitContext
    from treebench.algorithms.ngi import NGIClassifier

    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (120, 6)).astype(float)
    y = (X[:, 0] != X[:, 1]).astype(int)
    Xd = np.hstack([X, X])
    costs = np.r_[np.full(6, 9.0), np.ones(6)]
    ctx = FitContext(X_val=Xd[80:], y_val=y[80:], feature_costs=costs)
    est, trace = tune(NGIClassifier(), Xd[:80], y[:80], steps=[{"param": "lam", "grid": [1, 0.1]}],
                      context=ctx)
    assert set(est.tree_.feature[est.tree_.feature >= 0]) <= set(range(6, 12))  # cheap copies
    ref, _ = tune(NGIClassifier(), Xd[:80], y[:80], Xd[80:], y[80:],
                  [{"param": "lam", "grid": [1, 0.1]}], fit_kwargs={"context": ctx})
    assert ref.tree_ == est.tree_
    with pytest.raises(ValueError, match="validation rows"):
        tune(NGIClassifier(), Xd, y, steps=[{"param": "lam", "grid": [1]}])
