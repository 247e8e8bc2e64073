"""Conventions every learner shares: CART labels tied leaves by the shared rule and counts
exactly, CART, greedy and Top-k agree on tied splits, each learner declares a warm-up (a
peer's imports its solver outside the fit), and the estimators import lazily."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from naive import naive_tie_label


def _tie_data():
    """One 0/1 feature; the x=1 leaf holds one row of class 0 and one of class 1, and class 1
    is the more frequent class overall: the tie rule labels that leaf 1 (CART's own rule, the
    lowest index, says 0)."""
    X = np.array([[0], [0], [0], [0], [0], [1], [1]], dtype=float)
    y = np.array([1, 1, 1, 0, 1, 0, 1])
    return X, y


def test_cart_follows_the_shared_tie_rule_and_counts_exactly():
    from treebench.algorithms.cart import CARTClassifier

    X, y = _tie_data()
    est = CARTClassifier(max_depth=1).fit(X, y)
    assert est.predict(np.array([[1.0]]))[0] == 1
    v = est.tree_.value
    assert np.array_equal(v, np.round(v))  # counts, not fractions times totals
    prior = v[0]
    for i in range(est.tree_.n_nodes):
        assert est.tree_.label[i] == naive_tie_label(v[i], prior)
    X2 = np.random.default_rng(0).random((55, 3))
    y2 = (X2[:, 0] > 0.3).astype(int)
    v2 = CARTClassifier(max_depth=3).fit(X2, y2).tree_.value
    assert all(float(x).is_integer() for x in v2.ravel())


def test_cart_greedy_and_topk_agree_on_identical_splits_with_ties():
    from treebench.registry import ALGORITHMS

    X, y = _tie_data()
    preds = {n: ALGORITHMS.get(n).create(**kw).fit(X, y).predict(X)
             for n, kw in (("cart", {"max_depth": 1}), ("greedy", {"max_depth": 1}),
                           ("topk", {"k": 1, "max_depth": 1}))}
    assert all(np.array_equal(p, preds["cart"]) for p in preds.values())


@pytest.mark.parametrize("name,module", [("dl85", "pydl85"), ("streed", "pystreed"), ("gosdt-ref", "gosdt")])
def test_peer_warmup_imports_the_solver_outside_fit(name, module):
    pytest.importorskip(module)
    code = (
        "import sys; from treebench.execute.fit import warm;"
        f"assert {module!r} not in sys.modules; s = warm({name!r});"
        f"assert {module!r} in sys.modules, 'warm-up did not import the solver';"
        "import numpy as np; from treebench.registry import ALGORITHMS;"
        "X = np.random.default_rng(0).integers(0, 2, (50, 4)).astype(float); y = (X[:, 0] > 0).astype(int);"
        f"before = set(sys.modules); ALGORITHMS.get({name!r}).create().fit(X, y);"
        "new = [m for m in set(sys.modules) - before if not m.startswith('treebench')];"
        "print(len(new))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0"  # gosdt prints its own warnings


def test_every_learner_declares_a_warmup():
    from treebench.execute.fit import warmup_for
    from treebench.registry import ALGORITHMS

    for e in ALGORITHMS:
        if "test" in e.tags or not e.obj.__module__.startswith("treebench"):
            continue
        fn = warmup_for(e)
        assert callable(fn) and fn.__name__ == "warmup", e.name
    from treebench.algorithms import topk

    assert warmup_for(ALGORITHMS.get("topk")) is topk.warmup  # its JIT warm-up, declared


def test_estimators_import_from_the_package_lazily():
    code = (
        "import sys, treebench; assert 'sklearn' not in sys.modules;"
        "from treebench import TopKClassifier, GreedyTreeClassifier, CARTClassifier;"
        "import sklearn.base as b; assert issubclass(CARTClassifier, b.BaseEstimator);"
        "print(sorted(n for n in dir(treebench) if n.endswith('Classifier')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "TopKClassifier" in out.stdout and "CARTClassifier" in out.stdout
    import treebench

    with pytest.raises(AttributeError):
        treebench.NoSuchClassifier  # noqa: B018
