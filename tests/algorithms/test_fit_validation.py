"""The base's input checks at fit: plain numpy input takes a short path
(`base._checked_classification_data`) that must end exactly where scikit-learn's
``validate_data`` + ``check_classification_targets`` end: same arrays, same fitted model, same
``n_features_in_`` / ``feature_names_in_``, same errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from treebench.algorithms import base
from treebench.algorithms.cart import CARTClassifier
from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
from treebench.algorithms.topk import TopKClassifier

RNG = np.random.default_rng(3)
XF = RNG.integers(0, 5, size=(40, 3)).astype(np.float64)
XB = (XF > 2).astype(np.uint8)
Y = RNG.integers(0, 3, size=40)


def _learners():
    return [OptimalNumericClassifier(max_depth=2), CARTClassifier(max_depth=2),
            TopKClassifier(k=2, max_depth=2)]


def _inputs(est):
    X = XB if est.binary_features_only else XF
    Xs = [X, X.astype(np.float64), np.asfortranarray(X.astype(np.float64)), X.astype(np.int64),
          X.astype(np.float32)]
    ys = [Y, Y.astype(bool), np.array(["a", "bb", "c"])[Y], Y.astype(np.float64),
          Y.astype(object), Y.reshape(-1, 1)[:, 0], Y.astype(np.uint8)]
    return [(x, y) for x in Xs for y in ys]


def _fit(est, X, y, short: bool, monkeypatch):
    with monkeypatch.context() as m:
        if not short:
            m.setattr(base, "_plain_classification_data", lambda *a: False)
        try:
            est.fit(X, y)
        except Exception as err:  # noqa: BLE001 - the error itself is compared
            return type(err), str(err)
    t = est.tree_
    return (list(est.classes_), est.n_features_in_, t.feature.tolist(), t.threshold.tolist(),
            t.value.tolist(), est.predict(X).tolist())


@pytest.mark.parametrize("make", range(3))
def test_short_path_fits_the_same_model_as_scikit_learns_checks(make, monkeypatch):
    for X, y in _inputs(_learners()[make]):
        full = _fit(_learners()[make], X, y, short=False, monkeypatch=monkeypatch)
        short = _fit(_learners()[make], X, y, short=True, monkeypatch=monkeypatch)
        assert short == full, (X.dtype, y.dtype)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("make", range(3))
def test_short_path_refuses_what_scikit_learn_refuses_with_its_message(bad, make, monkeypatch):
    est = _learners()[make]
    X = (XB if est.binary_features_only else XF).astype(np.float64)
    X[5, 1] = bad
    full = _fit(_learners()[make], X, Y, short=False, monkeypatch=monkeypatch)
    short = _fit(_learners()[make], X, Y, short=True, monkeypatch=monkeypatch)
    assert short == full
    if make == 1 and bad != bad:  # CART takes missing values: NaN fits
        assert isinstance(short[0], list)
    else:
        assert short[0] is ValueError and "X" in short[1]


def test_plain_input_skips_the_slow_target_check(monkeypatch):
    """The short path is taken for plain arrays (the 0.7 ms saved), not for a frame."""
    calls = []
    real = base.check_classification_targets
    monkeypatch.setattr(base, "check_classification_targets", lambda y: calls.append(1) or real(y))
    OptimalNumericClassifier(max_depth=1).fit(XF, Y)
    assert calls == []
    OptimalNumericClassifier(max_depth=1).fit(pd.DataFrame(XF, columns=list("abc")), Y)
    assert calls == [1]


def test_refit_on_an_array_forgets_the_frames_feature_names():
    est = OptimalNumericClassifier(max_depth=1).fit(pd.DataFrame(XF, columns=list("abc")), Y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    est.fit(XF, Y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 3


def _numeric_parameters():
    """(learner, parameter) for every registered single-tree learner's parameter that takes a
    number and not a boolean."""
    from sklearn.utils._param_validation import Interval

    from treebench.registry import ALGORITHMS

    out = []
    for entry in ALGORITHMS:
        if not entry.available or "test" in entry.tags:
            continue
        cls = entry.cls if hasattr(entry, "cls") else type(entry.create())
        if not issubclass(cls, base._TreeModel):
            continue
        for name, options in getattr(cls, "_parameter_constraints", {}).items():
            if isinstance(options, list) and "boolean" not in options and bool not in options \
                    and any(isinstance(o, Interval) for o in options):
                out.append((entry.name, name))
    return out


@pytest.mark.parametrize("name, param", _numeric_parameters())
def test_a_boolean_for_a_number_is_refused(name, param):
    """``True`` is the integer 1 to Python: ``TopKClassifier(k=True)`` ran as k = 1, where a
    config refuses the same value. Every number parameter of every single-tree learner now
    refuses a boolean before anything is fitted."""
    from treebench.registry import ALGORITHMS

    est = ALGORITHMS.get(name).create(**{param: True})
    X = XB if est.binary_features_only else XF
    with pytest.raises(ValueError, match=f"'{param}' parameter .* not the boolean True"):
        est.fit(X, Y)
