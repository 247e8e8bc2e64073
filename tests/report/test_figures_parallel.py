"""Figures drawn in forked workers while the tables are written: the same
files, byte for byte, as drawing them one by one in the report's own process."""

from __future__ import annotations

import os

from treebench.report import figures as F
from treebench.report.aggregate import load_results


def _files(d):
    return {p.name: p.read_bytes() for p in sorted((d / "figures").glob("*.png"))}


def test_parallel_drawing_gives_the_sequential_files(few_figures_dir, tmp_path):
    results = load_results(few_figures_dir)
    seq = F.write_figures(results, tmp_path / "seq", n_jobs=1)
    pending = F.start_figures(results, tmp_path / "par", n_jobs=2)
    assert pending.drawing.pool is not None  # really drawn by workers
    par = pending.finish()
    assert [(i.stem, i.title) for i in par] == [(i.stem, i.title) for i in seq]
    assert _files(tmp_path / "par") == _files(tmp_path / "seq")
    assert len(_files(tmp_path / "seq")) >= 2
    assert F._POOL_STATE is None  # nothing left for a later fork


def test_unchanged_figures_are_not_drawn_again(few_figures_dir, tmp_path):
    results = load_results(few_figures_dir)
    F.write_figures(results, tmp_path / "r")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "r" / "figures").glob("*.png")}
    pending = F.start_figures(results, tmp_path / "r")
    assert pending.todo == [] and pending.drawing.pool is None
    pending.finish()
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "r" / "figures").glob("*.png")} == before


def test_close_stops_the_workers(few_figures_dir, tmp_path):
    results = load_results(few_figures_dir)
    pending = F.start_figures(results, tmp_path / "x", n_jobs=2)
    pids = list(pending.drawing.pool._processes)
    pending.close()
    for pid in pids:  # reaped: no such child left
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
    assert pending.drawing.pool is None and F._POOL_STATE is None


def test_workers_one_per_core_and_none_for_one_figure():
    assert F._workers(1, 10) == 0
    assert F._workers(2, 1) == 0
    assert F._workers(3, 2) == 2
    cores = os.cpu_count() or 1
    assert F._workers(-1, 50) == (cores if cores >= 2 else 0)


def test_an_interrupt_while_the_pool_starts_is_the_error_raised(few_figures_dir, tmp_path,
                                                                 monkeypatch):
    """A signal landing in the first submission, after the pool made its manager thread and
    before it started it, reaches the caller as itself (a killed run exits 143), not as
    "cannot join thread before it is started"."""
    import concurrent.futures.process as cfp

    import pytest

    class Interrupted(BaseException):
        pass

    def start(self):
        raise Interrupted()

    monkeypatch.setattr(cfp._ExecutorManagerThread, "start", start)
    results = load_results(few_figures_dir)
    with pytest.raises(Interrupted):
        F.start_figures(results, tmp_path / "i", n_jobs=2)
    assert F._POOL_STATE is None


def test_the_dearest_kinds_are_handed_out_first(few_figures_dir, tmp_path, monkeypatch):
    from concurrent.futures import ProcessPoolExecutor

    results = load_results(few_figures_dir)
    chosen = F.chosen_jobs(results, F.figure_jobs(results))
    kinds = [j.kind for j in chosen]
    assert "axis" in kinds and "pareto" in kinds and kinds.index("pareto") > kinds.index("axis")
    handed: list[str] = []
    submit = ProcessPoolExecutor.submit

    def spy(self, fn, job, *a, **k):
        handed.append(job.kind)
        return submit(self, fn, job, *a, **k)

    monkeypatch.setattr(ProcessPoolExecutor, "submit", spy)
    par = F.write_figures(results, tmp_path / "par", n_jobs=2)
    rank = [F.draw_order(k) for k in handed]
    assert sorted(handed) == sorted(kinds) and rank == sorted(rank)
    # handed out dearest first, listed in the report's order (the sequential drawing's order
    # and files: test_parallel_drawing_gives_the_sequential_files)
    stems = [j.stem for j in chosen]
    assert [i.stem for i in par] == [s for s in stems if s in {i.stem for i in par}]
    assert len(par) >= 2
