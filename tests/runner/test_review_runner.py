"""Regression tests of the runner and of the results layer found in reviews. Each fails on the
code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench import api
from treebench.cli import app
from treebench.errors import ConfigError
from treebench.results.store import read_table

from naive import naive_effective_leaves, naive_tie_label
from .conftest import tiny_config

runner = CliRunner()


def _run(path, out, **kw):
    kw.setdefault("progress", False)
    kw.setdefault("report", False)
    return api.run_experiment(path, api.RunOptions(out=out, **kw))


# ----------------------------------------------------------------------------- A8 sweeps add
def test_sweep_adds_to_the_experiment_results_and_resumes(write_config, tmp_path):
    path = write_config(tiny_config())  # cart max_depth 1, 2 on 3 folds: 6 cells
    out = tmp_path / "o"
    assert _run(path, out).n_ran == 6
    s = _run(path, out, sweep={"depth": [3]})
    assert s.n_ran == 3
    df = read_table(out / "results.parquet")
    assert len(df) == 9  # the experiment's 6 rows are kept beside the sweep's 3
    assert sorted(set(df["param_max_depth"])) == [1, 2, 3]
    assert _run(path, out, sweep={"depth": [3]}).n_ran == 0  # a rerun resumes
    man = json.loads((out / "manifest.json").read_text())
    assert man["config"]["algorithms"][0]["params"]["max_depth"] == [1, 2]  # not replaced
    assert [r["command"] for r in man["runs"]] == ["run", "sweep"]  # the no-op rerun adds none
    sweep = man["experiments"][1]  # the sweep is a variant: its own record and cells
    assert sweep["kind"] == "variant" and sweep["n_cells"] == 3
    assert sweep["config"]["algorithms"][0]["params"]["max_depth"] == [3]


def test_force_refuses_to_discard_finished_cells_without_overwrite(write_config, tmp_path):
    path = write_config(tiny_config(split={"kind": "holdout", "seeds": [0]}))
    _run(path, tmp_path / "o")
    r = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "o"), "--force", "-q", "--no-report"])
    assert r.exit_code == 2 and "--overwrite" in r.output
    r = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "o"), "--force", "--overwrite",
                            "-q", "--no-report"])
    assert r.exit_code == 0, r.output


# ----------------------------------------------------------------------------- A9 environment
def test_unwritable_results_dir_and_zero_jobs_exit_2_with_one_sentence(write_config, tmp_path):
    path = write_config(tiny_config())
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for cmd in (["run", str(path), "-o", str(blocker / "out")],
                ["sweep", str(path), "--depth", "1", "-o", str(blocker / "out")],
                ["run", str(path), "-j", "0", "-o", str(tmp_path / "o")]):
        r = runner.invoke(app, cmd)
        assert r.exit_code == 2, (cmd, r.output)
        assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
    _run(path, tmp_path / "ok")
    r = runner.invoke(app, ["report", str(tmp_path / "ok"), "-o", str(blocker / "rep")])
    assert r.exit_code == 2 and "cannot write" in r.output


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_results_dir_exits_2(write_config, tmp_path):
    path = write_config(tiny_config())
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        r = runner.invoke(app, ["run", str(path), "-o", str(ro / "out")])
        assert r.exit_code == 2 and "cannot write" in r.output
    finally:
        ro.chmod(0o755)


def test_negative_n_jobs_follow_joblib():
    from treebench.execute.executor import effective_n_jobs

    n = os.cpu_count() or 1
    assert effective_n_jobs(-1) == n
    assert effective_n_jobs(-2) == max(n - 1, 1)
    assert effective_n_jobs(-1000) == 1
    assert effective_n_jobs(3) == 3


def test_manifest_records_the_workers_used(write_config, tmp_path):
    path = write_config(tiny_config(split={"kind": "holdout", "seeds": [0]}))  # 2 cells
    s = _run(path, tmp_path / "o", n_jobs=-1, backend="loky")
    man = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert man["n_jobs"] == -1
    assert man["n_jobs_used"] == min(os.cpu_count() or 1, 2) == s.n_jobs


# ----------------------------------------------------------------------------- A10 validation
def test_binary_learner_on_raw_features_is_a_config_error(write_config):
    from treebench.config import load_config

    bad = write_config(tiny_config(algorithms=[{"name": "topk", "params": {"k": 1, "max_depth": 2}}]))
    with pytest.raises(ConfigError, match=r"algorithms\[0\].*takes 0/1 features"):
        load_config(bad)


def test_per_algorithm_binarization_pairs_learners_with_inputs_they_accept(write_config):
    from treebench.cells import expand_all
    from treebench.config import load_config

    cfg = tiny_config(
        binarization=[{"method": "raw"}, {"method": "quantile", "params": {"max_splits": 4}}],
        algorithms=[{"name": "cart", "params": {"max_depth": 2}},
                    {"name": "topk", "params": {"k": 1, "max_depth": 2}},
                    {"name": "cart", "label": "cart-raw", "params": {"max_depth": 3},
                     "binarization": "raw"}],
        split={"kind": "holdout", "seeds": [0]})
    exp = load_config(write_config(cfg))
    e = expand_all(exp)
    pairs = {(c.algorithm_label, c.binarizer) for c in e.cells}
    assert pairs == {("cart", "raw"), ("cart", "quantile"), ("topk", "quantile"), ("cart-raw", "raw")}
    assert [(s.algorithm, s.binarizer) for s in e.skipped] == [("topk", "raw")]
    assert "needs 0/1 features" in e.skipped[0].reason


def test_misspelt_top_level_key_suggests_the_closest(write_config):
    from treebench.config import load_config

    cfg = tiny_config()
    cfg["algoritms"] = cfg.pop("algorithms")
    with pytest.raises(ConfigError, match="did you mean `algorithms`"):
        load_config(write_config(cfg))
    cfg = tiny_config(limits={"tme": 3})
    with pytest.raises(ConfigError, match="did you mean `time`"):
        load_config(write_config(cfg))


def test_sweep_flag_errors_name_the_flag(write_config, tmp_path):
    path = write_config(tiny_config())
    r = runner.invoke(app, ["sweep", str(path), "--depth", "-1", "--dry-run"])
    assert r.exit_code == 2
    assert "`--depth`" in r.output and "key `" not in r.output
    r = runner.invoke(app, ["sweep", str(path), "--k", "1,2", "--dry-run"])
    assert r.exit_code == 2 and "`--k`" in r.output and "key `" not in r.output
    r = runner.invoke(app, ["sweep", str(path), "--depth", "5..2", "--dry-run"])
    assert r.exit_code == 2 and "`--depth 5..2`" in r.output


def test_dry_run_loads_data_and_checks_labels_without_fitting(write_config, tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,y\n1,2,x\n3,4,y\n5,6,x\n7,8,y\n1,1,x\n2,2,y\n")
    cfg = tiny_config(datasets=[{"path": str(csv), "label": "nope"}], split={"kind": "holdout", "seeds": [0]})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert "nope" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "o" / "cells").exists()
    cfg = tiny_config(datasets=[{"path": str(csv), "label": "y"}], split={"kind": "holdout", "seeds": [0]})
    r = runner.invoke(app, ["run", str(write_config(cfg)), "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "data checked: 1" in r.output and not (tmp_path / "o" / "cells").exists()


def test_piped_dry_run_table_is_not_cut_at_80_columns(write_config, tmp_path):
    path = write_config(tiny_config(algorithms=[{"name": "cart", "params": {
        "max_depth": [1, 2], "min_samples_leaf": [1], "criterion": ["entropy"], "ccp_alpha": [0.0]}}]))
    out = subprocess.run([sys.executable, "-m", "treebench.cli", "run", str(path), "--dry-run",
                          "-o", str(tmp_path / "o")], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "80"}, check=True).stdout
    assert "ccp_alpha=0.0, criterion=entropy, max_depth=1, min_samples_leaf=1" in out
    assert max(len(line) for line in out.splitlines()) > 80


def test_lambda_says_which_parameter_it_became(write_config, tmp_path):
    path = write_config(tiny_config())
    r = runner.invoke(app, ["sweep", str(path), "--lambda", "0.0,0.01", "--dry-run", "-o", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    assert "--lambda → ccp_alpha (cart)" in r.output


# ----------------------------------------------------------------------------- A11 limits
def test_retry_with_a_new_time_limit_reruns_only_timed_out_cells_and_keeps_history(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 1}},
                                  {"name": "test-sleep", "params": {"seconds": 3}}],
                      split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.3})
    path = write_config(cfg)
    out = tmp_path / "o"
    s = _run(path, out)
    assert s.counts == {"ok": 1, "timeout": 1}
    before = read_table(out / "results.parquet")
    s = _run(path, out, retry=("timeout",), time_limit=30)
    assert s.n_ran == 1  # only the timed-out cell, not every cell
    after = read_table(out / "results.parquet")
    assert sorted(after["cell_id"]) == sorted(before["cell_id"])  # same ids, own record replaced
    row = after[after["algorithm_label"] == "test-sleep"].iloc[0]
    assert row["status"] == "ok" and row["time_limit"] == 30
    hist = json.loads(row["history"])
    assert [h["status"] for h in hist] == ["timeout"] and hist[0]["time_limit"] == 0.3
    assert pd.isna(after[after["algorithm_label"] == "cart"].iloc[0]["history"])


# ----------------------------------------------------------------------------- A12
def test_show_says_a_cell_timed_out(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "test-sleep", "params": {"seconds": 3}}],
                      split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.3})
    out = tmp_path / "o"
    _run(write_config(cfg), out)
    cid = read_table(out / "results.parquet")["cell_id"].iloc[0]
    r = runner.invoke(app, ["show", str(out), cid[:8]])
    assert r.exit_code == 2 and "timed out" in r.output


def test_parquet_parameter_columns_are_typed(tmp_path):
    import pyarrow.parquet as pq

    from treebench.results.store import to_frame, write_tables

    rows = []
    for i, (k, depth, crit, alpha) in enumerate([(1, 2, "gini", 0.0), ("all", 3, "entropy", 0.5)]):
        rows.append({"cell_id": f"c{i}", "dataset": "d", "algorithm": "a", "status": "ok",
                     "param_k": k, "param_max_depth": depth, "param_criterion": crit,
                     "param_alpha": alpha, "bparam_flag": True})
    pq_path, _ = write_tables(tmp_path, to_frame(rows, experiment="e"))
    types = {f.name: str(f.type) for f in pq.read_schema(pq_path)}
    assert types["param_max_depth"] == "int64"
    assert types["param_alpha"] == "double"
    assert types["param_criterion"] in ("string", "large_string")
    assert types["param_k"] in ("string", "large_string")
    assert types["bparam_flag"] == "bool"
    raw = pd.read_parquet(pq_path)
    assert list(raw["param_k"]) == ["1", "all"]  # no JSON quotes ('"all"')
    back = read_table(pq_path)
    assert list(back["param_k"]) == [1, "all"] and list(back["param_max_depth"]) == [2, 3]


def test_report_files_are_written_atomically(monkeypatch, tmp_path):
    """Ctrl-C in the middle of writing a report file leaves the old file whole."""
    from treebench import atomic

    p = tmp_path / "index.html"
    p.write_text("old report")

    def boom(src, dst, *a, **k):  # the temporary file is written; Ctrl-C before the rename
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        atomic.write_text(p, "new report")
    monkeypatch.undo()
    assert p.read_text() == "old report" and list(tmp_path.iterdir()) == [p]


def test_seconds_print_in_one_format():
    from treebench.report.tables import fmt_number, fmt_seconds

    for x in (1.234e-05, 0.00123, 0.5, 12.345, 1234.5):
        text = fmt_seconds(x)
        assert "e" not in text.lower()
        assert fmt_number("fit_seconds", x) == text


def test_rows_record_runner_measurements_truthfully(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]}, limits={"time": 60, "memory": 2000})
    out = tmp_path / "o"
    _run(write_config(cfg), out)
    df = read_table(out / "results.parquet")
    assert (df["peak_rss_mb"] > 0).all() and (df["cell_rss_mb"] >= 0).all()
    assert (df["cell_rss_mb"] < df["peak_rss_mb"]).all()  # the worker's pages are not the cell's
    assert (df["prepare_seconds"] >= 0).all() and (df["warmup_seconds"] >= 0).all()
    assert (df["time_limit"] == 60).all() and (df["memory_limit"] == 2000).all()


# ----------------------------------------------------------------------------- A13 warm-ups
@pytest.mark.parametrize("name,module", [("dl85", "pydl85"), ("streed", "pystreed"), ("gosdt-ref", "gosdt")])
def test_peer_warmup_imports_the_solver_outside_fit(name, module):
    pytest.importorskip(module)
    code = (
        "import sys; from treebench.execute.fit import warm;"
        f"assert {module!r} not in sys.modules; s = warm({name!r});"
        f"assert {module!r} in sys.modules, 'warm-up did not import the solver';"
        "import numpy as np; from treebench.registry import ALGORITHMS;"
        "X = np.random.default_rng(0).integers(0, 2, (50, 4)).astype(float); y = (X[:, 0] > 0).astype(int);"
        f"before = set(sys.modules); ALGORITHMS.get({name!r}).create().fit(X, y);"
        "new = [m for m in set(sys.modules) - before if not m.startswith('treebench')];"
        "print(len(new))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0"  # gosdt prints its own warnings


def test_every_learner_declares_a_warmup():
    from treebench.execute.fit import warmup_for
    from treebench.registry import ALGORITHMS

    for e in ALGORITHMS:
        if "test" in e.tags or not e.obj.__module__.startswith("treebench"):
            continue
        fn = warmup_for(e)
        assert callable(fn) and fn.__name__ == "warmup", e.name
    from treebench.algorithms import topk

    assert warmup_for(ALGORITHMS.get("topk")) is topk.warmup  # its JIT warm-up, declared


# ----------------------------------------------------------------------------- A14 fit clock
def test_time_limit_counts_the_fit_not_the_warmup(write_config, tmp_path, monkeypatch):
    """A learner whose warm-up takes longer than the cell's limit still gets its whole limit
    for the fit; the warm-up is reported apart."""
    from treebench.algorithms.base import TreeClassifierBase
    from treebench.registry import ALGORITHMS
    from treebench.tree.arrays import TreeArrays

    class SlowWarmup(TreeClassifierBase):
        _parameter_constraints: dict = {}

        @staticmethod
        def warmup():
            time.sleep(2.0)

        def _fit_tree(self, X, y_index, sample_weight):
            return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}

    ALGORITHMS.register("test-slow-warmup", tags=("test",))(SlowWarmup)
    try:
        cfg = tiny_config(algorithms=[{"name": "test-slow-warmup"}],
                          split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.5},
                          execution={"n_jobs": 1, "backend": "sequential"})
        s = _run(write_config(cfg), tmp_path / "o")
        rec = json.loads(next((tmp_path / "o" / "cells").glob("*.json")).read_text())
        assert s.counts == {"ok": 1}, rec["row"]["error"]
        row = read_table(tmp_path / "o" / "results.parquet").iloc[0]
        assert row["warmup_seconds"] >= 2.0 and row["fit_seconds"] < 0.5
    finally:
        ALGORITHMS._entries.pop("test-slow-warmup", None)


def test_settings_over_fewer_folds_are_flagged(tmp_path):
    from treebench.report.aggregate import aggregate
    from treebench.report.tables import ok_total

    rows = []
    for alg in ("a", "b"):
        for f in range(3):
            status = "timeout" if (alg == "b" and f == 2) else "ok"
            rows.append({"cell_id": f"{alg}{f}", "dataset": "d", "split": "kfold",
                         "binarizer": "raw", "binarizer_params": "{}", "algorithm_label": alg,
                         "fold": f, "status": status, "timed_out": None,
                         "test_accuracy": 0.5 if status == "ok" else None})
    s = aggregate(pd.DataFrame(rows), [])
    flags = dict(zip(s["algorithm_label"], s["folds_differ"], strict=True))
    assert flags == {"a": False, "b": True}
    assert ok_total(s[s["algorithm_label"] == "b"].iloc[0]) == "2/3†"


# ----------------------------------------------------------------------------- A16 conventions
def _tie_data():
    """One 0/1 feature; the x=1 leaf holds one row of class 0 and one of class 1, and class 1
    is the more frequent class overall: the tie rule labels that leaf 1 (CART's own rule, the
    lowest index, says 0)."""
    X = np.array([[0], [0], [0], [0], [0], [1], [1]], dtype=float)
    y = np.array([1, 1, 1, 0, 1, 0, 1])
    return X, y


def test_cart_follows_the_shared_tie_rule_and_counts_exactly():
    from treebench.algorithms.cart import CARTClassifier

    X, y = _tie_data()
    est = CARTClassifier(max_depth=1).fit(X, y)
    assert est.predict(np.array([[1.0]]))[0] == 1
    v = est.tree_.value
    assert np.array_equal(v, np.round(v))  # counts, not fractions times totals
    prior = v[0]
    for i in range(est.tree_.n_nodes):
        assert est.tree_.label[i] == naive_tie_label(v[i], prior)
    X2 = np.random.default_rng(0).random((55, 3))
    y2 = (X2[:, 0] > 0.3).astype(int)
    v2 = CARTClassifier(max_depth=3).fit(X2, y2).tree_.value
    assert all(float(x).is_integer() for x in v2.ravel())


def test_cart_greedy_and_topk_agree_on_identical_splits_with_ties():
    from treebench.registry import ALGORITHMS

    X, y = _tie_data()
    preds = {n: ALGORITHMS.get(n).create(**kw).fit(X, y).predict(X)
             for n, kw in (("cart", {"max_depth": 1}), ("greedy", {"max_depth": 1}),
                           ("topk", {"k": 1, "max_depth": 1}))}
    assert all(np.array_equal(p, preds["cart"]) for p in preds.values())


@pytest.mark.parametrize("seed", range(20))
def test_effective_leaves_match_the_naive_twin(seed):
    from treebench.registry import ALGORITHMS
    from treebench.tree.simplify import effective_leaves

    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, (60, 5)).astype(float)
    y = rng.integers(0, 3 if seed % 2 else 2, 60)
    t = ALGORITHMS.get("cart").create(max_depth=4, random_state=0).fit(X, y).tree_
    n = effective_leaves(t)
    assert n == naive_effective_leaves(t.feature, t.left, t.right, t.label)
    assert 1 <= n <= t.n_leaves


def test_effective_leaves_merge_recursively():
    from treebench.tree.arrays import TreeArrays
    from treebench.tree.simplify import effective_leaves

    # root -> (split -> leaf 0, leaf 0), leaf 1 : the inner split merges, the root does not
    t = TreeArrays(np.array([0, 1, -1, -1, -1]), np.array([0.5, 0.5, -2, -2, -2]),
                   np.array([1, 2, -1, -1, -1]), np.array([4, 3, -1, -1, -1]),
                   np.array([[3, 1], [2, 0], [1, 0], [1, 0], [1, 1]], dtype=float),
                   np.array([0, 0, 0, 0, 1]))
    assert t.n_leaves == 3 and effective_leaves(t) == 2
    t.label[4] = 0  # now everything predicts 0: one leaf
    assert effective_leaves(t) == 1


def test_rows_carry_effective_leaves(write_config, tmp_path):
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]},
                      algorithms=[{"name": "cart", "params": {"max_depth": 4}}])
    _run(write_config(cfg), tmp_path / "o")
    df = read_table(tmp_path / "o" / "results.parquet")
    assert (df["n_leaves_effective"] <= df["n_leaves"]).all() and (df["n_leaves_effective"] >= 1).all()


# ----------------------------------------------------------------------------- B
def test_estimators_import_from_the_package_lazily():
    code = (
        "import sys, treebench; assert 'sklearn' not in sys.modules;"
        "from treebench import TopKClassifier, GreedyTreeClassifier, CARTClassifier;"
        "import sklearn.base as b; assert issubclass(CARTClassifier, b.BaseEstimator);"
        "print(sorted(n for n in dir(treebench) if n.endswith('Classifier')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "TopKClassifier" in out.stdout and "CARTClassifier" in out.stdout
    import treebench

    with pytest.raises(AttributeError):
        treebench.NoSuchClassifier  # noqa: B018


def test_report_on_a_folder_of_experiments(write_config, tmp_path):
    root = tmp_path / "results"
    for name, depth in (("exp-a", [1, 2]), ("exp-b", [3])):
        cfg = tiny_config(name=name, split={"kind": "holdout", "seeds": [0]},
                          algorithms=[{"name": "cart", "params": {"max_depth": depth}}])
        _run(write_config(cfg, f"{name}.yaml"), root / name)
    r = runner.invoke(app, ["report", str(root), "--format", "html,md,csv"])
    assert r.exit_code == 0, r.output
    html = (root / "index.html").read_text()
    assert "exp-a" in html and "exp-b" in html and "exp-a/report/index.html" in html
    for name in ("exp-a", "exp-b"):
        assert (root / name / "report" / "index.html").is_file()
    across = pd.read_csv(root / "across.csv")
    assert set(across["experiment"]) == {"exp-a", "exp-b"} and set(across["dataset"]) == {"iris"}
    md = (root / "index.md").read_text()
    assert "| exp-a | not checked | 2 | 2 |" in md


def test_vs_depth_figures_carry_reference_lines(tmp_path):
    from treebench.report.aggregate import load_results
    from treebench.report.figures import axis_figure
    from treebench.report.aggregate import sweep_axes

    from report.conftest import synthetic_table, write_results

    table = synthetic_table()
    # a reference learner without k: CART (its lines are drawn against depth, and are the
    # reference in the plots against k)
    res = load_results(write_results(tmp_path / "res", table))
    s = res.settings[res.settings["dataset"] == "car"]
    fig = axis_figure(res, "car", "param_k", ("test_accuracy",), sweep_axes(s, res.key_columns))
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert any("[reference]" in t and t.startswith("cart") for t in labels), labels


def test_data_preparation_has_its_own_budget(write_config, tmp_path, monkeypatch):
    from treebench.execute import fold

    real = fold.prepare

    def slow(cell, data_dirs=None):
        time.sleep(1.0)
        return real(cell, data_dirs)

    monkeypatch.setattr(fold, "prepare", slow)
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.5, "prepare": 0.2},
                      algorithms=[{"name": "cart", "params": {"max_depth": 1}}])
    s = _run(write_config(cfg), tmp_path / "o")
    row = read_table(tmp_path / "o" / "results.parquet").iloc[0]
    assert s.counts == {"timeout": 1} and "limits.prepare" in row["error"]
    assert row["prepare_seconds"] >= 1.0
    cfg["limits"] = {"time": 0.5}  # without a preparation budget the fit gets its 0.5 s
    s = _run(write_config(cfg, "b.yaml"), tmp_path / "p")
    assert s.counts == {"ok": 1}


# ----------------------------------------------------------------------------- fast reruns
def test_fork_backend_matches_sequential(write_config, tmp_path):
    cfg = tiny_config()
    a = _run(write_config(cfg, "a.yaml"), tmp_path / "a", backend="sequential")
    b = _run(write_config(cfg, "b.yaml"), tmp_path / "b", backend="fork", n_jobs=2)
    assert a.counts == b.counts == {"ok": 6} and b.n_jobs == 2
    cols = ["cell_id", "test_accuracy", "train_accuracy", "n_leaves", "n_leaves_effective"]
    ta = read_table(tmp_path / "a" / "results.parquet")[cols]
    tb = read_table(tmp_path / "b" / "results.parquet")[cols]
    pd.testing.assert_frame_equal(ta, tb)


def test_rerun_with_nothing_to_do_imports_no_learner(write_config, tmp_path):
    path = write_config(tiny_config())
    out = tmp_path / "o"
    _run(path, out)
    code = (
        "import sys; from treebench.cli import main; sys.argv = ['treebench', 'run', "
        f"{str(path)!r}, '-o', {str(out)!r}, '-q', '--no-report'];\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = [m for m in ('sklearn', 'numba', 'pandas', 'matplotlib', 'numpy', 'treebench.config', 'treebench.api') if m in sys.modules]\n"
        "print(code, ','.join(heavy))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip().splitlines()[-1].split() == ["0"], r.stdout  # exit 0, nothing heavy
    assert "ran 0 now" in r.stdout
    # a cell removed by hand is noticed: the slow path runs it again
    next((out / "cells").glob("*.json")).unlink()
    assert _run(path, out).n_ran == 1


def test_rerun_finds_the_default_folder_by_the_yaml_name(tmp_path):
    """Without ``--out`` a rerun with nothing to do finds ``results/<name>`` from the config's
    YAML ``name`` however it is written (here a JSON-style mapping, which a line-based search
    for ``name:`` missed, so every rerun imported the learners to find out)."""
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(json.dumps(tiny_config(name="json-style")), encoding="utf-8")
    code = (
        "import sys; from treebench.cli import main; sys.argv = ['treebench', 'run', 'exp.yaml', "
        "'-q', '--no-report'];\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "heavy = [m for m in ('sklearn', 'numba', 'pandas') if m in sys.modules]\n"
        "print(code, ','.join(heavy))"
    )
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           cwd=tmp_path)
    assert (tmp_path / "results" / "json-style" / "results.parquet").is_file(), first.stdout
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, cwd=tmp_path)
    assert again.stdout.strip().splitlines()[-1].split() == ["0"], again.stdout
    assert "ran 0 now" in again.stdout


def test_api_status_lists_agree_with_the_schema():
    from treebench.results import schema

    assert set(api.FAIL_STATUSES) == set(schema.ERROR_STATUSES)
    assert set(api.RETRYABLE) == set(schema.FAILED_STATUSES)
