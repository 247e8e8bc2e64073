"""Golden values: DPDT's Table 1 (KDD 2025; depth 3, training accuracy / operations) on the
Quant-BnB training files, as reproduced by the authors' code with B = (16, 1, 1) "light" and
(16, 16, 16) "full". Accuracies within 0.001, operations within 2 %, with the
authors' CART convention: scikit-learn's tie-breaking (``tie_break="sklearn"``) and their
default ``random_state=42``. Needs ``TREEBENCH_DATA_DIR``; the larger files are marked
slow (``pytest -m slow``)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from treebench.algorithms.dpdt import DPDTClassifier

# name: (N, p, CART acc, light acc, light ops, full acc, full ops)
TABLE1 = {
    "bank": (1097, 4, .933, .971, 271, .980, 7990),
    "raisin": (720, 7, .869, .879, 295, .886, 20900),
    "wilt": (4339, 5, .993, .994, 274, .995, 11300),
    "rice": (3048, 7, .933, .934, 298, .937, 25500),
    "segment": (1848, 18, .574, .812, 220, .879, 16300),
    "page": (4378, 10, .964, .970, 298, .970, 22400),
    "bidding": (5056, 9, .981, .985, 256, .993, 9360),
    "fault": (1552, 27, .553, .672, 295, .674, 24200),
    "room": (8103, 16, .968, .991, 286, .992, 16100),
    "occupancy": (8143, 5, .989, .991, 280, .994, 16300),
    "htru": (14318, 8, .979, .979, 295, .980, 25300),
    "magic": (15216, 10, .801, .822, 298, .828, 28000),
    "eeg": (11984, 14, .666, .689, 289, .706, 26000),
    "avila": (10430, 10, .532, .574, 268, .585, 24700),
    "bean": (10888, 16, .777, .812, 295, .853, 25900),
}
FAST = ("bank", "raisin", "segment", "room")
# room's sensor columns have few distinct values, so CART meets many equal-Gini splits and the
# full count depends on how they are broken: with the lower-feature-index rule it is 16687
# (3.6 % off), with scikit-learn's rule and the authors' seed 42 it is 16127 (0.2 %).
PAPER_CONVENTION = dict(tie_break="sklearn", random_state=42)


def load_quantbnb_train(name):
    base = os.environ.get("TREEBENCH_DATA_DIR")
    if not base:
        pytest.skip("TREEBENCH_DATA_DIR is not set")
    d = Path(base) / "quantbnb" / "train"
    path = next((p for p in (d / f"{name}.txt", d / f"{name}.txt.gz") if p.exists()), None)
    if path is None:
        pytest.skip(f"quantbnb/train/{name} is not in the data directory")
    A = np.loadtxt(path)
    return A[:, 1:], A[:, 0].astype(int)


def _check(name):
    N, p, cart, lacc, lops, facc, fops = TABLE1[name]
    X, y = load_quantbnb_train(name)
    assert X.shape == (N, p)
    from sklearn.tree import DecisionTreeClassifier

    assert DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y).score(X, y) == (
        pytest.approx(cart, abs=1e-3))
    for budgets, acc, ops in (((16, 1, 1), lacc, lops), ((16, 16, 16), facc, fops)):
        info = DPDTClassifier(max_depth=3, budgets=budgets, **PAPER_CONVENTION).fit(
            X, y).solve_info_
        assert info["training_accuracy"] == pytest.approx(acc, abs=1e-3), budgets
        assert abs(info["operations"] - ops) <= 0.02 * ops, (budgets, info["operations"])


@pytest.mark.parametrize("name", FAST)
def test_table1_small(name):
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in TABLE1 if n not in FAST])
def test_table1_large(name):
    _check(name)


# Top-B (the paper's baseline generator; ops = candidate splits), as the authors' code reproduces it
TOPB = {
    ("bank", (8, 1, 1)): (.951, 26), ("bank", (8, 8, 8)): (.974, 256),
    ("segment", (16, 1, 1)): (.786, 68), ("segment", (16, 16, 16)): (.825, 11400),
    ("bidding", (16, 16, 16)): (.993, 2700),
}


@pytest.mark.parametrize("name, budgets", list(TOPB))
def test_table1_topb(name, budgets):
    acc, ops = TOPB[(name, budgets)]
    X, y = load_quantbnb_train(name)
    info = DPDTClassifier(max_depth=3, candidates="topb", budgets=budgets).fit(X, y).solve_info_
    assert info["training_accuracy"] == pytest.approx(acc, abs=1e-3)
    assert abs(info["operations"] - ops) <= 0.02 * ops
