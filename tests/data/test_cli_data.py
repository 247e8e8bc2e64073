"""`treebench binarizers` and `treebench datasets info PATH` through typer's runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from treebench.cli import app

runner = CliRunner()

CSV = "age,colour,income,y\n31,red,2.5,yes\n45,blue,3.5,no\n52,red,,yes\n23,green,1.0,no\n38,blue,4.0,yes\n"


def test_binarizers_command_lists_every_binarizer_and_its_options():
    from treebench.registry import BINARIZERS

    r = runner.invoke(app, ["binarizers"])
    assert r.exit_code == 0, r.output
    for e in BINARIZERS:
        assert e.name in r.output
    assert "max_splits" in r.output and "max_columns" in r.output and "fit_on" in r.output


def test_unknown_binarizer_message_points_to_a_command_that_exists(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: x\ndatasets: [iris]\nalgorithms: [cart]\nbinarization: quantil\n")
    r = runner.invoke(app, ["run", str(cfg), "--dry-run"])
    assert r.exit_code == 2 and "treebench binarizers" in r.output
    assert runner.invoke(app, ["binarizers", "--help"]).exit_code == 0


def test_datasets_info_on_a_local_file(tmp_path):
    p = tmp_path / "people.csv"
    p.write_text(CSV)
    r = runner.invoke(app, ["datasets", "info", str(p)])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "5 rows, 3 features (2 numeric, 0 binary, 1 categorical), 1 missing values" in out
    assert "label: 2 classes (no: 2, yes: 3)" in out
    assert "colour" in out and "categorical" in out


def test_datasets_info_with_a_binarization(tmp_path):
    p = tmp_path / "people.csv"
    p.write_text(CSV)
    r = runner.invoke(app, ["datasets", "info", str(p), "--binarization", "quantile", "--param", "max_splits=2"])
    assert r.exit_code == 0, r.output
    # income's missing value gives it a third column, `income is missing` (docs/missing-values.md)
    assert "binarization quantile (max_splits=2): 8 binary columns" in r.output
    lines = {ln.split()[0]: ln.split()[1] for ln in r.output.splitlines() if ln.startswith("  ")}
    assert lines == {"age": "2", "colour": "3", "income": "3"}
    j = runner.invoke(app, ["datasets", "info", str(p), "--json", "--binarization", "quantile", "--param", "max_columns=4"])
    info = json.loads(j.output)
    assert info["binarization"]["per_feature"] == {"age": 2, "colour": 3, "income": 3}
    assert info["n_samples"] == 5 and info["class_balance"] == {"no": 2, "yes": 3}


def test_datasets_info_file_options_and_errors(tmp_path):
    p = tmp_path / "people.csv"
    p.write_text(CSV)
    r = runner.invoke(app, ["datasets", "info", str(p), "--label", "colour", "--categorical", "y"])
    assert r.exit_code == 0, r.output
    assert "label: 3 classes (blue: 2, green: 1, red: 2)" in r.output
    r = runner.invoke(app, ["datasets", "info", str(p), "--binarization", "quantile", "--param", "max_columns=1"])
    assert r.exit_code == 2 and "smaller than the 2 numeric features" in r.output and "Traceback" not in r.output
    r = runner.invoke(app, ["datasets", "info", str(tmp_path / "missing.csv")])
    assert r.exit_code == 2 and "does not exist" in r.output
    r = runner.invoke(app, ["datasets", "info", "iris", "--label", "x"])
    assert r.exit_code == 2 and "local files only" in r.output
    r = runner.invoke(app, ["datasets", "info", str(p), "--param", "max_splits=2"])
    assert r.exit_code == 2 and "--binarization" in r.output


FILE_KEYS = ("path", "format", "label", "categorical", "delimiter", "header", "missing",
             "missing_tokens", "drop_columns", "skip_lines", "drop_trailing_lines", "label_map",
             "test_path", "name", "bad_values", "unseen_test_labels")


def test_the_keys_of_a_local_file_are_listed_and_checked(tmp_path):
    """The `file` loader's keys (its options record) are what `treebench datasets` lists, what
    a config's `params` may set, and each bad one is one sentence with exit 2."""
    from treebench.registry import DATASETS

    assert tuple(DATASETS.get("file").parameters()) == FILE_KEYS
    r = runner.invoke(app, ["datasets", "list", "--tag", "user"])
    assert r.exit_code == 0, r.output
    assert "drop_trailing_lines=0" in r.output and "unseen_test_labels" in r.output
    p = tmp_path / "people.csv"
    p.write_text(CSV)
    r = runner.invoke(app, ["datasets", "info", str(p), "--option", "bogus=1"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "dataset `file` has no parameter `bogus`; its parameters are: " + ", ".join(FILE_KEYS) in r.output
    cfg = tmp_path / "c.yaml"
    for params, words in (("bogus: 1", "`datasets[0].params.bogus`: dataset `file` has no parameter"),
                          ("bad_values: maybe", "`bad_values` must be error or missing, got 'maybe'")):
        cfg.write_text(f"name: x\ndatasets: [{{name: file, params: {{path: {p}, label: y, {params}}}}}]\n"
                       "algorithms: [cart]\nsplit: {kind: holdout}\n")
        r = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output


def test_run_summary_says_which_split_each_dataset_got(tmp_path):
    tr = tmp_path / "tr.csv"
    te = tmp_path / "te.csv"
    tr.write_text("a,y\n1,p\n2,q\n3,p\n4,q\n5,p\n6,q\n")
    te.write_text("a,y\n1.5,p\n2.5,q\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
name: splits
datasets:
  - iris
  - mine: {{path: {tr}, test_path: {te}}}
split: {{kind: kfold, n_splits: 2}}
binarization: raw
algorithms: [{{name: cart, params: {{max_depth: 1}}}}]
execution: {{n_jobs: 1, backend: sequential}}
""")
    r = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    assert "split:   iris: kfold (2 folds x 1 seed)" in r.output
    assert "split:   mine: predefined (its own test file)" in r.output


def test_datasets_list_says_where_each_dataset_is_or_where_to_get_it(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from treebench.cli import app

    monkeypatch.setenv("TREEBENCH_DATA_DIR", str(tmp_path))  # nothing found here
    r = CliRunner().invoke(app, ["datasets", "list", "--tag", "dl85"])
    assert r.exit_code == 0 and "https://" in r.output, r.output
    r = CliRunner().invoke(app, ["datasets", "fetch"])
    assert r.exit_code == 2 and "--all" in r.output


def test_a_missing_file_without_a_public_download_names_where_to_get_it(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    from treebench.cli import app

    monkeypatch.setenv("TREEBENCH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("TREEBENCH_OFFLINE", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: m\ndatasets: [gosdt/monk1]\nsplit: {kind: kfold, n_splits: 2}\n"
                   "binarization: {method: none}\nalgorithms: [{name: cart}]\n")
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "get it from https://github.com/ubc-systopia/gosdt-guesses" in r.output, r.output


def test_line_fix_options_take_one_value_or_a_list_and_bad_ones_are_one_sentence(tmp_path):
    """`--option drop_columns=id` dropped the columns `i` and `d` (the letters of `id`) and kept
    `id`; `skip_lines=12` and `label_map=...` were Python tracebacks."""
    p = tmp_path / "ids.csv"
    p.write_text("id,i,d,y\n" + "".join(f"{k},{k % 3}.5,{k % 5}.25,{k % 2}\n" for k in range(30)))
    r = runner.invoke(app, ["datasets", "info", str(p), "--option", "drop_columns=id"])
    assert r.exit_code == 0 and "2 features" in r.output, r.output
    r = runner.invoke(app, ["datasets", "info", str(p), "--option", "skip_lines=12"])
    assert r.exit_code == 0 and "29 rows" in r.output, r.output
    for option, words in (("label_map={0:1}", "`label_map` maps labels to labels"),
                          ("skip_lines=[12]", "`skip_lines` takes line numbers"),
                          ("skip_lines=0", "numbers lines from 1"),
                          ("drop_trailing_lines=-5", "a count of 0 or more")):
        r = runner.invoke(app, ["datasets", "info", str(p), "--option", option])
        assert r.exit_code == 2 and words in r.output and "Traceback" not in r.output, r.output


def test_a_long_delimiter_and_an_unknown_name_are_said_plainly(tmp_path):
    """A two-character delimiter gave pandas' engine-fallback warning as the error; an unknown
    dataset name printed its newline raw and pointed at `treebench datasets` (a group)."""
    p = tmp_path / "d.csv"
    p.write_text("a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n")
    r = runner.invoke(app, ["datasets", "info", str(p), "--delimiter", "ab"])
    assert r.exit_code == 2 and "delimiter 'ab' is 2 characters" in r.output, r.output
    r = runner.invoke(app, ["datasets", "info", "a\nb"])
    assert r.exit_code == 2 and "unknown dataset `a\\nb`" in r.output, r.output
    assert "`treebench datasets list`" in r.output
