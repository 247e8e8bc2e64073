"""The driver's warm-up before the first cell (the first run on a machine compiles the
learners' kernels, minutes with no cell moving) is shown, not silent."""

from __future__ import annotations

from types import SimpleNamespace

from treebench.execute import pool
from treebench.execute.executor import CellProgress


def test_run_pool_reports_each_learner_before_and_after_its_warm_up(monkeypatch):
    warmed, events = [], []
    monkeypatch.setattr(pool, "warm", lambda alg: warmed.append(alg) or 7.0)

    class _NoPool:
        forks = 0

        def __init__(self, *args):
            pass

        def run(self, take):
            events.append("cells")

    monkeypatch.setattr(pool, "CellPool", _NoPool)
    cells = [SimpleNamespace(algorithm=a) for a in ("topk", "cart", "topk", "dpdt")]
    pool.run_pool(cells, 2, None, {}, lambda rec: None,
                  on_warm=lambda alg, secs: events.append((alg, secs)))
    assert warmed == ["topk", "cart", "dpdt"]
    assert events == [("topk", None), ("topk", 7.0), ("cart", None), ("cart", 7.0),
                      ("dpdt", None), ("dpdt", 7.0), "cells"]


def test_a_long_warm_up_is_reported_on_its_own_line_and_a_short_one_is_not(capsys):
    progress = CellProgress(3, True)  # stderr is not a terminal under pytest: line mode
    progress.warming("topk", None)
    progress.warming("topk", 240.4)
    progress.warming("cart", None)
    progress.warming("cart", 0.2)
    err = capsys.readouterr().err
    assert "warmed up topk in 240 s" in err and "compiled" in err
    assert "cart" not in err


def test_a_run_without_progress_says_nothing_of_the_warm_up(capsys):
    progress = CellProgress(3, False)
    progress.warming("topk", 240.4)
    assert capsys.readouterr().err == ""
