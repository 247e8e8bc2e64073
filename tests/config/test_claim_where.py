"""The ``where`` conditions of ``expect:`` items are checked when the config is read: a
condition that would match every row (an empty operator mapping) or no row by mistake (``.nan``,
an order operator given text, a list or a mapping, a boolean compared with numbers) is one
sentence naming the item and the column, and exit code 2."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.verify import parse_expectations, verify_table

runner = CliRunner()

CONFIG = """\
name: claims
datasets: [iris, wine]
split: {kind: kfold, n_splits: 3}
binarization: [{method: raw}]
algorithms: [{name: cart, params: {max_depth: [1, 2]}}]
execution: {n_jobs: 1, backend: sequential}
expect:
  - name: c1
    source: a paper's table
    metric: test_accuracy
"""


def _dry_run(tmp_path, item: str):
    p = tmp_path / "claims.yaml"
    p.write_text(CONFIG + "    " + item + "\n", encoding="utf-8")
    res = runner.invoke(app, ["run", str(p), "--dry-run", "--out", str(tmp_path / "o")])
    return res, " ".join(res.output.split())


REFUSED = [
    ("{param_max_depth: {}}", "expect[0].where", "where `param_max_depth`: empty condition"),
    ("{dataset: {}}", "expect[0].where", "where `dataset`: empty condition"),
    ("{param_max_depth: {ne: .nan}}", "expect[0].where", "where `param_max_depth`: `.nan`"),
    ("{param_max_depth: {ge: .nan}}", "expect[0].where", "where `param_max_depth`: `.nan`"),
    ("{param_max_depth: .nan}", "expect[0].where", "where `param_max_depth`: `.nan`"),
    ("{param_max_depth: [1, .nan]}", "expect[0].where", "where `param_max_depth`: `.nan`"),
    ("{param_max_depth: {in: [1, .nan]}}", "expect[0].where", "where `param_max_depth`: `.nan`"),
    ('{param_max_depth: {ge: "1"}}', "expect[0].where",
     "where `param_max_depth`: `ge` orders numbers, so it takes a number, not '1'"),
    ("{param_max_depth: {lt: [1, 2]}}", "expect[0].where", "`lt` orders numbers"),
    ("{param_max_depth: {gt: {ge: 2}}}", "expect[0].where", "`gt` orders numbers"),
    ("{param_max_depth: {le: true}}", "expect[0].where", "`le` orders numbers, so it takes a "
     "number, not true"),
    ("{param_max_depth: {eq: {ge: 2}}}", "expect[0].where",
     "where `param_max_depth`: a condition cannot nest inside another"),
    ("{fold: true}", "expect[0].where", "where `fold`: the column holds numbers, not a boolean"),
    ("{param_max_depth: true}", "expect",
     "expect[0] (`c1`): where `param_max_depth` compares true with max_depth"),
    ("{param_max_depth: {in: [2, false]}}", "expect",
     "where `param_max_depth` compares false with max_depth"),
    ("{param_max_depth: {ne: yes}}", "expect", "compares true with max_depth"),
]


@pytest.mark.parametrize(("where", "key", "words"), REFUSED)
def test_a_bad_where_condition_is_refused_when_the_config_is_read(tmp_path, where, key, words):
    res, text = _dry_run(tmp_path, f"where: {where}\n    ge: 0")
    assert res.exit_code == 2, res.output
    assert f"claims.yaml: key `{key}`: " in text
    assert words in text
    assert "Traceback" not in res.output


@pytest.mark.parametrize(("where", "words"), [
    ("{param_max_depth: {}}", "where `param_max_depth`: empty condition"),
    ("{param_max_depth: {ge: .nan}}", "where `param_max_depth`: `.nan`"),
    ("{param_max_depth: on}", "compare.where `param_max_depth` compares true with max_depth"),
])
def test_the_conditions_of_a_comparison_are_checked_too(tmp_path, where, words):
    res, text = _dry_run(tmp_path, f"where: {{param_max_depth: 2}}\n    compare: {{where: {where}}}")
    assert res.exit_code == 2, res.output
    assert words in text


@pytest.mark.parametrize("where", [
    "{param_max_depth: 2}", "{param_max_depth: [1, 2]}", "{param_max_depth: {ge: 1, le: 2.5}}",
    "{param_max_depth: {in: [1, 2], ne: 3}}", "{param_max_depth: null}", '{param_max_depth: "2"}',
    "{dataset: iris}", "{dataset: {ne: wine}}", "{status: ok}",
    "{param_min_samples_leaf: true}",  # not given by the config: no values to compare with
])
def test_good_conditions_still_load(tmp_path, where):
    res, _ = _dry_run(tmp_path, f"where: {where}\n    ge: 0")
    assert res.exit_code == 0, res.output


def test_a_boolean_passes_for_a_parameter_the_config_gives_booleans(tmp_path):
    p = tmp_path / "claims.yaml"
    p.write_text(CONFIG.replace("params: {max_depth: [1, 2]}",
                                "params: {max_depth: [1, 2], flag: [true, false]}")
                 + "    where: {param_flag: true}\n    ge: 0\n", encoding="utf-8")
    from treebench.config.schema import Experiment
    from treebench.utils.safe_yaml import load

    exp = Experiment.model_validate(load(p.read_text()))  # the schema alone: cart has no `flag`
    assert exp.expect[0].where == {"param_flag": True}


def test_text_equal_to_a_number_still_selects_it():
    """``param_max_depth: "2"`` matches the depth 2, as before (values compare as text when
    one is not a number)."""
    table = pd.DataFrame({"dataset": ["iris"] * 2, "param_max_depth": [1, 2],
                          "test_accuracy": [0.5, 0.9], "status": ["ok", "ok"]})
    items = parse_expectations([{"source": "s", "where": {"param_max_depth": "2"},
                                 "metric": "test_accuracy", "ge": 0.8}], "<test>")
    verdict, = verify_table(table, items)
    assert verdict.passed and verdict.measured == pytest.approx(0.9)
