"""Warnings raised during a cell's fits: recorded in the row's ``fit_warnings`` and counted
once per kind in the run's summary, not printed by every fit and every repeat."""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

from treebench import api
from treebench.execute.fit import MAX_WARNINGS, WARNING_CHARS, recorded_warnings, warnings_column
from treebench.results.store import read_table

from runs import tiny_config

MESSAGE = "this learner cannot prove its tree optimal on these data"


@pytest.fixture
def warning_learner():
    """A registered learner whose every fit warns twice from one place (one distinct
    warning) and, on a tree deeper than 1, once more with another message."""
    from treebench.algorithms.base import TreeClassifierBase
    from treebench.registry import ALGORITHMS
    from treebench.tree.arrays import TreeArrays

    class Warns(TreeClassifierBase):
        _parameter_constraints: dict = {}

        def __init__(self, max_depth=1):
            self.max_depth = max_depth

        def _fit_tree(self, X, y_index, sample_weight):
            for _ in range(2):
                warnings.warn(MESSAGE, UserWarning, stacklevel=1)
            if self.max_depth > 1:
                warnings.warn("deeper than one level\nsecond line", RuntimeWarning, stacklevel=1)
            return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}

    ALGORITHMS.register("test-warns", tags=("test",))(Warns)
    yield "test-warns"
    ALGORITHMS._entries.pop("test-warns", None)


@pytest.mark.parametrize("backend", ["sequential", "fork"])
def test_warnings_are_the_rows_and_the_summarys_not_printed(warning_learner, write_config,
                                                             tmp_path, capfd, backend):
    cfg = tiny_config(algorithms=[{"name": warning_learner, "params": {"max_depth": [1, 2]}}],
                      split={"kind": "holdout", "seeds": [0]}, repeat=3,
                      execution={"n_jobs": 1, "backend": backend})
    s = api.run_experiment(write_config(cfg), api.RunOptions(out=tmp_path / "o", progress=False,
                                                             report=False))
    assert s.counts == {"ok": 2}
    df = read_table(tmp_path / "o" / "results.parquet").sort_values("param_max_depth")
    got = [json.loads(v) for v in df["fit_warnings"]]
    # three fits a cell, two warnings a fit from one place: one entry; the first line only
    assert got == [[f"UserWarning: {MESSAGE}"],
                   [f"UserWarning: {MESSAGE}", "RuntimeWarning: deeper than one level"]]
    assert s.fit_warnings == [(warning_learner, f"UserWarning: {MESSAGE}", 2),
                              (warning_learner, "RuntimeWarning: deeper than one level", 1)]
    assert MESSAGE not in capfd.readouterr().err


def test_the_summary_prints_each_warning_once_with_its_cells(capsys, tmp_path):
    from treebench.cli import _print_summary
    from treebench.execute.plan_cache import RunSummary

    s = RunSummary(experiment="e", out=tmp_path, n_cells=3, n_ran=3)
    s.fit_warnings = [("contree", "UserWarning: merged values", 3)]
    s.fit_warnings += [("x", f"UserWarning: w{i}", 1) for i in range(9)]
    _print_summary(s)
    out = capsys.readouterr().out.splitlines()
    assert "warning: 3 cell(s) of `contree`: UserWarning: merged values" in out
    assert sum(line.startswith("warning: 1 cell(s) of `x`") for line in out) == 7
    assert any(line.startswith("... and 2 other warning(s)") for line in out)


def test_the_summary_names_the_statuses_of_the_failures_it_leaves_out(capsys, tmp_path):
    """Past eight kinds of failure the summary points to `treebench cells` with the statuses
    of the kinds it did not print (a run with eight kinds of timeout and one of memory once
    pointed to `--status error`, which lists nothing)."""
    from treebench.cli import _print_summary
    from treebench.execute.plan_cache import RunSummary

    s = RunSummary(experiment="e", out=tmp_path, n_cells=10, n_ran=10)
    s.failures = [("timeout", f"`l{i}` stopped at its time budget", 1) for i in range(8)]
    s.failures += [("oom", "killed above 4000 MB", 2), ("timeout", "`m` stopped", 1)]
    _print_summary(s)
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == (f"... and 2 other kind(s) of failure; `treebench cells {tmp_path} "
                       "--status oom --status timeout` lists the cells.")


def test_warnings_column_keeps_distinct_first_lines_in_order_and_bounded():
    def msg(text, cat=UserWarning):
        return warnings.WarningMessage(text, cat, "f.py", 1)

    assert warnings_column([]) is None
    got = json.loads(warnings_column([msg("b"), msg("a\nmore"), msg("b"), msg("", FutureWarning),
                                      msg("x" * 1000)]))
    assert got == ["UserWarning: b", "UserWarning: a", "FutureWarning: ",
                   ("UserWarning: " + "x" * 1000)[:WARNING_CHARS]]
    many = json.loads(warnings_column([msg(str(i)) for i in range(100)]))
    assert many == [f"UserWarning: {i}" for i in range(MAX_WARNINGS)]


def test_other_threads_leave_the_process_filters_alone():
    """The warnings filters are the process's: a thread other than the main one records
    nothing and changes no filter, so the warning takes its usual way."""
    before = list(warnings.filters)
    seen = {}

    def work():
        with recorded_warnings() as caught:
            seen["caught"] = caught
            seen["filters"] = list(warnings.filters)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert seen["caught"] == [] and seen["filters"] == before == list(warnings.filters)
    with recorded_warnings() as caught:  # the main thread records
        warnings.warn(MESSAGE, UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == [MESSAGE]
