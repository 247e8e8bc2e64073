"""An algorithm entry restricted to some datasets (``datasets:`` on the entry):
per-dataset settings such as GOSDT's λ and reference model in one config."""

from __future__ import annotations

import pytest

from treebench.config.cells import expand
from treebench.config import load_config
from treebench.errors import ConfigError

from runs import tiny_config

TWO = ["iris", "breast_cancer"]


def _cells(write_config, name, **over):
    return expand(load_config(write_config(tiny_config(datasets=TWO, **over), name)))


def test_restricted_entries_make_cells_only_for_their_datasets(write_config):
    cells = _cells(write_config, "r.yaml", algorithms=[
        {"name": "cart", "label": "cart-iris", "params": {"max_depth": [1, 2]}, "datasets": ["iris"]},
        {"name": "cart", "label": "cart-bc", "params": {"max_depth": 3}, "datasets": "breast_cancer"},
        {"name": "cart", "label": "cart-all", "params": {"max_depth": 4}},
    ])
    by = {}
    for c in cells:
        by.setdefault(c.algorithm_label, set()).add(c.dataset)
    assert by == {"cart-iris": {"iris"}, "cart-bc": {"breast_cancer"},
                  "cart-all": {"iris", "breast_cancer"}}
    # 3 folds each: iris 2 depths + 1, breast_cancer 1 + 1
    assert len(cells) == 3 * (2 + 1 + 1 + 1)
    assert {c.algorithm_params["max_depth"] for c in cells if c.algorithm_label == "cart-iris"} == {1, 2}


def test_unrestricted_entries_keep_their_cell_ids(write_config):
    plain = {"name": "cart", "params": {"max_depth": [1, 2]}}
    before = _cells(write_config, "a.yaml", algorithms=[plain])
    after = _cells(write_config, "b.yaml", algorithms=[
        plain, {"name": "cart", "params": {"max_depth": 5}, "datasets": ["iris"]}])
    ids = {c.id for c in after}
    assert {c.id for c in before} <= ids
    # naming every dataset is the same as naming none: same cells, same ids
    every = _cells(write_config, "c.yaml", algorithms=[{**plain, "datasets": TWO}])
    assert [c.id for c in every] == [c.id for c in before]


def test_a_restriction_to_an_unknown_dataset_is_one_clear_sentence(write_config):
    with pytest.raises(ConfigError) as err:
        load_config(write_config(tiny_config(datasets=TWO, algorithms=[
            {"name": "cart", "params": {"max_depth": 2}, "datasets": ["iris", "breast_cancr"]}])))
    msg = str(err.value)
    assert "algorithms[0].datasets[1]" in msg
    assert "`breast_cancr` is not one of the config's datasets" in msg
    assert "did you mean `breast_cancer`" in msg
    assert "\n" not in msg


def test_an_empty_restriction_is_refused(write_config):
    with pytest.raises(ConfigError, match=r"algorithms\[0\]\.datasets"):
        load_config(write_config(tiny_config(datasets=TWO, algorithms=[
            {"name": "cart", "params": {"max_depth": 2}, "datasets": []}])))


def test_input_kinds_are_checked_only_where_the_entry_runs(write_config):
    # topk needs 0/1 features: with raw features everywhere but a quantile binarization on the
    # one dataset it is restricted to, the config is valid and topk runs only there
    cfg = tiny_config(
        datasets=["iris", {"name": "breast_cancer", "binarization": {"method": "quantile", "params": {"max_splits": 2}}}],
        algorithms=[{"name": "topk", "params": {"k": 1, "max_depth": 1}, "datasets": ["breast_cancer"]},
                    {"name": "cart", "params": {"max_depth": 1}}])
    cells = expand(load_config(write_config(cfg)))
    assert {c.dataset for c in cells if c.algorithm == "topk"} == {"breast_cancer"}
    assert {c.dataset for c in cells if c.algorithm == "cart"} == {"iris", "breast_cancer"}
