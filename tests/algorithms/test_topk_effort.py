"""How much Top-k at k = all (``tie_break="first"``) searches: the subproblems it expands
(``solve_info_["nodes_expanded"]``), deterministic counts rather than times. A split searches
first the child more likely to have no tree below the bound, so that its failure spares the
sibling's search (`search.topk.solve`); the trees themselves are compared with the plain
recursion in ``test_topk.py``.

Not marked ``kernels``: without compilation these searches are slow."""

from __future__ import annotations

import gzip
import os
import pathlib

import numpy as np
import pytest

from treebench.algorithms.topk import TopKClassifier


def _load_dl85(name):
    d = os.environ.get("TREEBENCH_DATA_DIR")
    if not d:
        pytest.skip("TREEBENCH_DATA_DIR is not set")
    p = pathlib.Path(d) / "binary-dl85" / f"{name}.txt"
    if not p.exists():
        p = p.with_suffix(".txt.gz")
    if not p.exists():
        pytest.skip(f"{name} is missing from the binary-dl85 datasets")
    with (gzip.open(p, "rt") if p.suffix == ".gz" else open(p)) as f:
        a = np.loadtxt(f, dtype=np.int64)
    return a[:, 1:].astype(np.float64), a[:, 0]


def _majority_of_three(seed, n=300, d=12):
    """The majority of three features, 5% label noise, nine irrelevant features."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, d)).astype(float)
    y = ((X[:, 0] + X[:, 1] + X[:, 2] >= 2) ^ (rng.random(n) < 0.05)).astype(int)
    return X, y


@pytest.mark.parametrize("seed", range(4))
def test_failing_child_first_spares_its_sibling(seed):
    X, y = _majority_of_three(seed)
    est = TopKClassifier(k="all", max_depth=4, tie_break="first").fit(X, y)
    assert est.solve_info_["optimal"]
    # child 0 always first: 254 to 267 subproblems on these four problems
    assert est.solve_info_["nodes_expanded"] <= 250


@pytest.mark.data
@pytest.mark.parametrize("name, depth, error, before, bound", [
    ("audiology", 4, 1.0, 2112, 1600),
    ("hepatitis", 4, 3.0, 1056, 830),
])
def test_dl85_fits_expand_fewer_subproblems(name, depth, error, before, bound):
    """Fits where the optimum is a few errors and most of the search proves it: child 0
    always first expanded ``before`` subproblems."""
    X, y = _load_dl85(name)
    est = TopKClassifier(k="all", max_depth=depth, tie_break="first").fit(X, y)
    assert est.solve_info_["training_error"] == error
    assert est.solve_info_["nodes_expanded"] <= bound < before
