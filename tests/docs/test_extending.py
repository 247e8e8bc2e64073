"""The recipes of docs/extending.md, run: each example module under docs/examples/ registers
its object the way the page says, and the object then works where treebench uses it.

The plug-in tests install each example as a third-party package would: a module plus a
``*.dist-info`` folder (METADATA, entry_points.txt) on a folder put on PYTHONPATH, which
`importlib.metadata.entry_points` discovers. treebench then runs in a subprocess (the CLI:
``treebench run`` and ``treebench report``) and never imports the module by name."""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
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


def test_learner_recipe_declaration_is_read_by_every_consumer():
    """The one `ALGORITHMS.register` call of the recipe: its problem, warm-up, precompile
    step, column and (empty) requirements are what the objectives, the runner, the
    precompile command and the results schema read."""
    from treebench.algorithms.objectives import askable, objective_of, problem_of
    from treebench.execute.fit import warmup_for
    from treebench.execute.precompile import declared_groups
    from treebench.registry import ALGORITHMS
    from treebench.results.schema import learner_columns

    mod = load(EXAMPLES / "stump_learner.py", "treebench_docs_stump_declared")  # registers
    entry = ALGORITHMS.get("stump")
    assert problem_of("stump", entry.parameters()) == "greedy" and askable("stump") == ()
    assert objective_of("stump", entry.parameters()) is None  # greedy: no global objective
    assert warmup_for(entry) is mod.warmup
    step = f"{mod.__name__}:warmup"
    assert entry.precompile == (("other", step),)
    assert any(step in group for group in declared_groups())
    assert entry.available and entry.requires == ()
    assert [c.name for c in entry.columns] == ["stump_feature"]
    assert [c.name for c in learner_columns(["stump"])] == ["stump_feature"]
    X, y = _binary_data()
    assert entry.create().fit(X, y).solve_info_["stump_feature"] == 2


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


# ------------------------------------------------------------------ plug-ins through entry points
_PLUGINS = (  # (example module, entry-point group, name)
    ("stump_learner.py", "treebench.algorithms", "stump"),
    ("median_binarizer.py", "treebench.binarizers", "median"),
    ("misclassified_metric.py", "treebench.metrics", "misclassified"),
    ("two_moons_dataset.py", "treebench.datasets", "two-moons"),
    ("leaves_figure.py", "treebench.figures", "leaves_by_algorithm"),
)


def _install(site, example: str, group: str, name: str) -> None:
    """The example module as a tiny installed package ``toy-<stem>`` in the folder ``site``,
    whose entry point ``name`` of ``group`` names the module."""
    site.mkdir(exist_ok=True)
    module = f"toy_{example.removesuffix('.py')}"
    shutil.copy(EXAMPLES / example, site / f"{module}.py")
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n")


def _treebench(cwd, site, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
           "MPLBACKEND": "Agg", "TREEBENCH_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-c", "from treebench.cli import main; main()", *args],
                       capture_output=True, text=True, env=env, cwd=cwd, timeout=300,
                       check=False)
    if ok:
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


# One experiment uses all five plug-ins (each installed as its own package): the plug-in
# learner and CART on the binarizer's 0/1 columns of a built-in and the plug-in dataset, with
# the plug-in metric's columns and the plug-in figure in the report. Run once for the tests below.
_CONFIG = """\
name: plugins
datasets: [iris, {name: two-moons, params: {n_samples: 120, noise: 0.3}}]
split: {kind: holdout, test_size: 0.25}
binarization: {method: median}
algorithms: [{name: stump}, {name: cart, params: {max_depth: [1, 2]}}]
execution: {n_jobs: 1, backend: sequential}
"""


class _Run:
    def __init__(self, folder):
        self.folder, self.site, self.out = folder, folder / "site", folder / "out"
        with open(self.out / "results.csv", newline="", encoding="utf-8") as f:
            self.rows = list(csv.DictReader(f))
        self.report = (self.out / "report" / "index.html").read_text(encoding="utf-8")

    def of(self, **where) -> list[dict[str, str]]:
        return [r for r in self.rows if all(r[k] == v for k, v in where.items())]


@pytest.fixture(scope="module")
def plugin_run(tmp_path_factory) -> _Run:
    """`treebench run` (then `treebench report`) of the experiment above, plug-ins installed."""
    from .conftest import once_per_session

    def make(folder):
        for plugin in _PLUGINS:
            _install(folder / "site", *plugin)
        (folder / "exp.yaml").write_text(_CONFIG)
        _treebench(folder, folder / "site", "run", "exp.yaml", "--out", "out", "--no-report")
        _treebench(folder, folder / "site", "report", "out")

    return _Run(once_per_session(tmp_path_factory, "plugin-run", make))


def test_learner_plugin_runs_from_its_entry_point(plugin_run):
    stump = plugin_run.of(algorithm_name="stump")
    assert len(stump) == 2 and {r["status"] for r in stump} == {"ok"}
    for r in stump:
        assert r["algorithm_label"] == "stump" and r["n_leaves"] == "2"
        assert r["operations"] != ""  # its solve_info_ reached the shared solver columns
        assert r["stump_feature"] != "" and r["problem"] == "greedy"
    assert float(plugin_run.of(algorithm_name="stump", dataset="iris")[0]["train_accuracy"]) > 0.6
    assert all(r["stump_feature"] == "" for r in plugin_run.of(algorithm_name="cart"))
    assert "stump" in plugin_run.report
    listing = _treebench(plugin_run.folder, plugin_run.site, "algorithms").stdout
    line = next(x for x in listing.splitlines() if "│ stump" in x or x.startswith("stump"))
    assert "greedy" in line and "0/1" in line


def test_binarizer_plugin_runs_from_its_entry_point(plugin_run):
    assert {r["binarizer"] for r in plugin_run.rows} == {"median"}
    assert {r["status"] for r in plugin_run.rows} == {"ok"}
    iris = plugin_run.of(dataset="iris")
    assert {r["n_binary_features"] for r in iris} == {"4"}  # one `x >= median` column a feature
    assert "median" in plugin_run.report


def test_metric_plugin_columns_reach_the_results_table(plugin_run):
    assert len(plugin_run.rows) == 6
    for r in plugin_run.rows:
        for split in ("train", "test"):
            n = int(r[f"n_{split}"])
            wrong = (1 - float(r[f"{split}_accuracy"])) * n
            assert float(r[f"{split}_misclassified"]) == pytest.approx(wrong)
        assert r["val_misclassified"] == ""  # declared, but a holdout split has no val rows
    listed = _treebench(plugin_run.folder, plugin_run.site, "metrics")
    assert "misclassified" in listed.stdout


def test_dataset_plugin_runs_from_its_entry_point(plugin_run):
    moons = [r for r in plugin_run.rows if r["dataset"].startswith("two-moons")]
    assert len(moons) == 3 and {r["status"] for r in moons} == {"ok"}
    assert {int(r["n_train"]) + int(r["n_test"]) for r in moons} == {120}
    assert moons[0]["dataset"] in plugin_run.report


def test_figure_plugin_draws_in_the_report(plugin_run):
    figures = plugin_run.out / "report" / "figures"
    assert (figures / "iris__leaves_by_algorithm.png").is_file()
    assert any(p.name.endswith("__leaves_by_algorithm.png") and p.name.startswith("two-moons")
               for p in figures.iterdir())


def test_broken_plugin_is_listed_not_raised(tmp_path):
    """A plug-in whose module fails to import leaves the built-in learners working."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "toy_broken.py").write_text("raise ImportError('no solver here')\n")
    dist = site / "toy_broken-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy_broken\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[treebench.metrics]\nbroken = toy_broken\n")
    listed = _treebench(tmp_path, site, "metrics")
    assert "accuracy" in listed.stdout
    assert "plug-in metric `broken` could not be imported: ImportError: no solver here" in listed.stdout
