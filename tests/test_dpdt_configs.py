"""The DPDT paper configs: they validate, carry `expect:` items with a
source, and only those with a `ci` profile are picked by `make reproduce` (the Makefile selects
configs whose text has a top-level ``profiles:`` key)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from treebench.config import load_config

CONFIGS = Path(__file__).resolve().parents[1] / "configs"
MAKE_SELECTS = re.compile(r"^profiles:", re.MULTILINE)  # `grep -l '^profiles:'` in the Makefile


@pytest.mark.parametrize("name", ["dpdt-regression", "dpdt-xor", "dpdt-kdd99"])
def test_config_validates_with_sourced_expectations(name):
    exp = load_config(CONFIGS / f"{name}.yaml")
    assert exp.expect and all(e.source for e in exp.expect)


@pytest.mark.parametrize("name", ["dpdt-regression", "dpdt-xor"])
def test_ci_profile_is_picked_by_make_reproduce(name):
    text = (CONFIGS / f"{name}.yaml").read_text(encoding="utf-8")
    assert MAKE_SELECTS.search(text)
    exp = load_config(CONFIGS / f"{name}.yaml", profile="ci")
    assert exp.expect


def test_kdd99_is_not_picked_by_make_reproduce():
    text = (CONFIGS / "dpdt-kdd99.yaml").read_text(encoding="utf-8")
    assert not MAKE_SELECTS.search(text)
    assert "profiles" not in yaml.safe_load(text)


def test_makefile_selection_is_the_one_tested():
    make = (CONFIGS.parent / "Makefile").read_text(encoding="utf-8")
    assert "grep -l '^profiles:' configs/*.yaml" in make


def test_regression_config_checks_the_theorem_per_depth():
    exp = load_config(CONFIGS / "dpdt-regression.yaml")
    rel = [e for e in exp.expect if e.compare is not None]
    assert rel and all(e.metric == "train_r2" and "param_max_depth" in e.per for e in rel)
