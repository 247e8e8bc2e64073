"""`expect:` items, `treebench verify` and profiles on small synthetic result tables.

Every check kind passes and fails on tables whose numbers are set by hand; a failing expectation
gives exit code 5 and names the item; missing cells fail their expectations with the reason;
a profile overrides exactly what it names; a config without expectations verifies trivially.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.config import load_config
from treebench.errors import ConfigError
from treebench.config.expectations import Expectation
from treebench.results import schema, store
from treebench.verify import EXIT_FAILED, measure, select, verify_table

# test accuracy by (dataset, k) over three seeds: a: 0.60/0.70/0.80 (+0.01 per seed),
# b: 0.50/0.65/0.60; train accuracy rises with k on both
ACC = {("a", 1): 0.60, ("a", 2): 0.70, ("a", "all"): 0.80,
       ("b", 1): 0.50, ("b", 2): 0.65, ("b", "all"): 0.60}


def table(failed: dict | None = None) -> pd.DataFrame:
    """(dataset, k, seed) rows; ``failed`` maps (dataset, k, seed) to a status."""
    rows = []
    for (ds, k), acc in ACC.items():
        for seed in range(3):
            st = (failed or {}).get((ds, k, seed), "ok")
            has_value = st == "ok" or st == "timeout"  # an anytime tree on timeout
            rows.append({
                "experiment": "x", "cell_id": f"{ds}-{k}-{seed}", "dataset": ds,
                "algorithm": "topk", "seed": seed, "fold": 0, "status": st,
                "error": None if st == "ok" else f"{st} happened",
                "test_accuracy": acc + 0.01 * seed if has_value else None,
                "train_accuracy": 0.7 + 0.05 * (3 if k == "all" else k) if has_value else None,
                "n_leaves": 4 * (8 if k == "all" else k) if has_value else None,
                "param_k": k, "param_max_depth": 3,
            })
    return schema.conform(pd.DataFrame(rows))


def E(**kw) -> Expectation:
    kw.setdefault("source", "test")
    kw.setdefault("metric", "test_accuracy")
    return Expectation.model_validate(kw)


def one(t: pd.DataFrame, **kw):
    (v,) = verify_table(t, [E(**kw)])
    return v


# ----------------------------------------------------------------------------- selections
def test_where_values_lists_and_operators():
    t = table()
    assert len(select(t, {"dataset": "a"})) == 9
    assert len(select(t, {"param_k": 1})) == 6
    assert len(select(t, {"param_k": "all"})) == 6
    assert len(select(t, {"param_k": [1, "all"]})) == 12
    assert len(select(t, {"param_k": {"ge": 2}})) == 6  # "all" is no number: not >= 2
    assert len(select(t, {"seed": {"in": [0, 2]}, "dataset": {"ne": "b"}})) == 6
    assert len(select(t, {"label": "topk"})) == 18  # label stands for the algorithm column


def test_aggregates_and_stages_across_columns():
    t = table()
    w = {"dataset": "a", "param_k": 1}
    assert measure(t, w, "test_accuracy", "mean", {}, "fail")[0] == pytest.approx(0.61)
    assert measure(t, w, "test_accuracy", "median", {}, "fail")[0] == pytest.approx(0.61)
    assert measure(t, w, "test_accuracy", "min", {}, "fail")[0] == pytest.approx(0.60)
    assert measure(t, w, "test_accuracy", "max", {}, "fail")[0] == pytest.approx(0.62)
    assert measure(t, w, "test_accuracy", "count", {}, "fail")[0] == 3
    # mean over datasets of each dataset's mean, then the best k
    v, _ = measure(t, {"param_k": [1, 2]}, "test_accuracy", "mean",
                   {"dataset": "mean", "param_k": "max"}, "fail")
    assert v == pytest.approx((0.71 + 0.66) / 2)
    v, _ = measure(t, {}, "test_accuracy", "mean", {"dataset": "min"}, "fail")
    assert v == pytest.approx((0.5 + 0.65 + 0.6) / 3 + 0.01)


# ----------------------------------------------------------------------------- each check kind
@pytest.mark.parametrize(("kw", "passes"), [
    ({"value": 0.61, "abs": 0.001}, True),
    ({"value": 0.615, "abs": 0.001}, False),
    ({"value": 0.62, "rel": 0.02}, True),   # |0.61 - 0.62| <= 0.0124
    ({"value": 0.65, "rel": 0.02}, False),
    ({"value": 0.61}, True),                 # no tolerance: equal up to rounding
    ({"ge": 0.6}, True),
    ({"ge": 0.62}, False),
    ({"le": 0.62}, True),
    ({"le": 0.6}, False),
    ({"ge": 0.6, "le": 0.62}, True),
    ({"ge": 0.611, "le": 0.62}, False),
])
def test_value_and_bound_checks(kw, passes):
    v = one(table(), where={"dataset": "a", "param_k": 1}, **kw)
    assert v.passed is passes, v
    assert v.measured == pytest.approx(0.61)
    if not passes:
        assert v.reason


@pytest.mark.parametrize(("compare", "passes"), [
    ({"where": {"param_k": 1}}, True),                           # 0.71 >= 0.61
    ({"where": {"param_k": 1}, "offset": 0.2}, False),           # 0.71 >= 0.81 fails
    ({"where": {"param_k": "all"}, "op": "le"}, True),           # 0.71 <= 0.81
    ({"where": {"param_k": "all"}, "op": "ge", "offset": -0.1}, True),
    ({"where": {"param_k": "all"}, "op": "ge"}, False),
    ({"where": {"param_k": 1}, "op": "eq", "offset": 0.1, "tol": 1e-9}, True),
    ({"where": {"param_k": 1}, "op": "eq", "tol": 0.05}, False),
    ({"where": {"dataset": "b"}, "op": "ge"}, True),             # 0.71 >= 0.66
    ({"where": {"dataset": "b"}, "metric": "train_accuracy", "op": "le"}, True),
])
def test_compare_checks(compare, passes):
    v = one(table(), where={"dataset": "a", "param_k": 2}, compare=compare)
    assert v.passed is passes, v
    assert v.difference is not None


def test_a_compare_verdict_names_only_the_values_the_results_hold():
    # written for a full grid (k in 1, 2, 4, 8); the results ran k in 1, 2, all
    v = one(table(), where={"param_k": "all"}, across={"dataset": "mean"},
            compare={"where": {"param_k": [1, 2, 4, 8]}, "op": "le",
                     "across": {"dataset": "mean", "param_k": "max"}})
    assert "param_k∈{1,2}" in v.expected_text and "4" not in v.expected_text.split("at")[-1]


def test_compare_with_a_null_drops_a_key_and_reduces_across():
    # k = all no better than the best small k, averaged over datasets: (0.81 + 0.61) / 2 = 0.71
    # against max(mean k=1 0.56, mean k=2 0.685) = 0.685
    kw = {"where": {"param_k": "all"}, "across": {"dataset": "mean"},
          "compare": {"where": {"param_k": [1, 2]}, "across": {"dataset": "mean", "param_k": "max"},
                      "op": "le"}}
    v = one(table(), **kw)
    assert not v.passed and v.difference == pytest.approx(0.71 - 0.685)
    kw["compare"]["offset"] = 0.03
    assert one(table(), **kw).passed
    # a null in compare.where removes the item's own condition on that column
    v = one(table(), where={"dataset": "a", "param_k": 2},
            compare={"where": {"dataset": None}, "op": "ge"})
    assert v.passed and v.expected_text.startswith("≥ 0.6850")


@pytest.mark.parametrize(("kw", "passes"), [
    ({"metric": "train_accuracy", "where": {"dataset": "a"}}, True),
    ({"where": {"dataset": "a"}}, True),                    # 0.61, 0.71, 0.81
    ({"where": {"dataset": "b"}}, False),                   # 0.51, 0.66, 0.61: drops at "all"
    ({"where": {"dataset": "b"}, "tol": 0.05}, True),
    ({"where": {"dataset": "b"}, "direction": "decreasing"}, False),
    ({"metric": "n_leaves", "where": {"dataset": "b"}, "direction": "increasing"}, True),
])
def test_monotone_checks(kw, passes):
    kw = dict(kw)
    mono = {"along": "param_k"}
    for key in ("tol", "direction"):
        if key in kw:
            mono[key] = kw.pop(key)
    v = one(table(), monotone=mono, **kw)
    assert v.passed is passes, v
    if not passes:
        assert "param_k" in v.reason


def test_per_gives_one_verdict_per_group_and_names_it():
    vs = verify_table(table(), [E(name="k=all beats 0.7", where={"param_k": "all"}, per=["dataset"],
                                  ge=0.7)])
    assert [(v.item, v.passed) for v in vs] == [("k=all beats 0.7 [dataset=a]", True),
                                                ("k=all beats 0.7 [dataset=b]", False)]


def test_count_of_a_status():
    t = table({("a", "all", 1): "timeout", ("b", "all", 2): "error"})
    assert one(t, where={"status": "timeout"}, agg="count", le=0).passed is False
    assert one(t, where={"status": ["timeout", "error"]}, agg="count", value=2).passed
    assert one(t, where={"status": "oom"}, agg="count", le=0).passed is False  # empty selection


def test_a_count_fails_when_its_cells_did_not_finish():
    """`agg: count` counted the rows it selected, placeholders of cells without a result
    included: a config's "4 cells" claim passed with every cell file deleted. Like every other
    claim it fails on cells that did not finish, counts the finished ones with `missing:
    ignore`, and counts cells by their status when it selects by status."""
    t = table({("a", "all", 1): "missing", ("a", "all", 2): "error"})
    sel = {"dataset": "a", "param_k": "all"}
    v = one(t, where=sel, agg="count", value=3)
    assert not v.passed and "2 of 3 selected cells did not finish" in v.reason, v.reason
    assert "missing 1" in v.reason and "error 1" in v.reason
    assert one(t, where=sel, agg="count", value=1, missing="ignore").passed
    assert one(t, where={"status": ["missing", "error"]}, agg="count", value=2).passed


# ----------------------------------------------------------------------------- missing cells
def test_missing_cells_fail_their_expectations_with_the_reason():
    t = table({("a", "all", 1): "timeout", ("a", "all", 2): "crashed"})
    v = one(t, where={"dataset": "a", "param_k": "all"}, ge=0.0)
    assert not v.passed and v.measured is None
    assert "2 of 3 selected cells did not finish" in v.reason and "timeout 1" in v.reason
    # the relation fails too when the *other* side lost cells
    v = one(t, where={"dataset": "a", "param_k": 1}, compare={"where": {"param_k": "all"}, "op": "le"})
    assert not v.passed and "did not finish" in v.reason
    # monotone along k: the k = all point is missing
    v = one(t, where={"dataset": "a"}, monotone={"along": "param_k"})
    assert not v.passed and "did not finish" in v.reason
    # unaffected selections still pass
    assert one(t, where={"dataset": "a", "param_k": 1}, ge=0.6).passed


def test_missing_ignore_and_anytime():
    t = table({("a", "all", 1): "timeout", ("a", "all", 2): "crashed"})
    w = {"dataset": "a", "param_k": "all"}
    v = one(t, where=w, missing="ignore", value=0.80, abs=1e-9)
    assert v.passed  # only seed 0 is left
    v = one(t, where=w, missing="anytime", ge=0)
    assert not v.passed and "crashed 1" in v.reason and "timeout" not in v.reason
    t2 = table({("a", "all", 1): "timeout"})
    v = one(t2, where=w, missing="anytime", value=0.81, abs=1e-9)
    assert v.passed  # the timed-out cell's anytime tree counts


def test_empty_selection_and_unknown_column_fail_with_the_reason():
    v = one(table(), where={"dataset": "zzz"}, ge=0)
    assert not v.passed and "no results row matches dataset=zzz" in v.reason
    v = one(table(), where={"param_lambda": 1}, ge=0)
    assert not v.passed and "no column `param_lambda`" in v.reason


# ----------------------------------------------------------------------------- schema
def _config(tmp_path: Path, **extra) -> Path:
    raw = {"name": "t", "datasets": ["iris"], "split": {"kind": "kfold", "n_splits": 2},
           "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
           "limits": {"time": 60, "memory": 1000}, "execution": {"n_jobs": 1}}
    raw.update(extra)
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return p


@pytest.mark.parametrize(("item", "words"), [
    ({"metric": "test_acuracy", "ge": 0}, ["expect[0].metric", "test_acuracy", "test_accuracy"]),
    ({"metric": "test_accuracy"}, ["expect[0]", "exactly one check"]),
    ({"metric": "test_accuracy", "ge": 0, "value": 1}, ["expect[0]", "value, bound"]),
    ({"metric": "test_accuracy", "abs": 0.1, "ge": 0}, ["`abs` and `rel`"]),
    ({"metric": "test_accuracy", "ge": 0, "where": {"datset": "iris"}}, ["expect[0].where", "datset"]),
    ({"metric": "test_accuracy", "ge": 0, "where": {"seed": {"gte": 1}}}, ["operator `gte`"]),
    ({"metric": "test_accuracy", "ge": 0, "agg": "avg"}, ["expect[0].agg"]),
    ({"metric": "test_accuracy", "ge": 0, "colour": 1}, ["expect[0].colour", "unknown key"]),
    ({"metric": "test_accuracy", "ge": 1, "le": 0}, ["nothing can pass"]),
    ({"metric": "test_accuracy", "monotone": {"along": "param_max_depth", "direction": "up"}},
     ["expect[0].monotone.direction"]),
])
def test_bad_expectations_are_config_errors_naming_the_key(tmp_path, item, words):
    item = {"source": "test", **item}
    with pytest.raises(ConfigError) as exc:
        load_config(_config(tmp_path, expect=[item]))
    for w in words:
        assert w in str(exc.value), str(exc.value)


def test_source_is_required(tmp_path):
    with pytest.raises(ConfigError, match=r"expect\[0\]\.source"):
        load_config(_config(tmp_path, expect=[{"metric": "test_accuracy", "ge": 0}]))


# ----------------------------------------------------------------------------- profiles
def test_a_profile_overrides_exactly_what_it_names(tmp_path):
    expect = [{"source": "s", "metric": "test_accuracy", "ge": 0.5}]
    prof = {"limits": {"time": 5}, "split": {"n_splits": 3}, "datasets": ["wine"],
            "algorithms.0.params.max_depth": 1,  # a dotted key sets one nested value
            "expect": [{"source": "p", "metric": "train_accuracy", "ge": 0.1}]}
    p = _config(tmp_path, expect=expect, profiles={"ci": prof})
    base = load_config(p).model_dump(mode="json")
    ci = load_config(p, profile="ci").model_dump(mode="json")
    changed = {k for k in base if base[k] != ci[k]}
    assert changed == {"limits", "split", "datasets", "algorithms", "expect", "profile"}
    assert ci["limits"] == {**base["limits"], "time": 5.0}   # memory kept: mappings merge
    assert ci["limits"]["memory"] == 1000.0
    assert ci["split"] == {**base["split"], "n_splits": 3}
    assert [d["name"] for d in ci["datasets"]] == ["wine"]    # lists replace
    assert ci["algorithms"][0]["params"] == {"max_depth": 1}
    assert ci["expect"][0]["source"] == "p" and ci["profile"] == "ci"
    assert base["profile"] is None


def test_profile_errors_name_the_profile(tmp_path):
    p = _config(tmp_path, profiles={"ci": {"limits": {"tme": 5}}})
    with pytest.raises(ConfigError, match=r"profile `ci`: key `limits.tme`"):
        load_config(p)  # every profile is checked, even when none is applied
    p = _config(tmp_path, profiles={"ci": {"name": "other"}})
    with pytest.raises(ConfigError, match=r"profiles.ci.name"):
        load_config(p)
    p = _config(tmp_path, profiles={"ci": {"limits": {"time": 5}}})
    with pytest.raises(ConfigError, match=r"no profile `cj`.*did you mean `ci`"):
        load_config(p, profile="cj")


# ----------------------------------------------------------------------------- CLI
def _results(tmp_path: Path, name: str, expect: list[dict], failed: dict | None = None,
             profile: str | None = None) -> Path:
    d = tmp_path / name
    d.mkdir(parents=True)
    store.write_tables(d, table(failed))
    cfg = {"name": name, "expect": expect, "profile": profile, "profiles": {}}
    (d / "manifest.json").write_text(json.dumps({"experiment": name, "config": cfg}),
                                     encoding="utf-8")
    return d


GOOD = {"name": "a beats b", "source": "Table 1", "where": {"dataset": "a"},
        "metric": "test_accuracy", "compare": {"where": {"dataset": "b"}}}
BAD = {"name": "b reaches 0.9", "source": "Fig. 2", "where": {"dataset": "b"},
       "metric": "test_accuracy", "ge": 0.9}


def test_verify_exit_codes_and_the_failing_item_is_named(tmp_path):
    runner = CliRunner()
    ok = _results(tmp_path, "ok", [GOOD])
    r = runner.invoke(app, ["verify", str(ok)])
    assert r.exit_code == 0, r.output
    assert "a beats b" in r.output and "pass" in r.output and "all 1 expectation(s) hold" in r.output
    bad = _results(tmp_path, "bad", [GOOD, BAD])
    r = runner.invoke(app, ["verify", str(bad), "--json", str(tmp_path / "v.json")])
    assert r.exit_code == EXIT_FAILED == 5, r.output
    assert "b reaches 0.9" in r.output and "FAIL" in r.output and "Fig. 2" in r.output
    data = json.loads((tmp_path / "v.json").read_text())
    assert data["n_failed"] == 1 and [v["passed"] for v in data["verdicts"]] == [True, False]


def test_a_json_target_of_the_wrong_kind_is_one_sentence(tmp_path):
    """`--json` naming a folder for one experiment, or a file for several, or a path that cannot
    be written: exit 2 and a sentence (they were Python tracebacks)."""
    runner = CliRunner()
    ok = _results(tmp_path / "all", "ok", [GOOD])
    _results(tmp_path / "all", "bad", [GOOD, BAD])
    r = runner.invoke(app, ["verify", str(ok), "--json", str(tmp_path)])
    assert r.exit_code == 2 and "this is a folder" in r.output, r.output
    r = runner.invoke(app, ["verify", str(ok), "--json", str(tmp_path / "no" / "such" / "v.json")])
    assert r.exit_code == 2 and "cannot write the verdicts" in r.output, r.output
    (tmp_path / "one.json").write_text("{}")
    r = runner.invoke(app, ["verify", str(tmp_path / "all"), "--json", str(tmp_path / "one.json")])
    assert r.exit_code == 2 and "give a folder" in r.output, r.output
    r = runner.invoke(app, ["verify", str(tmp_path / "all"), "--json", str(tmp_path / "many")])
    assert r.exit_code == 5 and sorted(p.name for p in (tmp_path / "many").iterdir()) == [
        "bad.json", "ok.json"]


def test_json_verdicts_never_replace_results_or_other_files(tmp_path):
    """`--json` naming a file inside the results directory (a cell file, the manifest, a
    table) or an existing file that holds no verdicts (the config) is refused with exit 2 and
    leaves the file as it was; an earlier verdicts file is replaced."""
    runner = CliRunner()
    ok = _results(tmp_path, "ok", [GOOD])
    config = tmp_path / "config.yaml"
    config.write_text("name: mine\n")
    inside = [ok / "manifest.json", *sorted(ok.glob("results.*")), *sorted((ok / "cells").glob("*.json"))[:1]]
    for target in [*inside, ok / "verdicts.json", config]:
        before = target.read_bytes() if target.exists() else None
        r = runner.invoke(app, ["verify", str(ok), "--json", str(target)])
        assert r.exit_code == 2, (target, r.output)
        assert ("inside the results directory" in r.output
                or "holds no verdicts" in r.output), r.output
        assert (target.read_bytes() if target.exists() else None) == before
    out = tmp_path / "v.json"
    for _ in range(2):  # the second run replaces the first one's verdicts
        assert runner.invoke(app, ["verify", str(ok), "--json", str(out)]).exit_code == 0
    assert json.loads(out.read_text())["passed"] is True


def test_a_text_column_as_a_metric_is_named_as_text(tmp_path):
    """`metric: dataset` failed with "`dataset` is missing in 18 of 18 finished cells": it is
    refused as a definition (exit 2) unless the claim counts rows; a parameter column of text,
    whose type no schema knows, fails saying it holds text."""
    with pytest.raises(ValueError, match="metric `dataset` holds text, not numbers"):
        Expectation.model_validate({"source": "s", "metric": "dataset", "ge": 0.5})
    Expectation.model_validate({"source": "s", "metric": "status", "agg": "count", "ge": 1})
    with pytest.raises(ValueError, match="metric `algorithm_label` holds text"):
        Expectation.model_validate({"source": "s", "metric": "test_accuracy",
                                    "compare": {"metric": "algorithm_label"}})
    t = table()
    t["param_criterion"] = pd.array(["gini"] * len(t), dtype="string")
    d = tmp_path / "p"
    d.mkdir()
    store.write_tables(d, t)
    cfg = {"name": "p", "expect": [{"source": "s", "metric": "param_criterion", "ge": 0.5}],
           "profile": None, "profiles": {}}
    (d / "manifest.json").write_text(json.dumps({"experiment": "p", "config": cfg}))
    r = CliRunner().invoke(app, ["verify", str(d)])
    assert r.exit_code == 5 and "holds text, not numbers" in r.output, r.output


def test_missing_cells_fail_through_the_cli(tmp_path):
    d = _results(tmp_path, "lost", [GOOD], failed={("b", 2, 0): "timeout"})
    r = CliRunner().invoke(app, ["verify", str(d)])
    assert r.exit_code == 5 and "did not finish (timeout 1)" in r.output, r.output


def test_no_expectations_verify_trivially_with_a_note(tmp_path):
    d = _results(tmp_path, "plain", [])
    r = CliRunner().invoke(app, ["verify", str(d)])
    assert r.exit_code == 0 and "no expectations" in r.output, r.output
    (d / "manifest.json").unlink()  # results without a record of their experiment: no pass
    r = CliRunner().invoke(app, ["verify", str(d)])
    assert r.exit_code == 2 and "no manifest.json" in r.output and "--config" in r.output, r.output


def test_a_folder_is_verified_one_experiment_at_a_time(tmp_path):
    root = tmp_path / "all"
    _results(root, "e1", [GOOD])
    _results(root, "e2", [BAD])
    _results(root, "e3", [])
    r = CliRunner().invoke(app, ["verify", str(root), "--json", str(tmp_path / "out")])
    assert r.exit_code == 5, r.output
    assert "2 of 3 experiment(s) verified; 1 failed" in r.output
    assert r.output.index("e1") < r.output.index("e2") < r.output.index("e3")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["e1.json", "e2.json", "e3.json"]


def test_verify_against_a_config_and_profile(tmp_path):
    d = _results(tmp_path, "r", [BAD])
    cfg = _config(tmp_path, name="r", expect=[BAD], profiles={"ci": {"expect": [GOOD]}})
    # the table is not made of the config's cells: pooled with --all-cells, else every
    # claim fails on the config's missing cells
    r = CliRunner().invoke(app, ["verify", str(d), "--config", str(cfg), "--profile", "ci"])
    assert r.exit_code == 5 and "have no usable result" in r.output, r.output
    r = CliRunner().invoke(app, ["verify", str(d), "--config", str(cfg), "--all-cells"])
    assert r.exit_code == 5, r.output
    r = CliRunner().invoke(app, ["verify", str(d), "--config", str(cfg), "--profile", "ci",
                                 "--all-cells"])
    assert r.exit_code == 0 and "profile ci" in r.output, r.output
    r = CliRunner().invoke(app, ["verify", str(tmp_path / "nowhere")])
    assert r.exit_code == 2 and "no such results directory" in r.output


def test_run_verify_and_profile_end_to_end(tmp_path):
    """`run --profile ci --verify` on embedded data: the profile's expectation decides the exit code."""
    good = {"source": "t", "name": "cart fits iris", "metric": "train_accuracy", "ge": 0.6,
            "where": {"algorithm": "cart"}}
    bad = {"source": "t", "name": "depth-1 cart is perfect", "metric": "train_accuracy",
           "value": 1.0, "abs": 0.001, "where": {"param_max_depth": 1}}
    cfg = _config(tmp_path, expect=[bad], profiles={"ci": {"expect": [good]},
                                                     "strict": {"expect": [good, bad]}})
    runner = CliRunner()
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(cfg), "--profile", "ci", "--out", str(out), "-q",
                            "--verify", "--no-report"])
    assert r.exit_code == 0, r.output
    assert "cart fits iris" in r.output
    man = json.loads((out / "manifest.json").read_text())
    assert man["config"]["profile"] == "ci"
    r = runner.invoke(app, ["run", str(cfg), "--profile", "strict", "--out", str(tmp_path / "o2"),
                            "-q", "--verify", "--no-report"])
    assert r.exit_code == 5 and "depth-1 cart is perfect" in r.output, r.output
    # verify later picks the expectations of the run's profile from its manifest
    r = runner.invoke(app, ["verify", str(out)])
    assert r.exit_code == 0 and "profile ci" in r.output, r.output
    r = runner.invoke(app, ["verify", str(out), "--profile", "strict"])
    assert r.exit_code == 2 and "--config" in r.output, r.output


def test_default_results_folder_of_a_profile(tmp_path):
    from treebench.api import default_out, resolve_experiment

    cfg = _config(tmp_path, profiles={"ci": {"limits": {"time": 5}}})
    assert default_out(resolve_experiment(cfg)) == Path("results") / "t"
    assert default_out(resolve_experiment(cfg, profile="ci")) == Path("results") / "t-ci"


def test_monotone_with_missing_ignore_drops_points_without_finished_cells():
    t = table({("b", "all", s): "timeout" for s in range(3)})
    kw = {"where": {"dataset": "b"}, "monotone": {"along": "param_k"}}
    assert not one(t, **kw).passed  # missing: fail
    v = one(t, missing="ignore", **kw)  # 0.51 -> 0.66 once the k = all point is gone
    assert v.passed and v.measured_text == "0.5100 → 0.6600"
    t = table({("b", k, s): "timeout" for s in range(3) for k in (2, "all")})
    v = one(t, missing="ignore", **kw)
    assert not v.passed and "1 point(s) with finished cells" in v.reason


def test_a_value_is_shown_with_the_digits_its_tolerance_needs():
    t = table()
    v = one(t, where={"dataset": "a", "param_k": 1}, value=0.61, abs=5e-7)
    assert v.measured_text == "0.6100000" and v.expected_text == "0.6100000 ± 5e-07"
    v = one(t, where={"dataset": "a", "param_k": 1}, value=0.6123456, abs=0.01)
    assert v.expected_text.startswith("0.6123456 ±") and v.measured_text == "0.6100000"
    v = one(t, where={"dataset": "a", "param_k": 1}, value=0.61, abs=0.001)
    assert v.measured_text == "0.6100"


def _measure_by_frames(t: pd.DataFrame, where: dict, metric: str, agg: str, across: dict,
                       missing: str) -> tuple[float, int] | str:
    """`measure` written plainly with pandas frames: the selected rows, the finished ones,
    one groupby per stage of ``across`` (sorted keys, row order within a group). The reason
    text when it cannot be measured."""
    import numpy as np

    rows = select(t, where, ["status", metric, *across])
    if rows.empty:
        return "empty"
    status = rows["status"].astype(str)
    usable = status == "ok"
    if missing == "anytime":
        usable |= (status == "timeout") & rows[metric].notna().to_numpy()
    if (~usable).any() and missing != "ignore":
        return f"{int((~usable).sum())} of {len(rows)}"
    rows = rows[usable]
    if rows.empty:
        return "no selected cell finished"
    vals = pd.to_numeric(rows[metric].astype("object"), errors="coerce").astype(float)
    if vals.isna().any():
        return "missing"
    red = {"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}
    if not across:
        return float(red[agg](vals.to_numpy())), len(rows)
    frame = pd.DataFrame({f"k{i}": rows[c].map(lambda v: json.dumps(v, default=str)).to_numpy()
                          for i, c in enumerate(across)})
    frame["v"] = vals.to_numpy()
    names = list(frame.columns[:-1])
    g = frame.groupby(names, sort=True)["v"].agg(lambda s: float(red[agg](s.to_numpy())))
    for i, how in enumerate(across.values()):
        if names[i + 1:]:
            g = g.groupby(level=names[i + 1:], sort=True).agg(
                lambda s, how=how: float(red[how](s.to_numpy())))
    return float(red[list(across.values())[-1]](g.to_numpy())), len(rows)


def test_measure_agrees_with_a_plain_frame_computation_on_random_tables():
    """`measure` works on per-column arrays; on random tables (failed cells, missing values,
    one to three stages across columns, every aggregate and missing rule) it gives the value,
    bit for bit, and the row count of the computation with pandas frames, or fails where that
    one cannot measure."""
    import numpy as np

    from treebench.verify import _Fail

    rng = np.random.default_rng(0)
    aggs = ["mean", "median", "min", "max"]
    for _ in range(300):
        n = int(rng.integers(1, 60))
        t = pd.DataFrame({
            "dataset": rng.choice(["a", "b", "c"], n), "k": rng.choice([1, 2, 4], n),
            "seed": rng.integers(0, 4, n), "fold": rng.integers(0, 3, n),
            "status": rng.choice(["ok"] * 8 + ["timeout", "error"], n),
            "test_accuracy": np.round(rng.random(n), int(rng.integers(1, 17))),
        })
        t.loc[rng.random(n) < 0.05, "test_accuracy"] = np.nan
        cols = list(rng.permutation(["dataset", "seed", "fold"])[:int(rng.integers(0, 4))])
        across = {c: str(rng.choice(aggs)) for c in cols}
        where = {"k": [1, 2]} if rng.random() < 0.5 else {}
        agg, missing = str(rng.choice(aggs)), str(rng.choice(["fail", "ignore", "anytime"]))
        want = _measure_by_frames(t, where, "test_accuracy", agg, across, missing)
        try:
            got = measure(t, where, "test_accuracy", agg, across, missing)
        except _Fail:
            assert isinstance(want, str), (want, where, across, agg, missing)
            continue
        assert got == want, (where, across, agg, missing)
