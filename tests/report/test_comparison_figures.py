"""Pareto fronts (brute force against the definition) and critical-difference rankings."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from treebench.report.aggregate import load_results
from treebench.report.critical_difference import rank_settings, rankings
from treebench.report.pareto import pareto_front, pareto_table


def _dominated(i, size, acc):
    return any(size[j] <= size[i] and acc[j] >= acc[i] and (size[j] < size[i] or acc[j] > acc[i])
               for j in range(len(size)) if j != i)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.integers(0, 5)), min_size=1, max_size=9))
def test_pareto_front_is_the_set_of_non_dominated_points(points):
    size = np.array([p[0] for p in points], dtype=float)
    acc = np.array([p[1] for p in points], dtype=float)
    front = pareto_front(size, acc)
    want = {i for i in range(len(points)) if not _dominated(i, size, acc)}
    assert set(front.tolist()) == want
    assert list(size[front]) == sorted(size[front])  # drawn left to right
    # along the front, more leaves buy strictly more accuracy (ties in both kept once each)
    for a, b in itertools.pairwise(front):
        assert size[a] <= size[b] and (acc[a] < acc[b] or (size[a], acc[a]) == (size[b], acc[b]))


def test_pareto_front_skips_missing_values():
    size = np.array([1.0, np.nan, 3.0])
    acc = np.array([0.5, 0.9, 0.7])
    assert pareto_front(size, acc).tolist() == [0, 2]


def test_ranks_friedman_and_nemenyi_on_a_known_table():
    # setting "a" best on every dataset, "c" worst: ranks 1, 2, 3 exactly
    scores = pd.DataFrame({"a": [0.9, 0.8, 0.95, 0.7, 0.85, 0.9],
                           "b": [0.8, 0.7, 0.9, 0.6, 0.8, 0.85],
                           "c": [0.7, 0.6, 0.85, 0.5, 0.7, 0.8]},
                          index=[f"d{i}" for i in range(6)])
    r = rank_settings(scores, "t")
    assert r is not None
    assert r.ranks.to_dict() == {"a": 1.0, "b": 2.0, "c": 3.0}
    assert r.friedman_p < 0.01
    assert r.pvalues.loc["a", "c"] < 0.05 and r.pvalues.loc["a", "b"] > r.pvalues.loc["a", "c"]
    assert rank_settings(scores[["a", "b"]], "t") is None  # two settings: no Friedman test
    assert rank_settings(scores.iloc[:1], "t") is None     # one dataset: nothing to rank over


def test_rankings_per_depth_and_pareto_table(results_dir):
    res = load_results(results_dir)
    rs = rankings(res)
    assert [r.title for r in rs] == ["max_depth=2", "max_depth=3", "max_depth=4"]
    for r in rs:
        assert set(r.scores.index) == {"car", "tic-tac-toe"}
        assert np.isclose(r.ranks.sum(), len(r.ranks) * (len(r.ranks) + 1) / 2)
    # at depth 4, k = all lost every tic-tac-toe cell: it has no value there and is left out
    assert rs[-1].left_out == ["topk (k=all)"]
    front = pareto_table(res, "car", "n_leaves")
    assert len(front) >= 1 and front["test_accuracy_mean"].is_monotonic_increasing


def test_comparison_figures_are_written(tmp_path):
    from treebench.report import write_report

    from .conftest import synthetic_table, write_results

    res = write_results(tmp_path / "res", synthetic_table(),
                        figures=["critical_difference*", "pareto_*"])
    paths = write_report(res, tmp_path / "r")
    for stem in ("critical_difference_max_depth-2", "pareto_test_accuracy_vs_n_leaves"):
        assert any(stem in p.name for p in paths["png"]), stem


def test_tuned_entries_are_one_setting_and_cost_ranks_lowest_first(tmp_path):
    """A parameter chosen in the cell by `tune:` does not split its entry into settings (the NGI
    comparison ranks tuned methods), and expected cost ranks the cheapest first."""
    from .conftest import write_results

    from treebench.results import schema

    rows = []
    for d, (ds, base) in enumerate([("a", 0.9), ("b", 0.8), ("c", 0.7), ("e", 0.6)]):
        for seed in range(2):
            for algo, lam, acc, cost, tuned in [
                ("ECART", [1.0, 0.1][(d + seed) % 2], base, 2.0, "lam"),  # λ differs per cell
                ("CART", None, base - 0.05, 3.0, None),
                ("BAL", None, base - 0.1, 9.0, None),
            ]:
                rows.append({"experiment": "t", "cell_id": f"{ds}{seed}{algo}", "dataset": ds,
                             "fold": 0, "seed": seed, "algorithm": algo, "status": "ok",
                             "algorithm_params": "{}" if lam is None else f'{{"lam": {lam}}}',
                             "param_lam": lam, "tuned_params": tuned,
                             "test_accuracy": acc, "expected_cost_test": cost})
    table = schema.conform(pd.DataFrame(rows))
    res = load_results(write_results(tmp_path / "res", table))
    (acc,) = rankings(res, "test_accuracy")
    assert acc.left_out == [] and set(acc.ranks.index) == {"ECART", "CART", "BAL"}
    assert acc.ranks.to_dict() == {"ECART": 1.0, "CART": 2.0, "BAL": 3.0}
    (cost,) = rankings(res, "expected_cost_test")
    assert cost.ranks.to_dict() == {"ECART": 1.0, "CART": 2.0, "BAL": 3.0}


def test_pareto_leaves_are_the_effective_count(tmp_path):
    """The accuracy-vs-leaves Pareto plot reads ``n_leaves_effective`` (same-label siblings
    merged), like the other size plots: here CART's effective count is half its raw one, which
    puts its smallest tree on the front (by raw leaves Top-k dominates it)."""
    from treebench.report.pareto import pareto_figure

    from .conftest import synthetic_table, write_results

    table = synthetic_table()
    ok = table["status"] == "ok"
    table.loc[ok, "n_leaves_effective"] = table.loc[ok, "n_leaves"]
    cart = ok & (table["algorithm_label"] == "cart")
    table.loc[cart, "n_leaves_effective"] = table.loc[cart, "n_leaves"] // 2
    res = load_results(write_results(tmp_path / "res", table))
    s = res.settings[res.settings["dataset"] == "car"]
    front = pareto_table(res, "car", "n_leaves")
    assert "cart" in set(front["algorithm_label"])  # cart is on the front by effective leaves
    fig = pareto_figure(res, "car", "n_leaves", "leaves (mean over folds)")
    drawn = np.concatenate([c.get_offsets()[:, 0] for c in fig.axes[0].collections])
    assert sorted(drawn) == sorted(s["n_leaves_effective_mean"].dropna())
    (cart_dots,) = [c for c in fig.axes[0].collections if c.get_label() == "cart"]
    assert sorted(cart_dots.get_offsets()[:, 0]) == sorted(s.loc[s["algorithm_label"] == "cart",
                                                                 "n_leaves_effective_mean"])
    assert "same-label siblings merged" in fig.axes[0].get_xlabel()
