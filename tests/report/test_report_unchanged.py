"""`treebench report DIR` on a report that is current answers without drawing: same cells,
same formats, same drawing code and every file of the report as it was written. Anything else
takes the full path and the report is written again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from treebench.execute import plan_cache
from treebench.cli import app
from treebench.execute.plan_cache import REPORT_STAMP, report_unchanged

UNCHANGED = "(unchanged: written from these cells"
CONFIG = {
    "name": "unchanged", "seed": 0, "datasets": ["iris"],
    "split": {"kind": "kfold", "n_splits": 2}, "binarization": {"method": "raw"},
    "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
    "execution": {"n_jobs": 1, "backend": "sequential"},
    # one figure per dataset: whether a report is written again does not depend on how many
    "report": {"figures": ["test_accuracy_vs_max_depth"]},
}


def _files(report: Path) -> dict[str, int]:
    return {p.relative_to(report).as_posix(): p.stat().st_mtime_ns
            for p in report.rglob("*") if p.is_file()}


def _run(tmp: Path) -> Path:
    """`treebench run` of CONFIG from ``tmp``/c.yaml into ``tmp``/o; the results folder."""
    cfg = tmp / "c.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    out = tmp / "o"
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    return out


@pytest.fixture(scope="module")
def _first_run(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("unchanged")
    _run(tmp)
    return tmp


@pytest.fixture
def run_dir(_first_run: Path, tmp_path: Path) -> Path:
    """A copy of one run of CONFIG (config and results folder, modification times kept) in
    this test's folder: the report answers a copied folder as it answers the run's own."""
    shutil.copytree(_first_run, tmp_path, dirs_exist_ok=True)
    return tmp_path / "o"


def _report(out: Path, *extra: str) -> str:
    res = CliRunner().invoke(app, ["report", str(out), *extra])
    assert res.exit_code == 0, res.output
    return res.output


def test_a_current_report_is_not_written_again(run_dir: Path):
    before = _files(run_dir / "report")
    assert any(k.endswith(".png") for k in before)
    said = _report(run_dir)
    assert UNCHANGED in said
    assert _files(run_dir / "report") == before  # nothing rewritten, not even the stamp


def test_a_removed_or_edited_report_file_is_written_again(run_dir: Path):
    figure = next((run_dir / "report").rglob("*.png"))
    figure.unlink()
    assert UNCHANGED not in _report(run_dir)
    assert figure.is_file()
    page = run_dir / "report" / "index.html"
    page.write_text(page.read_text() + "<!-- tampered 7f3a -->")
    assert UNCHANGED not in _report(run_dir)
    assert "tampered 7f3a" not in page.read_text()
    assert UNCHANGED in _report(run_dir)


def test_other_formats_or_another_out_take_the_full_path(run_dir: Path, tmp_path: Path):
    assert UNCHANGED not in _report(run_dir, "--format", "html")
    assert UNCHANGED in _report(run_dir, "--format", "html")
    assert UNCHANGED not in _report(run_dir)  # back to the four default formats: written
    elsewhere = tmp_path / "elsewhere"
    assert UNCHANGED not in _report(run_dir, "--out", str(elsewhere))
    assert (elsewhere / "index.html").is_file()


def test_changed_cells_take_the_full_path(run_dir: Path):
    cell = next((run_dir / "cells").glob("*.json"))
    rec = json.loads(cell.read_text())
    rec["row"]["test_accuracy"] = 0.123  # its hash no longer matches: an unusable cell file
    cell.write_text(json.dumps(rec))
    assert not report_unchanged(run_dir, ("html", "md", "csv", "latex"))
    said = _report(run_dir)
    assert UNCHANGED not in said and cell.name in said


def test_new_drawing_code_takes_the_full_path(run_dir: Path, monkeypatch):
    fmts = ("html", "md", "csv", "latex")
    assert report_unchanged(run_dir, fmts)
    monkeypatch.setattr(plan_cache, "__version__", "0.0.0-other")
    assert not report_unchanged(run_dir, fmts)
    assert UNCHANGED not in _report(run_dir)
    stamp = json.loads((run_dir / "report" / REPORT_STAMP).read_text())
    assert stamp["code"] == plan_cache.report_code_key()
    assert UNCHANGED in _report(run_dir)


def test_a_rerun_with_nothing_to_do_keeps_the_report(tmp_path: Path):
    run_dir = _run(tmp_path)  # its own run: the config's path is part of the run's record
    before = _files(run_dir / "report")
    res = CliRunner().invoke(app, ["run", str(tmp_path / "c.yaml"), "--out", str(run_dir)])
    assert res.exit_code == 0, res.output
    assert _files(run_dir / "report") == before


def test_a_damaged_manifest_is_never_answered_as_unchanged(run_dir: Path):
    # the quick answer reads the manifest's selection; one it cannot read takes the full path
    (run_dir / "manifest.json").write_text("{broken", encoding="utf-8")
    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert UNCHANGED not in res.output, res.output


def test_the_report_code_key_covers_every_module_of_treebench(monkeypatch):
    """The report reads results, metrics and certificate code beside its own: its code key
    is taken over the whole package, wherever the plan cache's own module lives in it."""
    import treebench

    roots = []
    monkeypatch.setattr(plan_cache, "files_key", lambda root: roots.append(root) or "k")
    plan_cache.report_code_key()
    assert roots == [Path(treebench.__file__).resolve().parent]


def test_a_changed_claim_rewrites_the_report_though_no_cell_runs(run_dir: Path, tmp_path: Path):
    """The report shows the experiments' claims and verdicts: a config whose `expect:` changed
    runs no cell but rewrites the manifest, and the report (the run's own and a later
    `treebench report`) must show the new verdict, not the one of the old claim."""
    claim = {"name": "iris depth 2", "source": "a test",
             "where": {"dataset": "iris", "param_max_depth": 2}, "metric": "test_accuracy",
             "agg": "mean", "ge": 0.5}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**CONFIG, "expect": [claim]}))
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(run_dir), "-q"])
    assert res.exit_code == 0, res.output
    summary = run_dir / "report" / "summary.md"
    assert "iris depth 2" in summary.read_text() and "| pass |" in summary.read_text()
    cfg.write_text(yaml.safe_dump({**CONFIG, "expect": [{**claim, "ge": 0.999}]}))
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(run_dir), "-q", "--no-report"])
    assert res.exit_code == 0, res.output
    assert not report_unchanged(run_dir, ("html", "md", "csv", "latex"))
    assert UNCHANGED not in _report(run_dir)
    text = summary.read_text()
    assert "| ≥ 0.9990 |" in text and "| FAIL: outside the bound |" in text, text
    assert "| pass |" not in text
    assert UNCHANGED in _report(run_dir)


def test_pages_and_tables_the_report_no_longer_writes_are_removed(run_dir: Path, tmp_path: Path):
    """A report folder is one report: a claim removed, a format no longer asked for, or another
    results folder reported into the same `--out` leaves no page or table of the earlier one."""
    claim = {"name": "iris depth 2", "source": "a test",
             "where": {"dataset": "iris", "param_max_depth": 2}, "metric": "test_accuracy",
             "ge": 0.5}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({**CONFIG, "expect": [claim]}))
    assert CliRunner().invoke(app, ["run", str(cfg), "--out", str(run_dir), "-q"]).exit_code == 0
    tables = run_dir / "report" / "tables"
    assert (tables / "reproduction.csv").is_file() and (tables / "reproduction.md").is_file()
    cfg.write_text(yaml.safe_dump(CONFIG))  # the claim removed
    assert CliRunner().invoke(app, ["run", str(cfg), "--out", str(run_dir), "-q"]).exit_code == 0
    assert not (tables / "reproduction.csv").exists() and not (tables / "reproduction.md").exists()
    assert "iris depth 2" not in (run_dir / "report" / "summary.md").read_text()
    _report(run_dir, "--format", "latex")
    assert not (run_dir / "report" / "index.html").exists()
    assert not (run_dir / "report" / "summary.md").exists()
    assert sorted({p.suffix for p in tables.iterdir()}) == [".tex"]
    # a file no report wrote is never removed (a user's own page in an --out folder)
    (tables / "mine.csv").write_text("mine\n")
    own = tmp_path / "own"
    own.mkdir()
    (own / "index.html").write_text("my page")
    _report(run_dir, "--out", str(own), "--format", "csv")
    assert (own / "index.html").read_text() == "my page"
    _report(run_dir)
    assert (tables / "mine.csv").read_text() == "mine\n"
    assert (run_dir / "report" / "index.html").is_file() and (tables / "summary.csv").is_file()


def test_a_rerun_of_an_earlier_config_records_that_config_again(run_dir: Path, tmp_path: Path):
    """The fixture's config ran and its plan was remembered; a config with the same cells and
    a failing claim then replaced the experiment's record. Running the first config again has
    no cell to run, but must record it again: `verify` checks the claims of the config that
    ran last, not those of the one before."""
    cfg = tmp_path / "c.yaml"
    failing = {"name": "impossible", "source": "a test", "where": {"dataset": "iris"},
               "metric": "test_accuracy", "ge": 1.5}
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**CONFIG, "expect": [failing]}))
    for path in (other, cfg):
        res = CliRunner().invoke(app, ["run", str(path), "--out", str(run_dir), "-q"])
        assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["verify", str(run_dir)])
    assert res.exit_code == 0 and "impossible" not in res.output, res.output
    assert "impossible" not in (run_dir / "report" / "summary.md").read_text()


def test_a_report_that_cannot_be_written_names_the_file_and_its_cause(run_dir: Path, tmp_path):
    """Every write failure said "free space"; a folder where the page goes, or a file where a
    folder goes, is named, with what to do. An empty --out is refused (it meant the current
    folder)."""
    import shutil

    shutil.rmtree(run_dir / "report")
    (run_dir / "report" / "index.html").mkdir(parents=True)
    res = CliRunner().invoke(app, ["report", str(run_dir)])
    assert res.exit_code == 2, res.output
    assert f"{run_dir / 'report' / 'index.html'}: cannot write the report (is a directory)" \
        in res.output and "move " in res.output and "free space" not in res.output
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", ""])
    assert res.exit_code == 2 and "--out is empty" in res.output, res.output


def test_format_names_are_read_as_the_report_reads_them(run_dir: Path, tmp_path: Path):
    """`--format HTML` wrote index.html but the command pointed at the folder, and the quick
    answer compared the names as typed; aliases and case are read as the report reads them."""
    out = tmp_path / "ff"
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(out), "--format", "HTML"])
    assert res.exit_code == 0 and res.output.strip() == f"report: {out / 'index.html'}"
    _report(run_dir)
    assert UNCHANGED in _report(run_dir, "--format", "CSV,tex,markdown,htm")


def test_a_report_folder_another_report_is_writing_is_refused(run_dir: Path, tmp_path: Path):
    """Two reports into one --out at once left one's page beside the other's tables, and both
    said they were done: the folder is locked while a report writes it."""
    import subprocess
    import sys

    shared = tmp_path / "shared"
    shared.mkdir()
    code = ("import sys, time\nfrom treebench.execute.lock import results_lock\n"
            "with results_lock(sys.argv[1]):\n    print('ready', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, str(shared)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(shared)])
        assert res.exit_code == 2 and f"pid {holder.pid}" in res.output, res.output
        assert not (shared / "index.html").exists()
    finally:
        holder.kill()
        holder.wait()
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(shared)])
    assert res.exit_code == 0 and (shared / "index.html").is_file(), res.output
    # the results folder itself as --out: its own lock, taken once
    res = CliRunner().invoke(app, ["report", str(run_dir), "--out", str(run_dir)])
    assert res.exit_code == 0, res.output
