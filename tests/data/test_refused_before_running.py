"""Data every cell would fail on is refused before anything runs, in one sentence naming the
dataset and column, exit code 2 (they used to run and fail every cell, exit code 3):

* a label of numbers that are not whole (one value per row): scikit-learn's target check,
  which every classifier runs, refuses it as "continuous";
* a feature value beyond the float32 range (about 3.4e38) for a learner that reads its
  features as float32 (scikit-learn's trees and forests): it became infinite inside the
  learner, whose error said the data held infinity, which it did not.
"""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from treebench.cli import app

runner = CliRunner()


def _run(tmp_path, rows: list[str], algorithms: str, binarization: str = "raw", *extra):
    data = tmp_path / "d.csv"
    data.write_text("a,b,y\n" + "\n".join(rows) + "\n")
    cfg = tmp_path / "d.yaml"
    cfg.write_text(f"name: d\ndatasets: [{{path: {data}, label: y}}]\n"
                   f"algorithms: {algorithms}\nbinarization: {binarization}\n"
                   "split: {kind: kfold, n_splits: 2}\n"
                   "execution: {n_jobs: 1, backend: sequential}\n")
    return runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--no-report",
                               *extra])


def _continuous(n=30):
    rng = np.random.default_rng(1)
    return [f"{rng.normal():.3f},{rng.normal():.3f},{rng.normal():.4f}" for _ in range(n)]


@pytest.mark.parametrize("dry", [True, False])
def test_a_continuous_label_is_refused(tmp_path, dry):
    res = _run(tmp_path, _continuous(), "[{name: cart, params: {max_depth: 2}}]", "raw",
               *(["--dry-run"] if dry else []))
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert ("dataset `d.csv`: the label holds numbers that are not whole (30 distinct values "
            "in 30 rows") in text
    assert "Unknown label type" not in text and "Traceback" not in res.output
    assert not (tmp_path / "o" / "results.parquet").exists()


def test_whole_numbers_as_floats_are_classes(tmp_path):
    rows = [f"{i},{i % 3},{float(i % 2)}" for i in range(20)]
    res = _run(tmp_path, rows, "[{name: cart, params: {max_depth: 2}}]", "raw", "--dry-run")
    assert res.exit_code == 0, res.output


def _huge(n=30):
    rng = np.random.default_rng(2)
    return [f"{rng.uniform(1, 9):.3f}e300,{rng.normal():.3f},{'ny'[i % 2]}" for i in range(n)]


@pytest.mark.parametrize("learner", ["cart", "random-forest"])
@pytest.mark.parametrize("dry", [True, False])
def test_values_beyond_float32_are_refused_for_float32_learners(tmp_path, learner, dry):
    res = _run(tmp_path, _huge(), f"[{learner}]", "raw", *(["--dry-run"] if dry else []))
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "dataset `d.csv`: column `a` holds " in text
    assert (f"beyond the float32 range (±3.403e+38) in which `{learner}` reads `raw` "
            "features") in text
    assert "infinity" not in text and "Traceback" not in res.output


def test_the_same_values_binarized_are_fine(tmp_path):
    res = _run(tmp_path, _huge(), "[{name: cart, params: {max_depth: 1}}]",
               "{method: quantile, params: {max_splits: 4}}", "--dry-run")
    assert res.exit_code == 0, res.output
