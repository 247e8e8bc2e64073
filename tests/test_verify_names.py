"""`treebench verify` names an experiment as its config writes it (case and all)."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.report.test_status_mixes import CELLS, write_mix
from treebench.cli import app


def test_verify_keeps_the_experiments_name_as_written(tmp_path):
    d = write_mix(tmp_path / "r", ["ok"] * len(CELLS), name="quickStart-wine")
    r = CliRunner().invoke(app, ["verify", str(d)])
    assert "quickStart-wine" in r.output, r.output
    assert "QuickStart-wine" not in r.output and "Quickstart-wine" not in r.output
