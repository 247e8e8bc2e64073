"""Config validation, grid expansion and cell ids."""

from __future__ import annotations

import pytest

from treebench.config.cells import expand, expand_values, grid, parse_scalar
from treebench.config import load_config
from treebench.errors import ConfigError

from runs import tiny_config


def test_valid_config_expands_to_expected_cells(write_config):
    exp = load_config(write_config(tiny_config()))
    cells = expand(exp)
    # 1 dataset x 3 folds x 1 binarizer x 2 depths
    assert len(cells) == 6
    assert len({c.id for c in cells}) == 6
    assert sorted({c.fold for c in cells}) == [0, 1, 2]
    assert sorted({c.algorithm_params["max_depth"] for c in cells}) == [1, 2]


def test_cell_ids_are_stable_and_depend_on_spec_not_execution(write_config):
    a = expand(load_config(write_config(tiny_config(), "a.yaml")))
    b = expand(load_config(write_config(tiny_config(execution={"n_jobs": 2, "backend": "loky"}), "b.yaml")))
    assert [c.id for c in a] == [c.id for c in b]
    c = expand(load_config(write_config(tiny_config(limits={"time": 10, "memory": 500}), "c.yaml")))
    # limits are execution settings, not identity
    assert [x.id for x in a] == [x.id for x in c]
    assert all(x.limits["time"] == 10 and x.limits["memory"] == 500 for x in c)
    d = expand(load_config(write_config(tiny_config(seed=1), "d.yaml")))
    assert {x.id for x in a} != {x.id for x in d}


def test_union_of_entries_and_cartesian_product_within(write_config):
    cfg = tiny_config(
        algorithms=[
            {"name": "cart", "params": {"max_depth": [1, 2, 3], "criterion": ["gini", "entropy"]}},
            {"name": "random-forest", "params": {"n_estimators": 5}},
        ]
    )
    cells = expand(load_config(write_config(cfg)))
    assert len(cells) == 3 * (3 * 2 + 1)


def test_duplicate_grid_points_run_once(write_config):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": [2, 2]}}, {"name": "cart", "params": {"max_depth": 2}}])
    assert len(expand(load_config(write_config(cfg)))) == 3


def test_value_expansion():
    assert expand_values("2..5") == [2, 3, 4, 5]
    assert expand_values([1, "3..4"]) == [1, 3, 4]
    assert expand_values({"value": [1, 2]}) == [[1, 2]]
    assert expand_values("1,2,all") == [1, 2, "all"]
    assert expand_values(7) == [7]
    assert parse_scalar("none") is None and parse_scalar("0.5") == 0.5 and parse_scalar("x") == "x"
    # numbers in ASCII digits only: Python's int() reads `1_0` as 10 and `٣` as 3, so a typo
    # on the command line became another number
    assert parse_scalar("1_0") == "1_0" and parse_scalar("٣") == "٣" and parse_scalar("1e3") == 1e3
    assert parse_scalar("-7") == -7 and parse_scalar(".5") == 0.5 and parse_scalar("0x10") == "0x10"
    assert expand_values("٣..٥") == ["٣..٥"] and expand_values("3..5") == [3, 4, 5]
    assert parse_scalar("9" * 5000) == "9" * 5000  # longer than Python reads: left as text
    assert grid({"b": [1, 2], "a": "x"}) == [{"a": "x", "b": 1}, {"a": "x", "b": 2}]
    with pytest.raises(ValueError):
        expand_values("5..2")


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda c: c.update(algoritms=[]), "algoritms"),
        (lambda c: c.update(seed="abc"), "seed"),
        (lambda c: c.update(datasets=[]), "datasets"),
        (lambda c: c.pop("algorithms"), "algorithms"),
        (lambda c: c["algorithms"][0].update(name="cartt"), "did you mean `cart`"),
        (lambda c: c.update(datasets=["irsi"]), "did you mean `iris`"),
        (lambda c: c.update(binarization={"method": "quantil"}), "did you mean `quantile`"),
        (lambda c: c["algorithms"][0]["params"].update(max_dept=3), "did you mean `max_depth`"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth=-1), "max_depth"),
        (lambda c: c["algorithms"][0]["params"].update(criterion="gini2"), "criterion"),
        (lambda c: c.update(split={"kind": "kfold", "n_splits": 1}), "split.n_splits"),
        (lambda c: c.update(split={"kind": "bootstrap"}), "split.kind"),
        (lambda c: c.update(split={"kind": "holdout", "test_size": 1.5}), "split.test_size"),
        (lambda c: c.update(limits={"time": -3}), "limits.time"),
        (lambda c: c.update(limits={"memroy": 3}), "limits.memroy"),
        (lambda c: c.update(execution={"backend": "mpi"}), "execution.backend"),
        (lambda c: c.update(execution={"n_jobs": 0}), "execution.n_jobs"),
        (lambda c: c.update(metrics=["acuracy"]), "did you mean `accuracy`"),
        (lambda c: c.update(name="bad name!"), "name"),
        (lambda c: c.update(datasets=[{"name": "iris", "label": "y"}]), "datasets[0]"),
        (lambda c: c.update(datasets=[{"path": "x.csv", "params": {"a": 1}}]), "datasets[0]"),
        (lambda c: c.update(datasets=[{"path": "x.csv", "header": "maybe"}]), "datasets[0].header"),
        (lambda c: c.update(split={"kind": "kfold", "unstratifiable": "ignore"}), "split.unstratifiable"),
        (lambda c: c["algorithms"][0]["params"].update(max_depth="4..2"), "empty"),
    ],
)
def test_malformed_configs_name_the_key(write_config, mutate, fragment):
    cfg = tiny_config()
    mutate(cfg)
    path = write_config(cfg)
    with pytest.raises(ConfigError) as ei:
        load_config(path)
    msg = str(ei.value)
    assert str(path) in msg
    assert fragment in msg
    assert "\n" not in msg.strip()


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("name: [unclosed\n", "invalid YAML at line"),
        ("- just\n- a list\n", "top level must be a mapping"),
        ("", "top level must be a mapping"),
    ],
)
def test_broken_yaml(write_config, text, fragment):
    with pytest.raises(ConfigError, match=fragment):
        load_config(write_config(text))


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "nope.yaml")


def test_overrides_and_name_default(write_config):
    cfg = tiny_config()
    cfg.pop("name")
    exp = load_config(write_config(cfg, "named-by-file.yaml"), {"limits.time": 5.0, "seed": 3})
    assert exp.name == "named-by-file" and exp.limits.time == 5.0 and exp.seed == 3


def test_random_state_derived_from_seed_dataset_fold(write_config):
    cells = expand(load_config(write_config(tiny_config())))
    by_fold = {c.fold: c.random_state for c in cells}
    assert len(set(by_fold.values())) == 3
    again = expand(load_config(write_config(tiny_config(), "again.yaml")))
    assert [c.random_state for c in cells] == [c.random_state for c in again]


def test_dataset_level_split_and_binarization_override(write_config):
    cfg = tiny_config(datasets=["iris", {"name": "wine", "split": {"kind": "holdout", "seeds": [1, 2]},
                                         "binarization": {"method": "quantile", "params": {"max_splits": [10, 20]}}}])
    cells = expand(load_config(write_config(cfg)))
    iris = [c for c in cells if c.dataset == "iris"]
    wine = [c for c in cells if c.dataset == "wine"]
    assert len(iris) == 3 * 2 and {c.binarizer for c in iris} == {"raw"}
    assert len(wine) == 2 * 2 * 2 and {c.split["kind"] for c in wine} == {"holdout"}
    assert {c.binarizer_params["max_splits"] for c in wine} == {10, 20}
    bad = tiny_config(datasets=[{"name": "wine", "binarization": {"method": "quantle"}}])
    with pytest.raises(ConfigError, match=r"datasets\[0\].binarization\[0\].method"):
        load_config(write_config(bad, "bad.yaml"))


def test_unknown_dataset_parameter(write_config):
    cfg = tiny_config(datasets=[{"name": "parity-noise", "params": {"n_sample": 10}}])
    with pytest.raises(ConfigError, match=r"datasets\[0\].params.n_sample.*did you mean `n_samples`"):
        load_config(write_config(cfg))


def test_constructor_bugs_are_not_config_errors():
    """Only the validation errors an estimator raises become ConfigErrors."""
    from treebench.config import check_entry_params
    from treebench.registry import Entry

    class Buggy:
        def __init__(self, a=1):
            raise AttributeError("a bug, not bad input")

    class Picky:
        def __init__(self, a=1):
            if a < 0:
                raise ValueError("a must be >= 0")

    with pytest.raises(AttributeError):
        check_entry_params("x.yaml", "algorithms[0]", Entry("buggy", Buggy, "algorithm"), {"a": 1})
    with pytest.raises(ConfigError, match="a must be >= 0"):
        check_entry_params("x.yaml", "algorithms[0]", Entry("picky", Picky, "algorithm"), {"a": -1})


def test_more_folds_than_rows_is_refused_before_the_cells_are_made(monkeypatch):
    """`n_splits: 1000000` on iris expanded a million cells (41 s, 750 MB) before the data
    checks refused it: a split of many folds has its dataset's rows counted first."""
    from treebench.config import cells as cells_module
    from treebench.config import validate_config
    from treebench.errors import DataError

    exp = validate_config({"name": "kf", "datasets": ["iris"],
                           "split": {"kind": "kfold", "n_splits": 5000},
                           "binarization": {"method": "raw"},
                           "algorithms": [{"name": "cart", "params": {"max_depth": 2}}]})
    monkeypatch.setattr(cells_module, "_dataset_cells",
                        lambda *a, **k: pytest.fail("cells made before the fold check"))
    with pytest.raises(DataError, match="has 150 rows, fewer than the 5000 folds"):
        cells_module.expand_all(exp)
