"""``--where`` keys of `treebench cells`: a key given twice means either value, like
``KEY=a,b`` (it used to keep the last value silently), so do two names of one column; and a
misspelt other name of a column (``algo`` for ``algorithm``) gets a did-you-mean."""

from __future__ import annotations

import yaml
from typer.testing import CliRunner

from treebench.cli import app

from runs import tiny_config

runner = CliRunner()


def _folder(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    out = tmp_path / "r"
    r = runner.invoke(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    return out


def _ids(out, *where):
    r = runner.invoke(app, ["cells", str(out), "--ids", *[a for w in where for a in ("-w", w)]])
    assert r.exit_code == 0, r.output
    return set(r.output.split())


def test_a_key_given_twice_means_either_value(tmp_path):
    out = _folder(tmp_path)
    depth1, depth2 = _ids(out, "max_depth=1"), _ids(out, "max_depth=2")
    assert len(depth1) == len(depth2) == 3
    assert _ids(out, "max_depth=1 max_depth=2") == depth1 | depth2 == _ids(out, "max_depth=1,2")
    assert _ids(out, "max_depth=1", "max_depth=2") == depth1 | depth2  # also as two flags
    assert len(_ids(out, "fold=0 fold=2 max_depth=2")) == 2  # other keys still narrow it
    assert _ids(out, "algorithm=cart algorithm_label=dpdt") == depth1 | depth2
    assert _ids(out, "algorithm=dpdt algorithm=nothing") == set()


def test_another_name_of_a_column_gets_a_did_you_mean(tmp_path):
    out = _folder(tmp_path)
    r = runner.invoke(app, ["cells", str(out), "--where", "algo=cart"])
    assert r.exit_code == 2, r.output
    assert "--where `algo`: no such column or parameter in these results (did you mean " \
           "`algorithm`?)" in " ".join(r.output.split())
