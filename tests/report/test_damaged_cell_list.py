"""A manifest whose record of an experiment's cells is damaged (ids that are no ids, identity
columns missing or of the wrong length): `report` says so in one sentence (exit 2) instead of
tracing back, `results check` does not call the manifest ok, and a run rewrites it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.defined import cell_list_damage

from runs import tiny_config


def _cli(*args):
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("run")
    cfg = tmp / "exp.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    out = tmp / "r"
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    return cfg, out


def _drop_dataset(cells: dict) -> dict:
    return {k: v for k, v in cells.items() if k != "dataset"}


def _shorten(cells: dict) -> dict:
    return {**cells, "fold": cells["fold"][:-1]}


CELL_LISTS = [
    (lambda cells: {"cell_id": ["deadbeefdeadbeef"]}, "no `dataset` column"),
    (lambda cells: {"cell_id": [1, 2, None]}, "cell id number 1 is not a non-empty string"),
    (lambda cells: {**cells, "cell_id": [*cells["cell_id"][:-1], None]},
     "is not a non-empty string"),
    (_drop_dataset, "no `dataset` column"),
    (_shorten, "`fold` column does not hold one value per cell"),
]


@pytest.mark.parametrize("edit, why", CELL_LISTS)
def test_report_and_check_name_a_damaged_cell_list(run_folder, tmp_path, edit, why):
    cfg, out = run_folder
    copy = tmp_path / "r"
    shutil.copytree(out, copy)
    man = copy / "manifest.json"
    m = json.loads(man.read_text())
    m["experiments"][0]["cells"] = edit(m["experiments"][0]["cells"])
    man.write_text(json.dumps(m))

    r = _cli("report", copy)
    assert r.exit_code == 2, r.output
    assert "cell list is damaged" in r.output and why in r.output, r.output
    assert "run the experiment's config again" in r.output, r.output
    assert "Traceback" not in r.output and not (copy / "report" / "index.html").exists()

    r = _cli("results", "check", copy)
    assert r.exit_code != 0 and "manifest: damaged" in r.output, r.output

    r = _cli("verify", copy)
    assert r.exit_code == 2 and why in r.output, r.output

    r = _cli("run", cfg, "--out", copy, "--quiet", "--no-report")  # rewrites the manifest
    assert r.exit_code == 0 and "was damaged" in r.output, r.output
    assert _cli("report", copy, "--no-figures").exit_code == 0


def test_the_cell_list_a_run_writes_is_whole(run_folder):
    _, out = run_folder
    m = json.loads((out / "manifest.json").read_text())
    assert cell_list_damage(m["experiments"][0]["cells"]) is None
    old = dict(m["experiments"][0]["cells"])  # the first layout named the learner `algorithm`
    old["algorithm"] = old.pop("algorithm_label")
    assert cell_list_damage(old) is None
