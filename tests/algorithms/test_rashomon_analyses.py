"""The `rashomon` learner's analyses as results columns: the set size at smaller epsilons, the
test rows' predictive multiplicity and accuracy range (against every tree of the set), the
documented sample, the split-usage importance, and the runner filling them from the test
split (only with columns the learner declares)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from treebench.algorithms.rashomon import EPSILON_GRID, RASHOMON_COLUMNS, RashomonClassifier
from treebench.config.cells import expand
from treebench.config import validate_config
from treebench.execute import fit as fitting, fold


def data(n=80, d=5, seed=0, noise=0.3):
    """A noisy majority of the first three 0/1 features: many trees come near the best."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = X[:, :3].sum(axis=1) + (rng.random(n) < noise) >= 2
    return X, y.astype(int)


def test_the_size_at_each_smaller_epsilon_is_the_size_of_a_fit_at_it():
    X, y = data(n=60, seed=6)
    wide = RashomonClassifier(regularization=0.02, max_depth=2, epsilon=0.5).fit(X, y)
    sizes = json.loads(wide.solve_info_["rashomon_count_by_epsilon"])
    eps = [float(k) for k in sizes]
    assert eps == [e for e in EPSILON_GRID if e < 0.5] + [0.5]
    assert list(sizes.values())[-1] == wide.set_.count
    assert len(set(sizes.values())) >= 3  # the curve rises on these data: the test compares
    for key, size in sizes.items():
        narrow = RashomonClassifier(regularization=0.02, max_depth=2,
                                    epsilon=float(key)).fit(X, y)
        assert narrow.set_.count == size, key


def test_an_absolute_bound_records_its_own_epsilon_last():
    X, y = data(n=60, seed=6)
    rel = RashomonClassifier(regularization=0.02, max_depth=2, epsilon=0.3).fit(X, y)
    bound = rel.solve_info_["rashomon_bound"]
    absolute = RashomonClassifier(regularization=0.02, max_depth=2, bound=bound).fit(X, y)
    sizes = json.loads(absolute.solve_info_["rashomon_count_by_epsilon"])
    own = (bound - rel.solve_info_["objective"]) / rel.solve_info_["objective"]
    assert float(list(sizes)[-1]) == pytest.approx(own, rel=1e-5)
    assert list(sizes.values())[-1] == absolute.set_.count == rel.set_.count


def test_test_columns_are_marx_et_al_measures_over_every_tree_of_the_set():
    X, y = data(n=80, seed=3)
    est = RashomonClassifier(regularization=0.01, max_depth=2, epsilon=0.5).fit(X, y)
    assert not est.solve_info_["rashomon_sampled"] and est.set_.count >= 5
    Xt, yt = data(n=50, seed=4)
    cols = est.test_columns(Xt, yt)
    assert set(cols) == {c.name for c in RASHOMON_COLUMNS if c.name.startswith("rashomon_test_")}
    labels = np.array([est.set_.tree(i).predict_index(Xt) for i in range(est.set_.count)])
    best = labels[0]
    differs = labels != best
    acc = (labels == yt).mean(axis=1)
    assert cols["rashomon_test_ambiguity"] == pytest.approx(differs.any(axis=0).mean())
    assert cols["rashomon_test_discrepancy"] == pytest.approx(differs.mean(axis=1).max())
    assert cols["rashomon_test_accuracy_min"] == pytest.approx(acc.min())
    assert cols["rashomon_test_accuracy_max"] == pytest.approx(acc.max())
    assert acc.min() < acc.max()  # a real spread on these data
    # the best tree, the one `predict` uses, lies in the range
    assert acc.min() <= np.mean(est.predict(Xt) == yt) <= acc.max()


def test_a_sample_is_seeded_flagged_and_within_the_whole_set():
    X, y = data(n=120, d=6, seed=2)
    full = RashomonClassifier(regularization=0.005, max_depth=2, epsilon=0.4).fit(X, y)
    n = full.set_.count
    assert n > 12
    part = RashomonClassifier(regularization=0.005, max_depth=2, epsilon=0.4,
                              max_analysed=6).fit(X, y)
    again = RashomonClassifier(regularization=0.005, max_depth=2, epsilon=0.4,
                               max_analysed=6).fit(X, y)
    info = part.solve_info_
    assert info["rashomon_sampled"] and info["rashomon_trees_analysed"] == 6
    assert not full.solve_info_["rashomon_sampled"]
    assert info["rashomon_sample_seed"] == 0  # no random_state: a fixed seed, not a new draw
    assert part.analysed_ == again.analysed_ == part.set_.sample(6, 0)
    seeded = RashomonClassifier(regularization=0.005, max_depth=2, epsilon=0.4, max_analysed=6,
                                random_state=5).fit(X, y)
    assert seeded.analysed_ == seeded.set_.sample(6, 5)
    Xt, yt = data(n=60, d=6, seed=9)
    whole, sample = full.test_columns(Xt, yt), part.test_columns(Xt, yt)
    assert sample["rashomon_test_ambiguity"] <= whole["rashomon_test_ambiguity"]
    assert sample["rashomon_test_discrepancy"] <= whole["rashomon_test_discrepancy"]
    assert whole["rashomon_test_accuracy_min"] <= sample["rashomon_test_accuracy_min"] \
        <= sample["rashomon_test_accuracy_max"] <= whole["rashomon_test_accuracy_max"]


def test_feature_usage_column_lists_the_split_features_with_min_median_max():
    X, y = data(n=80, seed=3)
    X = np.hstack([X, np.zeros((80, 1))])  # a constant column: no tree splits on it
    est = RashomonClassifier(regularization=0.01, max_depth=2, epsilon=0.5).fit(X, y)
    usage = json.loads(est.solve_info_["rashomon_feature_usage"])
    used = {f: v for f, v in est.feature_usage_.items() if v[2] > 0}
    assert 5 not in used and len(used) >= 3  # the unused column is left out
    assert usage == {str(f): list(v) for f, v in used.items()}
    for f, (lo, med, hi) in used.items():
        per_tree = [int(np.sum(est.set_.tree(i).feature == f)) for i in range(est.set_.count)]
        assert (lo, med, hi) == (min(per_tree), float(np.median(per_tree)), max(per_tree))


def test_the_runner_fills_the_columns_from_the_test_split():
    cfg = {
        "name": "rashomon-columns",
        "datasets": [{"name": "parity-noise",
                      "params": {"n_samples": 150, "h": 2, "K": 5, "eps": 0.4}}],
        "split": {"kind": "holdout", "test_size": 0.4, "seeds": [0]},
        "binarization": {"method": "none"},
        "algorithms": [{"name": "rashomon", "params": {"regularization": 0.02, "max_depth": 2,
                                                       "epsilon": 1.0, "max_analysed": 4}}],
        "limits": {"time": 60},
    }
    cell = expand(validate_config(cfg))[0]
    prep = fold.prepare(cell)
    solver = fitting.fit_and_score(cell, prep)["parts"]["solver"]
    assert {c.name for c in RASHOMON_COLUMNS} <= set(solver)
    est = fitting.make_estimator(cell).fit(prep.X_train, prep.y_train)
    on_test = est.test_columns(prep.X_test, prep.y_test)
    on_train = est.test_columns(prep.X_train, prep.y_train)
    assert on_test != on_train  # the split matters, so the comparison below tells them apart
    assert {k: solver[k] for k in on_test} == pytest.approx(on_test)
    assert solver["rashomon_sampled"] is True and solver["rashomon_trees_analysed"] == 4
    assert json.loads(solver["rashomon_count_by_epsilon"])["1"] == solver["rashomon_count"]


def test_the_runner_refuses_test_columns_the_learner_does_not_declare():
    class Returns:
        def __init__(self, values):
            self.values = values

        def test_columns(self, X, y):
            return dict(self.values)

    prep = SimpleNamespace(X_test=np.zeros((2, 1)), y_test=np.array([0, 1]))
    own = Returns({"rashomon_test_ambiguity": 0.25, "rashomon_test_discrepancy": None})
    assert fitting._test_columns("rashomon", own, prep) == {"rashomon_test_ambiguity": 0.25}
    # a metric's name would overwrite the metric; an unknown name is declared nowhere
    for stray in ("test_accuracy", "rashomon_test_something"):
        with pytest.raises(ValueError, match=f"`rashomon` returned {stray}, which"):
            fitting._test_columns("rashomon", Returns({stray: 1.0}), prep)
    # no test rows: the hook is not called
    empty = SimpleNamespace(X_test=np.zeros((0, 1)), y_test=np.zeros(0))
    assert fitting._test_columns("rashomon", Returns({"test_accuracy": 1.0}), empty) == {}
