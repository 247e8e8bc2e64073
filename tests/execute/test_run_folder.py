"""A run and its results folder: a sweep adds its cells and resumes, ``--force`` keeps
finished cells unless ``--overwrite`` is given, an unwritable folder is one sentence and exit
2, the manifest records the workers used, ``--retry`` with a new time limit reruns only the
timed-out cells, and a rerun with nothing to do answers without loading a learner."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.store import read_table

from runs import run_quiet, tiny_config

runner = CliRunner()


def test_sweep_adds_to_the_experiment_results_and_resumes(write_config, tmp_path):
    path = write_config(tiny_config())  # cart max_depth 1, 2 on 3 folds: 6 cells
    out = tmp_path / "o"
    assert run_quiet(path, out).n_ran == 6
    s = run_quiet(path, out, sweep={"depth": [3]})
    assert s.n_ran == 3
    df = read_table(out / "results.parquet")
    assert len(df) == 9  # the experiment's 6 rows are kept beside the sweep's 3
    assert sorted(set(df["param_max_depth"])) == [1, 2, 3]
    assert run_quiet(path, out, sweep={"depth": [3]}).n_ran == 0  # a rerun resumes
    man = json.loads((out / "manifest.json").read_text())
    assert man["config"]["algorithms"][0]["params"]["max_depth"] == [1, 2]  # not replaced
    assert [r["command"] for r in man["runs"]] == ["run", "sweep"]  # the no-op rerun adds none
    sweep = man["experiments"][1]  # the sweep is a variant: its own record and cells
    assert sweep["kind"] == "variant" and sweep["n_cells"] == 3
    assert sweep["config"]["algorithms"][0]["params"]["max_depth"] == [3]


def test_force_refuses_to_discard_finished_cells_without_overwrite(write_config, tmp_path):
    path = write_config(tiny_config(split={"kind": "holdout", "seeds": [0]}))
    run_quiet(path, tmp_path / "o")
    r = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "o"), "--force", "-q", "--no-report"])
    assert r.exit_code == 2 and "--overwrite" in r.output
    r = runner.invoke(app, ["run", str(path), "-o", str(tmp_path / "o"), "--force", "--overwrite",
                            "-q", "--no-report"])
    assert r.exit_code == 0, r.output


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
    run_quiet(path, tmp_path / "ok")
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


def test_manifest_records_the_workers_used(write_config, tmp_path):
    path = write_config(tiny_config(split={"kind": "holdout", "seeds": [0]}))  # 2 cells
    s = run_quiet(path, tmp_path / "o", n_jobs=-1, backend="loky")
    man = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert man["n_jobs"] == -1
    assert man["n_jobs_used"] == min(os.cpu_count() or 1, 2) == s.n_jobs


def test_retry_with_a_new_time_limit_reruns_only_timed_out_cells_and_keeps_history(write_config, tmp_path):
    cfg = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": 1}},
                                  {"name": "test-sleep", "params": {"seconds": 3}}],
                      split={"kind": "holdout", "seeds": [0]}, limits={"time": 0.3})
    path = write_config(cfg)
    out = tmp_path / "o"
    s = run_quiet(path, out)
    assert s.counts == {"ok": 1, "timeout": 1}
    before = read_table(out / "results.parquet")
    s = run_quiet(path, out, retry=("timeout",), time_limit=30)
    assert s.n_ran == 1  # only the timed-out cell, not every cell
    after = read_table(out / "results.parquet")
    assert sorted(after["cell_id"]) == sorted(before["cell_id"])  # same ids, own record replaced
    row = after[after["algorithm_label"] == "test-sleep"].iloc[0]
    assert row["status"] == "ok" and row["time_limit"] == 30
    hist = json.loads(row["history"])
    assert [h["status"] for h in hist] == ["timeout"] and hist[0]["time_limit"] == 0.3
    assert pd.isna(after[after["algorithm_label"] == "cart"].iloc[0]["history"])


def test_rerun_with_nothing_to_do_imports_no_learner(write_config, tmp_path):
    path = write_config(tiny_config())
    out = tmp_path / "o"
    run_quiet(path, out)
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
    assert run_quiet(path, out).n_ran == 1


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


def test_a_binarization_that_makes_no_column_says_so_in_its_rows(tmp_path):
    """Every feature constant on the training rows: `midpoints` has no threshold, and each cell
    failed with scikit-learn's "0 feature(s)"; the row names the binarization and why."""
    data = tmp_path / "const.csv"
    data.write_text("c,d,y\n" + "".join(f"5,7,{i % 2}\n" for i in range(30)))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config(
        datasets=[str(data)], binarization={"method": "midpoints"},
        algorithms=[{"name": "cart", "params": {"max_depth": 1}}])))
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "-q", "--no-report"])
    assert r.exit_code == 3, r.output
    t = read_table(out / "results.parquet")
    assert set(t["status"]) == {"error"}
    assert all("binarization `midpoints` made no column" in e for e in t["error"])
