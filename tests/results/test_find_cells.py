"""`treebench cells DIR --where ...` and `treebench show DIR --where ...`: finding cells by what
they are."""

from __future__ import annotations

import yaml
from typer.testing import CliRunner

from treebench.cli import app

from runs import tiny_config


def _folder(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output
    return out


def test_cells_filters_by_column_and_parameter_name(tmp_path):
    out = _folder(tmp_path)
    run = CliRunner().invoke
    r = run(app, ["cells", str(out), "--ids"])
    assert r.exit_code == 0 and len(r.output.split()) == 6
    r = run(app, ["cells", str(out), "--ids", "--where", "max_depth=2 fold=1"])
    (cid,) = r.output.split()
    r = run(app, ["cells", str(out), "--ids", "-w", "max_depth=1,2", "-w", "fold=0"])
    assert len(r.output.split()) == 2
    r = run(app, ["cells", str(out), "--ids", "--status", "timeout"])
    assert r.exit_code == 0 and r.output.split() == []
    r = run(app, ["cells", str(out), "--ids", "--status", "timout"])  # no cell has it, ever
    assert r.exit_code == 2 and "did you mean `timeout`" in r.output, r.output
    r = run(app, ["cells", str(out), "--where", "max_dept=2"])
    assert r.exit_code == 2 and "did you mean `max_depth`" in r.output
    r = run(app, ["cells", str(out), "--where", "max_depth"])
    assert r.exit_code == 2 and "KEY=VALUE" in r.output
    r = run(app, ["cells", str(out), "--where", "fold=1"])
    assert r.exit_code == 0 and cid in r.output and "test_accuracy" in r.output


def test_show_by_conditions_refuses_several_and_prints_one(tmp_path):
    out = _folder(tmp_path)
    run = CliRunner().invoke
    r = run(app, ["show", str(out), "--where", "max_depth=2"])
    assert r.exit_code == 2 and "3 cells match" in r.output and "add conditions" in r.output
    r = run(app, ["show", str(out), "--where", "max_depth=2 fold=0"])
    assert r.exit_code == 0 and r.output.startswith("# cell ") and "if " in r.output, r.output
    r = run(app, ["show", str(out)])
    assert r.exit_code == 2 and "cell id or --where" in r.output


def test_a_run_with_failures_prints_each_kind_once_with_its_count(tmp_path):
    cfg = tmp_path / "c.yaml"
    raw = tiny_config(algorithms=[{"name": "cart", "params": {"max_depth": [1, 2]}},
                                  {"name": "test-raise"}])
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "r"), "--quiet",
                                 "--no-report"])
    assert r.exit_code == 3, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("error: 3 cell(s): ")]
    assert len(lines) == 1, r.output


def test_algorithms_says_which_input_each_learner_takes():
    r = CliRunner().invoke(app, ["algorithms"])
    assert r.exit_code == 0
    rows = {ln.split("│")[1].strip(): ln.split("│")[3] for ln in r.output.splitlines()
            if ln.startswith("│") and ln.split("│")[1].strip()}
    assert "raw" in rows["cart"] and "missing" in rows["cart"]
    assert "0/1" in rows["topk"] and "raw" not in rows["topk"] and "missing" not in rows["topk"]
    assert "raw" in rows["dpdt"] and "weights" in rows["gosdt"]


def test_quoted_values_keep_their_spaces_and_commas(tmp_path):
    cfg = tmp_path / "c.yaml"
    raw = tiny_config(algorithms=[
        {"name": "cart", "label": "CART (depth 1)", "params": {"max_depth": 1}},
        {"name": "cart", "label": "CART, deep", "params": {"max_depth": 3}}])
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    out = tmp_path / "r"
    run = CliRunner().invoke
    r = run(app, ["run", str(cfg), "--out", str(out), "--quiet", "--no-report"])
    assert r.exit_code == 0, r.output

    def ids(*where):
        r = run(app, ["cells", str(out), "--ids", *[a for w in where for a in ("-w", w)]])
        assert r.exit_code == 0, r.output
        return r.output.split()

    assert len(ids()) == 6
    shallow = ids("algorithm_label='CART (depth 1)'")
    deep = ids('label="CART, deep" fold=0,1')
    assert len(shallow) == 3 and len(deep) == 2 and not set(shallow) & set(deep)
    # a quoted value is one value: the comma inside it separates nothing; outside, it does
    assert sorted(ids("label='CART, deep','CART (depth 1)'")) == sorted(ids())
    r = run(app, ["cells", str(out), "-w", "label=CART (depth 1)"])  # unquoted: `(depth` ...
    assert r.exit_code == 2 and "goes in quotes" in r.output
    r = run(app, ["cells", str(out), "-w", "label='CART (depth 1)"])
    assert r.exit_code == 2 and "not closed" in r.output


def test_labels_are_printed_as_written_never_as_markup(tmp_path):
    """`cells` and `run --dry-run` print tables with rich: a label such as `cart[/b]` stopped
    them with a markup error, and `[red]X[link=...]` hid its brackets (a hidden link)."""
    cfg = tmp_path / "c.yaml"
    raw = tiny_config(algorithms=[
        {"name": "cart", "label": "cart[/b]", "params": {"max_depth": 1}},
        {"name": "cart", "label": "cart[red]X[link=http://x]", "params": {"max_depth": 2}}])
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    run = CliRunner().invoke
    r = run(app, ["run", str(cfg), "--out", str(tmp_path / "d"), "--dry-run"])
    assert r.exit_code == 0, r.output
    assert "cart[/b]" in r.output and "cart[red]X[link=http://x]" in r.output
    out = tmp_path / "r"
    assert run(app, ["run", str(cfg), "--out", str(out), "-q", "--no-report"]).exit_code == 0
    r = run(app, ["cells", str(out), "-w", "max_depth=1"])
    assert r.exit_code == 0 and "cart[/b]" in r.output, r.output
