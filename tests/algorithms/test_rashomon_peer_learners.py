"""`treefarms` and `arborenum` as registered learners beside `rashomon`: their count columns
equal the peers' count functions (`treebench.algorithms.peers_rashomon`), brute force and
`rashomon` under each peer's conventions; their best tree is optimal; a config with
`rashomon` and `treefarms` runs through the runner and its rows carry both counts."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from naive import naive_rashomon_trees, random_rashomon_problems
from runs import run_folder, tiny_config
from treebench.algorithms.peers_rashomon import arborenum_count, arborenum_price
from treebench.algorithms.peers_rashomon import treefarms_count
from treebench.registry import ALGORITHMS
from treebench.results.store import read_table
from treebench.search.rashomon import SetSpec, enumerate_set

pytestmark = pytest.mark.peers


def problems(seed, wanted):
    """Small random problems (0/1 features, two classes) with a parameter draw each; at least
    two distinct rows."""
    return random_rashomon_problems(seed, wanted, [0.02, 0.05, 0.1],
                                    lambda X, y, depth: len(set(map(tuple, X))) > 1)


def brute_count(X, y, depth, lam, bound, keep_redundant, leaf_ties="prior"):
    """Trees of depth <= ``depth`` with cost at most ``bound`` (an objective, exact: λ and
    the bound read as the decimals they print as), by brute force."""
    prob = enumerate_set(X, y, np.ones(len(y)), 2, SetSpec(depth, lam, epsilon=0.0)).enum.prob
    costs = [c for c, _ in naive_rashomon_trees(X, y, np.ones(len(y), int), 2, depth, prob.A,
                                                prob.P, keep_redundant=keep_redundant,
                                                leaf_ties=leaf_ties)]
    return costs, prob


def fit(name, X, y, **params):
    return ALGORITHMS.get(name).create(**params).fit(X, y)


def test_treefarms_learner_counts_as_its_count_function_and_brute_force():
    pytest.importorskip("treefarms")
    checked = 0
    for X, y, depth, lam, mult in problems(11, 10):
        est = fit("treefarms", X, y, regularization=lam, max_depth=depth, epsilon=mult)
        count = est.solve_info_["rashomon_count"]
        assert count == treefarms_count(X, y, lam, mult, depth)
        # with the filter off treefarms' set is the definition's (no float32 tie at the
        # bound on these draws is checked through brute force in exact arithmetic)
        est_all = fit("treefarms", X, y, regularization=lam, max_depth=depth, epsilon=mult,
                      keep_redundant=True)
        costs, _ = brute_count(X, y, depth, lam, None, True)
        limit = math.floor(min(costs) * (1 + Fraction(repr(mult))))
        if any(c == limit for c in costs):
            continue  # a tree at the bound: treefarms decides it in float32
        assert est_all.solve_info_["rashomon_count"] == sum(c <= limit for c in costs)
        # the best tree is optimal: its objective is the set's least
        opt = enumerate_set(X, y, np.ones(len(y)), 2,
                            SetSpec(depth, lam, epsilon=mult, keep_redundant=True))
        assert est.solve_info_["rashomon_objective_min"] == pytest.approx(
            opt.objective(opt.levels()[0][0]), abs=1e-12)
        assert est.get_depth() <= depth
        checked += 1
    assert checked >= 5


def test_arborenum_learner_counts_as_its_count_function_brute_force_and_ours():
    pytest.importorskip("arborenum")
    for X, y, depth, lam, mult in problems(12, 10):
        est = fit("arborenum", X, y, regularization=lam, max_depth=depth, epsilon=mult)
        info = est.solve_info_
        count, bound = arborenum_count(X, y, lam, mult, depth)
        assert info["rashomon_count"] == count
        price = arborenum_price(lam, len(y))
        ours = enumerate_set(X, y, np.ones(len(y)), 2,
                             SetSpec(depth, price, bound=bound, keep_redundant=True))
        assert ours.count == count
        costs, prob = brute_count(X, y, depth, price, bound, True)
        limit = math.floor(Fraction(repr(bound)) * prob.A * prob.total)
        assert sum(c <= limit for c in costs) == count
        # the best tree (arborenum's tree 0) has the optimum, in arborenum's units
        errors = est.tree_.training_error(X, y, np.ones(len(y)))
        assert (errors + round(lam * len(y) + 1e-9) * est.tree_.n_leaves) / len(y) == \
            pytest.approx(info["rashomon_objective_min"], abs=1e-12)
        assert errors == int(np.sum(est.predict(X) != y))


def test_a_config_with_rashomon_and_treefarms_runs_and_rows_carry_both_counts(tmp_path):
    pytest.importorskip("treefarms")
    pytest.importorskip("arborenum")
    params = {"regularization": 0.02, "epsilon": 0.1, "max_depth": 2}
    cfg = tiny_config(
        datasets=["breast_cancer"], split={"kind": "kfold", "n_splits": 2},
        binarization={"method": "quantile", "params": {"max_splits": 2}},
        algorithms=[{"name": "rashomon", "params": {**params, "leaf_ties": "last"}},
                    {"name": "treefarms", "params": params},
                    {"name": "arborenum", "params": params}])
    t = read_table(run_folder(tmp_path, cfg) / "results.parquet")
    assert len(t) == 6 and set(t["status"]) == {"ok"}
    by = {(r.algorithm_label, r.fold): r for r in t.itertuples()}
    for fold in (0, 1):
        ours, peer = by["rashomon", fold], by["treefarms", fold]
        assert ours.rashomon_count >= 2
        assert peer.rashomon_count == ours.rashomon_count
        assert peer.rashomon_objective_min == pytest.approx(ours.rashomon_objective_min,
                                                            abs=1e-12)
        assert by["arborenum", fold].rashomon_count >= 1
        assert peer.train_accuracy == pytest.approx(ours.train_accuracy)


def test_the_learners_are_registered_with_rashomons_columns():
    rashomon = {c.name for c in ALGORITHMS.get("rashomon").columns}
    for name in ("treefarms", "arborenum"):
        entry = ALGORITHMS.get(name)
        names = {c.name for c in entry.columns}
        assert "rashomon_count" in names and names <= rashomon
        assert entry.requires == (name,)


def test_treefarms_learner_answers_the_one_leaf_set_where_no_feature_varies():
    # treefarms 0.2.4 aborts the process on such data; the set is the one leaf, as arborenum
    # counts it
    pytest.importorskip("treefarms")
    from treebench.algorithms.peers_rashomon import TreeFARMSPeerClassifier

    X = np.ones((10, 3))
    y = np.array([0, 1, 1] + [1] * 7)
    m = TreeFARMSPeerClassifier(regularization=0.01, max_depth=2).fit(X, y)
    assert m.solve_info_["rashomon_count"] == 1.0 and m.tree_.n_leaves == 1
    assert list(m.predict(X[:2])) == [1, 1]
    assert m.solve_info_["rashomon_objective_min"] == pytest.approx(0.1 + 0.01)
