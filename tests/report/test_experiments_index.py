"""The index of a folder of experiments: each row's links sit in the table, an experiment
without claims reads "nothing to check" as `treebench verify` says, the cross-experiment table
names each setting's split, and `treebench report` prints the page to open."""

from __future__ import annotations

import pandas as pd
from typer.testing import CliRunner

from tests.report.test_status_mixes import CELLS, write_mix
from treebench.cli import app
from treebench.report import index

runner = CliRunner()


def _folder(tmp_path):
    root = tmp_path / "results"
    write_mix(root / "first", ["ok"] * len(CELLS), name="first")
    write_mix(root / "second", ["ok"] * len(CELLS), name="second")
    return root


def test_the_index_links_each_report_inside_its_row(tmp_path, no_figures):
    root = _folder(tmp_path)
    r = runner.invoke(app, ["report", str(root), "--format", "html,md,csv"])
    assert r.exit_code == 0, r.output
    md = (root / "index.md").read_text(encoding="utf-8").split("\n## ")[0]
    rows = [ln for ln in md.splitlines() if ln.startswith("| first")]
    assert len(rows) == 1
    assert "[report](first/report/index.html)" in rows[0]
    assert "](first/report/index.html#reproduction) |" in rows[0]  # the claims' verdict
    assert "not checked" not in md and "\n- " not in md  # no list of links below the table
    page = (root / "index.html").read_text(encoding="utf-8")
    table = page.split("</table>")[0]
    assert '<a href="first/report/index.html">report</a>' in table
    assert '<a href="second/report/index.html#reproduction">' in table
    assert "<ul>" not in page and "not checked" not in page
    assert f"report: {root / 'index.html'}" in r.output
    # the cross-experiment table names each setting's split (5-fold beside 3-fold)
    across = pd.read_csv(root / "across.csv")
    assert "split" in across.columns and across["split"].notna().all()
    header = next(ln for ln in (root / "across.md").read_text("utf-8").splitlines()
                  if ln.startswith("| dataset"))
    assert [c.strip() for c in header.strip("|").split("|")][:3] == [
        "dataset", "experiment", "split"]


def test_an_experiment_without_claims_reads_as_verify_says():
    import inspect

    from treebench import verify

    assert index.NOTHING_TO_CHECK == "nothing to check"
    assert f": {index.NOTHING_TO_CHECK}" in inspect.getsource(verify)


def test_report_of_one_run_prints_its_index_page(tmp_path, no_figures):
    d = write_mix(tmp_path / "r", ["ok"] * len(CELLS))
    r = runner.invoke(app, ["report", str(d), "--format", "md,csv"])
    assert r.exit_code == 0, r.output
    assert f"report: {d / 'report' / 'summary.md'}" in r.output
