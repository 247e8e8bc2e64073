"""The iris seed-42 fixture from the authors' code (ECART, θ = 0.005), reproduced
with `treebench.execute.tune`: λ scanned down with tolerance 0.01, then ccp α by validation AUC."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import KBinsDiscretizer, label_binarize

from treebench.algorithms.ngi import NGIClassifier
from treebench.execute.tune import chosen_params, tune

LAMBDAS = [100, 10, 1, 0.1, 0.01]
ALPHAS = [1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1]
PLAN = [
    {"param": "lam", "grid": LAMBDAS, "metric": "val_auc", "rule": "scan_down_tol", "tol": 0.01},
    {"param": "ccp_alpha", "grid": ALPHAS, "metric": "val_auc", "rule": "argmax"},
]


def iris_protocol(seed=42):
    X, y = load_iris(return_X_y=True)
    Xb = KBinsDiscretizer(n_bins=5, strategy="kmeans", encode="onehot-dense").fit_transform(X)
    Xa, Xte, ya, yte = train_test_split(Xb, y, test_size=0.2, stratify=y, random_state=seed)
    Xtr, Xva, ytr, yva = train_test_split(Xa, ya, test_size=0.125, stratify=ya,
                                          random_state=seed)
    return Xtr, ytr, Xva, yva, Xte, yte


def test_iris_seed42_fixture():
    Xtr, ytr, Xva, yva, Xte, yte = iris_protocol()
    assert (len(ytr), len(yva), len(yte)) == (105, 15, 30)
    est = NGIClassifier(method="ecart", theta=0.005, min_objects=2, d_term="authors")
    fitted, trace = tune(est, Xtr, ytr, Xva, yva, PLAN)
    lam_step, alpha_step = trace
    # validation AUCs along λ = 100, 10, 1, 0.1 (the scan stops at the drop to 0.85)
    assert lam_step["values"] == [100, 10, 1, 0.1]
    np.testing.assert_allclose(lam_step["scores"], [0.95, 1.0, 1.0, 0.85], atol=1e-9)
    assert lam_step["chosen"] == 1
    costs = [NGIClassifier(method="ecart", theta=0.005, min_objects=2, d_term="authors",
                           lam=lam).fit(Xtr, ytr).expected_cost_ for lam in (100, 10, 1)]
    np.testing.assert_allclose(costs, [2.8, 3.00952, 3.228571], atol=1e-5)
    # ccp α by validation AUC, ties to the smallest α
    np.testing.assert_allclose(alpha_step["scores"], [1, 1, 1, 1, 0.5, 0.5], atol=1e-9)
    assert chosen_params(trace) == {"lam": 1, "ccp_alpha": 1e-5}
    proba = fitted.predict_proba(Xte)
    assert roc_auc_score(label_binarize(yte, classes=[0, 1, 2]), proba) == pytest.approx(
        0.945, abs=1e-9)
    assert fitted.expected_cost_ == pytest.approx(3.228571, abs=1e-6)


def test_paper_d_term_differs_below_the_root_on_iris():
    Xtr, ytr, *_ = iris_protocol()
    kw = dict(method="ecart", theta=0.005, min_objects=2, lam=1)
    paper = NGIClassifier(d_term="paper", **kw).fit(Xtr, ytr)
    authors = NGIClassifier(d_term="authors", **kw).fit(Xtr, ytr)
    assert paper.tree_.feature[0] == authors.tree_.feature[0]
    assert paper.expected_cost_ == pytest.approx(3.009524, abs=1e-6)
    assert authors.expected_cost_ == pytest.approx(3.228571, abs=1e-6)


def test_ngi_iris_config_reproduces_the_fixture_through_the_runner(tmp_path):
    """configs/ngi-iris.yaml: treebench's own split, k-means binarizer and tuning hook."""
    import json
    from pathlib import Path

    from treebench import api
    from treebench.results.store import read_table

    root = Path(__file__).resolve().parents[2]
    s = api.run_experiment(root / "configs" / "ngi-iris.yaml", api.RunOptions(out=tmp_path / "o",
                           progress=False, report=False))
    assert s.exit_code == 0 and s.counts == {"ok": 12}
    table = read_table(tmp_path / "o" / "results.parquet")
    row = table[table["algorithm_label"] == "ECART"].iloc[0]
    assert row["test_roc_auc"] == pytest.approx(0.945, abs=1e-9)
    assert row["expected_tests_train"] == pytest.approx(3.228571, abs=1e-6)
    assert (row["param_lam"], row["param_ccp_alpha"]) == (1, 1e-5)
    cell = json.loads((tmp_path / "o" / "cells" / f"{row['cell_id']}.json").read_text())
    lam_step, alpha_step = cell["solve_info"]["tune_trace"]
    np.testing.assert_allclose(lam_step["scores"], [0.95, 1.0, 1.0, 0.85], atol=1e-9)
    np.testing.assert_allclose(alpha_step["scores"], [1, 1, 1, 1, 0.5, 0.5], atol=1e-9)
    # the untuned sweeps (what the config's expectations read) are the tuning's candidates
    sweep = table[table["algorithm_label"] == "ECART-lam"].set_index("param_lam")
    np.testing.assert_allclose([sweep.loc[v, "val_roc_auc"] for v in lam_step["values"]],
                               lam_step["scores"], atol=1e-12)
    prune = table[table["algorithm_label"] == "ECART-alpha"].set_index("param_ccp_alpha")
    np.testing.assert_allclose([prune.loc[v, "val_roc_auc"] for v in alpha_step["values"]],
                               alpha_step["scores"], atol=1e-12)


@pytest.mark.parametrize("change, match", [
    ({"split": {"kind": "holdout"}}, "train-val-test"),
    ({"tune": [{"param": "gamma", "grid": [1]}]}, "no parameter `gamma`"),
    ({"tune": [{"param": "lam", "grid": [1]}], "params": {"lam": 2}}, "cannot also be set"),
    ({"tune": [{"param": "theta", "grid": [0.1, 2.0]}]}, r"tune\[0\]\.grid`: .*theta"),
    ({"tune": [{"param": "lam", "grid": [1], "rule": "best"}]}, "rule"),
])
def test_bad_tune_configs_are_refused_in_one_sentence(change, match):
    from treebench.config import validate_config
    from treebench.errors import ConfigError

    algo = {"name": "ecart", "params": change.get("params", {}),
            "tune": change.get("tune", [{"param": "lam", "grid": [1, 0.1]}])}
    raw = {"name": "t", "datasets": ["iris"], "binarization": "kmeans", "algorithms": [algo],
           "split": change.get("split", {"kind": "train-val-test"})}
    with pytest.raises(ConfigError, match=match) as err:
        validate_config(raw, source="t.yaml")
    assert "\n" not in str(err.value)
