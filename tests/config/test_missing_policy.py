"""``missing:`` of a dataset entry is a policy (error, indicator, impute, drop-rows) or a list
of tokens read as missing: a misspelt policy is refused with a did-you-mean, where it used to
be read as a missing-value token and run under the default policy with exit code 0."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from treebench.cli import app

runner = CliRunner()


def _config(tmp_path, missing: str):
    data = tmp_path / "mv.csv"
    data.write_text("a,b,y\n" + "".join(f"{i},{'' if i % 4 == 0 else i % 3},{'yn'[i % 2]}\n"
                                        for i in range(20)))
    cfg = tmp_path / "mv.yaml"
    cfg.write_text(f"name: mv\ndatasets: [{{path: {data}, label: y, missing: {missing}}}]\n"
                   "algorithms: [{name: cart, params: {max_depth: 1}}]\n"
                   "split: {kind: kfold, n_splits: 2}\n"
                   "execution: {n_jobs: 1, backend: sequential}\n")
    return cfg


@pytest.mark.parametrize(("word", "hint"), [
    ("drop_rows", "(did you mean `drop-rows`?)"),
    ("Error", "(did you mean `error`?)"),
    ("IMPUTE", "(did you mean `impute`?)"),
    ("indicater", "(did you mean `indicator`?)"),
    ("bogus", "`missing_tokens: [...]`"),
])
def test_a_word_that_is_no_policy_is_refused(tmp_path, word, hint):
    res = runner.invoke(app, ["run", str(_config(tmp_path, word)), "--dry-run",
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "mv.yaml: key `datasets[0].missing`: not a missing-value policy" in text
    assert hint in text and "use one of error, indicator, impute, drop-rows" in text
    assert "Traceback" not in res.output


def test_a_catalog_dataset_gets_the_same_check(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: c\ndatasets: [{name: iris, missing: drop_rows}]\nalgorithms: [cart]\n")
    res = runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "(did you mean `drop-rows`?)" in res.output, res.output


@pytest.mark.parametrize("missing", ["drop-rows", "impute", "[NA]"])
def test_policies_and_the_token_list_still_run(tmp_path, missing):
    res = runner.invoke(app, ["run", str(_config(tmp_path, missing)), "--dry-run",
                              "--out", str(tmp_path / "o")])
    assert res.exit_code == 0, res.output
