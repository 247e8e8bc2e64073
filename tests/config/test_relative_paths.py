"""A relative data path in a config starts at the config file's folder, wherever treebench
runs, and a missing file is named by the dataset's name in the config."""

from __future__ import annotations

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from treebench.cli import app
from treebench.config import load_config

CONFIG = """name: rel
datasets:
  - {path: data/mine.csv, label: target}
DATASETS
split: {kind: kfold, n_splits: 2}
algorithms:
  - {name: cart, params: {max_depth: 2}}
"""


def _write(tmp_path, extra: str = "") -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    (tmp_path / "sub" / "data").mkdir(parents=True)
    pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "target": (x[:, 0] > 0).astype(int)}).to_csv(
        tmp_path / "sub" / "data" / "mine.csv", index=False)
    (tmp_path / "sub" / "cfg.yaml").write_text(CONFIG.replace("DATASETS\n", extra),
                                               encoding="utf-8")


def test_relative_paths_start_at_the_config_files_folder(tmp_path, monkeypatch):
    _write(tmp_path)
    monkeypatch.chdir(tmp_path)  # not the config's folder
    exp = load_config("sub/cfg.yaml")
    assert exp.datasets[0].path == "sub/data/mine.csv"
    r = CliRunner().invoke(app, ["run", "sub/cfg.yaml", "--dry-run"])
    assert r.exit_code == 0, r.output
    # a config in the current folder keeps its paths as written
    monkeypatch.chdir(tmp_path / "sub")
    assert load_config("cfg.yaml").datasets[0].path == "data/mine.csv"
    assert load_config(tmp_path / "sub" / "cfg.yaml").datasets[0].path == str(
        tmp_path / "sub" / "data" / "mine.csv")


def test_a_missing_file_is_named_as_the_config_names_it(tmp_path, monkeypatch):
    _write(tmp_path, "  - {other: data/missing.csv}\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["run", "sub/cfg.yaml", "--dry-run"])
    assert r.exit_code == 2, r.output
    assert "dataset `other`" in r.output and "dataset `file`" not in r.output
    assert "sub/data/missing.csv" in r.output
    assert "starts at the config file's folder" in r.output
    assert "Traceback" not in r.output


def _run_in_its_folder(tmp_path, monkeypatch):
    """Write the config and its data, run it from its own folder; (results folder, its cell
    file names)."""
    _write(tmp_path)
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path / "sub")
    r = CliRunner().invoke(app, ["run", "cfg.yaml", "-o", str(out), "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    return out, sorted(p.name for p in (out / "cells").iterdir())


def test_the_same_config_gives_the_same_cells_from_any_folder(tmp_path, monkeypatch):
    """A cell's identity holds the data paths as the config wrote them: run from the config's
    folder, then named by an absolute path, a path through `..` and a path from its parent,
    the config defines the same cells, and the reruns run none of them again."""
    import json

    from treebench.config.cells import expand

    out, first = _run_in_its_folder(tmp_path, monkeypatch)
    ids = sorted(c.id for c in expand(load_config("cfg.yaml")))
    assert [f"{i}.json" for i in ids] == first
    for folder, spelling in ((tmp_path, str(tmp_path / "sub" / "cfg.yaml")),
                             (tmp_path, "sub/../sub/cfg.yaml"), (tmp_path.parent,
                                                                 f"{tmp_path.name}/sub/cfg.yaml")):
        monkeypatch.chdir(folder)
        assert sorted(c.id for c in expand(load_config(spelling))) == ids
        r = CliRunner().invoke(app, ["run", spelling, "-o", str(out), "--no-report"])
        assert r.exit_code == 0, r.output
        assert "ran 0 now" in r.output and "belong to no recorded" not in r.output
    assert sorted(p.name for p in (out / "cells").iterdir()) == first
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["experiments"]) == 1


def test_a_sweep_from_another_folder_finds_the_cells_of_the_run(tmp_path, monkeypatch):
    """`treebench sweep` validates the config again with its axes: the datasets' paths as
    written were lost there, so the sweep's cells had other ids from another folder and ran
    again beside the run's (two rows for one cell)."""
    out, first = _run_in_its_folder(tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["sweep", "sub/cfg.yaml", "-o", str(out), "--depth", "2,3",
                                 "--no-report"])
    assert r.exit_code == 0, r.output
    now = sorted(p.name for p in (out / "cells").iterdir())
    assert set(first) < set(now) and len(now) == 2 * len(first)  # depth 2 found, depth 3 new
    assert "ran 2 now" in r.output
