"""Input limits of configs through the command line: booleans where numbers belong, YAML alias
bombs, unsafe names that become paths, grid sizes, tuning restricted to some datasets."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from treebench.cli import app

from runs import tiny_config

runner = CliRunner()


def _dry_run(path, tmp_path, *extra):
    return runner.invoke(app, ["run", str(path), "--dry-run", "--out", str(tmp_path / "o"), *extra])


def _run(path, tmp_path, *extra):
    return runner.invoke(app, ["run", str(path), "--out", str(tmp_path / "o"), "--no-report", "-q", *extra])


def _one_sentence_exit_2(r, *fragments):
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    text = r.output.strip()
    assert text.count("\n") == 0, text
    for f in fragments:
        assert f in text, text


def _accepted(path, tmp_path, *extra) -> str:
    """The output of a dry run of ``path`` that must succeed (exit 0)."""
    r = _dry_run(path, tmp_path, *extra)
    assert r.exit_code == 0, r.output
    return r.output


# ----------------------------------------------------------------------------- booleans
@pytest.mark.parametrize(
    "mutate, key",
    [
        (lambda c: c["algorithms"][0]["params"].update(max_depth=True), "max_depth"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=[1, False]), "max_depth"),
        (lambda c: c["algorithms"][0]["params"].update(ccp_alpha=True), "ccp_alpha"),
        (lambda c: c.update(algorithms=[{"name": "random-forest", "params": {"n_estimators": True}}]),
         "n_estimators"),
        (lambda c: c.update(algorithms=[{"name": "topk", "params": {"k": True}}],
                            binarization={"method": "quantile"}), "`k`"),
        (lambda c: c.update(seed=True), "key `seed`"),
        (lambda c: c.update(split={"kind": "kfold", "n_splits": True}), "split.n_splits"),
        (lambda c: c.update(split={"kind": "kfold", "seeds": [1, False]}), "split.seeds[1]"),
        (lambda c: c.update(split={"kind": "holdout", "test_size": True}), "split.test_size"),
        (lambda c: c.update(limits={"time": True}), "limits.time"),
        (lambda c: c.update(limits={"memory": True}), "limits.memory"),
        (lambda c: c.update(execution={"n_jobs": True}), "execution.n_jobs"),
        (lambda c: c.update(costs={"kind": "random", "high": True}), "costs.high"),
    ],
)
def test_booleans_are_not_numbers(write_config, tmp_path, mutate, key):
    cfg = tiny_config()
    mutate(cfg)
    r = _dry_run(write_config(cfg), tmp_path)
    _one_sentence_exit_2(r, key, "boolean")


# ----------------------------------------------------------------------------- integer ranges
BIG = 10**20  # fits no signed 64-bit integer


@pytest.mark.parametrize(
    "mutate, key, rng",
    [
        (lambda c: c.update(seed=BIG), "key `seed`", "4,294,967,295"),
        (lambda c: c.update(seed=-1), "key `seed`", "from 0 to"),
        (lambda c: c.update(seed=2**32), "key `seed`", "from 0 to"),
        (lambda c: c.update(split={"kind": "kfold", "seeds": [0, 2**32]}), "split.seeds[1]", "seed"),
        (lambda c: c.update(split={"kind": "kfold", "seeds": "0..4294967296"}), "split.seeds", "seed"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=BIG), "params.max_depth", "64-bit"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=[2, -BIG]), "params.max_depth[1]", "64-bit"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=f"2,{BIG}"), "params.max_depth", "64-bit"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=f"{BIG}..{BIG}"), "params.max_depth", "64-bit"),
        (lambda c: c["algorithms"][0]["params"].update(random_state=-1), "params.random_state", "seed"),
        (lambda c: c.update(binarization={"method": "quantile", "params": {"max_splits": BIG}}),
         "binarization.params.max_splits", "64-bit"),
        (lambda c: c.update(datasets=[{"name": "parity-noise", "params": {"seed": -5}}]),
         "datasets[0].params.seed", "seed"),
        (lambda c: c.update(execution={"max_cells": BIG}), "execution.max_cells", "64-bit"),
        (lambda c: c.update(profiles={"ci": {"seed": BIG}}), "profile `ci`: key `seed`", "seed"),
    ],
)
def test_integers_out_of_range_are_refused_by_key(write_config, tmp_path, mutate, key, rng):
    cfg = tiny_config()
    mutate(cfg)
    r = _dry_run(write_config(cfg), tmp_path)
    _one_sentence_exit_2(r, key, "out of range", rng)


@pytest.mark.parametrize("args, flag", [
    (["run", "--seed", str(BIG)], "--seed"),
    (["run", "--seed", "-1"], "--seed"),
    (["run", "--max-cells", str(BIG)], "--max-cells"),
    (["sweep", "--depth", str(BIG)], "--depth"),
    (["sweep", "--depth", f"1..{BIG}"], "--depth"),
    (["sweep", "--param", "random_state=-3"], "--param random_state"),
])
def test_integer_flags_out_of_range_are_refused(write_config, tmp_path, args, flag):
    cmd, *rest = args
    r = runner.invoke(app, [cmd, str(write_config(tiny_config())), *rest, "--dry-run",
                            "--out", str(tmp_path / "o")])
    _one_sentence_exit_2(r, flag, "out of range")


def test_integers_at_the_ends_of_their_ranges_are_accepted(write_config, tmp_path):
    cfg = tiny_config(seed=2**32 - 1)
    cfg["algorithms"][0]["params"]["max_depth"] = [1, 2**63 - 1]
    _accepted(write_config(cfg), tmp_path)


def test_an_integer_of_thousands_of_digits_is_one_sentence(write_config, tmp_path):
    text = "name: t\nseed: " + "9" * 5000 + "\ndatasets: [iris]\nalgorithms: [cart]\n"
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "line 2", "5,000 digits")


# ----------------------------------------------------------------------------- run flags
BAD_FLAGS = [
    (["--retry", "erorr"], "--retry"),
    (["--fail-on", "nevr"], "--fail-on"),
    (["--time-limit", "-1"], "--time-limit"),
    (["--time-limit", "nan"], "--time-limit"),
    (["--time-limit", "inf"], "--time-limit"),
    (["--memory-limit", "0"], "--memory-limit"),
    (["--n-jobs", "0"], "--n-jobs"),
    (["--seed", "-1"], "--seed"),
    (["--max-cells", str(10**20)], "--max-cells"),
]


@pytest.mark.parametrize("flags, name", BAD_FLAGS)
def test_bad_flags_are_refused_on_a_finished_folder(write_config, tmp_path, flags, name):
    """A rerun with nothing to do answers from the plan cache: the flags are checked first."""
    cfg = write_config(tiny_config())
    first = _run(cfg, tmp_path)
    assert first.exit_code == 0, first.output
    same = _run(cfg, tmp_path)
    assert same.exit_code == 0 and "ran 0 now" in same.output, same.output
    again = runner.invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--no-report", *flags])
    _one_sentence_exit_2(again, name)


def test_a_misspelt_retry_on_a_folder_with_error_cells_is_refused(write_config, tmp_path):
    cfg = write_config(tiny_config(algorithms=[{"name": "test-raise"}]))
    first = _run(cfg, tmp_path)
    assert first.exit_code == 3, first.output
    _one_sentence_exit_2(_run(cfg, tmp_path, "--retry", "erorr"), "--retry", "erorr")


@pytest.mark.parametrize("flags, name", BAD_FLAGS)
def test_bad_flags_are_refused_by_a_dry_run(write_config, tmp_path, flags, name):
    _one_sentence_exit_2(_dry_run(write_config(tiny_config()), tmp_path, *flags), name)


@pytest.mark.parametrize("limit", [".nan", ".inf", "-.inf"])
def test_config_limits_are_finite(write_config, tmp_path, limit):
    text = f"name: t\ndatasets: [iris]\nalgorithms: [cart]\nlimits: {{time: {limit}}}\n"
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "limits.time")


# ----------------------------------------------------------------------------- environment
@pytest.mark.parametrize("name, value", [
    ("NUMBA_NUM_THREADS", "0"), ("NUMBA_NUM_THREADS", "two"), ("OMP_NUM_THREADS", "abc"),
    ("OMP_NUM_THREADS", "4,2"), ("MKL_NUM_THREADS", "-1"), ("TREEBENCH_OFFLINE", "maybe"),
    ("TREEBENCH_MAX_MATRIX_GB", "lots"), ("TREEBENCH_PREPARED_CACHE_GB", "-3"),
])
def test_a_bad_environment_variable_is_named(write_config, tmp_path, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    cfg = write_config(tiny_config())
    _one_sentence_exit_2(_run(cfg, tmp_path), f"environment variable {name}=")
    _one_sentence_exit_2(_dry_run(cfg, tmp_path), f"environment variable {name}=")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name, value", [
    ("NUMBA_NUM_THREADS", "1"), ("OMP_NUM_THREADS", " 2"), ("TREEBENCH_OFFLINE", "True"),
    ("TREEBENCH_OFFLINE", ""), ("TREEBENCH_OFFLINE", "0"), ("TREEBENCH_PREPARED_CACHE_GB", "0"),
    ("TREEBENCH_MAX_MATRIX_GB", "0.5"), ("OMP_NUM_THREADS", ""), ("NUMBA_NUM_THREADS", " "),
])
def test_good_environment_variables_pass(write_config, tmp_path, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    _accepted(write_config(tiny_config()), tmp_path)


def test_more_folds_than_rows_is_refused_before_any_cell_runs(write_config, tmp_path):
    data = tmp_path / "six.csv"
    data.write_text("x,y\n1,a\n2,b\n3,a\n4,b\n5,a\n6,b\n", encoding="utf-8")
    cfg = write_config(tiny_config(datasets=[str(data)], split={"kind": "kfold", "n_splits": 7}))
    _one_sentence_exit_2(_run(cfg, tmp_path), "6 rows", "7 folds", "split.n_splits")
    assert not list((tmp_path / "o").glob("cells/*.json"))
    ok = write_config(tiny_config(datasets=[str(data)], split={"kind": "kfold", "n_splits": 6}))
    assert _run(ok, tmp_path).exit_code == 0


# ----------------------------------------------------------------------------- duplicate keys
@pytest.mark.parametrize("text, key, line", [
    ("name: y\nname: z\ndatasets: [iris]\nalgorithms: [cart]\n", "`name`", "line 2"),
    ("name: t\ndatasets: [iris]\nalgorithms:\n  - name: cart\n    params: {max_depth: 2, max_depth: 3}\n",
     "`max_depth`", "line 5"),
    ("name: t\ndatasets: [iris]\nalgorithms:\n  - name: cart\n    params:\n      max_depth: 2\n"
     "      max_depth: 3\n", "`max_depth`", "first at line 6"),
    ("name: t\ndatasets: [iris]\nalgorithms: [cart]\nprofiles:\n  ci: {seed: 1, seed: 2}\n", "`seed`", "line 5"),
])
def test_a_key_given_twice_is_refused(write_config, tmp_path, text, key, line):
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), key, line, "twice")


def test_the_same_key_in_different_mappings_and_merge_keys_are_no_repeats(write_config, tmp_path):
    text = ("name: t\ndatasets: [iris]\nbinarization: raw\nalgorithms:\n"
            "  - {name: cart, params: &p {max_depth: 2}}\n"
            "  - {name: cart, label: b, params: {<<: *p, max_depth: 3}}\n")
    output = _accepted(write_config(text), tmp_path)
    assert "max_depth=3" in output and "max_depth=2" in output


# ----------------------------------------------------------------------------- empty sweep axes
@pytest.mark.parametrize("mutate, key", [
    (lambda c: c.update(algorithms=[{"name": "topk", "params": {"k": [], "max_depth": 2}}],
                        binarization={"method": "quantile"}), "algorithms[0].params.k"),
    (lambda c: c["algorithms"][0]["params"].update(max_depth=","), "algorithms[0].params.max_depth"),
    (lambda c: c.update(binarization={"method": "quantile", "params": {"max_splits": []}}),
     "binarization[0].params.max_splits"),
    (lambda c: c.update(datasets=[{"name": "iris", "binarization": {"method": "quantile",
                                                                    "params": {"max_splits": []}}}]),
     "datasets[0].binarization[0].params.max_splits"),
    (lambda c: c.update(split={"kind": "kfold", "seeds": []}), "split.seeds"),
])
def test_an_empty_sweep_axis_is_refused(write_config, tmp_path, mutate, key):
    cfg = tiny_config()
    mutate(cfg)
    _one_sentence_exit_2(_dry_run(write_config(cfg), tmp_path), f"key `{key}`")


def test_a_literal_empty_list_is_no_empty_axis(write_config, tmp_path):
    cfg = tiny_config(binarization={"method": "quantile", "params": {"max_splits": 4}})
    cfg["binarization"]["params"]["categorical_params"] = {"value": {}}
    _accepted(write_config(cfg), tmp_path)


def test_yaml_yes_is_not_depth_one(write_config, tmp_path):
    text = ("name: t\ndatasets: [iris]\nbinarization: raw\n"
            "algorithms:\n  - name: cart\n    params: {max_depth: yes}\n")
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "max_depth", "boolean")


def test_tune_grid_boolean_is_refused(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "train-val-test"})
    cfg["algorithms"] = [{"name": "cart", "tune": {"param": "max_depth", "grid": [1, True]}}]
    _one_sentence_exit_2(_dry_run(write_config(cfg), tmp_path), "tune[0].grid", "boolean")


def test_sweep_flag_boolean_is_refused(write_config, tmp_path):
    r = runner.invoke(app, ["sweep", str(write_config(tiny_config())), "--depth", "true",
                            "--dry-run", "--out", str(tmp_path / "o")])
    _one_sentence_exit_2(r, "--depth", "boolean")


def test_real_boolean_parameters_still_take_booleans(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "random-forest",
                                   "params": {"n_estimators": 3, "bootstrap": False}}])
    _accepted(write_config(cfg), tmp_path)


# ----------------------------------------------------------------------------- YAML limits
def _laughs(levels: int = 9, indent: str = "      ") -> str:
    """A "billion laughs" chain of anchors: each level lists the previous one nine times."""
    lines = [f'{indent}param_l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*l{i - 1}"] * 9)
        lines.append(f"{indent}param_l{i}: &l{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_in_expect_where_is_refused_fast(write_config, tmp_path):
    import time

    text = ("name: t\ndatasets: [iris]\nbinarization: raw\nalgorithms: [cart]\n"
            "expect:\n  - metric: test_accuracy\n    ge: 0.5\n    source: test\n    where:\n"
            + _laughs())
    t0 = time.perf_counter()
    r = _dry_run(write_config(text), tmp_path)
    assert time.perf_counter() - t0 < 5
    _one_sentence_exit_2(r, "alias", "100,000")


def test_alias_bomb_in_a_profile_is_refused(write_config, tmp_path):
    text = ("name: t\ndatasets: [iris]\nbinarization: raw\nalgorithms: [cart]\n"
            "profiles:\n  ci:\n    expect:\n    - metric: test_accuracy\n      ge: 0.5\n"
            "      source: test\n      where:\n" + _laughs(indent="        "))
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "alias")


def test_self_referring_alias_is_refused(write_config, tmp_path):
    text = "name: t\ndatasets: [iris]\nalgorithms: [cart]\ndescription: &a [1, *a]\n"
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "`*a`", "contains it")


def test_deep_nesting_is_refused(write_config, tmp_path):
    text = "name: t\ndatasets: [iris]\nalgorithms: [cart]\ndescription: " + "[" * 500 + "]" * 500 + "\n"
    _one_sentence_exit_2(_dry_run(write_config(text), tmp_path), "nested more than")


def test_ordinary_aliases_still_work(write_config, tmp_path):
    text = ("name: t\ndatasets: [iris]\nbinarization: raw\n"
            "algorithms:\n  - name: cart\n    params: &p {max_depth: [1, 2]}\n"
            "  - name: cart\n    params: *p\n")
    output = _accepted(write_config(text), tmp_path)
    assert "t: 10 cells" in output  # the two entries are the same cells (one label: allowed)


def test_alias_bomb_in_a_catalog_file_is_refused(write_config, tmp_path, monkeypatch):
    from treebench.data import catalog

    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "bomb.yaml").write_text("name: bomb\nextra:\n" + _laughs(indent="  "), encoding="utf-8")
    monkeypatch.setenv("TREEBENCH_CATALOG", str(cat))
    catalog._load_catalog_cached.cache_clear()
    try:
        r = runner.invoke(app, ["datasets"])
    finally:
        catalog._load_catalog_cached.cache_clear()
    _one_sentence_exit_2(r, "bomb.yaml", "alias")


# ----------------------------------------------------------------------------- quoted values
LONG = "HOME=/root\x00PATH=/usr/bin\x00" * 200  # a "value" as long as an environment block


def _file_config(write_config, tmp_path, csv_text, **entry):
    data = tmp_path / "data.csv"
    data.write_text(csv_text, encoding="utf-8")
    cfg = tiny_config(datasets=[{"path": str(data), **entry}])
    return write_config(cfg)


def _short_error(r, *fragments):
    _one_sentence_exit_2(r, *fragments)
    assert len(r.output) < 1500, len(r.output)  # a few clipped values, not kilobytes
    assert "PATH=/usr/bin" * 2 not in r.output and "\x00" not in r.output


def test_a_single_long_class_is_quoted_short(write_config, tmp_path):
    rows = "".join(f"{i},{i % 3},{LONG}\n" for i in range(12))
    cfg = _file_config(write_config, tmp_path, "a,b,y\n" + rows, label="y")
    _short_error(_run(cfg, tmp_path), "single class", "…")


def test_a_long_label_column_name_is_quoted_short(write_config, tmp_path):
    cfg = _file_config(write_config, tmp_path, "a,b,y\n1,2,0\n", label=LONG)
    _short_error(_dry_run(cfg, tmp_path), "label column", "…")


def test_long_unseen_test_labels_are_quoted_short(write_config, tmp_path):
    train = tmp_path / "train.csv"
    test = tmp_path / "test.csv"
    train.write_text("a,y\n" + "".join(f"{i},{'ab'[i % 2]}\n" for i in range(10)), encoding="utf-8")
    test.write_text("a,y\n" + "".join(f"{i},{LONG}{i}\n" for i in range(10)), encoding="utf-8")
    cfg = tiny_config(datasets=[{"path": str(train), "test_path": str(test), "label": "y"}])
    _short_error(_run(write_config(cfg), tmp_path), "never have", "and 5 more")


def test_a_long_non_number_is_quoted_short(write_config, tmp_path):
    cfg = _file_config(write_config, tmp_path, "a,b,y\n" + f"1,{LONG},0\n" * 3 + "2,3,1\n" * 3,
                       label="y", categorical=["a"])
    _short_error(_dry_run(cfg, tmp_path), "is not a number", "…")


def test_a_long_config_value_is_quoted_short(write_config, tmp_path):
    cfg = tiny_config()
    cfg["algorithms"][0]["params"]["criterion"] = LONG
    _short_error(_dry_run(write_config(cfg), tmp_path), "criterion")
    cfg = tiny_config(split={"kind": LONG})
    _short_error(_dry_run(write_config(cfg), tmp_path), "split.kind", "…")
    cfg = tiny_config(**{LONG: 1})
    _short_error(_dry_run(write_config(cfg), tmp_path), "unknown key", "…")


# ----------------------------------------------------------------------------- names as paths
@pytest.mark.parametrize("pname", ["../../x", "a/b", "..", ".hidden", "x y"])
def test_a_profile_name_must_be_a_safe_folder_name(write_config, tmp_path, monkeypatch, pname):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    cfg = tiny_config(profiles={pname: {"seed": 1}})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--profile", pname, "-q", "--no-report"])
    _one_sentence_exit_2(r, "profile name", "safe folder name")
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_dir()) == ["a", "b"]


def test_a_safe_profile_name_runs_under_results(write_config, tmp_path):
    cfg = tiny_config(profiles={"ci.v2": {"seed": 1}})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--profile", "ci.v2", "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "results/tiny-ci.v2" in r.output


def test_experiment_names_from_the_api_are_checked_too():
    from treebench.config import validate_config

    from treebench.errors import ConfigError

    raw = tiny_config()
    with pytest.raises(ConfigError, match="profile"):
        validate_config({**raw, "profile": "../../x"})
    with pytest.raises(ConfigError, match="name"):
        validate_config({**raw, "name": "../x"})


# ----------------------------------------------------------------------------- grid size
def _big(n_leaf: str = "1..10000", depth: str = "1..200"):
    return tiny_config(split={"kind": "kfold", "n_splits": 2},
                       algorithms=[{"name": "cart", "params": {"max_depth": depth,
                                                                "min_samples_leaf": n_leaf}}])


def test_a_grid_over_the_limit_is_refused_before_expanding(write_config, tmp_path):
    import time

    t0 = time.perf_counter()
    r = _dry_run(write_config(_big()), tmp_path)  # 2 folds x 200 x 10,000 = 4,000,000 cells
    assert time.perf_counter() - t0 < 10
    _one_sentence_exit_2(r, "4,000,000 cells", "--max-cells")


def test_max_cells_sets_the_limit(write_config, tmp_path):
    cfg = write_config(tiny_config())  # 3 folds x 2 depths
    _one_sentence_exit_2(_dry_run(cfg, tmp_path, "--max-cells", "5"), "6 cells", "limit of 5")
    assert "tiny: 6 cells" in _accepted(cfg, tmp_path, "--max-cells", "6")
    r = runner.invoke(app, ["sweep", str(cfg), "--depth", "1..4", "--max-cells", "8", "--dry-run"])
    _one_sentence_exit_2(r, "12 cells")


def test_a_huge_sweep_flag_range_is_counted_not_listed(write_config, tmp_path, monkeypatch):
    from treebench.utils import sweeps

    listed = sweeps.expand_values

    def expand(v):  # the run lists a range only once the grid is known to be small enough
        out = listed(v)
        assert len(out) <= 1000, f"{len(out)} values listed"
        return out

    monkeypatch.setattr(sweeps, "expand_values", expand)
    cfg = write_config(tiny_config())
    for text, cells in (("1..250000", "2,250,000"), ("2,1..1000000000000000", "9,000,000,000,000,009")):
        r = runner.invoke(app, ["sweep", str(cfg), "--depth", text, "--param", "min_samples_leaf=1..2,3",
                                "--dry-run", "-q", "--out", str(tmp_path / "o")])
        _one_sentence_exit_2(r, f"{cells} cells", "--max-cells")


def test_a_sweep_flag_range_runs_its_values(write_config, tmp_path):
    r = runner.invoke(app, ["sweep", str(write_config(tiny_config())), "--depth", "2..3,5", "--dry-run",
                            "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "tiny: 9 cells" in r.output
    assert all(f"max_depth={d}" in r.output for d in (2, 3, 5))


def test_a_large_grid_warns_in_one_line(write_config, tmp_path, monkeypatch):
    from treebench.config import grid

    monkeypatch.setattr(grid, "WARN_CELLS", 4)
    output = _accepted(write_config(tiny_config()), tmp_path)
    lines = [ln for ln in output.splitlines() if "warning" in ln]
    assert lines == ["treebench: warning: the grid has 6 cells (more than 4); expanding it takes "
                     "about 1 s before anything runs."]


def test_cell_count_matches_the_expansion(write_config):
    from treebench.config.cells import expand
    from treebench.config import load_config
    from treebench.config.grid import count_cells

    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2, "seeds": "1..2"},
                      binarization=[{"method": "raw"}, {"method": "quantile", "params": {"max_splits": [2, 3]}}],
                      algorithms=[{"name": "cart", "params": {"max_depth": "1..3", "criterion": "gini,entropy"}},
                                  {"name": "topk", "params": {"k": [1, "2..3"]}}])
    exp = load_config(write_config(cfg))
    # 4 (fold, seed) pairs x (cart: raw 1 x 6 + quantile 2 x 6; topk: quantile 2 x 3)
    assert count_cells(exp) == len(expand(exp)) == 4 * (1 * 6 + 2 * 6 + 2 * 3)


# ----------------------------------------------------------------------------- tuning entries
def _tune_config(**entry):
    return tiny_config(
        datasets=["iris", {"name": "wine", "split": {"kind": "train-val-test"}}],
        algorithms=[{"name": "cart", "params": {"max_depth": 2}},
                    {"name": "cart", "label": "cart-tuned",
                     "tune": {"param": "ccp_alpha", "grid": [0.0, 0.01]}, **entry}])


def test_a_tune_entry_restricted_to_train_val_test_datasets_is_accepted(write_config, tmp_path):
    output = _accepted(write_config(_tune_config(datasets=["wine"])), tmp_path)
    assert "cart-tuned" in output


def test_a_tune_entry_on_a_kfold_dataset_is_still_refused(write_config, tmp_path):
    _one_sentence_exit_2(_dry_run(write_config(_tune_config()), tmp_path),
                         "algorithms[1].tune", "`iris`", "kfold")
    _one_sentence_exit_2(_dry_run(write_config(_tune_config(datasets=["iris", "wine"])), tmp_path),
                         "algorithms[1].tune", "`iris`")


def test_numbers_in_exponent_notation_are_numbers(tmp_path):
    """`ccp_alpha: 1e-3` is the float 0.001 (YAML 1.2); PyYAML's YAML 1.1 rules read it as the
    text "1e-3", which the learner refused with "must be a float ... Got '1e-3'"."""
    from treebench.utils import safe_yaml

    got = safe_yaml.load("a: 1e-3\nb: 1.0e3\nc: -2E5\nd: '1e-3'\ne: 1e\nf: 10\ng: .5e1\n")
    assert got == {"a": 0.001, "b": 1000.0, "c": -200000.0, "d": "1e-3", "e": "1e", "f": 10,
                   "g": 5.0}
    assert isinstance(got["f"], int)
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 1,
                                                              "ccp_alpha": "__X__"}}])
    path = tmp_path / "c.yaml"
    import yaml

    path.write_text(yaml.safe_dump(cfg).replace("__X__", "1e-3"))
    r = _dry_run(path, tmp_path)
    assert r.exit_code == 0, r.output
