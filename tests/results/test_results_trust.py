"""A results folder a reader can trust: claims checked on exactly their cells, a store whose
tables are a function of its usable cell files, damaged files named and set aside, and one
sentence (exit 2) where a user used to get a traceback. Every test goes through the CLI."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
import pandas as pd
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.results import store
from treebench.results.cellfile import encode_record
from treebench.results.store import read_table

from runs import tiny_config

CLAIM = {"name": "cart mean accuracy", "source": "test", "metric": "test_accuracy",
         "where": {"algorithm": "cart"}, "ge": 0.0}


def _cfg(tmp_path: Path, file: str = "exp.yaml", **over) -> Path:
    raw = tiny_config(expect=[CLAIM], **over)
    p = tmp_path / file
    p.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return p


def _cli(*args: str):
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r


def _run(cfg: Path, out: Path, *more: str):
    return _cli("run", cfg, "--out", out, "--quiet", "--no-report", *more)


def _measured(out: Path, *more: str) -> tuple[int, float | None, str]:
    """(exit code, the claim's measured value, output) of `treebench verify OUT`."""
    js = out.parent / f"{out.name}-verify.json"
    r = _cli("verify", out, "--json", js, *more)
    if not js.is_file():
        return r.exit_code, None, r.output
    data = json.loads(js.read_text())
    js.unlink()
    return r.exit_code, data["verdicts"][0]["measured"], r.output


def _rows(out: Path) -> int:
    return len(read_table(out / "results.parquet"))


def test_a_sweep_into_the_folder_leaves_the_configs_claims_unchanged(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    assert _run(cfg, out).exit_code == 0
    code, before, _ = _measured(out)
    assert code == 0
    r = _cli("sweep", cfg, "--depth", "3..4", "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    assert _rows(out) == 12  # the table holds every cell of the folder
    code, after, text = _measured(out)
    assert code == 0 and after == before, text  # measured on the config's 6 cells only
    assert "6 other cell(s)" in text
    code, pooled, _ = _measured(out, "--all-cells")
    assert pooled != before  # pooling is possible, on request


def test_a_defined_cell_without_a_result_fails_the_claims_that_select_it(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    victim = sorted((out / "cells").glob("*.json"))[0]
    victim.unlink()  # what an interrupted run leaves: a defined cell with no file
    code, measured, text = _measured(out)
    assert code == 5 and measured is None, text
    assert "did not finish (missing 1)" in text and "have no usable result" in text
    assert _run(cfg, out).exit_code == 0  # the run resumes it
    assert _measured(out)[0] == 0


def test_a_truncated_cell_file_is_named_set_aside_and_rerun(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    _, before, _ = _measured(out)
    victim = sorted((out / "cells").glob("*.json"))[2]
    victim.write_bytes(victim.read_bytes()[:100])
    r = _cli("sweep", cfg, "--depth", "4", "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    assert f"cells/{victim.name} cannot be used" in r.output and "quarantine/" in r.output
    assert (out / "quarantine" / "reasons.json").is_file()
    assert _rows(out) == 6 - 1 + 3
    code, _, text = _measured(out)
    assert code == 5 and "missing 1" in text, text
    assert _run(cfg, out).exit_code == 0  # the config's run reruns the set-aside cell
    code, after, _ = _measured(out)
    assert code == 0 and after == pytest.approx(before, abs=1e-12)


def test_cells_copied_in_with_old_timestamps_reach_the_tables(tmp_path):
    small, full = _cfg(tmp_path, "small.yaml", algorithms=[
        {"name": "cart", "params": {"max_depth": [1]}}]), _cfg(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    _run(full, b)
    _run(small, a)
    assert _rows(a) == 3
    for p in (b / "cells").glob("*.json"):  # cp -p: the files keep their old mtimes
        shutil.copy2(p, a / "cells" / p.name)
        os.utime(a / "cells" / p.name, (1_000_000_000, 1_000_000_000))
    r = _run(full, a)
    assert r.exit_code == 0 and "ran 0" in r.output, r.output
    assert _rows(a) == 6


def test_a_damaged_results_table_or_csv_is_rewritten(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    _, before, _ = _measured(out)
    (out / "results.csv").write_text("garbage\n1,2\n")
    pq = out / "results.parquet"
    pq.write_bytes(pq.read_bytes()[: pq.stat().st_size // 2])
    code, after, text = _measured(out)  # no traceback, no advice that fails again
    assert code == 0 and after == before, text
    assert "rewrote" in text or "rebuilt" in text
    assert _rows(out) == 6
    assert len((out / "results.csv").read_text().splitlines()) == 7
    r = _run(cfg, out)
    assert r.exit_code == 0 and "ran 0" in r.output


def test_another_experiment_in_the_same_folder_is_refused_unless_asked(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    other = _cfg(tmp_path, "other.yaml", name="other",
                 algorithms=[{"name": "cart", "params": {"max_depth": [1]}}])
    _run(cfg, out)
    _, before, _ = _measured(out)
    r = _run(other, out)
    assert r.exit_code == 2 and "--add-experiment" in r.output and "`tiny`" in r.output, r.output
    r = _run(other, out, "--add-experiment")
    assert r.exit_code == 0, r.output
    r = _cli("verify", out)
    assert r.exit_code == 0 and "tiny" in r.output and "other" in r.output, r.output
    js = tmp_path / "v"
    assert _cli("verify", out, "--json", js).exit_code == 0
    mine = json.loads((js / "r-tiny.json").read_text())["verdicts"][0]["measured"]
    theirs = json.loads((js / "r-other.json").read_text())["verdicts"][0]["measured"]
    assert mine == before != theirs  # each experiment's claim on its own cells


def test_a_missing_or_damaged_manifest_never_passes(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    man = out / "manifest.json"
    saved = man.read_bytes()
    man.unlink()
    r = _cli("verify", out)
    assert r.exit_code == 2 and "no manifest.json" in r.output, r.output
    r = _cli("verify", out, "--config", cfg)  # the config says which cells: checked on them
    assert r.exit_code == 0, r.output
    man.write_text("{not json")
    r = _cli("verify", out)
    assert r.exit_code == 2 and "damaged" in r.output, r.output
    r = _run(cfg, out)  # "run the config again" does rewrite it
    assert r.exit_code == 0 and "was damaged" in r.output, r.output
    assert json.loads(man.read_text())["experiments"][0]["n_cells"] == 6
    assert len(saved) > 0 and _cli("verify", out).exit_code == 0


MANIFEST_EDITS = [
    (lambda m: m.__setitem__("experiments", ["x"]), "not an object with a key"),
    (lambda m: m.__setitem__("experiments", {"a": 1}), "not a list"),
    (lambda m: m["experiments"][0].__setitem__("kind", None), "unknown kind"),
    (lambda m: m["experiments"][0].__setitem__("config", "x"), "has no config"),
    (lambda m: m["experiments"][0].__setitem__("config", []), "has no config"),
    (lambda m: m["experiments"][0]["config"].pop("expect"), "does not match the hash"),
    (lambda m: m["experiments"][0]["config"]["expect"][0].__setitem__("ge", 2.0),
     "does not match the hash"),
    (lambda m: m["experiments"][0].__setitem__("cells", [1, 2]), "cell list is damaged"),
    # a hash removed by setting it to null, then the claim edited
    (lambda m: (m["experiments"][0].__setitem__("config_sha256", None),
                m["experiments"][0]["config"]["expect"][0].__setitem__("ge", 0.0)),
     "does not match the hash"),
    # every column of the cell list cut to its first 3 cells: verify checked a third of them
    (lambda m: [m["experiments"][0]["cells"].__setitem__(k, v[:3])
                for k, v in list(m["experiments"][0]["cells"].items())],
     "lists 3 cells where its run recorded 6"),
    # the same cut with the count edited to match: the ids' hash tells
    (lambda m: ([m["experiments"][0]["cells"].__setitem__(k, v[:3])
                 for k, v in list(m["experiments"][0]["cells"].items())],
                m["experiments"][0].__setitem__("n_cells", 3)),
     "cell ids do not match the hash"),
]


def test_a_manifest_whose_records_were_damaged_or_edited_never_passes(tmp_path):
    """A record that is no object, of no known kind, without its config, with a config other
    than the one whose hash its run wrote (a claim removed or loosened by hand) or with a
    damaged cell list: `verify` exits 2 naming the damage (it used to pass with "nothing to
    check", or trace back) and `results check` does not say the manifest is fine, for each
    edit of a copy of one run's folder; running the config again rewrites it."""
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    for i, (edit, why) in enumerate(MANIFEST_EDITS):
        copy = tmp_path / f"edit{i}"
        shutil.copytree(out, copy)
        man = copy / "manifest.json"
        m = json.loads(man.read_text())
        edit(m)
        man.write_text(json.dumps(m))
        r = _cli("verify", copy)
        assert r.exit_code == 2 and "damaged" in r.output and why in r.output, (why, r.output)
        r = _cli("results", "check", copy)
        assert r.exit_code != 0 and "manifest: ok" not in r.output, (why, r.output)
    r = _run(cfg, copy)
    assert r.exit_code == 0 and "was damaged" in r.output, r.output
    assert _cli("verify", copy).exit_code == 0


def test_a_cell_file_under_another_cells_name_is_set_aside(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    a, b = sorted((out / "cells").glob("*.json"))[:2]
    shutil.copy(a, b)
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and f"cells/{b.name}" in r.output and "copied or renamed" in r.output
    r = _run(cfg, out)
    assert r.exit_code == 0 and "ran 1" in r.output, r.output
    assert _rows(out) == 6 and _cli("results", "check", out).exit_code == 0


@pytest.mark.parametrize(("field", "value", "words"), [
    ("test_accuracy", 1.5, "outside [0, 1]"),
    ("status", "great", "status 'great' is not one of"),
    ("n_leaves", "many", "is not a whole number"),
])
def test_a_cell_off_the_schema_is_named_not_a_traceback(tmp_path, field, value, words):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    p = sorted((out / "cells").glob("*.json"))[0]
    rec = json.loads(p.read_text())
    rec["row"][field] = value
    p.write_bytes(encode_record(rec)[0])  # a consistent checksum: only the schema objects
    r = _cli("report", out, "--no-figures")
    assert r.exit_code == 0, r.output
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and words in r.output and p.name in r.output, r.output
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 0 and "quarantine/" in r.output, r.output
    assert _rows(out) == 5


def test_an_edited_cell_file_is_caught_by_its_checksum(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    p = sorted((out / "cells").glob("*.json"))[0]
    text = p.read_text()
    rec = json.loads(text)
    acc = rec["row"]["test_accuracy"]
    p.write_text(text.replace(json.dumps(acc), json.dumps(round(1 - acc, 6)), 1))
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and "does not match its checksum" in r.output, r.output


def test_disk_full_while_writing_cells_keeps_what_was_written(tmp_path, monkeypatch):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    real = os.replace
    calls = {"n": 0}

    def full(src, dst, *a, **k):
        if str(dst).endswith(".json") and "/cells/" in str(dst):
            calls["n"] += 1
            if calls["n"] > 2:
                raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *a, **k)

    import treebench.utils.atomic as atomic

    monkeypatch.setattr(atomic.os, "replace", full)
    r = _run(cfg, out)
    assert r.exit_code == 2 and "no space left on device" in r.output, r.output
    assert "Traceback" not in r.output and "run the same command again" in r.output
    assert len(list((out / "cells").glob("*.json"))) == 2
    assert not list((out / "cells").glob(".*.tmp"))
    monkeypatch.setattr(atomic.os, "replace", real)
    r = _run(cfg, out)
    assert r.exit_code == 0 and "ran 4" in r.output, r.output


def test_disk_full_while_writing_the_report_is_one_sentence(tmp_path, monkeypatch):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    import treebench.report as report

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report, "write_report", full)
    r = _cli("report", out)
    assert r.exit_code == 2 and "cannot write the report (no space left on device)" in r.output


def test_show_takes_an_id_not_a_pattern(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    r = _cli("show", out, "*")
    assert r.exit_code == 2 and "is not an id" in r.output, r.output
    cid = sorted((out / "cells").glob("*.json"))[0].stem
    assert _cli("show", out, cid[:8]).exit_code == 0


def test_an_interrupted_run_does_not_verify_and_resumes(tmp_path, monkeypatch):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    real = store.write_cell
    calls = {"n": 0}

    def interrupt(o, record):
        calls["n"] += 1
        if calls["n"] > 4:  # Ctrl-C (or a kill) after four of six cells
            raise KeyboardInterrupt
        return real(o, record)

    monkeypatch.setattr(store, "write_cell", interrupt)
    r = _run(cfg, out)
    assert r.exit_code == 130, r.output
    monkeypatch.setattr(store, "write_cell", real)
    code, measured, text = _measured(out)
    assert code == 5 and measured is None and "missing 2" in text, text
    assert _run(cfg, out).exit_code == 0
    assert _measured(out)[0] == 0


def test_an_interrupt_while_the_report_is_written_says_so_and_keeps_the_results(tmp_path,
                                                                              monkeypatch):
    """Ctrl-C while the report is drawn, after every cell and the tables are written: exit
    130 with the run's summary, the tables and an "interrupted" line, and a note saying how
    to write the report; `treebench report` then writes it."""
    import treebench.api as api

    cfg, out = _cfg(tmp_path), tmp_path / "r"

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "write_report", interrupt)
    r = _cli("run", cfg, "--out", out, "-q")
    assert r.exit_code == 130, r.output
    assert "ran 6 now" in r.output and "results:" in r.output, r.output
    assert "interrupted" in r.output and f"treebench report {out}" in r.output, r.output
    assert len(read_table(out / "results.parquet")) == 6
    monkeypatch.undo()
    assert _cli("report", out).exit_code == 0 and (out / "report" / "index.html").is_file()


def _settings(out: Path):
    from treebench.report.aggregate import load_results

    return load_results(out).settings


@pytest.mark.parametrize(("first", "second"), [
    ({"kind": "kfold", "n_splits": 3}, {"kind": "kfold", "n_splits": 2}),
    ({"kind": "holdout", "test_size": 0.2}, {"kind": "holdout", "test_size": 0.5}),
])
def test_two_splits_of_one_kind_in_a_folder_are_never_pooled(tmp_path, first, second):
    out = tmp_path / "r"
    one = {"algorithms": [{"name": "cart", "params": {"max_depth": 2}}]}
    assert _run(_cfg(tmp_path, "a.yaml", split=first, **one), out).exit_code == 0
    # the same grid under another split, both kept in the folder (an edited config's old
    # cells would be stale and left out of the report)
    b = _cfg(tmp_path, "b.yaml", name="tiny-b", split=second, **one)
    assert _run(b, out, "--add-experiment").exit_code == 0
    t = read_table(out / "results.parquet")
    assert t["split_params"].nunique() == 2
    s = _settings(out)
    assert len(s) == 2  # one setting per split, each over its own folds
    firsts = s[s["split_params"] == t["split_params"].iloc[0]]
    assert len(firsts) == 1
    n = {json.loads(p)[k]: int(r) for p, r in zip(s["split_params"], s["n_total"])
         for k in ("n_splits", "test_size") if first.get(k)}
    assert n == ({3: 3, 2: 2} if "n_splits" in first else {0.2: 1, 0.5: 1})
    assert sorted(s["split_label"]) == sorted(
        f"{first['kind']} {k}={v}" for k in ("n_splits", "test_size") if k in first
        for v in (first[k], second[k]))
    r = _cli("report", out, "--format", "md,csv", "--no-figures")
    assert r.exit_code == 0, r.output
    summary = (out / "report" / "summary.md").read_text()
    assert f"| {s['split_label'].iloc[0]} |" in summary and f"| {s['split_label'].iloc[1]} |" in summary
    assert "split_params" in (out / "report" / "tables" / "summary.csv").read_text().splitlines()[0]


def test_cell_files_written_before_split_params_take_it_from_their_cell_spec(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    idx = json.loads((out / ".cells-index.json").read_text())
    idx["tables"].pop("layout")  # tables written before the column existed are rebuilt
    (out / ".cells-index.json").write_text(json.dumps(idx))
    assert "older column layout" in store.refresh_tables(out)[1]
    for p in (out / "cells").glob("*.json"):
        rec = json.loads(p.read_text())
        del rec["row"]["split_params"]
        p.write_bytes(encode_record(rec)[0])
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 0, r.output
    t = read_table(out / "results.parquet")
    assert set(t["split_params"]) == {json.dumps(
        {"n_splits": 3, "stratify": True, "test_size": 0.2, "train_size": 0.8,
         "valid_size": 0.1}, sort_keys=True, separators=(",", ":"))}


@pytest.mark.parametrize("hashed", [True, False])
@pytest.mark.parametrize("field", ["seed", "param_max_depth"])
def test_a_cell_file_with_an_integer_beyond_64_bits_is_unusable_not_a_crash(tmp_path, field,
                                                                            hashed):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    huge = 99999999999999999999999
    files = sorted((out / "cells").glob("*.json"))
    if not hashed:  # a folder written before content hashes existed
        for p in files:
            rec = json.loads(p.read_text())
            rec.pop("sha256")
            p.write_text(json.dumps(rec))
    p = files[0]
    rec = json.loads(p.read_text())
    rec["row"][field] = huge
    p.write_bytes(encode_record(rec)[0] if hashed else json.dumps(rec).encode())
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and f"cells/{p.name}" in r.output, r.output
    assert "outside the 64-bit integer range" in r.output, r.output
    for cmd in (("report", out, "--format", "md", "--no-figures"),
                ("cells", out, "--where", "fold=0"), ("verify", out)):
        r = _cli(*cmd)
        assert r.exception is None or isinstance(r.exception, SystemExit), r.output
        assert r.exit_code in (0, 5) and "Traceback" not in r.output, (cmd, r.output)
    r = _cli("results", "check", out, "--repair")
    assert r.exit_code == 0 and f"cells/{p.name}" in r.output and "quarantine/" in r.output
    assert _rows(out) == 5
    r = _run(cfg, out)
    assert r.exit_code == 0 and "ran 1" in r.output, r.output
    assert _rows(out) == 6


def _strip_hash(p: Path, **row) -> None:
    rec = json.loads(p.read_text())
    rec.pop("sha256")
    rec["row"].update(row)
    p.write_text(json.dumps(rec))


def test_a_cell_file_whose_checksum_was_removed_is_unverified_beside_hashed_ones(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    _, before, _ = _measured(out)
    p = sorted((out / "cells").glob("*.json"))[0]
    _strip_hash(p, test_accuracy=0.0)  # hand-edited, and its checksum deleted
    r = _cli("results", "check", out)
    assert r.exit_code == 1 and f"cells/{p.name}" in r.output, r.output
    assert "carries no checksum while the other cell files here do" in r.output
    r = _run(cfg, out)  # set aside with its reason and run again
    assert r.exit_code == 0 and "ran 1" in r.output and "quarantine/" in r.output, r.output
    assert 0.0 not in set(read_table(out / "results.parquet")["test_accuracy"])
    assert _measured(out)[1] == pytest.approx(before, abs=1e-12)
    assert _cli("results", "check", out).exit_code == 0


def test_a_folder_written_before_checksums_loads_and_gets_them(tmp_path):
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    table = read_table(out / "results.parquet")
    for p in (out / "cells").glob("*.json"):
        _strip_hash(p)
    r = _cli("results", "check", out)
    assert r.exit_code == 0 and "unusable" not in r.output, r.output
    r = _cli("sweep", cfg, "--depth", "3", "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0 and "added content hashes to 6 cell file(s)" in r.output, r.output
    assert all('"sha256"' in p.read_text() for p in (out / "cells").glob("*.json"))
    after = read_table(out / "results.parquet")
    assert len(after) == 9 and _cli("results", "check", out).exit_code == 0
    same = after.set_index("cell_id").loc[table["cell_id"], "test_accuracy"]
    assert list(same) == list(table["test_accuracy"])


def test_cells_left_over_from_an_edited_config_are_stale_not_failures(tmp_path):
    out = tmp_path / "r"

    def cfg(algorithm: str) -> Path:
        return _cfg(tmp_path, split={"kind": "kfold", "n_splits": 2},
                    algorithms=[{"name": algorithm}])

    r = _run(cfg("test-raise"), out)  # a learner that raises: every cell errors
    assert r.exit_code == 3, r.output
    r = _run(cfg("cart"), out)  # the config edited: its cells now all finish
    assert r.exit_code == 0 and "(ok 2)" in r.output, r.output
    assert "2 cell(s) here belong to no recorded experiment" in r.output
    assert _run(cfg("cart"), out, "--retry", "error").exit_code == 0
    s = _settings(out)
    assert list(s["n_total"]) == [2] and list(s["n_error"]) == [0]
    r = _cli("results", "check", out)
    assert r.exit_code == 0 and "--prune-stale" in r.output, r.output
    r = _cli("results", "check", out, "--prune-stale")
    assert r.exit_code == 0 and r.output.count("is stale") == 2, r.output
    assert len(list((out / "quarantine").glob("*.json"))) == 2 + 1  # and reasons.json
    assert _rows(out) == 2 and _settings(out)["n_total"].tolist() == [2]
    r = _cli("results", "check", out)
    assert r.exit_code == 0 and "no recorded experiment" not in r.output, r.output


def test_a_setting_whose_cells_are_all_missing_keeps_its_row(tmp_path):
    """Every cell of one setting lost (files deleted after an interrupted run): the summary still
    has that setting's row, 0 finished out of 3, all 3 missing, and no mean; the report says
    so instead of showing only the setting that finished."""
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    lost = [p for p in (out / "cells").glob("*.json")
            if '"max_depth": 2' in p.read_text(encoding="utf-8")]
    assert len(lost) == 3
    for p in lost:
        p.unlink()
    s = _settings(out)
    assert sorted(zip(s["param_max_depth"], s["n_ok"], s["n_total"], s["n_missing"],
                      s["n_failed"])) == [(1, 3, 3, 0, 0), (2, 0, 3, 3, 0)]
    row = s[s["param_max_depth"] == 2].iloc[0]
    assert row["test_accuracy_n"] == 0 and row["test_accuracy_mean"] != row["test_accuracy_mean"]
    r = _cli("report", out, "--format", "md", "--no-figures")
    assert r.exit_code == 0, r.output
    md = (out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "| 0/3 (3 missing) |" in md, md


def test_report_names_an_unusable_cell_file_on_the_console(tmp_path):
    """`treebench report` on a folder with a damaged cell file says which file, and that its
    cell is missing from the report, instead of a silent exit 0."""
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    victim = sorted((out / "cells").glob("*.json"))[1]
    victim.write_bytes(victim.read_bytes()[:100])
    r = _cli("report", out, "--format", "md", "--no-figures")
    assert r.exit_code == 0, r.output
    assert f"cells/{victim.name} cannot be used" in r.output
    assert "missing from the tables and the report" in r.output
    # the setting of the damaged cell counts it among its cells, as missing
    s = _settings(out)
    assert sorted(zip(s["n_ok"], s["n_total"], s["n_missing"])) == [(2, 3, 1), (3, 3, 0)]
    assert "2/3† (1 missing)" in (out / "report" / "summary.md").read_text()


def test_report_on_a_folder_whose_first_run_is_writing_says_so(tmp_path):
    """Before the first run's tables exist, `treebench report` says that a run holds the
    folder (and to wait), not that the folder holds no results."""
    import subprocess
    import sys

    out = tmp_path / "r"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | "
         "os.O_CREAT); print('ready', flush=True); time.sleep(60)", str(out / ".lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        r = _cli("report", out)
        assert r.exit_code == 2, r.output
        assert f"pid {holder.pid}" in r.output and "is writing this folder" in r.output
    finally:
        holder.kill()
        holder.wait()


def _edit_index(out: Path, name: str, field: int, value, *, keep_digest: bool) -> None:
    """Change field ``field`` of the index entry of the cell file ``name``; with
    ``keep_digest`` the index's digest is recomputed as treebench writes it (a careful edit)."""
    p = out / ".cells-index.json"
    idx = json.loads(p.read_text())
    idx["files"][name][field] = value
    if keep_digest:
        from treebench.results.index import _files_digest

        idx["digest"] = _files_digest(idx["files"])
    p.write_text(json.dumps(idx))


def test_an_edited_index_is_never_evidence(tmp_path):
    """The index caches each cell file's stat key and verified status. An index whose entries
    were edited is not used (its digest no longer matches): the run reads the files again and
    reports no failure that did not happen. An edit that also rewrote the digest, hiding a
    truncated file behind its new stat key, is caught by `treebench results check`, which
    reads every file, and its repair sets the file aside."""
    cfg, out = _cfg(tmp_path), tmp_path / "r"
    _run(cfg, out)
    names = sorted(p.name for p in (out / "cells").glob("*.json"))
    _edit_index(out, names[0], 6, "error", keep_digest=False)
    r = _cli("run", cfg, "--out", out, "--no-report")
    assert r.exit_code == 0 and "error" not in r.output.lower(), r.output
    assert "0 cell(s)" in _cli("cells", out, "--status", "error").output

    victim = out / "cells" / names[1]
    victim.write_bytes(victim.read_bytes()[:100])
    st = os.stat(victim)
    p = out / ".cells-index.json"
    idx = json.loads(p.read_text())
    idx["files"][names[1]][:4] = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    p.write_text(json.dumps(idx))
    _edit_index(out, names[1], 0, st.st_ino, keep_digest=True)
    r = _cli("results", "check", out)
    assert r.exit_code != 0 and f"unusable: cells/{names[1]}: it is not valid JSON" in r.output, r.output
    r = _cli("results", "check", out, "--repair")
    assert list((out / "quarantine").glob(f"{Path(names[1]).stem}.*.json")), r.output


def test_claims_select_by_the_labels_the_config_gives_now(tmp_path):
    """An entry's label is no part of a cell's id: renaming it reruns nothing, and each cell
    keeps the label it was written with. The claims of the renamed config select by its new
    label (they found no row), and so do those of a second experiment sharing the cells under
    another label."""
    def config(label: str, name: str = "tiny") -> Path:
        claim = {"name": "six cells", "source": "test", "metric": "test_accuracy",
                 "where": {"algorithm": label}, "agg": "count", "value": 6}
        raw = tiny_config(name=name, expect=[claim],
                          algorithms=[{"name": "cart", "label": label, "params": {"max_depth": [1, 2]}}])
        p = tmp_path / f"{name}-{label}.yaml"
        p.write_text(yaml.safe_dump(raw), encoding="utf-8")
        return p

    out = tmp_path / "r"
    assert _run(config("C"), out).exit_code == 0
    r = _run(config("D"), out, "--verify")
    assert r.exit_code == 0 and "ran 0 now" in r.output, r.output
    r = _run(config("X", "other"), out, "--add-experiment", "--verify")
    assert r.exit_code == 0, r.output
    assert _cli("verify", out).exit_code == 0


def _run_then_sweep(tmp_path: Path, raw: dict) -> tuple[Path, Path]:
    """The config ``raw`` run into ``tmp_path/r``, then swept to depth 3 into the same folder."""
    cfg = tmp_path / "a.yaml"
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    out = tmp_path / "r"
    assert _run(cfg, out).exit_code == 0
    r = _cli("sweep", cfg, "--depth", "3", "--out", out, "--quiet", "--no-report")
    assert r.exit_code == 0, r.output
    return cfg, out


def test_a_sweep_on_data_since_changed_leaves_the_tables(tmp_path):
    """A sweep's cells are defined by its variant record, made on the data of its day: after
    the data file changed and the config ran again, the sweep's cells of the old data stayed
    in results.csv beside the config's cells of the new data. They are cells of an earlier
    definition now, in results-earlier.csv."""
    from sklearn.datasets import load_iris

    data = tmp_path / "iris.csv"
    load_iris(as_frame=True).frame.to_csv(data, index=False)
    raw = tiny_config(datasets=[{"path": str(data), "label": "target"}],
                      split={"kind": "kfold", "n_splits": 2})
    cfg, out = _run_then_sweep(tmp_path, raw)
    assert set(pd.read_csv(out / "results.csv")["param_max_depth"]) == {1, 2, 3}
    text = data.read_text().splitlines()
    text[1] = text[1].replace("5.1", "5.4", 1)
    data.write_text("\n".join(text) + "\n")
    assert _run(cfg, out).exit_code == 0
    now = pd.read_csv(out / "results.csv")
    assert set(now["param_max_depth"]) == {1, 2} and now["data_fingerprint"].nunique() == 1
    earlier = pd.read_csv(out / "results-earlier.csv")
    assert 3 in set(earlier["param_max_depth"])


def test_a_sweep_of_an_earlier_protocol_leaves_the_tables(tmp_path):
    """A sweep made on the config's 2-fold split stayed in results.csv after the config was
    edited to 3 folds, pooling two protocols; so did a run with another `--seed` (a variant
    that overrides the seed, not the split)."""
    raw = tiny_config(split={"kind": "kfold", "n_splits": 2})
    cfg, out = _run_then_sweep(tmp_path, raw)
    assert _cli("run", cfg, "--out", out, "--quiet", "--no-report", "--seed", "7").exit_code == 0
    raw["split"]["n_splits"] = 3
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert _run(cfg, out).exit_code == 0
    now = pd.read_csv(out / "results.csv")
    assert set(now["param_max_depth"]) == {1, 2}
    assert set(now["split_params"].map(lambda s: json.loads(s)["n_splits"])) == {3}
    assert 3 in set(pd.read_csv(out / "results-earlier.csv")["param_max_depth"])


def test_a_renamed_entry_shows_its_cells_under_the_new_label(tmp_path):
    """A label is no part of a cell's id, so a config that renames an entry keeps its cells;
    the tables kept the label the cell files were written with, while the report and the
    claims used the config's (two names for one setting)."""
    algos = [{"name": "cart", "label": "first", "params": {"max_depth": [1, 2]}}]
    cfg, out = _cfg(tmp_path, algorithms=algos), tmp_path / "r"
    assert _run(cfg, out).exit_code == 0
    assert set(read_table(out / "results.parquet")["algorithm_label"]) == {"first"}
    algos[0]["label"] = "second"
    cfg = _cfg(tmp_path, algorithms=algos)
    r = _run(cfg, out)
    assert r.exit_code == 0 and "ran 0 now" in r.output, r.output
    assert set(read_table(out / "results.parquet")["algorithm_label"]) == {"second"}
    assert set(pd.read_csv(out / "results.csv")["algorithm_label"]) == {"second"}
    # the cell files keep what they were written with; only the tables show the config's label
    files = list((out / "cells").glob("*.json"))
    assert len(files) == 6
    assert all(json.loads(p.read_text())["row"]["algorithm_label"] == "first" for p in files)
