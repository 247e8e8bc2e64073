"""`treebench reproduce`: several configs run one after the other in one process into
OUT/<config name>, then every experiment there verified; a config that cannot run is named and
the others still run."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.store import read_table

from runs import tiny_config

HOLDS = {"name": "cart is at least 0", "source": "test", "metric": "test_accuracy",
         "where": {"algorithm": "cart"}, "ge": 0.0}
FAILS = {**HOLDS, "name": "cart is perfect", "ge": 1.01}


#: one figure per dataset: the reports' figures are not what these tests check
ONE_FIGURE = {"figures": ["test_accuracy_vs_max_depth"]}


def _config(tmp_path: Path, stem: str, expect: dict, **over) -> Path:
    p = tmp_path / f"{stem}.yaml"
    cfg = tiny_config(name=stem, expect=[expect], report=ONE_FIGURE, **over)
    p.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return p


def _reproduce(*args) -> object:
    r = CliRunner().invoke(app, ["reproduce", *(str(a) for a in args)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r


def test_each_config_runs_into_its_folder_with_its_profile_then_all_are_verified(tmp_path):
    a = _config(tmp_path, "a", HOLDS, profiles={"ci": {"description": "depth 1 only",
                                                       "algorithms": [{"name": "cart",
                                                                       "params": {"max_depth": [1]}}]}})
    b = _config(tmp_path, "b", HOLDS, datasets=["wine"])
    out = tmp_path / "repro"
    r = _reproduce(a, b, "--profile", "ci", "--out", out)
    # b has no ci profile: named, and a still runs and is verified
    ta = read_table(out / "a" / "results.parquet")
    assert set(ta["param_max_depth"].astype(int)) == {1} and (ta["status"] == "ok").all()
    assert not (out / "b" / "results.parquet").exists()
    assert r.exit_code == 2 and "no profile `ci`" in r.output, r.output
    assert "1 of 2 configs could not run (data or config): b;" in r.output, r.output
    verdict = json.loads((out / "verify").read_text())  # one experiment: one file
    assert "all 1 expectation(s) hold" in r.output and verdict, r.output


def test_a_broken_config_is_named_and_the_others_run_and_are_verified(tmp_path):
    good = _config(tmp_path, "good", HOLDS)
    bad = _config(tmp_path, "bad", FAILS)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [unclosed\n", encoding="utf-8")
    out = tmp_path / "repro"
    r = _reproduce(good, broken, bad, "--out", out)
    # a failed expectation wins over a config that could not run (as `verify` exits 5)
    assert r.exit_code == 5, r.output
    assert "1 of 3 configs could not run" in r.output and "broken" in r.output, r.output
    for stem in ("good", "bad"):
        assert len(read_table(out / stem / "results.parquet")) == 6
    assert sorted(p.stem for p in (out / "verify").glob("*.json")) == ["bad", "good"]
    r = _reproduce(good, broken, "--out", tmp_path / "again")
    assert r.exit_code == 2 and "could not run" in r.output, r.output
    r = _reproduce(good, "--out", tmp_path / "third")
    assert r.exit_code == 0, r.output


def test_two_configs_of_one_file_name_are_refused_before_anything_runs(tmp_path):
    (tmp_path / "x").mkdir()
    a = _config(tmp_path, "same", HOLDS)
    b = _config(tmp_path / "x", "same", HOLDS)
    r = _reproduce(a, b, "--out", tmp_path / "out")
    assert r.exit_code == 2 and "two configs would run into one folder (same" in r.output
    assert not (tmp_path / "out").exists()
