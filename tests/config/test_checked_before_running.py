"""What a config and the command line are checked for before anything runs: a 0/1 learner
on raw features, learners paired only with binarizations they accept, a misspelt key, a bad
sweep flag named as the flag, the data and labels of a dry run, and the dry run's table."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.errors import ConfigError

from runs import tiny_config

runner = CliRunner()


def test_binary_learner_on_raw_features_is_a_config_error(write_config):
    from treebench.config import load_config

    bad = write_config(tiny_config(algorithms=[{"name": "topk", "params": {"k": 1, "max_depth": 2}}]))
    with pytest.raises(ConfigError, match=r"algorithms\[0\].*takes 0/1 features"):
        load_config(bad)


def test_per_algorithm_binarization_pairs_learners_with_inputs_they_accept(write_config):
    from treebench.config.cells import expand_all
    from treebench.config import load_config

    cfg = tiny_config(
        binarization=[{"method": "raw"}, {"method": "quantile", "params": {"max_splits": 4}}],
        algorithms=[{"name": "cart", "params": {"max_depth": 2}},
                    {"name": "topk", "params": {"k": 1, "max_depth": 2}},
                    {"name": "cart", "label": "cart-raw", "params": {"max_depth": 3},
                     "binarization": "raw"}],
        split={"kind": "holdout", "seeds": [0]})
    exp = load_config(write_config(cfg))
    e = expand_all(exp)
    pairs = {(c.algorithm_label, c.binarizer) for c in e.cells}
    assert pairs == {("cart", "raw"), ("cart", "quantile"), ("topk", "quantile"), ("cart-raw", "raw")}
    assert [(s.algorithm, s.binarizer) for s in e.skipped] == [("topk", "raw")]
    assert "needs 0/1 features" in e.skipped[0].reason


def test_misspelt_top_level_key_suggests_the_closest(write_config):
    from treebench.config import load_config

    cfg = tiny_config()
    cfg["algoritms"] = cfg.pop("algorithms")
    with pytest.raises(ConfigError, match="did you mean `algorithms`"):
        load_config(write_config(cfg))
    cfg = tiny_config(limits={"tme": 3})
    with pytest.raises(ConfigError, match="did you mean `time`"):
        load_config(write_config(cfg))


def test_sweep_flag_errors_name_the_flag(write_config, tmp_path):
    path = write_config(tiny_config())
    r = runner.invoke(app, ["sweep", str(path), "--depth", "-1", "--dry-run"])
    assert r.exit_code == 2
    assert "`--depth`" in r.output and "key `" not in r.output
    r = runner.invoke(app, ["sweep", str(path), "--k", "1,2", "--dry-run"])
    assert r.exit_code == 2 and "`--k`" in r.output and "key `" not in r.output
    r = runner.invoke(app, ["sweep", str(path), "--depth", "5..2", "--dry-run"])
    assert r.exit_code == 2 and "`--depth 5..2`" in r.output


def test_dry_run_loads_data_and_checks_labels_without_fitting(write_config, tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,y\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n1,1,x\n2,2,y\n")
    cfg = tiny_config(datasets=[{"path": str(csv), "label": "nope"}], split={"kind": "holdout", "seeds": [0]})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "nope" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o" / "cells").exists()
    cfg = tiny_config(datasets=[{"path": str(csv), "label": "y"}], split={"kind": "holdout", "seeds": [0]})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "data checked: 1" in r.output and not (tmp_path / "o" / "cells").exists()


def test_piped_dry_run_table_is_not_cut_at_80_columns(write_config, tmp_path):
    path = write_config(tiny_config(algorithms=[{"name": "cart", "params": {
        "max_depth": [1, 2], "min_samples_leaf": [1], "criterion": ["entropy"], "ccp_alpha": [0.0]}}]))
    out = subprocess.run([sys.executable, "-m", "treebench.cli", "run", str(path), "--dry-run",
                          "-o", str(tmp_path / "o")], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "80"}, check=True).stdout
    assert "ccp_alpha=0.0, criterion=entropy, max_depth=1, min_samples_leaf=1" in out
    assert max(len(line) for line in out.splitlines()) > 80


def test_lambda_says_which_parameter_it_became(write_config, tmp_path):
    path = write_config(tiny_config())
    r = runner.invoke(app, ["sweep", str(path), "--lambda", "0.0,0.01", "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "--lambda → ccp_alpha (cart)" in r.output


def test_two_labels_for_one_cell_are_refused_before_anything_runs(write_config, tmp_path):
    """The label is no part of a cell's id: a second entry with its own label and a point of
    the first's grid made no cell of its own, and its rows (and a claim about it) were gone."""
    path = write_config(tiny_config(algorithms=[
        {"name": "cart", "label": "shallow", "params": {"max_depth": [1, 2]}},
        {"name": "cart", "label": "baseline", "params": {"max_depth": 2}}]))
    out = tmp_path / "r"
    r = runner.invoke(app, ["run", str(path), "--out", str(out), "-q"])
    assert r.exit_code == 2, r.output
    assert "`shallow` and `baseline` define the same cell" in r.output
    assert "max_depth=2" in r.output and not (out / "cells").exists()
    # the same entry twice (one label) is one cell, as a grid point listed twice is
    same = write_config(tiny_config(algorithms=[
        {"name": "cart", "params": {"max_depth": [1, 2]}},
        {"name": "cart", "params": {"max_depth": 2}}]))
    r = runner.invoke(app, ["run", str(same), "--out", str(tmp_path / "s"), "-q", "--no-report"])
    assert r.exit_code == 0 and len(list((tmp_path / "s" / "cells").glob("*.json"))) == 6


def test_two_sweep_flags_for_one_parameter_are_refused(write_config, tmp_path):
    """`--param k=1 --k 2` ran k=1 while saying `--k → k`: one of two settings of a parameter
    was dropped without a word. Every such pair is refused; different parameters combine."""
    path = write_config(tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 1}}]))
    for flags, said in ((["--param", "max_depth=2", "--depth", "3"], "--depth and --param max_depth"),
                        (["--lambda", "0.1", "--param", "ccp_alpha=0.2"], "--lambda and --param ccp_alpha"),
                        (["--k", "2", "--param", "k=1"], "--k and --param k"),
                        (["--param", "max_depth=1", "--param", "max_depth=2"], "`max_depth` is given twice")):
        r = runner.invoke(app, ["sweep", str(path), *flags, "--dry-run"])
        assert r.exit_code == 2 and said in r.output, (flags, r.output)
    r = runner.invoke(app, ["sweep", str(path), "--depth", "2", "--param", "criterion=gini,entropy",
                            "--dry-run"])
    assert r.exit_code == 0, r.output


def test_a_param_flag_without_a_name_is_refused(write_config):
    """`--param =1` said "`--param ` sets parameter , which none of the config's algorithms
    takes": a blank name in the sentence."""
    path = write_config(tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 1}}]))
    for item in ("=1", " =1,2"):
        r = runner.invoke(app, ["sweep", str(path), "--param", item, "--dry-run"])
        assert r.exit_code == 2 and "names no parameter" in r.output, (item, r.output)


def test_an_empty_item_in_a_sweep_list_is_refused(write_config):
    """`--depth 1,,2` ran depths 1 and 2 as if the empty item were not there (a value left out
    by a typo); `--param` lists are read the same way."""
    path = write_config(tiny_config())
    for flags in (["--depth", "1,,2"], ["--param", "max_depth=1,,2"], ["--depth", "1,2,"]):
        r = runner.invoke(app, ["sweep", str(path), *flags, "--dry-run"])
        assert r.exit_code == 2 and "is empty" in r.output, (flags, r.output)


def test_a_sweep_value_error_names_the_flag_as_written(write_config):
    """`--param k=` said "`--k ` is empty": the alias flag the user did not write, and a blank
    where the values were. An error names `--param NAME=` or the alias flag as written."""
    path = write_config(tiny_config())
    said = {
        ("--param", "k="): "`--param k=` gives no values",
        ("--param", "max_depth=1,,2"): "`--param max_depth=1,,2`: an item between its commas",
        ("--k", ""): "`--k` gives no values",
        ("--depth", "3..1"): "`--depth 3..1`: range `3..1` is empty",
    }
    for flags, text in said.items():
        r = runner.invoke(app, ["sweep", str(path), *flags, "--dry-run"])
        assert r.exit_code == 2 and text in r.output, (flags, r.output)
