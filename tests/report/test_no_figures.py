"""`treebench report --no-figures`: the tables and pages without the figures (most of a
report's time), told apart from a report with figures when the report asks whether the one in
the folder is current."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from treebench.cli import app

from runs import run_quiet, tiny_config


def _report(out: Path, *more: str):
    r = CliRunner().invoke(app, ["report", str(out), *more])
    assert r.exit_code == 0, r.output
    return r.output


def test_a_report_without_figures_writes_pages_and_tables_and_is_not_taken_for_one_with(tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    out = tmp_path / "r"
    run_quiet(cfg, out)
    rdir = out / "report"

    def pngs() -> int:
        return len(list(rdir.glob("figures/*.png")))

    assert "unchanged" not in _report(out, "--no-figures")
    assert pngs() == 0
    summary = (rdir / "summary.md").read_text(encoding="utf-8")
    assert "figures/" not in summary and "iris" in summary
    assert (rdir / "index.html").is_file() and (rdir / "tables" / "summary.csv").is_file()
    assert "unchanged" in _report(out, "--no-figures")
    # asked with figures: drawn, not the figure-less report kept
    assert "unchanged" not in _report(out)
    assert pngs() > 0 and "figures/" in (rdir / "summary.md").read_text(encoding="utf-8")
    assert "unchanged" in _report(out)
    assert "unchanged" not in _report(out, "--no-figures")
    assert "figures/" not in (rdir / "summary.md").read_text(encoding="utf-8")
