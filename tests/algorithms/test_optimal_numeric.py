"""The `optimal-numeric` learner: listed and documented like the other learners, the objective it
reports, its deadline, and the same optimum as ConTree (pycontree), whose conventions (depth
counting, left is ``x <= threshold``) are checked here too."""

from __future__ import annotations

import time

import numpy as np
import pytest
from naive import naive_numeric_optimal, naive_tree_tuple
from quantbnb import load_quantbnb
from typer.testing import CliRunner

from treebench.tree.arrays import check_tree


def _num(seed, n=60, p=3, levels=5, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float) / levels
    y = ((X[:, 0] + X[:, 1] > 0.8) ^ (rng.random(n) < 0.2)).astype(int)
    if n_classes > 2:
        y = np.where(rng.random(n) < 0.3, rng.integers(0, n_classes, n), y)
    return X, y


def test_listed_by_the_cli_with_its_parameters():
    from treebench.cli import app

    res = CliRunner().invoke(app, ["algorithms"])
    assert res.exit_code == 0, res.output
    assert "optimal-numeric" in res.output
    assert "objective='errors'" in res.output and "time_limit=None" in res.output


@pytest.mark.parametrize("objective", ["errors", "error_rate+lambda*leaves"])
def test_reports_its_objective_in_its_kind(objective):
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
    from treebench.results.schema import OBJECTIVE_KINDS

    X, y = _num(0, n_classes=3)
    w = np.arange(len(y)) % 3 + 1.0
    est = OptimalNumericClassifier(max_depth=2, objective=objective, lam=0.02)
    est.fit(X, y, sample_weight=w)
    info = est.solve_info_
    assert info["objective_kind"] == objective and objective in OBJECTIVE_KINDS
    check_tree(est.tree_, max_depth=2, X=X, y_index=y, sample_weight=w)
    errors = float(np.sum(w * (est.predict(X) != y)))
    assert info["training_error"] == pytest.approx(errors)
    lam = 0.02 if objective != "errors" else 0.0
    cost, tree = naive_numeric_optimal(X, y, 3, 2, w, lam=lam)
    assert naive_tree_tuple(est.tree_) == tree
    if objective == "errors":
        assert info["objective"] == pytest.approx(cost)
    else:
        assert info["objective"] == pytest.approx(cost / w.sum())
    assert info["optimal"] and not info["timed_out"]


def test_time_limit_returns_a_valid_tree_marked_not_optimal():
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier, warmup

    warmup()
    rng = np.random.default_rng(0)
    X = rng.random((4000, 8))
    y = (X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.random(4000) > 0.9).astype(int)
    t = time.perf_counter()
    est = OptimalNumericClassifier(max_depth=4, time_limit=0.2).fit(X, y)
    assert time.perf_counter() - t < 5.0
    assert est.solve_info_["timed_out"] and not est.solve_info_["optimal"]
    check_tree(est.tree_, max_depth=4, X=X, y_index=y)
    assert est.solve_info_["training_error"] <= min(np.bincount(y))


def test_bad_parameter_is_a_clear_error():
    from sklearn.utils._param_validation import InvalidParameterError

    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier

    X, y = _num(1)
    with pytest.raises(InvalidParameterError, match="objective"):
        OptimalNumericClassifier(objective="accuracy").fit(X, y)


def test_a_depth_beyond_the_search_buffers_is_refused_before_any_allocation(tmp_path,
                                                                          monkeypatch):
    """Before: max_depth 20 allocated gigabytes of complete-tree buffers (11 s), 31 raised a
    MemoryError for 3 TiB. Now: up to 16 runs, beyond is a parameter error, and a config
    asking for it exits 2 with one sentence before any cell runs."""
    import yaml
    from sklearn.utils._param_validation import InvalidParameterError

    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
    from treebench.cli import app
    from treebench.search.numeric import MAX_DEPTH, solve_numeric

    X, y = _num(2, n=20)
    assert OptimalNumericClassifier(max_depth=MAX_DEPTH).fit(X, y).tree_.n_nodes >= 1
    with pytest.raises(InvalidParameterError, match="max_depth"):
        OptimalNumericClassifier(max_depth=MAX_DEPTH + 1).fit(X, y)
    with pytest.raises(ValueError, match="depths 0 to 16"):
        solve_numeric(X, y, None, 2, 31)
    cfg = {"name": "deep", "datasets": ["iris"], "binarization": {"method": "raw"},
           "split": {"kind": "kfold", "n_splits": 2},
           "algorithms": [{"name": "optimal-numeric", "params": {"max_depth": 40}}]}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "exp.yaml", "-o", "out", "-q", "--no-report"])
    assert r.exit_code == 2, r.output
    assert "max_depth" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "out" / "cells").exists() or not any((tmp_path / "out" / "cells").glob("*.json"))


# ----------------------------------------------------------------------------- ConTree
@pytest.mark.peers
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_contree_conventions_and_same_optimum(seed, depth):
    """pycontree's ``max_depth=d`` allows d tests per path (our depth), it sends ``x <= t``
    left (probed on every threshold and just above it), and its optimum equals ours on data
    with many repeated values."""
    pycontree = pytest.importorskip("pycontree")
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier

    X, y = _num(seed, n=50, levels=4, n_classes=2 + seed % 2)
    theirs = pycontree.ConTree(max_depth=depth).fit(X, y.astype(np.intc))
    ours = OptimalNumericClassifier(max_depth=depth).fit(X, y)
    their_errors = int(np.sum(theirs.predict(X) != y))
    assert theirs.get_depth() <= depth
    assert ours.solve_info_["training_error"] == their_errors
    for i in np.flatnonzero(ours.tree_.feature >= 0):
        f, t = ours.tree_.feature[i], ours.tree_.threshold[i]
        vals = np.unique(X[:, f])
        assert t not in vals and vals.min() < t < vals.max()  # a midpoint, never a value
    # ConTree's thresholds: a row exactly on one goes left
    from treebench.tree import adapters

    tree = adapters.from_threshold_nested(theirs.tree_, adapters.describe_contree,
                                          len(np.unique(y)), X, y, np.ones(len(y)))
    probe = [X]
    for i in np.flatnonzero(tree.feature >= 0):
        f, t = tree.feature[i], tree.threshold[i]
        for v in (t, np.nextafter(t, np.inf)):
            Z = X.copy()
            Z[:, f] = v
            probe.append(Z)
    Z = np.vstack(probe)
    assert np.array_equal(tree.predict_index(Z), theirs.predict(Z))


@pytest.mark.peers
@pytest.mark.data
@pytest.mark.parametrize("name,depth", [("bank", 2), ("raisin", 2), ("wilt", 2), ("bank", 3)])
def test_same_training_errors_as_contree_on_quantbnb_files(name, depth):
    pycontree = pytest.importorskip("pycontree")
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier

    X, y = load_quantbnb(name)
    theirs = pycontree.ConTree(max_depth=depth, time_limit=120).fit(X, y.astype(np.intc))
    ours = OptimalNumericClassifier(max_depth=depth).fit(X, y)
    assert ours.solve_info_["optimal"]
    assert ours.solve_info_["training_error"] == int(np.sum(theirs.predict(X) != y))
