"""The built-in certificate claim of `treebench verify`: cells of one problem instance whose
solvers claim optimality agree on the objective, no incumbent beats a proven optimum and no
lower bound exceeds one (`treebench.results.certificates`, docs/objectives.md)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results import schema
from treebench.results.cellfile import encode_record
from treebench.results.certificates import check_certificates, same
from treebench.results.store import read_table
from treebench.verify import CERTIFICATES, EXIT_FAILED

from runs import tiny_config


def _entries():
    return [{"name": n, "label": f"{n}/min-errors", "objective": "min-errors",
             "params": {"max_depth": 2}} for n in ("topk", "dl85")]


def _run(tmp_path):
    cfg = tiny_config(split={"kind": "kfold", "n_splits": 2},
                      binarization={"method": "quantile", "params": {"max_splits": 3}},
                      algorithms=_entries())
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(path), "--out", str(out), "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    return out


def _plant(out, label: str, **row) -> str:
    """Rewrite the cell file of ``label``'s first fold with ``row``'s values (a wrong result
    a peer might return), keeping the file valid; return the cell id."""
    t = read_table(out / "results.parquet")
    cell = str(t[(t["algorithm_label"] == label) & (t["fold"] == 0)]["cell_id"].iloc[0])
    p = out / "cells" / f"{cell}.json"
    rec = json.loads(p.read_bytes())
    rec.pop("sha256", None)
    rec["row"].update(row)
    p.write_bytes(encode_record(rec)[0])
    return cell


def _verify(out):
    """`treebench verify` of ``out``: the result and the built-in verdict from its JSON."""
    js = out.parent / "verdicts.json"
    r = CliRunner().invoke(app, ["verify", str(out), "--json", str(js)])
    verdicts = json.loads(js.read_text(encoding="utf-8"))["verdicts"]
    return r, next(v for v in verdicts if v["item"] == CERTIFICATES)


@pytest.mark.peers
def test_verify_fails_on_a_planted_wrong_optimum(tmp_path):
    pytest.importorskip("pydl85")
    out = _run(tmp_path)
    r, v = _verify(out)
    assert r.exit_code == 0 and v["passed"], r.output
    assert "certificates across solvers" in r.output
    t = read_table(out / "results.parquet")
    opt = t[t["algorithm_label"] == "dl85/min-errors"]["problem_objective"].astype(float)
    cell = _plant(out, "dl85/min-errors", problem_objective=float(opt.iloc[0]) - 1.0,
                  optimal=True)
    r, v = _verify(out)
    assert r.exit_code == EXIT_FAILED, r.output
    assert not v["passed"] and "both claim optimal" in v["reason"] and cell in v["reason"]
    assert "FAIL" in r.output


@pytest.mark.peers
def test_an_incumbent_below_a_proven_optimum_fails(tmp_path):
    pytest.importorskip("pydl85")
    out = _run(tmp_path)
    t = read_table(out / "results.parquet")
    opt = t[t["algorithm_label"] == "topk/min-errors"]["problem_objective"].astype(float)
    _plant(out, "dl85/min-errors", problem_objective=float(opt.iloc[0]) - 1.0, optimal=False)
    r, v = _verify(out)
    assert r.exit_code == EXIT_FAILED, r.output
    assert "not proven optimal" in v["reason"]


def _row(cell, label, obj, optimal, **kw):
    base = {"experiment": "x", "cell_id": cell, "dataset": "d", "fold": 0, "seed": 0,
            "algorithm_label": label, "status": "ok", "problem": "min-errors",
            "problem_objective_kind": "errors", "problem_weight": 0.0,
            "problem_objective": obj, "optimal": optimal, "param_max_depth": 2}
    base.update(kw)
    return base


def test_the_three_rules_on_a_table():
    rows = [_row("a", "ours", 10.0, True), _row("b", "peer", 10.0, True),
            _row("c", "anytime", 11.0, False, status="timeout"),
            _row("d", "bounded", 12.0, False, bound=9.0, solver_objective_kind="errors")]
    ok = check_certificates(schema.conform(pd.DataFrame(rows)))
    assert ok.passed and ok.instances == 1 and ok.comparisons == 4
    rows += [_row("e", "bad", 9.0, False), _row("f", "high", 12.0, False, bound=10.5,
                                                  solver_objective_kind="errors"),
             _row("g", "other-depth", 3.0, True, param_max_depth=3),
             _row("h", "own-unit", 12.0, False, bound=50.0, solver_objective_kind="solver")]
    found = check_certificates(schema.conform(pd.DataFrame(rows)))
    kinds = sorted(x.kind for x in found.disagreements)
    assert kinds == ["bound above optimum", "incumbent below optimum"], found.disagreements
    assert {c for x in found.disagreements for c in x.cells} == {"a", "e", "f"}


def test_lexicographic_ties_and_the_exact_integer_rule():
    lex = dict(problem="min-errors-then-nodes", problem_objective_kind="errors-then-nodes")
    rows = [_row("a", "ours", 4.0, True, problem_tiebreak=7, **lex),
            _row("b", "peer", 4.0, True, problem_tiebreak=5, **lex)]
    found = check_certificates(schema.conform(pd.DataFrame(rows)))
    assert [x.kind for x in found.disagreements] == ["optima differ"]
    assert "with 7 nodes" in found.disagreements[0].text
    assert not same(1e10, 1e10 + 1) and same(0.1 + 0.2, 0.3) and not same(0.3, 0.31)
