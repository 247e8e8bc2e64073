"""Results that follow their data: a cell's id hashes the fingerprint of what it reads, so an
edited data file makes new cells (never the old numbers with exit 0); the tables hold exactly
the cells the recorded experiments define now, the others go to results-earlier.*; a cell
shared by two experiments is found from each. Every user-facing case goes through the CLI."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from treebench.cli import app
from treebench.data import fingerprint as fpmod
from treebench.data.fingerprint import FileHashes, fingerprint
from treebench.errors import DataError

from runs import tiny_config


def _cli(*args: object):
    r = CliRunner().invoke(app, [str(a) for a in args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r


def _data(path: Path, n: int = 300, flip: bool = False) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(int)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = 1 - y if flip else y
    df.to_csv(path, index=False)


def _file_config(tmp_path: Path, **over) -> Path:
    cfg = {"name": "fp", "datasets": [{"path": str(tmp_path / "d.csv"), "label": "y"}],
           "split": {"kind": "kfold", "n_splits": 3}, "binarization": {"method": "raw"},
           "algorithms": [{"name": "cart", "params": {"max_depth": 2}}],
           "execution": {"n_jobs": 1, "backend": "sequential"}}
    cfg.update(over)
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return p


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(tmp_path / "cache"))


def test_an_edited_data_file_runs_new_cells_and_says_so(tmp_path):
    """Halve the file and flip its labels: the rerun runs 3 cells (not "ran 0 now"), says which
    dataset changed with both fingerprints, the tables hold the new numbers only, the old cells
    are in results-earlier.csv, the dry run says to run them, and `results check` agrees."""
    data, out = tmp_path / "d.csv", tmp_path / "r"
    _data(data)
    cfg = _file_config(tmp_path)
    r = _cli("run", cfg, "--out", out, "--no-report")
    assert r.exit_code == 0, r.output
    old_sha = _sha(data)
    first = pd.read_csv(out / "results.csv")
    assert set(first["n_train"]) == {200}
    assert set(first["data_fingerprint"]) == {f"sha256:{old_sha}"}

    _data(data, n=150, flip=True)
    new_sha = _sha(data)
    dry = _cli("run", cfg, "--out", out, "--no-report", "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "already done: 0  to run: 3" in dry.output
    assert "changed since the last run" in dry.output

    r = _cli("run", cfg, "--out", out, "--no-report")
    assert r.exit_code == 0, r.output
    assert "ran 3 now" in r.output
    said = " ".join(r.output.split())
    assert "data of dataset" in said and f"sha256:{old_sha[:12]}" in said
    assert f"sha256:{new_sha[:12]}" in said
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 3 and set(table["n_train"]) == {100}
    assert set(table["data_fingerprint"]) == {f"sha256:{new_sha}"}
    earlier = pd.read_csv(out / "results-earlier.csv")
    assert set(earlier["n_train"]) == {200} and len(earlier) == 3
    assert set(table["cell_id"]).isdisjoint(earlier["cell_id"])
    check = _cli("results", "check", out)
    assert check.exit_code == 0 and "current" in check.output, check.output
    again = _cli("run", cfg, "--out", out, "--no-report")
    assert "ran 0 now" in again.output


def test_a_changed_test_file_is_named_with_its_own_fingerprint(tmp_path):
    """A dataset with a test file: the note says its test file changed and shows the part of
    the fingerprint that changed (both fingerprints were cut to the training file's hash, so
    they read the same)."""
    data, test, out = tmp_path / "d.csv", tmp_path / "t.csv", tmp_path / "r"
    _data(data)
    _data(test, n=60)
    cfg = _file_config(tmp_path, datasets=[{"path": str(data), "label": "y",
                                            "test_path": str(test)}])
    cfg_text = cfg.read_text(encoding="utf-8").replace("split:\n  kind: kfold\n  n_splits: 3\n", "")
    cfg.write_text(cfg_text, encoding="utf-8")
    assert _cli("run", cfg, "--out", out, "--no-report").exit_code == 0
    old = _sha(test)
    _data(test, n=60, flip=True)
    r = _cli("run", cfg, "--out", out, "--no-report")
    assert r.exit_code == 0, r.output
    said = " ".join(r.output.split())
    assert "the test file of dataset `d.csv` changed since the last run" in said, said
    assert f"+{old[:12]}… -> sha256:{_sha(data)[:12]}…+{_sha(test)[:12]}…" in said, said


def test_a_change_that_keeps_size_and_modification_time_is_seen(tmp_path):
    """The plan cache and the hash cache key on the change time too: flipping labels in place
    with the size and mtime restored still runs new cells."""
    data, out = tmp_path / "d.csv", tmp_path / "r"
    _data(data)
    cfg = _file_config(tmp_path)
    assert _cli("run", cfg, "--out", out, "--no-report").exit_code == 0
    st = data.stat()
    text = data.read_text()
    lines = text.splitlines()
    swapped = [lines[0]] + [ln[:-1] + ("1" if ln.endswith("0") else "0") for ln in lines[1:]]
    data.write_text("\n".join(swapped) + "\n")
    assert data.stat().st_size == st.st_size
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = _cli("run", cfg, "--out", out, "--no-report")
    assert r.exit_code == 0 and "ran 3 now" in r.output, r.output


def test_an_edited_split_leaves_the_old_protocol_out_of_the_tables(tmp_path):
    """5 folds, then 3: results.csv holds the 3-fold rows only; `cells --all-cells` reaches the
    5-fold ones, which results-earlier.csv lists; the report names them as left out."""
    out = tmp_path / "r"
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(tiny_config(split={"kind": "kfold", "n_splits": 5},
                                            algorithms=[{"name": "cart",
                                                         "params": {"max_depth": 2}}])))
    assert _cli("run", p, "--out", out, "--no-report").exit_code == 0
    p.write_text(yaml.safe_dump(tiny_config(split={"kind": "kfold", "n_splits": 3},
                                            algorithms=[{"name": "cart",
                                                         "params": {"max_depth": 2}}])))
    r = _cli("run", p, "--out", out)
    assert r.exit_code == 0, r.output
    table = pd.read_csv(out / "results.csv")
    assert len(table) == 3
    assert {json.loads(s)["n_splits"] for s in table["split_params"]} == {3}
    earlier = pd.read_csv(out / "results-earlier.csv")
    assert {json.loads(s)["n_splits"] for s in earlier["split_params"]} == {5}
    ids = _cli("cells", out, "--ids").output.split()
    assert len(ids) == 3
    every = _cli("cells", out, "--ids", "--all-cells").output.split()
    assert len(every) == 8 and set(ids) < set(every)
    assert "results-earlier.csv" in r.output


def test_the_earlier_table_goes_when_its_cells_are_pruned(tmp_path):
    out = tmp_path / "r"
    p = tmp_path / "exp.yaml"
    p.write_text(yaml.safe_dump(tiny_config()))
    assert _cli("run", p, "--out", out, "--no-report").exit_code == 0
    p.write_text(yaml.safe_dump(tiny_config(split={"kind": "kfold", "n_splits": 2})))
    assert _cli("run", p, "--out", out, "--no-report").exit_code == 0
    assert (out / "results-earlier.parquet").is_file()
    r = _cli("results", "check", out, "--prune-stale")
    assert r.exit_code == 0, r.output
    assert not (out / "results-earlier.parquet").exists()
    assert not (out / "results-earlier.csv").exists()
    assert len(pd.read_csv(out / "results.csv")) == 4


def test_a_cell_shared_by_two_experiments_is_found_from_each(tmp_path):
    out = tmp_path / "r"
    a, b = tmp_path / "base.yaml", tmp_path / "base2.yaml"
    a.write_text(yaml.safe_dump(tiny_config(name="base")))
    b.write_text(yaml.safe_dump(tiny_config(name="base2")))
    assert _cli("run", a, "--out", out, "--no-report").exit_code == 0
    assert _cli("run", b, "--out", out, "--no-report", "--add-experiment").exit_code == 0
    one = _cli("cells", out, "--ids", "--where", "experiment=base").output.split()
    two = _cli("cells", out, "--ids", "--where", "experiment=base2").output.split()
    assert len(one) == 6 and sorted(one) == sorted(two)
    bad = _cli("cells", out, "--where", "experiment=bsae2")
    assert bad.exit_code == 2 and "base2" in bad.output


def test_file_hashes_come_from_the_cache_while_the_file_is_unchanged(tmp_path, monkeypatch):
    data = tmp_path / "d.csv"
    _data(data)
    first = fingerprint("file", {"path": str(data)})
    assert first.value == f"sha256:{_sha(data)}"
    assert (tmp_path / "cache" / fpmod.CACHE_FILE).is_file()

    def no_read(*a, **k):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(fpmod, "open", no_read, raising=False)
    again = fingerprint("file", {"path": str(data)})  # a new process's view: the cache file
    assert again == first
    monkeypatch.undo()
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    _data(data, n=299)
    assert fingerprint("file", {"path": str(data)}).value == f"sha256:{_sha(data)}" != first.value


def test_fingerprints_of_catalog_and_generated_datasets(tmp_path, monkeypatch):
    cat = fingerprint("dl85/anneal", {})  # recorded checksums: no data directory needed
    assert cat.value.startswith("catalog:")
    assert fingerprint("dl85/anneal", {}) == cat
    assert fingerprint("dl85/anneal", {}).value != fingerprint("dl85/audiology", {}).value
    gen = fingerprint("xor2d", {"n_samples": 50, "seed": 1}).value
    assert gen.startswith("generated:")
    assert gen != fingerprint("xor2d", {"n_samples": 50, "seed": 2}).value
    # a catalog entry without a checksum: the file found in the data directory is hashed
    d = tmp_path / "data"
    d.mkdir()
    _data(d / "mine.csv")
    (tmp_path / "cat").mkdir()
    (tmp_path / "cat" / "mine.yaml").write_text(yaml.safe_dump(
        {"name": "test/mine-unsummed", "format": "csv", "label": "y",
         "files": [{"path": "mine.csv"}]}))
    monkeypatch.setenv("TREEBENCH_CATALOG", str(tmp_path / "cat"))
    from treebench.data import catalog

    catalog._load_catalog_cached.cache_clear()
    try:
        entry = catalog.get_entry("test/mine-unsummed")
        fp1 = fpmod._catalog_fingerprint(entry.name, FileHashes(), [d])
        _data(d / "mine.csv", n=200)
        fp2 = fpmod._catalog_fingerprint(entry.name, FileHashes(), [d])
        assert fp1.value != fp2.value
        assert str((d / "mine.csv").resolve()) in fp2.files
    finally:
        catalog._load_catalog_cached.cache_clear()


def test_a_worker_refuses_a_file_that_changed_after_planning(tmp_path):
    from treebench.config.cells import expand
    from treebench.config import load_config
    from treebench.execute import fold

    data = tmp_path / "d.csv"
    _data(data)
    cells = expand(load_config(_file_config(tmp_path)))
    _data(data, n=120)
    fold._DATASETS.clear()
    with pytest.raises(DataError, match="changed after the run planned"):
        fold.dataset_for(cells[0], None)
    fold._DATASETS.clear()


def test_a_missing_data_file_is_one_sentence_before_anything_runs(tmp_path):
    cfg = _file_config(tmp_path)
    r = _cli("run", cfg, "--out", tmp_path / "r")
    assert r.exit_code == 2
    assert "does not exist" in r.output and "Traceback" not in r.output
