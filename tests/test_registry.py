"""Input kinds declared in registry entries: one declaration drives
validation, `accepts`, binary-only input checks and scikit-learn's tags."""

from __future__ import annotations

import numpy as np
import pytest

from treebench.algorithms.base import TreeClassifierBase
from treebench.config import validate_config
from treebench.errors import ConfigError
from treebench.registry import (
    ALGORITHMS,
    INPUT_KINDS,
    Registry,
    accepts,
    binarizer_output,
    declare_inputs,
)
from treebench.tree.arrays import TreeArrays


def test_every_algorithm_declares_known_kinds():
    for e in ALGORITHMS:
        assert "binary" in e.inputs and e.inputs <= set(INPUT_KINDS), e.name
        if isinstance(e.obj, type) and issubclass(e.obj, TreeClassifierBase):
            assert e.obj.input_kinds == e.inputs
            assert e.obj.binary_features_only == ("numeric" not in e.inputs)


def test_accepts():
    assert accepts(ALGORITHMS.get("cart"), "numeric")
    assert not accepts(ALGORITHMS.get("greedy"), "numeric")
    assert accepts(ALGORITHMS.get("greedy"), "weights")
    assert not accepts(ALGORITHMS.get("dl85"), "weights")  # whole-number weights only
    with pytest.raises(ValueError, match="unknown input kind"):
        accepts(ALGORITHMS.get("cart"), "images")
    assert binarizer_output("raw") == "numeric" and binarizer_output("quantile") == "binary"


def _toy_class():
    class Toy(TreeClassifierBase):
        """Majority leaf."""

        _parameter_constraints: dict = {}

        def _fit_tree(self, X, y_index, ctx):
            return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}

    return Toy


def test_declaration_sets_validation_and_sklearn_tags():
    reg = Registry("algorithm", (), "none")
    Toy = reg.register("toy", inputs=("binary", "weights"))(_toy_class())
    assert reg.get("toy").inputs == {"binary", "weights"}
    tags = Toy().__sklearn_tags__()
    assert tags.classifier_tags.multi_class is False and tags.input_tags.allow_nan is False
    assert tags.input_tags.categorical is False
    X = np.array([[0.0], [1.0], [1.0]])
    Toy().fit(X, [0, 1, 1])
    with pytest.raises(ValueError, match="takes two classes, but y has 3"):
        Toy().fit(X, [0, 1, 2])
    with pytest.raises(ValueError, match="0/1 features"):
        Toy().fit(X + 0.5, [0, 1, 1])
    Wide = reg.register("wide", inputs=("binary", "numeric", "multiclass", "categorical"))(
        _toy_class())
    tags = Wide().__sklearn_tags__()
    assert tags.classifier_tags.multi_class and tags.input_tags.categorical
    Wide().fit(X + 0.5, [0, 1, 2])


def test_declaration_errors_and_defaults():
    with pytest.raises(ValueError, match="unknown input kind `images`"):
        declare_inputs(object, ("binary", "images"))
    with pytest.raises(ValueError, match="declare `binary`"):
        declare_inputs(object, ("numeric",))
    Toy = _toy_class()
    Toy.binary_features_only = True
    assert declare_inputs(Toy, None) == {"binary", "weights", "multiclass"}


def _cfg(binarization, algorithm="greedy"):
    return {"name": "k", "datasets": ["iris"], "binarization": binarization,
            "algorithms": [algorithm]}


def test_config_refuses_a_binary_learner_without_a_binarizer():
    with pytest.raises(ConfigError, match=r"algorithms\[0\].name`: algorithm `greedy` takes 0/1"):
        validate_config(_cfg("raw"))
    validate_config(_cfg([{"method": "raw"}, {"method": "quantile"}]))
    validate_config(_cfg("raw", "cart"))


def test_one_pairing_rule_for_validation_and_expansion():
    """Config validation and cell expansion pair learners with binarizations by the same rule:
    expansion skips exactly the pairs `accepts_binarization` refuses, and a config whose only
    binarization is refused for a learner is an error for exactly those learners."""
    from treebench.config.cells import expand_all
    from treebench.errors import ConfigError
    from treebench.registry import ALGORITHMS, accepts_binarization

    for entry in ALGORITHMS:
        if entry.missing or entry.name.startswith("test-"):
            continue
        dataset = "diabetes" if accepts(entry, "regression") else "iris"
        both = {"name": "pairing", "datasets": [dataset], "split": {"kind": "holdout"},
                "binarization": [{"method": "raw"}, {"method": "quantile"}],
                "algorithms": [{"name": entry.name}]}
        skipped = {s.binarizer for s in expand_all(validate_config(both)).skipped}
        assert skipped == {m for m in ("raw", "quantile") if not accepts_binarization(entry.name, m)}
        raw_only = {**both, "binarization": [{"method": "raw"}]}
        if accepts_binarization(entry.name, "raw"):
            validate_config(raw_only)
        else:
            with pytest.raises(ConfigError, match="takes 0/1 features"):
                validate_config(raw_only)
