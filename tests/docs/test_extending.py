"""The recipes of docs/extending.md, run: each example module under docs/examples/ registers
its object the way the page says, and the object then works where treebench uses it."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ._paths import EXAMPLES, ROOT, load


def _binary_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(200, 5)).astype(np.float64)
    y = np.where(X[:, 2] > 0.5, "yes", "no")
    flip = rng.random(200) < 0.1
    return X, np.where(flip, np.where(y == "yes", "no", "yes"), y)


def test_learner_recipe_registers_and_fits_a_valid_tree():
    from treebench.registry import ALGORITHMS, accepts
    from treebench.tree.arrays import check_tree

    load(EXAMPLES / "stump_learner.py")
    entry = ALGORITHMS.get("stump")
    assert accepts(entry, "binary") and not accepts(entry, "numeric")
    X, y = _binary_data()
    est = entry.create().fit(X, y)
    check_tree(est.tree_, n_features=5, X=X, y_index=np.searchsorted(est.classes_, y))
    assert est.tree_.feature[0] == 2  # the informative column
    assert est.score(X, y) >= 0.85
    with pytest.raises(ValueError, match="0/1"):
        entry.create().fit(X + 0.3, y)  # numbers: refused, as the declared inputs say


def test_binarizer_recipe_works_through_make_binarizer():
    import pandas as pd

    from treebench.binarize import make_binarizer

    load(EXAMPLES / "median_binarizer.py")
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0], "b": [10.0, 10.0, 20.0, 30.0, np.nan]})
    b = make_binarizer("median").fit(X)
    assert list(b.get_feature_names_out()) == ["a >= 3", "b >= 10", "b is missing"]
    assert b.transform(X).tolist() == [[0, 1, 0], [0, 1, 0], [1, 1, 0], [1, 1, 0], [1, 0, 1]]


def test_dataset_recipe_loads_through_the_registry():
    from treebench.registry import DATASETS

    load(EXAMPLES / "two_moons_dataset.py")
    ds = DATASETS.get("two-moons").create(n_samples=100, seed=3)
    again = DATASETS.get("two-moons").create(n_samples=100, seed=3)
    assert ds.X.shape == (100, 2) and set(np.unique(ds.y)) == {0, 1}
    assert ds.X.equals(again.X)


def test_metric_recipe_matches_scikit_learn():
    from sklearn.metrics import accuracy_score

    from treebench import TopKClassifier
    from treebench.metrics import Inputs

    mod = load(EXAMPLES / "misclassified_metric.py")
    X, y = _binary_data(1)
    est = TopKClassifier(k=1, max_depth=1).fit(X, y)
    got = mod.MISCLASSIFIED.fn(Inputs(est, X, y))
    assert got == pytest.approx((1 - accuracy_score(y, est.predict(X))) * len(y))
    assert mod.MISCLASSIFIED.columns() == ["train_misclassified", "val_misclassified",
                                           "test_misclassified"]


def test_figure_recipe_draws_in_the_report(tmp_path):
    """A small experiment, then a report with the figure module imported first."""
    config = tmp_path / "tiny.yaml"
    config.write_text(textwrap.dedent("""\
        name: tiny
        datasets: [iris]
        split: {kind: holdout, test_size: 0.3}
        algorithms: [{name: cart, params: {max_depth: [1, 2]}}]
        execution: {n_jobs: 1, backend: sequential}
    """))
    out = tmp_path / "results"
    script = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(EXAMPLES)!r})
        import leaves_figure  # registers the figure kind
        from treebench.api import RunOptions, run_experiment, write_report
        run_experiment({str(config)!r}, RunOptions(out={str(out)!r}, progress=False, report=False))
        write_report({str(out)!r})
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                       timeout=300, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (out / "report" / "figures" / "iris__leaves_by_algorithm.png").is_file()


def test_catalog_recipe_lists_and_validates_a_user_catalog(tmp_path):
    """A catalog entry in a folder of one's own (`TREEBENCH_CATALOG`) and its file in a data
    directory: listed, and a config naming it passes `--dry-run`."""
    data = tmp_path / "data" / "mine"
    data.mkdir(parents=True)
    csv = data / "mine.csv"
    csv.write_text("a,b,label\n" + "".join(f"{i % 7},{i % 3},{'x' if i % 2 else 'y'}\n"
                                          for i in range(60)))
    sha = hashlib.sha256(csv.read_bytes()).hexdigest()
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    (catalog / "mine.yaml").write_text(textwrap.dedent(f"""\
        name: mine
        title: my own data
        task: classification
        format: csv
        header: true
        label: label
        files:
          - path: mine/mine.csv
            role: full
            sha256: {sha}
        shape: [60, 2]
        n_classes: 2
        origin: {{paper: my lab}}
        licence: CC-BY-4.0
    """))
    (tmp_path / "exp.yaml").write_text(
        "name: exp\ndatasets: [mine]\nalgorithms: [{name: cart, params: {max_depth: 2}}]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TREEBENCH_CATALOG": str(catalog),
           "TREEBENCH_DATA_DIR": str(tmp_path / "data"), "TREEBENCH_OFFLINE": "1"}
    cli = [sys.executable, "-c", "from treebench.cli import main; main()"]
    listed = subprocess.run([*cli, "datasets", "list"], capture_output=True, text=True,
                            env=env, cwd=tmp_path, timeout=120, check=False)
    assert listed.returncode == 0 and "mine" in listed.stdout, listed.stderr[-2000:]
    dry = subprocess.run([*cli, "run", "exp.yaml", "--dry-run"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=120, check=False)
    assert dry.returncode == 0, dry.stdout[-2000:] + dry.stderr[-2000:]
