"""What a results folder may hold that treebench did not put there: a lock file or cell file
that is a link, a FIFO or a device; a folder of its own replaced by a link; a value no table
column can hold; another tool's results.parquet or results.csv. Each is named with one
sentence; none makes treebench write outside the folder, hang, fill its memory, replace a file
it did not write, or leave the folder stuck with a traceback. Every test goes through the CLI
(typer's runner, or a subprocess with a timeout where the old behaviour was a hang)."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results.cellfile import encode_record
from treebench.results.store import read_table

from runs import tiny_config

ROOT = Path(__file__).resolve().parents[2]
PRECIOUS = "a file of the user's, outside the results folder\n"


def _cli(*args) -> object:
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    assert "Traceback" not in r.output, r.output
    return r


def _subprocess(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    """`treebench ARGS` in a child with a 4 GB address-space cap, bounded in time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def cap() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-m", "treebench.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout, preexec_fn=cap)


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """(config, results folder) of a finished run of six cells, to be copied by each test."""
    d = tmp_path_factory.mktemp("finished")
    cfg = d / "exp.yaml"
    cfg.write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    r = _cli("run", cfg, "--out", d / "r", "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    return cfg, d / "r"


@pytest.fixture
def folder(finished, tmp_path) -> tuple[Path, Path]:
    """(config, a copy of the finished results folder in this test's directory)."""
    cfg, src = finished
    out = tmp_path / "r"
    shutil.copytree(src, out, symlinks=True)
    return cfg, out


def _cells(out: Path) -> list[Path]:
    return sorted((out / "cells").glob("*.json"))


def _rows(out: Path) -> int:
    return len(read_table(out / "results.parquet"))


# ----------------------------------------------------------------------------- the lock file
@pytest.mark.parametrize("link", ["symbolic", "hard"])
@pytest.mark.parametrize("command", [("verify",), ("report", "--format", "md", "--no-figures"),
                                     ("results", "check", "--repair"), ("run",)])
def test_a_lock_file_linked_elsewhere_is_replaced_and_its_target_left_alone(folder, tmp_path,
                                                                           link, command):
    cfg, out = folder
    precious = tmp_path / "precious"
    precious.write_text(PRECIOUS)
    (out / ".lock").unlink()
    if link == "symbolic":
        (out / ".lock").symlink_to(precious)
    else:
        os.link(precious, out / ".lock")
    args = [*command, out] if command[0] != "run" else ["run", cfg, "--out", out, "--quiet",
                                                         "--no-report"]
    (out / ".plan-cache.json").unlink()  # else a run with nothing to do takes no lock
    r = _cli(*args)
    assert r.exit_code == 0, r.output
    assert precious.read_text() == PRECIOUS  # never written, never emptied
    assert not (out / ".lock").is_symlink() and (out / ".lock").stat().st_nlink == 1
    assert f"{out / '.lock'} was a " in r.output and "replaced it by a new lock file" in r.output
    r = _cli(*args)  # the folder's own lock file from now on: nothing more to say
    assert r.exit_code == 0 and "replaced it" not in r.output, r.output


def test_temp_files_in_a_linked_report_folder_are_left_alone(folder, tmp_path):
    """The stale temporary files a lock taker removes are those of the folder: a `report`
    that is a link to another folder is not looked into."""
    cfg, out = folder
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()
    theirs = elsewhere / f".notes.txt.{ended.pid}.tmp"  # named like a killed writer's
    theirs.write_text(PRECIOUS)
    (out / "report").symlink_to(elsewhere)
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 0, r.output
    assert theirs.read_text() == PRECIOUS


# ----------------------------------------------------------------------------- cell files
def test_a_fifo_named_like_a_cell_file_is_unusable_not_a_hang(folder):
    cfg, out = folder
    fifo = out / "cells" / "0123456789abcdef.json"
    os.mkfifo(fifo)
    r = _subprocess("results", "check", out)  # hung for ever in read()
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"cells/{fifo.name}: it is a FIFO, not a regular file" in r.stdout
    r = _subprocess("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"cells/{fifo.name} cannot be used (it is a FIFO" in r.stdout + r.stderr
    assert not fifo.exists() and _rows(out) == 6
    assert _subprocess("results", "check", out).returncode == 0


def test_a_link_to_dev_zero_named_like_a_cell_file_is_never_read(folder):
    cfg, out = folder
    link = out / "cells" / "0123456789abcdef.json"
    link.symlink_to("/dev/zero")
    r = _subprocess("results", "check", out)  # read /dev/zero until memory ran out
    assert r.returncode == 1, r.stderr[-2000:]
    assert f"cells/{link.name}: it is a symbolic link, not a regular file" in r.stdout
    r = _subprocess("results", "check", out, "--repair")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not link.is_symlink() and _rows(out) == 6


def test_a_cell_file_linked_from_another_folder_is_unusable_and_only_the_link_moves(folder,
                                                                                   tmp_path):
    """A link to a well-formed cell file elsewhere was followed and counted as a result of
    this folder; now it is unusable, and --repair moves the link, never its target."""
    cfg, out = folder
    victim = _cells(out)[0]
    target = tmp_path / "elsewhere" / victim.name
    target.parent.mkdir()
    shutil.move(victim, target)
    victim.symlink_to(target)
    r = _cli("results", "check", out)
    assert r.exit_code == 1, r.output
    assert f"cells/{victim.name}: it is a symbolic link, not a regular file" in r.output
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 0 and _rows(out) == 5, r.output
    assert target.is_file() and not victim.exists()
    assert _cli("run", cfg, "--out", out, "--quiet", "--no-report").exit_code == 0
    assert _rows(out) == 6


@pytest.mark.parametrize("name", ["quarantine", "cells"])
def test_a_folder_of_the_store_that_is_a_link_is_refused(folder, tmp_path, name):
    """A `quarantine/` linked elsewhere received the set-aside files (outside the results
    folder); a linked `cells/` had its files read and moved from wherever it points."""
    cfg, out = folder
    elsewhere = tmp_path / "elsewhere"
    if name == "cells":
        shutil.move(out / "cells", elsewhere)
    else:
        elsewhere.mkdir()
    (out / name).symlink_to(elsewhere)
    before = sorted(p.name for p in elsewhere.iterdir())
    victim = sorted(elsewhere.glob("*.json"))[0] if name == "cells" else _cells(out)[0]
    victim.write_bytes(victim.read_bytes()[:100])  # an unusable cell file to set aside
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 2, r.output
    assert f"{out / name} is a symbolic link (to {elsewhere})" in r.output
    assert "only inside the results folder" in r.output
    assert sorted(p.name for p in elsewhere.iterdir()) == before


# ----------------------------------------------------------------------------- values
def _edit(p: Path, **row) -> None:
    """Set values in the row of the cell file ``p`` and recompute its content hash."""
    rec = json.loads(p.read_text())
    rec["row"].update(row)
    p.write_bytes(encode_record(rec)[0])


@pytest.mark.parametrize(("field", "value", "words"), [
    ("n_leaves", 1e19, "is beyond 2**53"),
    ("n_leaves", 9.3e18, "is beyond 2**53"),
    ("n_leaves", 1e308, "is beyond 2**53"),
    ("depth", 2**63 - 1, "is beyond 2**53"),  # an int64, beside a cell without a depth
    ("dataset", "iris\ud800", "lone UTF-16 surrogate"),
    ("param_\ud800", 1, "lone UTF-16 surrogate"),
    ("solver_status_of_a_removed_plugin", 1, "declared by no metric or learner"),
])
def test_a_value_no_table_column_holds_makes_its_cell_unusable_not_a_stuck_folder(
        folder, field, value, words):
    """`results check` called such a cell usable, then rebuild, run, verify, report and
    --repair all stopped with a SchemaError traceback, for ever."""
    cfg, out = folder
    victim, other = _cells(out)[:2]
    _edit(victim, **{field: value})
    _edit(other, depth=None)  # a missing value in the column, as a failed cell has
    r = _cli("results", "check", out)
    assert r.exit_code == 1, r.output
    assert f"unusable: cells/{victim.name}: " in r.output and words in r.output, r.output
    for args in (("verify", out), ("report", out, "--format", "md", "--no-figures"),
                 ("cells", out, "--where", "fold=0")):
        r = _cli(*args)
        assert r.exit_code in (0, 5), (args, r.output)
        assert f"cells/{victim.name}" in r.output, (args, r.output)
    r = _cli("results", "rebuild", out)
    assert r.exit_code == 0 and "quarantine/" in r.output, r.output
    assert _rows(out) == 5
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0 and "ran 1" in r.output, r.output
    assert _rows(out) == 6 and _cli("results", "check", out).exit_code == 0


WHOLE = [0, 3, 3.0, -2.0**53, 2**53, 2.0**53 + 2, 2**53 + 1, 2**63 - 1, -(2**63), 2.0**63,
         9.3e18, 1e19, 1e308, float("inf"), 2.5, "7", True]
NUMBER = [0.25, 3, 2**63 - 1, -(2**63), 1e308, float("-inf"), "0.5", False]
TEXT = ["iris", "", "x\ud800y", "\U0001F600", 5, None]


@pytest.mark.parametrize(("column", "values"), [("operations", WHOLE), ("fit_seconds", NUMBER),
                                                ("dataset", TEXT)])
def test_the_row_check_admits_exactly_the_values_a_table_is_built_from(folder, column, values):
    """Each value in one cell, beside a cell without one: a value `results check` admits
    reaches the table unchanged (a whole number exactly, not through a float), a refused one
    is named and set aside, and the admitted ones are those of the documented rule (whole
    numbers up to 2**53, any number, UTF-8 text). The old rule admitted 9.3e18, 1e19 or 2**63
    - 1 beside a missing value, and text with a lone surrogate, and no table was built."""
    cfg, out = folder
    victim, other = _cells(out)[:2]
    _edit(other, **{column: None})
    for value in values:
        _edit(victim, **{column: value})
        r = _cli("results", "check", out, "--repair")
        assert r.exit_code in (0, 1), (value, r.output)
        admitted = victim.exists()
        if admitted:
            got = read_table(out / "results.parquet").set_index("cell_id").loc[victim.stem,
                                                                               column]
            if value is None:
                assert pd.isna(got)
            elif column == "operations":
                assert int(got) == value, (value, got)  # exactly, not through a float
            elif column == "fit_seconds":
                assert float(got) == float(value), (value, got)  # a float column
            else:
                assert got == value, (value, got)
        else:
            assert f"cells/{victim.name}" in r.output and _rows(out) == 5, (value, r.output)
            shutil.move(next((out / "quarantine").glob(f"{victim.stem}.*.json")), victim)
        expect = not (isinstance(value, str) and "\ud800" in value) and {
            "operations": lambda v: isinstance(v, int | float) and not isinstance(v, bool)
            and float(v).is_integer() and abs(v) <= 2**53,
            "fit_seconds": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
            "dataset": lambda v: v is None or isinstance(v, str)}[column](value)
        assert admitted == expect, (value, r.output)


# ----------------------------------------------------------------------------- other tables
def _foreign(d: Path) -> dict[str, bytes]:
    """A pandas table of another tool as results.parquet and results.csv in ``d``."""
    d.mkdir(parents=True, exist_ok=True)
    df = pd.DataFrame({"model": ["a", "b"], "score": [0.5, 0.75]})
    df.to_parquet(d / "results.parquet")
    df.to_csv(d / "results.csv")
    return {t: (d / t).read_bytes() for t in ("results.parquet", "results.csv")}


def test_a_run_into_a_folder_with_another_tools_tables_is_refused(finished, tmp_path):
    cfg, _ = finished
    out = tmp_path / "theirs"
    before = _foreign(out)
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 2, r.output
    assert "is not a results table treebench wrote" in r.output
    assert "'model', 'score'" in r.output and "move it away" in r.output
    assert {t: (out / t).read_bytes() for t in before} == before
    assert not (out / "cells").exists()


def test_a_run_stopped_before_its_first_cell_resumes(finished, tmp_path, monkeypatch):
    """A run interrupted before any cell finished leaves its manifest, empty tables and an
    index without cell entries, and no cells/ folder; the same command then runs every cell
    (it was refused: the index without entries was not trusted, and empty tables were taken
    for results without their cell files)."""
    import treebench.api as api

    cfg, _ = finished
    out = tmp_path / "stopped"

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(api, "run_cells", stopped)
        r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 130, r.output
    assert (out / "results.parquet").is_file() and not (out / "cells").exists()
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    assert len(list((out / "cells").glob("*.json"))) == 6
    assert len(pd.read_parquet(out / "results.parquet")) == 6


def test_a_run_into_a_folder_with_a_table_exported_without_its_cells_is_refused(finished,
                                                                               tmp_path):
    cfg, src = finished
    out = tmp_path / "exported"
    out.mkdir()
    shutil.copy(src / "results.parquet", out / "results.parquet")
    r = _cli("cells", out)  # an exported table is read as it is
    assert r.exit_code == 0 and "6 cell(s)" in r.output, r.output
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 2 and "no cells/ folder" in r.output, r.output
    assert (out / "results.parquet").read_bytes() == (src / "results.parquet").read_bytes()


def test_cells_and_report_on_another_tools_table_say_so_and_write_nothing(tmp_path):
    out = tmp_path / "theirs"
    _foreign(out)
    names = sorted(os.listdir(out))
    for args in (("cells", out), ("report", out), ("verify", out)):
        r = _cli(*args)
        assert r.exit_code == 2, (args, r.output)
        assert f"{out / 'results.csv'} is not a results table treebench wrote" in r.output
    assert sorted(os.listdir(out)) == names  # no .lock, no empty report/


def test_a_folder_whose_index_was_deleted_keeps_its_tables_and_check_names_a_foreign_one(
        folder):
    cfg, out = folder
    (out / ".cells-index.json").unlink()  # a cache: its tables are still treebench's
    r = _cli("run", cfg, "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0 and "ran 0" in r.output, r.output
    (out / ".cells-index.json").unlink()
    theirs = _foreign(out / "elsewhere")["results.csv"]
    (out / "results.csv").write_bytes(theirs)
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and "foreign:  results.csv is not a results table" in r.output
    assert "--repair" not in r.output, r.output  # it would not help
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 2 and "move it away first" in r.output, r.output
    assert (out / "results.csv").read_bytes() == theirs
    (out / "results.csv").unlink()
    assert _cli("results", "check", out, "--repair").exit_code == 0


# ----------------------------------------------------------------------------- unwritable
@pytest.mark.parametrize("code", [errno.EROFS, errno.ENOSPC])
def test_report_of_a_folder_whose_tables_cannot_be_written_reads_the_cells(folder, tmp_path,
                                                                          monkeypatch, code):
    """Tables missing, the folder read-only or full: the report (into a writable --out) is
    built from the cell files, with a note, instead of "no results.parquet here"."""
    cfg, out = folder
    (out / "results.parquet").unlink()
    (out / "results.csv").unlink()
    real = os.replace

    def refuse(src, dst, *a, **k):
        if Path(dst).parent == out:
            raise OSError(code, os.strerror(code))
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", refuse)
    r = _cli("report", out, "--out", tmp_path / "rep", "--format", "md", "--no-figures")
    assert r.exit_code == 0, r.output
    assert f"cannot write this file ({os.strerror(code).lower()})" in r.output
    assert "the results are read from the cell files" in r.output
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "3/3" in md and not (out / "results.parquet").exists()


# ----------------------------------------------------------------------------- advice
def test_check_without_a_manifest_does_not_advise_a_repair_that_cannot_help(folder):
    cfg, out = folder
    (out / "manifest.json").unlink()
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and "manifest: missing: run the experiment's config" in r.output
    assert "--repair" not in r.output, r.output


def test_cells_names_the_unusable_cell_file_it_leaves_out(folder):
    cfg, out = folder
    victim = _cells(out)[0]
    victim.write_bytes(victim.read_bytes()[:100])
    r = _cli("cells", out)
    assert r.exit_code == 0 and "5 cell(s)" in r.output, r.output
    assert f"cells/{victim.name} cannot be used" in r.output and "left out" in r.output


def test_the_flags_the_results_store_page_names_exist():
    import typer.main

    def options(cmd) -> set[str]:
        found = {o for p in cmd.params for o in getattr(p, "opts", [])}
        for sub in getattr(cmd, "commands", {}).values():
            found |= options(sub)
        return found

    known = options(typer.main.get_command(app))
    text = (ROOT / "docs" / "results-store.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text))
    assert named and not named - known, sorted(named - known)
