"""`repeat: N` in a config: each cell's fit runs N times, warm, in one process; the row keeps
every time (`fit_seconds_repeats`), their median (`fit_seconds`) and range
(`fit_seconds_spread`), each fit's CPU time beside it (`fit_cpu_seconds`,
`fit_cpu_seconds_repeats`), and the report's tables show the median and the spread."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.execute.limits import Limits
from treebench.results.store import read_table

from runs import tiny_config


def _run(tmp_path, *extra, **over):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 2}},
                                  {"name": "topk", "params": {"max_depth": 2, "k": 2}}],
                      binarization={"method": "quantile", "params": {"max_splits": 3}},
                      **over)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "-q", *extra])
    return r, out


def test_each_fit_is_timed_repeat_times(tmp_path):
    r, out = _run(tmp_path, repeat=3)
    assert r.exit_code == 0, r.output
    t = read_table(out / "results.parquet")
    assert len(t) == 6 and (t["status"] == "ok").all()
    for _, row in t.iterrows():
        times = json.loads(row["fit_seconds_repeats"])
        assert len(times) == 3 and all(x >= 0 for x in times)
        assert row["fit_seconds"] == np.median(times)
        assert row["fit_seconds_spread"] == max(times) - min(times)
        cpu = json.loads(row["fit_cpu_seconds_repeats"])
        assert len(cpu) == 3 and all(x >= 0 for x in cpu)
        assert row["fit_cpu_seconds"] == np.median(cpu)
    summary = (out / "report" / "tables" / "fit_seconds_spread.csv")
    assert summary.is_file(), sorted(p.name for p in summary.parent.iterdir())
    assert "spread over repeats" in (out / "report" / "index.html").read_text(encoding="utf-8")


def test_one_fit_by_default_and_a_bad_repeat_is_refused(tmp_path):
    r, out = _run(tmp_path, "--no-report")
    assert r.exit_code == 0, r.output
    t = read_table(out / "results.parquet")
    assert t["fit_seconds_repeats"].isna().all() and t["fit_seconds_spread"].isna().all()
    assert t["fit_cpu_seconds_repeats"].isna().all()
    assert t["fit_seconds"].notna().all() and t["fit_cpu_seconds"].notna().all()
    r, _ = _run(tmp_path / "bad", "--dry-run", repeat=0)
    assert r.exit_code == 2 and "repeat" in r.output, r.output


def test_the_watcher_allows_the_time_limit_once_per_fit():
    one = Limits.of({"time": 10.0})
    three = Limits.of({"time": 10.0, "repeat": 3})
    assert three.hard == 3 * one.hard
    assert Limits.of({"repeat": 3}).hard is None


#: how long each fit of the `waiting_learner` takes on the wall clock
FIT_SECONDS = 0.25


@pytest.fixture
def waiting_learner():
    """A registered learner whose fit sleeps `FIT_SECONDS` (``work=False``, as a fit waiting
    for a core) or computes until its thread has used `FIT_SECONDS` of CPU (``work=True``,
    however loaded the machine)."""
    from treebench.algorithms.base import TreeClassifierBase
    from treebench.registry import ALGORITHMS
    from treebench.tree.arrays import TreeArrays

    class Waits(TreeClassifierBase):
        _parameter_constraints: dict = {}

        def __init__(self, work=False, max_depth=1):
            self.work = work
            self.max_depth = max_depth

        def _fit_tree(self, X, y_index, sample_weight):
            if self.work:
                end = time.thread_time() + FIT_SECONDS
                while time.thread_time() < end:
                    pass
            else:
                time.sleep(FIT_SECONDS)
            return TreeArrays.leaf(np.bincount(y_index, minlength=len(self.classes_))), {}

    ALGORITHMS.register("test-waits", tags=("test",))(Waits)
    yield "test-waits"
    ALGORITHMS._entries.pop("test-waits", None)


@pytest.mark.parametrize("backend", ["sequential", "fork"])
def test_cpu_time_counts_the_fits_work_not_its_waiting(waiting_learner, tmp_path, backend):
    cfg = tiny_config(algorithms=[{"name": waiting_learner, "params": {"work": [False, True]}}],
                      split={"kind": "holdout", "seeds": [0]}, repeat=2,
                      execution={"n_jobs": 1, "backend": backend})
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    t = read_table(out / "results.parquet").set_index("param_work")
    # whatever else the fit costs (a forked child's first writes to shared pages, a garbage
    # collection) is on both clocks; the sleep is on the wall clock only
    for work in (False, True):
        wall = json.loads(t.loc[work, "fit_seconds_repeats"])
        cpu = json.loads(t.loc[work, "fit_cpu_seconds_repeats"])
        pairs = list(zip(wall, cpu, strict=True))
        assert all(w >= FIT_SECONDS * 0.95 for w in wall), (work, wall)
        assert all(c <= w + 0.02 for w, c in pairs), (work, pairs)
        if work:
            assert all(c >= FIT_SECONDS * 0.95 for c in cpu), pairs
        else:
            assert all(w - c >= FIT_SECONDS * 0.8 for w, c in pairs), pairs
