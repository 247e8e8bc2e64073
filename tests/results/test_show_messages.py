"""What `treebench show` says when there is nothing to show: a folder that is no results folder,
and a cell whose learner keeps no single tree (an ensemble) or that did not finish."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results import show as shown
from treebench.results.store import read_table

from runs import run_folder, tiny_config

FOREST = {"name": "random-forest", "params": {"n_estimators": 3, "max_depth": [2]}}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2},
                      algorithms=[{"name": "cart", "params": {"max_depth": [1]}}, FOREST])
    return run_folder(tmp_path_factory.mktemp("show"), cfg)


def _show(*args) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["show", *map(str, args)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, " ".join(r.output.split())


@pytest.mark.parametrize("make, what", [
    (lambda tmp: tmp / "nonexist", "does not exist"),
    (lambda tmp: (tmp / "a.txt", (tmp / "a.txt").write_text("x"))[0], "is not a folder"),
    (lambda tmp: tmp, "holds no cells/ folder, so it is not a results folder"),
])
def test_a_folder_that_holds_no_results_is_named_as_such(tmp_path, make, what):
    d = make(tmp_path)
    code, out = _show(d, "0304")
    assert code == 2 and f"{d} {what}" in out and "treebench run" in out, out
    assert "no cell with id" not in out


def test_an_unknown_id_in_a_results_folder_is_still_an_unknown_id(folder):
    code, out = _show(folder, "0304")
    assert code == 2 and "no cell with id `0304`" in out, out


@pytest.mark.parametrize("format", ["text", "dot", "json"])
def test_an_ensemble_cell_is_said_to_have_no_single_tree(folder, format):
    df = read_table(folder / "results.parquet")
    cid = df.loc[df["algorithm_label"] == "random-forest", "cell_id"].iloc[0]
    code, out = _show(folder, cid, "--format", format)
    assert code == 2 and "random-forest is an ensemble of trees" in out, out
    assert "no tree to show" in out
    assert "time limit" not in out and "status ok" not in out, out


def test_a_cell_that_did_not_finish_says_why_it_has_no_tree():
    row = {"status": "timeout", "algorithm_label": "gosdt", "time_limit": 5.0}
    assert "timed out (time limit 5" in shown.no_tree("ab12", row)
    row = {"status": "error", "algorithm_label": "cart", "error": "ValueError: bad"}
    text = shown.no_tree("ab12", row)
    assert "status error (ValueError: bad)" in text and "time limit" not in text
    row = {"status": "ok", "algorithm_label": "mine", "problem": "unstated"}
    assert "mine keeps no single tree" in shown.no_tree("ab12", row)


def test_a_label_filter_that_matches_no_cell_points_to_the_learner_column(tmp_path):
    """`--where algorithm=cart` selects by an entry's label; when the cart entries carry
    labels it lists no cell, and says that `algorithm_name=cart` selects by learner."""
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2},
                      algorithms=[{"name": "cart", "label": "CART, deep",
                                   "params": {"max_depth": [2]}}])
    folder = run_folder(tmp_path, cfg)
    r = CliRunner().invoke(app, ["cells", str(folder), "--where", "algorithm=cart"])
    out = " ".join(r.output.split())
    assert r.exit_code == 0 and "0 cell(s)" in out, out
    assert "--where algorithm_name=cart` selects by learner" in out, out
    r = CliRunner().invoke(app, ["cells", str(folder), "--where", "algorithm=gosdt"])
    assert "selects by learner" not in r.output, r.output
    r = CliRunner().invoke(app, ["cells", str(folder), "--where", "algorithm_name=cart"])
    assert "2 cell(s)" in r.output and "selects by learner" not in r.output, r.output
