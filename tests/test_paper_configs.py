"""The paper configs in configs/: their checks are data (`expect:`), run by `make reproduce`.

The reproductions themselves (Top-k Figure 4's golden values, the greediness hierarchy of
Theorem 2, Figure 2's claims) are `expect:` items of the configs, checked by `treebench verify`
after `make reproduce` runs every config's `ci` profile (in CI, after the tests). What is tested
here is the mechanism on the real configs: every config and profile validates and expands, every
paper config has a `ci` profile with cited expectations, and every expectation selects cells
of its own grid (a misspelt dataset or parameter value would otherwise only fail in CI's
reproduction step). The end-to-end runs are marked slow (`make reproduce` does them in CI).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from treebench import api
from treebench.results.store import read_table

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
PAPER = [p for p in CONFIGS if "\nprofiles:" in p.read_text(encoding="utf-8")]


def _need_data(*rel: str) -> None:
    base = os.environ.get("TREEBENCH_DATA_DIR")
    if not base:
        pytest.skip("TREEBENCH_DATA_DIR is not set")
    for r in rel:
        if not (Path(base) / r).exists():
            pytest.skip(f"{r} is not in the data directory")


def _skeleton(exp) -> pd.DataFrame:
    """One finished row per cell of ``exp`` with made-up metric values (and values of the
    columns its learner declares): enough to see which cells each expectation selects, without
    running anything."""
    from treebench.config.cells import expand
    from treebench.registry import ALGORITHMS
    from treebench.results import schema

    rows = []
    dtypes = schema.dtypes()
    metric_values = {m: 1 if dtypes[m] == "Int64" else 0.5 for m in schema.METRIC_COLUMNS}
    for c in expand(exp):
        row = {"experiment": exp.name, "cell_id": c.id, "dataset": c.dataset, "fold": c.fold,
               "seed": c.seed, "binarizer": c.binarizer, "algorithm_label": c.algorithm_label,
               "algorithm_name": c.algorithm, "status": "ok"}
        row.update(metric_values)
        row.update({col.name: 1 if col.dtype == "Int64" else 0.5
                    for col in ALGORITHMS.get(c.algorithm).columns
                    if col.dtype in ("Int64", "Float64")})
        row.update({f"param_{k}": v for k, v in c.algorithm_params.items()})
        row.update({f"bparam_{k}": v for k, v in c.binarizer_params.items()})
        rows.append(row)
    return schema.conform(pd.DataFrame(rows))


def test_the_paper_configs_are_found():
    names = {p.name for p in PAPER}
    assert {"topk-figure2.yaml", "topk-figure4.yaml", "topk-greediness.yaml"} <= names


@pytest.mark.parametrize("path", PAPER, ids=lambda p: p.name)
@pytest.mark.parametrize("profile", [None, "ci"])
def test_every_expectation_selects_cells_of_its_grid(path, profile):
    from treebench.config import load_config
    from treebench.verify import verify_table

    exp = load_config(path, profile=profile)
    assert exp.expect, f"{path.name} ({profile or 'full'}) states no expectations"
    assert all(e.source.strip() for e in exp.expect)
    verdicts = verify_table(_skeleton(exp), list(exp.expect))
    unmatched = [(v.item, v.reason) for v in verdicts
                 if v.reason.startswith(("no results row", "the results have no column"))
                 or "takes 1 value(s)" in v.reason]
    assert not unmatched, unmatched


@pytest.mark.parametrize("path", PAPER, ids=lambda p: p.name)
def test_every_profile_validates_and_expands(path):
    import yaml

    from treebench.config.cells import expand
    from treebench.config import load_config

    profiles = yaml.safe_load(path.read_text(encoding="utf-8"))["profiles"]
    assert "ci" in profiles
    for name in profiles:
        exp = load_config(path, profile=name)
        assert exp.profile == name and expand(exp)
    # the ci profile is a reduction: never more cells than the full config
    assert len(expand(load_config(path, profile="ci"))) <= len(expand(load_config(path)))


@pytest.mark.slow
def test_greediness_ci_profile_reproduces(tmp_path):
    """What `make reproduce` does for one config (embedded generators, no data files)."""
    from treebench.verify import verify_results

    s = api.run_experiment(ROOT / "configs" / "topk-greediness.yaml", api.RunOptions(profile="ci",
                           out=tmp_path / "g", n_jobs=2, progress=False, report=False))
    assert s.exit_code == 0
    v = verify_results(tmp_path / "g")
    assert v.verdicts and v.passed, [x.row() for x in v.verdicts if not x.passed]


@pytest.mark.slow
@pytest.mark.data
def test_figure4_ci_profile_reproduces(tmp_path):
    _need_data("papers/topk/categorical/dataset_car.csv")
    from treebench.verify import verify_results

    s = api.run_experiment(ROOT / "configs" / "topk-figure4.yaml", api.RunOptions(profile="ci",
                           out=tmp_path / "f4", n_jobs=2, progress=False))
    assert s.exit_code == 0 and s.counts == {"ok": 150}
    v = verify_results(tmp_path / "f4")
    assert v.verdicts and v.passed, [x.row() for x in v.verdicts if not x.passed]
    figs = list((tmp_path / "f4" / "report" / "figures").glob("*train_test_accuracy_vs_k.png"))
    assert len(figs) == 3


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_validates_and_expands(path):
    from treebench.config.cells import expand
    from treebench.config import load_config

    exp = load_config(path)
    cells = expand(exp)
    assert cells and len({c.id for c in cells}) == len(cells)


def test_quickstart_runs_end_to_end_on_embedded_data(tmp_path, monkeypatch):
    """What `make run` promises: embedded data only, every cell ok, tables and report written."""
    monkeypatch.delenv("TREEBENCH_DATA_DIR", raising=False)
    s = api.run_experiment(ROOT / "configs" / "quickstart.yaml",
                           api.RunOptions(out=tmp_path / "qs", progress=False))
    assert s.exit_code == 0 and s.counts == {"ok": s.n_cells} and s.n_cells == 170
    # the four non-greedy families run beside CART, on the same 0/1 columns
    assert {"topk", "dpdt", "gosdt", "ecart", "cart"} <= set(
        read_table(tmp_path / "qs" / "results.parquet").query("binarizer == 'threshold-guess'").algorithm_label)
    for rel in ("results.parquet", "results.csv", "manifest.json", "report/index.html", "report/summary.md"):
        assert (tmp_path / "qs" / rel).is_file(), rel
    df = read_table(tmp_path / "qs" / "results.parquet")
    cart = df[(df.algorithm_label == "cart") & (df.binarizer == "raw")]
    # deeper CART fits the training folds at least as well
    by_depth = cart.groupby(cart["param_max_depth"].astype(int))["train_accuracy"].mean()
    assert by_depth.is_monotonic_increasing


@pytest.mark.data
def test_gosdt_paper_cart_min_samples_leaf_is_ceil_lambda_n():
    """configs/gosdt-paper.yaml: CART's min_samples_leaf = ceil(λ n) with n the training-fold
    size, as the authors did (McTavish et al. 2022, §5), on every fold of every dataset, with λ
    the regularization of the GOSDT entry restricted to the same dataset."""
    import math

    from treebench.config import load_config
    from treebench.data.base import load_dataset

    _need_data("papers/gosdt/compas.csv")
    exp = load_config(ROOT / "configs" / "gosdt-paper.yaml")
    lam = {d: a.params["regularization"] for a in exp.algorithms if a.name == "gosdt"
           for d in a.datasets}
    leaf = {d: a.params["min_samples_leaf"] for a in exp.algorithms if a.name == "cart"
            for d in a.datasets}
    assert set(lam) == set(leaf) == set(exp.dataset_names())
    for i, name in enumerate(exp.dataset_names()):
        n = len(load_dataset(name).y)
        sp = exp.split_for(i)
        train_sizes = {n} if sp.kind == "full" else {n - n // sp.n_splits, n - n // sp.n_splits - 1}
        assert {math.ceil(lam[name] * t - 1e-9) for t in train_sizes} == {leaf[name]}, name


@pytest.mark.slow
def test_ngi_ci_profiles_reproduce(tmp_path):
    """What `make reproduce` does for the NGI configs (iris is scikit-learn's; tic-tac-toe needs
    the data directory): every expectation holds, and the report draws the λ trade-off figure."""
    _need_data()
    from treebench.verify import verify_results

    for name, n_cells in (("ngi-iris", 12), ("ngi-table", 200)):
        out = tmp_path / name
        s = api.run_experiment(ROOT / "configs" / f"{name}.yaml", api.RunOptions(profile="ci", out=out,
                               n_jobs=2, progress=False))
        assert s.exit_code == 0 and s.counts == {"ok": n_cells}
        v = verify_results(out)
        assert v.verdicts and v.passed, [x.row() for x in v.verdicts if not x.passed]
        assert list((out / "report" / "figures").glob("iris__lambda_tradeoff.png"))
