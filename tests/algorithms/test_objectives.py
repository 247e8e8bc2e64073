"""The problem each learner solves, and `objective:` asking every learner for the same one.

The pairing tests fit learners on the same data after asking for one problem and compare the
value of that problem's objective, computed here from the returned trees: equal values are what
makes a time comparison between them meaningful."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treebench.algorithms import objectives as O
from treebench.config import validate_config
from treebench.errors import ConfigError
from treebench.registry import ALGORITHMS


def _config(*entries):
    return {"name": "pairing", "datasets": [{"name": "iris"}],
            "binarization": [{"method": "quantile"}], "algorithms": list(entries)}


def _params(entry, objective):
    exp = validate_config(_config({**entry, "objective": objective}))
    return exp.algorithms[0].params


def test_every_built_in_learner_states_its_problem():
    for e in ALGORITHMS:
        if "test" in e.tags:
            continue
        problem = O.problem_of(e.name, e.parameters(), tuple(e.tags))
        assert problem in O.PROBLEMS
        assert problem != "unstated", e.name
        for asked in O.askable(e.name):
            assert asked in O.ASKABLE


@pytest.mark.parametrize("name, objective", [
    (name, problem) for name, s in O.declarations().items() for problem in s.asks
])
def test_asking_gives_the_problem_asked(name, objective):
    """After `ask`, `problem_of` (on the learner's defaults + the asked settings) is the
    problem asked; a weight of 0.01 where the problem has one."""
    if name not in ALGORITHMS:
        pytest.skip(f"{name} is not registered in this build")
    entry = ALGORITHMS.get(name)
    params = {}
    weight = O.PROBLEM_PARAMETER.get(objective)
    if weight:
        params[weight] = 0.01
    asked = O.ask(name, objective, params)
    assert O.problem_of(name, {**entry.parameters(), **asked}) == objective


def test_config_objective_sets_the_parameters():
    assert _params({"name": "topk", "params": {"max_depth": 3}}, "min-errors") == {
        "max_depth": 3, "k": "all", "tie_break": "first", "min_improvement": None}
    assert _params({"name": "topk"}, "min-errors-then-nodes")["min_improvement"] == 0.0
    assert _params({"name": "gosdt", "params": {"lambda": [0.01, 0.1]}},
                   "errors+lambda*leaves") == {"regularization": [0.01, 0.1], "lb_guess": None,
                                               "lexicographic": False}


def test_config_objective_is_idempotent():
    """A validated config validates to itself (a resumed run re-reads the stored config)."""
    exp = validate_config(_config({"name": "topk", "objective": "min-errors"}))
    again = validate_config(exp.model_dump(exclude_defaults=True))
    assert again.algorithms[0].params == exp.algorithms[0].params


@pytest.mark.parametrize("entry, words", [
    ({"name": "cart", "objective": "min-errors"}, "`cart` cannot be asked"),
    ({"name": "topk", "objective": "min-errors", "params": {"tie_break": "smaller"}},
     "remove `tie_break`"),
    ({"name": "topk", "objective": "fastest"}, "unknown objective"),
    ({"name": "gosdt", "objective": "errors+lambda*leaves",
      "params": {"lambda": 0.1, "regularization": 0.1}}, "not both"),
])
def test_config_objective_errors_name_the_key(entry, words):
    with pytest.raises(ConfigError) as info:
        validate_config(_config(entry))
    assert "algorithms[0].objective" in str(info.value) and words in str(info.value)


def test_cli_lists_the_problem_of_every_learner():
    from typer.testing import CliRunner

    from treebench.cli import app

    out = CliRunner().invoke(app, ["algorithms"], terminal_width=250).output
    assert "solves" in out and "topk-search-space" in out and "errors+lambda*leaves" in out


# --------------------------------------------------------------------- pairings, same problem
def _data(seed, n=80, f=7):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n, f)).astype(np.uint8)
    y = ((X[:, 0] & X[:, 1]) | (X[:, 2] ^ (rng.random(n) < 0.25))).astype(int)
    return X, y


def _fit(name, objective, X, y, **params):
    entry = ALGORITHMS.get(name)
    est = entry.create(**O.ask(name, objective, params))
    return est.fit(X, y)


def _errors(est, X, y):
    return int(np.sum(est.predict(X) != y))


def _nodes(est):
    return int(est.tree_.n_nodes)


@pytest.mark.peers
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [2, 3])
def test_min_errors_is_one_problem(seed, depth):
    X, y = _data(seed)
    fits = {n: _fit(n, "min-errors", X, y, max_depth=depth) for n in ("topk", "streed", "dl85")}
    errors = {n: _errors(e, X, y) for n, e in fits.items()}
    assert len(set(errors.values())) == 1, errors


@pytest.mark.peers
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("depth", [2, 3])
def test_min_errors_then_nodes_is_one_problem(seed, depth):
    """Top-k (min_improvement 0, ties to fewer nodes) and STreeD (a cost per branching node
    below one error for the whole tree) return trees with equal errors and equal node counts;
    both at most the errors, and at most the nodes among those, of the min-errors trees."""
    X, y = _data(seed)
    topk = _fit("topk", "min-errors-then-nodes", X, y, max_depth=depth)
    streed = _fit("streed", "min-errors-then-nodes", X, y, max_depth=depth)
    gosdt = _fit("gosdt", "min-errors-then-nodes", X, y, max_depth=depth)
    assert (_errors(topk, X, y), _nodes(topk)) == (_errors(streed, X, y), _nodes(streed))
    assert (_errors(gosdt, X, y), _nodes(gosdt)) == (_errors(topk, X, y), _nodes(topk))
    plain = _fit("streed", "min-errors", X, y, max_depth=depth)
    assert _errors(topk, X, y) == _errors(plain, X, y) and _nodes(topk) <= _nodes(plain)


@pytest.mark.peers
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("lam", [0.01, 0.05])
def test_errors_plus_lambda_leaves_is_one_problem(seed, lam):
    X, y = _data(seed)
    values = {}
    for name in ("gosdt", "streed"):
        est = _fit(name, "errors+lambda*leaves", X, y, max_depth=3, **{"lambda": lam})
        values[name] = _errors(est, X, y) / len(y) + lam * est.tree_.n_leaves
    assert values["gosdt"] == pytest.approx(values["streed"], abs=1e-12), values


@pytest.mark.peers
@pytest.mark.parametrize("seed", range(3))
def test_contree_lexicographic_keeps_the_errors_with_fewest_nodes(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(70, 3)).astype(float)
    y = ((X[:, 0] > 1) ^ (rng.random(70) < 0.2)).astype(int)
    plain = _fit("contree", "min-errors", X, y, max_depth=2)
    lex = _fit("contree", "min-errors-then-nodes", X, y, max_depth=2)
    assert _errors(lex, X, y) == _errors(plain, X, y)
    assert _nodes(lex) <= _nodes(plain)
    # brute force over depth-1 trees and a leaf: fewest nodes among the min-error trees
    best_leaf = len(y) - np.bincount(y).max()
    if _errors(plain, X, y) == best_leaf:
        assert _nodes(lex) == 1


@pytest.mark.peers
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("depth", [2, 3])
def test_numeric_min_errors_then_nodes_is_one_problem(seed, depth):
    """optimal-numeric and ConTree asked for `min-errors-then-nodes` on raw numeric features
    return trees with equal errors and equal node counts, at most the nodes of optimal-numeric's
    `min-errors` tree (whose errors are the same)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(90, 3)).astype(float)
    y = ((X[:, 0] > 2) ^ (X[:, 1] > 3) ^ (rng.random(90) < 0.15)).astype(int)
    ours = _fit("optimal-numeric", "min-errors-then-nodes", X, y, max_depth=depth)
    contree = _fit("contree", "min-errors-then-nodes", X, y, max_depth=depth)
    assert (_errors(ours, X, y), _nodes(ours)) == (_errors(contree, X, y), _nodes(contree))
    plain = _fit("optimal-numeric", "min-errors", X, y, max_depth=depth)
    assert _errors(plain, X, y) == _errors(ours, X, y) and _nodes(ours) <= _nodes(plain)


def test_optimal_numeric_lexicographic_needs_the_errors_objective():
    X = np.arange(12, dtype=float).reshape(6, 2)
    y = np.array([0, 1, 0, 1, 1, 0])
    params = dict(max_depth=2, objective="error_rate+lambda*leaves", lexicographic=True)
    assert O.problem_of("optimal-numeric", params) == "unstated"
    with pytest.raises(ValueError, match="needs objective='errors'"):
        ALGORITHMS.get("optimal-numeric").create(**params).fit(X, y)
    entry = {"name": "optimal-numeric", "params": params}  # refused before any cell runs
    with pytest.raises(ConfigError, match="needs objective='errors'"):
        validate_config({"name": "x", "datasets": [{"name": "iris"}],
                         "binarization": [{"method": "raw"}], "algorithms": [entry]})


def test_optimal_numeric_lexicographic_reports_in_the_callers_units():
    """With whole-number weights the solve info holds the weighted errors of the returned
    tree (not the search's scaled costs), kind "errors"."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 5, size=(40, 2)).astype(float)
    y = ((X[:, 0] > 2) ^ (rng.random(40) < 0.2)).astype(int)
    w = rng.integers(1, 4, size=40).astype(float)
    est = ALGORITHMS.get("optimal-numeric").create(max_depth=2, lexicographic=True).fit(X, y, w)
    errors = float(np.sum(w[est.predict(X) != y]))
    info = est.solve_info_
    assert info["objective"] == info["training_error"] == errors
    assert info["objective_kind"] == "errors" and info["optimal"]


@pytest.mark.parametrize("seed", range(6))
def test_gosdt_lexicographic_matches_topk_with_whole_weights(seed):
    """The GOSDT solver with `lexicographic` against Top-k's lexicographic search (its own
    naive twin is tested in test_topk), with whole-number weights and without a depth budget
    at small data; weights that no power of two makes whole (tenths) are refused with a
    sentence."""
    rng = np.random.default_rng(seed)
    X, y = _data(seed, n=40, f=5)
    w = rng.integers(1, 4, size=len(y)).astype(float)
    for depth in (1, 2, 3):
        g = ALGORITHMS.get("gosdt").create(max_depth=depth, lexicographic=True).fit(X, y, w)
        t = ALGORITHMS.get("topk").create(k="all", max_depth=depth, min_improvement=0.0,
                                          tie_break="smaller").fit(X, y, w)
        werr = lambda e: float(np.sum(w[e.predict(X) != y]))  # noqa: E731
        assert (werr(g), _nodes(g)) == (werr(t), _nodes(t))
    with pytest.raises(ValueError, match="one power of two turns into whole numbers"):
        ALGORITHMS.get("gosdt").create(max_depth=2, lexicographic=True).fit(X, y, w + 0.1)


def test_lexicographic_penalty_is_an_exact_power_of_two_below_one_error():
    from treebench.algorithms.gosdt import lexicographic_penalty

    for n in (1, 2, 3, 17, 1000):
        for depth in (None, 0, 1, 3, 10, 70):
            p = lexicographic_penalty(np.ones(n), depth)
            leaves = n if depth is None else min(2 ** depth, n)
            assert p * leaves < 1 and math.frexp(p)[0] == 0.5


def test_lexicographic_cost_is_below_one_error_for_the_largest_tree():
    from treebench.algorithms.peers import lexicographic_cost

    for n in (1, 7, 1000, 10**6):
        for depth in range(0, 8):
            c = lexicographic_cost(n, depth)
            assert c > 0 and c * n * (2 ** depth - 1) < 1


def test_results_rows_name_the_problem_of_each_cell(tmp_path):
    """A run's table has a `problem` column: the asked problem for an entry with `objective:`,
    the default's problem otherwise."""
    import pandas as pd
    import yaml
    from typer.testing import CliRunner

    from treebench.cli import app

    cfg = _config({"name": "topk", "objective": "min-errors", "params": {"max_depth": 2}},
                  {"name": "topk", "params": {"k": "all", "max_depth": 2}, "label": "fig1"},
                  {"name": "cart", "params": {"max_depth": 2}})
    cfg["split"] = {"kind": "holdout", "seeds": [0]}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "r"), "--no-report",
                                   "-j", "1"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(tmp_path / "r" / "results.csv")
    got = dict(zip(df["algorithm_label"], df["problem"]))
    assert got == {"topk": "min-errors", "fig1": "topk-figure1", "cart": "greedy"}


# --------------------------------------------------------------------- leaf-size restrictions
#: the optimal learners with a smallest leaf size, and its parameter
LEAF_SIZE = [("topk", "min_samples_leaf", {"k": "all", "tie_break": "first"}), ("dpdt", "min_samples_leaf",
             {"candidates": "exhaustive"}), ("streed", "min_samples_leaf", {}),
             ("dl85", "min_sup", {}), ("pytrees-dl85", "min_sup", {}),
             ("pytrees-contree", "min_sup", {})]


@pytest.mark.parametrize("name, param, base", LEAF_SIZE)
def test_a_leaf_size_above_one_is_a_restricted_problem(name, param, base):
    """With leaves of at least m > 1 rows the optimum may have more errors than over all
    trees: the problem is `leaf-size-restricted`, measured by the unrestricted objective
    (errors); at m = 1 the problem is the learner's usual one."""
    if name not in ALGORITHMS:
        pytest.skip(f"{name} is not registered in this build")
    params = {**ALGORITHMS.get(name).parameters(), **base}
    assert O.problem_of(name, {**params, param: 1}) == "min-errors"
    assert O.problem_of(name, {**params, param: 3}) == "leaf-size-restricted"
    assert O.objective_of(name, {**params, param: 3}) == O.Objective("errors")
    with pytest.raises(ValueError, match=f"needs `{param}` at 1 for `{name}`"):
        O.ask(name, "min-errors", {param: 3})
    assert O.ask(name, "min-errors", {param: 1})[param] == 1
    assert param not in O.ask(name, "min-errors", {})  # the cell's parameters as given


def test_a_config_asking_min_errors_with_a_leaf_size_is_refused():
    with pytest.raises(ConfigError) as info:
        validate_config(_config({"name": "topk", "objective": "min-errors",
                                 "params": {"min_samples_leaf": 3}}))
    assert "algorithms[0].objective" in str(info.value)
    assert "needs `min_samples_leaf` at 1" in str(info.value)


@pytest.mark.peers
def test_leaf_size_restricted_optima_are_not_certificates(tmp_path):
    """STreeD, Top-k (k = all) and DPDT with leaves of at least 2 or 3 rows prove optima of
    their restricted spaces (1 and 3 errors here, where the optimum over all trees has 0):
    their rows say `leaf-size-restricted`, and neither they nor two leaf sizes of one learner
    (one instance of the certificate check: the leaf size is no part of it) break a
    certificate; `treebench verify` passes."""
    pytest.importorskip("pystreed")
    import pandas as pd
    import yaml
    from typer.testing import CliRunner

    from treebench.cli import app

    rows = ["0,0,0"] * 4 + ["0,1,1"] * 2 + ["1,0,1"] + ["1,1,0"] * 2
    (tmp_path / "msl.csv").write_text("a,b,y\n" + "\n".join(rows) + "\n")
    entries = [{"name": n, "params": {"max_depth": 2, "min_samples_leaf": [1, 2, 3], **extra}}
               for n, extra in (("streed", {}), ("topk", {"k": "all", "tie_break": "first"}),
                                ("dpdt", {"candidates": "exhaustive"}))]
    cfg = {"name": "msl", "datasets": [{"path": "msl.csv", "label": "y"}],
           "split": {"kind": "full"}, "binarization": {"method": "none"},
           "algorithms": entries, "execution": {"n_jobs": 1, "backend": "sequential"}}
    (tmp_path / "msl.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(tmp_path / "msl.yaml"), "-o", str(out), "-q",
                                 "--no-report"])
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out / "results.parquet")
    assert (df["status"] == "ok").all()
    free, held = df[df["param_min_samples_leaf"] == 1], df[df["param_min_samples_leaf"] > 1]
    assert set(free["problem"]) == {"min-errors"} and set(free["problem_objective"]) == {0.0}
    assert set(held["problem"]) == {"leaf-size-restricted"}
    assert (held["problem_objective"] > 0).all()
    by_size = held.groupby("param_min_samples_leaf")["problem_objective"].agg(set).to_dict()
    assert by_size == {2: {1.0}, 3: {3.0}}  # each learner proves each restricted optimum
    assert held["optimal"].all()
    r = CliRunner().invoke(app, ["verify", str(out)])
    assert r.exit_code == 0, r.output
