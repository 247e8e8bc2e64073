"""`report: {figures: [...]}`: the report draws the figures whose name one of the config's
shell-style patterns matches, drops the files of those no longer chosen, and a bad pattern is
a clear config error."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.report.figures import figure_name

from runs import run_quiet, tiny_config


def _names(rdir: Path) -> set[str]:
    return {figure_name(p.stem) for p in (rdir / "figures").glob("*.png")}


def _report(out: Path) -> None:
    r = CliRunner().invoke(app, ["report", str(out)])
    assert r.exit_code == 0, r.output


def test_the_report_draws_the_chosen_figures_and_drops_the_others(tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config(report={"figures": ["*"]})), encoding="utf-8")
    out = tmp_path / "r"
    run_quiet(cfg, out)
    _report(out)
    every = _names(out / "report")
    assert {"test_accuracy_vs_max_depth", "fit_seconds_vs_max_depth"} <= every

    patterns = ["test_accuracy_vs_*", "pareto_*"]
    cfg.write_text(yaml.safe_dump(tiny_config(report={"figures": patterns})), encoding="utf-8")
    run_quiet(cfg, out)  # the same cells; the manifest now carries the patterns
    _report(out)
    chosen = _names(out / "report")
    assert chosen == {n for n in every if any(fnmatchcase(n, p) for p in patterns)}
    assert "fit_seconds_vs_max_depth" not in chosen and "test_accuracy_vs_max_depth" in chosen
    summary = (out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "fit_seconds_vs_max_depth" not in summary

    # a pattern matching nothing: no figure, the pages still written
    cfg.write_text(yaml.safe_dump(tiny_config(report={"figures": ["no_such_figure"]})),
                   encoding="utf-8")
    run_quiet(cfg, out)
    _report(out)
    assert _names(out / "report") == set()
    assert (out / "report" / "index.html").is_file()
    summary = (out / "report" / "summary.md").read_text(encoding="utf-8")
    note = next(line for line in summary.splitlines() if "matches no figure" in line)
    assert "no_such_figure" in note


def test_an_empty_figure_pattern_is_a_config_error(tmp_path):
    cfg = tmp_path / "exp.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config(report={"figures": ["  "]})), encoding="utf-8")
    r = CliRunner().invoke(app, ["run", str(cfg), "-o", str(tmp_path / "r"), "-q"])
    assert r.exit_code == 2, r.output
    assert "figure pattern" in r.output and "Traceback" not in r.output


def test_a_pattern_chooses_the_figure_of_datasets_whose_stem_holds_underscores(tmp_path):
    """A dataset's file stem may hold ``__`` or end in ``_`` (``multi _u_`` becomes
    ``multi-_u_``): a pattern is matched against the name after the whole dataset prefix, so
    each dataset gets its chosen figure (the first ``__`` of the file name was taken as the
    prefix's end, and such a dataset silently lost its figures)."""
    from treebench.report import write_report

    from .conftest import DATASETS, synthetic_table, write_results

    table = synthetic_table()
    names = {DATASETS[0]: "a__b", DATASETS[1]: "multi _u_"}
    table["dataset"] = table["dataset"].map(names).astype("string")
    res = write_results(tmp_path / "res", table, figures=["test_accuracy_vs_n_leaves"])
    paths = write_report(res, formats=["md"])
    drawn = sorted(p.name for p in paths["png"])
    assert len(drawn) == 2 and all(n.endswith("__test_accuracy_vs_n_leaves.png") for n in drawn)
    assert drawn[0].startswith("a__b__") and drawn[1].startswith("multi-_u_")
