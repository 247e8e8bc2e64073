"""Continuous-feature peers (pycontree, licketysplit): their trees translated into TreeArrays
predict exactly as the solvers themselves, depth conventions match ours (a lone leaf is depth
0, max_depth = tests per path), left is ``x <= threshold`` (points exactly on a threshold), and
ConTree's optimal trees equal DPDT with every midpoint (the exhaustive generator)."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.tree.arrays import check_tree

pycontree = pytest.importorskip("pycontree")


def _num(seed, n=60, p=3, levels=5):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p)).astype(float)
    y = ((X[:, 0] + X[:, 1] > levels - 1) ^ (rng.random(n) < 0.15)).astype(int)
    return X, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_contree_translation_predicts_like_contree(seed, depth):
    from pycontree import ConTree

    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(seed)
    ours = ConTreePeerClassifier(max_depth=depth).fit(X, y)
    theirs = ConTree(max_depth=depth).fit(X, y.astype(np.intc))
    check_tree(ours.tree_, max_depth=depth, X=X, y_index=y)
    assert ours.get_depth() == theirs.get_depth()
    # every threshold itself, and just above it: left is x <= t for both
    probe = [X]
    for i in np.flatnonzero(ours.tree_.feature >= 0):
        f, t = ours.tree_.feature[i], ours.tree_.threshold[i]
        for v in (t, np.nextafter(t, np.inf)):
            Z = X.copy()
            Z[:, f] = v
            probe.append(Z)
    Z = np.vstack(probe)
    # a leaf whose classes tie is labelled by treebench's rule, not pycontree's lowest index
    tied = _tied_leaves(ours.tree_)
    keep = ~np.isin(ours.tree_.apply(Z), tied)
    assert np.array_equal(ours.predict(Z)[keep], theirs.predict(Z)[keep])


def _tied_leaves(tree) -> np.ndarray:
    v = tree.value
    top = v.max(axis=1, keepdims=True)
    return np.flatnonzero((tree.feature < 0) & ((v == top).sum(axis=1) > 1))


def test_contree_leaves_follow_the_one_tie_rule():
    """A leaf with tied classes predicts the class more frequent in the whole training set
    (docs/conventions.md), as STreeD's and Top-k's do on the same tree; pycontree labels it
    with the lower class index."""
    from treebench.algorithms.peers import STreeDPeerClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier
    from treebench.tree.labels import majority_labels

    X = np.array([[1, 0, 0, 1, 1, 0], [0, 1, 0, 0, 1, 0], [1, 1, 1, 1, 0, 1], [0, 1, 0, 0, 1, 0],
                  [1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 1, 0],
                  [1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0], [1, 0, 0, 1, 1, 0], [1, 1, 1, 1, 0, 1],
                  [1, 0, 0, 1, 1, 0], [1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0]], dtype=float)
    y = np.array([0, 2, 0, 0, 2, 1, 2, 2, 2, 2, 1, 1, 1, 2, 2])  # totals 3, 4, 8
    ours = ConTreePeerClassifier(max_depth=1).fit(X, y)
    tree = ours.tree_
    assert len(_tied_leaves(tree)) == 1  # counts [1, 1, 0]: classes 0 and 1 tie
    assert tree.label.tolist() == majority_labels(tree.value, np.bincount(y)).tolist()
    assert tree.label[_tied_leaves(tree)[0]] == 1
    streed = STreeDPeerClassifier(max_depth=1).fit(X, y)
    assert np.array_equal(ours.predict(X), streed.predict(X))


@pytest.mark.parametrize("seed", range(4))
def test_contree_equals_dpdt_exhaustive_error(seed):
    from treebench.algorithms.dpdt import DPDTClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(seed, n=50)
    for depth in (1, 2):
        c = ConTreePeerClassifier(max_depth=depth).fit(X, y)
        d = DPDTClassifier(max_depth=depth, candidates="exhaustive").fit(X, y)
        assert c.solve_info_["objective"] == d.solve_info_["training_error"]
        assert c.solve_info_["optimal"]


def test_contree_integer_weights_are_repeated_rows():
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(1, n=30)
    w = np.arange(30) % 3
    a = ConTreePeerClassifier(max_depth=2).fit(X, y, sample_weight=w.astype(float))
    b = ConTreePeerClassifier(max_depth=2).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    assert a.solve_info_["objective"] == b.solve_info_["objective"]
    with pytest.raises(ValueError, match="whole-number"):
        ConTreePeerClassifier(max_depth=2).fit(X, y, sample_weight=np.full(30, 0.5))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_licketysplit_translation_depth_and_sides(seed, depth):
    pytest.importorskip("licketysplit")
    from licketysplit import LicketySPLITClassifier

    from treebench.algorithms.peers_continuous import LicketySplitPeerClassifier

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(150, 5)).astype(float)
    y = ((X[:, 0].astype(int) ^ X[:, 1].astype(int)) | (rng.random(150) < 0.1)).astype(int)
    ours = LicketySplitPeerClassifier(max_depth=depth, lambda_leaf=0.0).fit(X, y)
    theirs = LicketySPLITClassifier(depth_budget=depth, lambda_leaf=0.0).fit(X.astype(np.uint8), y)
    check_tree(ours.tree_, max_depth=depth, X=X, y_index=y)
    allx = np.array([[(i >> j) & 1 for j in range(5)] for i in range(32)], dtype=float)
    assert np.array_equal(ours.predict(allx), theirs.predict(allx.astype(np.uint8)))
    # its objective (λ = 0) is its training error, which our translated tree reproduces
    assert ours.tree_.training_error(X, y) == pytest.approx(theirs.objective_)
    with pytest.raises(ValueError, match="0/1"):
        ours.fit(X + 0.25, y)


def test_contree_tree_sends_training_rows_where_contree_solved_them():
    """pycontree solves on 32-bit copies of the features: 1.00000001 rounds onto its
    threshold 1.0 and is solved left, but compared as it is (1.00000001 > 1.0) it went
    right, so the translated tree made 1 error where ConTree's optimum (and ours) makes 0,
    and was still marked optimal."""
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X = np.array([[0.5], [1.00000001], [1.0000001192092896], [2.0]])
    y = np.array([0, 0, 1, 1])
    c = ConTreePeerClassifier(max_depth=1).fit(X, y)
    o = OptimalNumericClassifier(max_depth=1).fit(X, y)
    assert c.solve_info_["objective"] == o.solve_info_["objective"] == 0.0
    assert c.predict(X).tolist() == y.tolist()
    assert c.solve_info_["optimal"]


def test_contree_is_not_marked_optimal_where_float32_merges_values():
    """Distinct values that 32-bit floats merge (0 and 5e-324) are one value to pycontree,
    which then cannot separate the classes: its tree was marked optimal with 3 errors where
    the optimum has 0."""
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = rng.integers(0, 2, 20)
    X[:, 0] = np.where(y == 1, 5e-324, 0.0)
    with pytest.warns(UserWarning, match="merges distinct values of 1 feature"):
        c = ConTreePeerClassifier(max_depth=2).fit(X, y)
    assert not c.solve_info_["optimal"]
    assert c.solve_info_["float32_merged_features"] == 1
    assert c.solve_info_["objective"] == c.tree_.training_error(X, y)
    assert OptimalNumericClassifier(max_depth=2).fit(X, y).solve_info_["objective"] == 0.0


def test_contree_is_not_marked_optimal_where_values_are_less_than_its_epsilon_apart():
    """pycontree gives neighbouring values less than 1e-7 apart one index, even when 32-bit
    floats keep them apart (0.001 and 0.00100005): it cannot split between them, and its tree
    (2 errors where the optimum has 0) was marked optimal. Values 2e-7 apart stay apart."""
    from treebench.algorithms.optimal_numeric import OptimalNumericClassifier
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier, float32_merges

    X = np.array([[0.001], [0.001], [0.00100005], [0.00100005], [0.0011], [0.0012]])
    y = np.array([0, 0, 1, 1, 1, 1])
    assert len(np.unique(X.astype(np.float32))) == 4  # float32 alone merges nothing
    with pytest.warns(UserWarning, match="less than 1e-7 apart"):
        c = ConTreePeerClassifier(max_depth=1).fit(X, y)
    assert c.solve_info_["objective"] == 2.0 and not c.solve_info_["optimal"]
    assert c.solve_info_["float32_merged_features"] == 1
    assert OptimalNumericClassifier(max_depth=1).fit(X, y).solve_info_["objective"] == 0.0
    X[2:4, 0] = 0.0010002
    assert float32_merges(X) == 0
    c = ConTreePeerClassifier(max_depth=1).fit(X, y)
    assert c.solve_info_["objective"] == 0.0 and c.solve_info_["optimal"]


def test_contree_refuses_values_beyond_float32_through_the_cli(tmp_path, monkeypatch):
    """Values of ±1.8e308 become ±inf in pycontree's 32-bit copy (its threshold NaN): the run
    recorded a 14-error tree as optimal where the optimum is 0. Now the cell fails with one
    sentence (exit 3: a learner's refusal of its data is a cell error) and no traceback."""
    import pandas as pd
    import yaml
    from typer.testing import CliRunner

    from treebench.cli import app
    from treebench.results.store import read_table

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40)
    big = np.finfo(np.float64).max
    pd.DataFrame({"f0": np.where(y == 1, big, -big), "f1": rng.normal(size=40),
                  "label": y}).to_csv(tmp_path / "big.csv", index=False)
    cfg = {"name": "big", "seed": 0, "datasets": [{"path": "big.csv", "label": "label"}],
           "split": {"kind": "holdout", "test_size": 0.25}, "binarization": {"method": "raw"},
           "algorithms": [{"name": "contree", "params": {"max_depth": 2}}],
           "execution": {"n_jobs": 1, "backend": "sequential"}}
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "exp.yaml", "-o", "out", "-q", "--no-report"])
    assert r.exit_code == 3, r.output
    assert "Traceback" not in r.output
    row = read_table(tmp_path / "out" / "results.parquet").iloc[0]
    assert row["status"] == "error"
    assert "32-bit floats" in row["error"] and "beyond their range" in row["error"]


def test_contree_refuses_weights_that_make_too_many_rows():
    """Weights of 1e300 as repeated rows overflowed numpy's repeat count ("repeats may not
    contain negative values")."""
    from treebench.algorithms.peers_continuous import ConTreePeerClassifier

    X, y = _num(1, n=30)
    with pytest.raises(ValueError, match=r"^contree takes whole-number sample weights as "
                       r"repeated rows, and these make 3e\+301 rows"):
        ConTreePeerClassifier(max_depth=2).fit(X, y, sample_weight=np.full(30, 1e300))
