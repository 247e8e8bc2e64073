"""pytrees-rs's DL8.5 and ConTree as peers: the package's conventions (depth, sides, status),
their optimum against brute force, the anytime trace, and their problem as listed."""

from __future__ import annotations

import numpy as np
import pytest
from naive import naive_numeric_optimal, naive_optimal_error
from typer.testing import CliRunner

from treebench.algorithms.objectives import problem_of
from treebench.algorithms.peers_pytrees import DL85_SEARCHES, monotone_trace
from treebench.cli import app
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import check_tree

pytestmark = pytest.mark.peers
pytrees = pytest.importorskip("pytrees")


def _bin(seed: int, n: int = 60, d: int = 5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (n, d)).astype(float)
    y = (X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (X[:, 2].astype(int) & X[:, 3].astype(int))
    return X, np.where(rng.random(n) < 0.15, 1 - y, y)


def _num(seed: int, n: int = 40, p: int = 3, n_classes: int = 2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, (n, p)) / 2.0
    y = ((X[:, 0] > 1.2) ^ (X[:, 1] > 1.7)).astype(int)
    y = np.where(rng.random(n) < 0.2, rng.integers(0, n_classes, n), y)
    return X, y


def _trace_is_monotone(trace, errors, optimal):
    assert trace, "a fit records at least its final state"
    times = [t for t, _, _ in trace]
    inc = [i for _, i, _ in trace]
    bnd = [b for _, _, b in trace]
    assert times == sorted(times) and all(t >= 0 for t in times)
    assert all(a >= b for a, b in zip(inc, inc[1:])), "incumbents never rise"
    assert all(a <= b for a, b in zip(bnd, bnd[1:])), "bounds never fall"
    assert all(b <= i for i, b in zip(inc, bnd)), "bound <= incumbent"
    assert inc[-1] == pytest.approx(errors)
    assert (bnd[-1] == pytest.approx(errors)) == optimal


@pytest.mark.parametrize("search", DL85_SEARCHES)
@pytest.mark.parametrize("depth", [0, 1, 2, 3])
@pytest.mark.parametrize("seed", range(2))
def test_dl85_modes_reach_the_brute_force_optimum(search, depth, seed):
    X, y = _bin(seed)
    est = ALGORITHMS.get("pytrees-dl85").create(max_depth=depth, search=search).fit(X, y)
    info = est.solve_info_
    # max_depth counts tests on a path, as ours: depth 0 is a lone leaf
    check_tree(est.tree_, X=X, y_index=y, max_depth=depth)
    errors = float(np.sum(est.predict(X) != y))
    assert errors == info["objective"] == naive_optimal_error(X, y, 2, depth)
    assert info["optimal"] and info["status"] == "optimal" and not info["timed_out"]
    _trace_is_monotone(est.trace_, errors, True)


@pytest.mark.parametrize("seed", range(3))
def test_dl85_tree_reads_like_the_package(seed):
    from pytrees import DL85Classifier

    X, y = _bin(seed, n=120, d=6)
    ours = ALGORITHMS.get("pytrees-dl85").create(max_depth=3).fit(X, y)
    ref = DL85Classifier(max_depth=3).fit(X, y)
    # 0 goes left on both sides; leaf labels may differ only at a tie of the leaf's counts
    assert np.array_equal(ours.tree_.feature[ours.tree_.feature >= 0],
                          ref.tree_.feature[ref.tree_.feature >= 0])
    assert np.sum(ours.predict(X) != y) == ref.train_error_


@pytest.mark.parametrize("use_lds", [False, True])
@pytest.mark.parametrize("depth", [0, 1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_contree_reaches_the_brute_force_optimum(use_lds, depth, seed):
    X, y = _num(seed, n_classes=3)
    est = ALGORITHMS.get("pytrees-contree").create(max_depth=depth, use_lds=use_lds).fit(X, y)
    check_tree(est.tree_, X=X, y_index=y, max_depth=depth)
    errors = float(np.sum(est.predict(X) != y))
    cost, _ = naive_numeric_optimal(X, y, 3, depth)
    assert errors == est.solve_info_["objective"] == cost
    assert est.solve_info_["optimal"]
    _trace_is_monotone(est.trace_, errors, True)


@pytest.mark.parametrize("seed", range(3))
def test_contree_predicts_like_the_package(seed):
    """A row goes left when x <= threshold in both; predictions on unseen rows agree."""
    from pytrees import ConTreeClassifier

    X, y = _num(seed, n=80)
    ours = ALGORITHMS.get("pytrees-contree").create(max_depth=3).fit(X, y)
    ref = ConTreeClassifier(max_depth=3).fit(X, y)
    grid = np.random.default_rng(seed).uniform(-0.5, 3.0, (300, X.shape[1]))
    assert np.array_equal(ours.predict(grid), ref.predict(grid))


def test_whole_number_weights_are_repeated_rows():
    X, y = _bin(4)
    w = np.arange(len(y)) % 3 + 1.0
    est = ALGORITHMS.get("pytrees-dl85").create(max_depth=2).fit(X, y, sample_weight=w)
    assert est.solve_info_["objective"] == naive_optimal_error(X, y, 2, 2, w)
    with pytest.raises(ValueError, match="whole-number"):
        ALGORITHMS.get("pytrees-dl85").create(max_depth=2).fit(X, y, sample_weight=w + 0.5)


def test_a_time_limit_stop_is_not_optimal_and_its_trace_has_no_proof():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 12))
    y = (X[:, :4].sum(axis=1) + rng.normal(size=3000) > 0).astype(int)
    est = ALGORITHMS.get("pytrees-contree").create(max_depth=4, time_limit=0.3).fit(X, y)
    info = est.solve_info_
    assert info["status"] == "time_limit" and info["timed_out"] and not info["optimal"]
    _trace_is_monotone(est.trace_, info["objective"], False)


def test_monotone_trace_keeps_improvements_only():
    trace = monotone_trace([(0.1, 9), (0.05, 9), (0.2, 7), (0.3, 8)], 0.4, 7, True)
    assert trace == [(0.1, 9.0, 0.0), (0.2, 7.0, 0.0), (0.4, 7.0, 7.0)]


def test_problem_is_min_errors_and_listed():
    for name in ("pytrees-dl85", "pytrees-contree"):
        assert problem_of(name, ALGORITHMS.get(name).create().get_params()) == "min-errors"
    res = CliRunner().invoke(app, ["algorithms"])
    assert res.exit_code == 0, res.output
    assert "pytrees-dl85" in res.output and "pytrees-contree" in res.output


def test_a_dl85_mode_that_does_not_exist_is_refused_through_the_cli(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\ndatasets: [breast_cancer]\nbinarization: [{method: quantile}]\n"
                   "algorithms: [{name: pytrees-dl85, params: {search: beam}}]\n")
    res = CliRunner().invoke(app, ["run", str(cfg), "--dry-run"])
    assert res.exit_code == 2, res.output
    assert "search" in res.output


class _NoTreeInTime:
    """What pytrees-rs 2.0 does when its search found no tree within ``max_time``: it raises
    an IndexError of its own reading the empty tree (``raises``), or leaves a tree of no
    nodes."""

    def __init__(self, limit: float, raises: bool):
        self.max_time, self.raises = limit, raises

    def fit(self, X, y):
        if self.raises:
            raise IndexError("list index out of range")
        self.tree_ = type("EmptyTree", (), {"node_count": 0})()
        self.status_ = "time_limit"


@pytest.mark.parametrize("raises", [True, False])
def test_no_tree_within_the_time_limit_is_one_sentence(monkeypatch, raises):
    """The package's own failure when its search found no tree in time becomes the cell's
    one-sentence error."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (60, 5)).astype(float)
    y = rng.integers(0, 2, 60)
    est = ALGORITHMS.get("pytrees-dl85").create(max_depth=3, time_limit=0.5)
    monkeypatch.setattr(est, "_estimator", lambda limit: _NoTreeInTime(limit, raises))
    with pytest.raises(RuntimeError, match=r"found no tree within its time limit \(0.5 s\)"):
        est.fit(X, y)


def test_a_tiny_time_limit_gives_a_tree_or_the_sentence():
    """With the real package and a limit too short for its search, the fit ends either with a
    tree that is not marked optimal or with the one-sentence error, never with the package's
    own IndexError (which of the two depends on how far the search got in 1 ms)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (3000, 40)).astype(float)
    y = rng.integers(0, 2, 3000)
    est = ALGORITHMS.get("pytrees-dl85").create(max_depth=6, time_limit=0.001)
    try:
        est.fit(X, y)
    except RuntimeError as exc:
        assert "found no tree within its time limit" in str(exc)
    else:
        assert est.solve_info_["optimal"] is False
        check_tree(est.tree_)
