"""`treebench cells` heads the learner column `algorithm`, the name the docs and `--where`
use, not the results column `algorithm_label`."""

from __future__ import annotations

from typer.testing import CliRunner

from tests.report.test_status_mixes import CELLS, write_mix
from treebench.cli import app


def test_the_cells_table_heads_the_learner_column_algorithm(tmp_path):
    d = write_mix(tmp_path / "r", ["ok"] * len(CELLS))
    r = CliRunner().invoke(app, ["cells", str(d), "--limit", "3"])
    assert r.exit_code == 0, r.output
    header = next(ln for ln in r.output.splitlines() if "cell_id" in ln)
    assert "algorithm" in header.split() or " algorithm " in header, header
    assert "algorithm_label" not in r.output
