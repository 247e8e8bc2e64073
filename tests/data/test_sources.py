"""Finding files: data dirs, cache, origin URL, OpenML cache, offline contract, user files."""

from __future__ import annotations

import hashlib
import shutil
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from treebench.data import load_dataset
from treebench.data.catalog import build_dataset, entry_from_dict
from treebench.data.manage import dataset_info, fetch, list_datasets
from treebench.data.preprocess import coalesce
from treebench.errors import DataError

CSV = "a,b,color,label\n1,2.5,red,yes\n2,?,blue,no\n3,4.5,red,yes\n4,1.0,green,no\n"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _entry(src: Path, url: str | None = None, **extra):
    d = {
        "name": "toy", "format": "csv", "label": "label", "categorical": "auto",
        "files": [{"path": "toy/toy.csv", "sha256": _sha(src), "bytes": src.stat().st_size, **({"url": url} if url else {})}],
        "shape": [4, 3], "origin": {"repository": "here"}, "citation": "c", "licence": "l",
    }
    d.update(extra)
    return entry_from_dict(d)


@pytest.fixture
def no_network(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("network used")

    monkeypatch.setattr(urllib.request, "urlopen", boom)
    import openml

    monkeypatch.setattr(openml.datasets, "get_dataset", boom)


@pytest.fixture
def toy(tmp_path):
    src = tmp_path / "origin" / "toy.csv"
    src.parent.mkdir()
    src.write_text(CSV)
    return src


def test_data_dir_then_cache_and_parquet_cache(tmp_path, toy, no_network):
    data = tmp_path / "data" / "toy"
    data.mkdir(parents=True)
    shutil.copy(toy, data / "toy.csv")
    e = _entry(toy)
    ds = build_dataset(e, data_dirs=[tmp_path / "data"], offline=True, cache_dir=tmp_path / "cache")
    assert ds.X.shape == (4, 3) and ds.categorical == ["color"] and np.isnan(ds.X["b"].iloc[1])
    assert ds.meta["files"][0]["found_at"] == str(data / "toy.csv")
    assert list((tmp_path / "cache" / "parsed").glob("toy-*.tbarrow"))
    # a copy in the user cache is found when no data dir has it
    (tmp_path / "cache" / "files" / "toy").mkdir(parents=True)
    shutil.copy(toy, tmp_path / "cache" / "files" / "toy" / "toy.csv")
    ds2 = build_dataset(e, data_dirs=[], offline=True, cache_dir=tmp_path / "cache")
    assert ds2.X.equals(ds.X)


def test_offline_never_downloads_and_says_where_to_put_the_file(tmp_path, toy, no_network):
    e = _entry(toy, url=toy.as_uri())
    with pytest.raises(DataError, match=r"data file `toy/toy.csv` of dataset `toy` was not found.*<data dir>/toy/toy.csv.*without --offline"):
        build_dataset(e, data_dirs=[tmp_path / "nowhere"], offline=True, cache_dir=tmp_path / "cache")


def test_online_download_into_cache_with_checksum(tmp_path, toy):
    e = _entry(toy, url=toy.as_uri())  # a file:// URL exercises the download path without network
    ds = build_dataset(e, data_dirs=[], offline=False, cache_dir=tmp_path / "cache")
    assert (tmp_path / "cache" / "files" / "toy" / "toy.csv").is_file() and ds.X.shape == (4, 3)
    bad = tmp_path / "bad.csv"
    bad.write_text(CSV.replace("red", "pink"))
    e2 = _entry(toy, url=bad.as_uri())
    with pytest.raises(DataError, match="has sha256 .* expected"):
        build_dataset(e2, data_dirs=[], offline=False, cache_dir=tmp_path / "cache2")


def _openml_cache(root: Path, did: int = 4242) -> Path:
    d = root / "openml" / "org" / "openml" / "www" / "datasets" / str(did)
    d.mkdir(parents=True)
    arff = (
        "% toy\n@relation toy\n@attribute rowid numeric\n@attribute x numeric\n@attribute c {u,'v w'}\n"
        "@attribute class {p,n}\n@data\n1,0.5,u,p\n2,1.5,'v w',n\n3,?,u,p\n"
    )
    (d / "dataset.arff").write_text(arff)
    md5 = hashlib.md5(arff.encode()).hexdigest()
    (d / "description.xml").write_text(
        '<oml:data_set_description xmlns:oml="http://openml.org/openml"><oml:id>4242</oml:id><oml:name>toy</oml:name>'
        "<oml:version>1</oml:version><oml:default_target_attribute>class</oml:default_target_attribute>"
        "<oml:row_id_attribute>rowid</oml:row_id_attribute><oml:licence>Public</oml:licence>"
        f"<oml:md5_checksum>{md5}</oml:md5_checksum></oml:data_set_description>"
    )
    return d


def test_openml_origin_from_a_local_cache_offline(tmp_path, no_network):
    _openml_cache(tmp_path / "cache")
    e = entry_from_dict({"name": "toy-oml", "files": [], "origin": {"openml": 4242}, "shape": [3, 2]})
    ds = build_dataset(e, data_dirs=[], offline=True, cache_dir=tmp_path / "cache")
    assert list(ds.X.columns) == ["x", "c"] and ds.categorical == ["c"]
    assert ds.y.tolist() == ["p", "n", "p"] and ds.X["c"].tolist() == ["u", "v w", "u"]
    assert ds.meta["origin"]["openml"] == 4242 and ds.meta["licence"] == "Public"
    # a catalog entry whose files are missing falls back to its OpenML copy
    e2 = entry_from_dict({"name": "toy2", "files": [{"path": "no/such.csv", "sha256": "0" * 64}], "origin": {"openml": 4242}})
    assert build_dataset(e2, data_dirs=[], offline=True, cache_dir=tmp_path / "cache").X.shape == (3, 2)
    # without the cache, offline is a clear error and no network call
    e3 = entry_from_dict({"name": "toy3", "files": [], "origin": {"openml": 99}})
    with pytest.raises(DataError, match="OpenML dataset 99 .* not in the cache"):
        build_dataset(e3, data_dirs=[], offline=True, cache_dir=tmp_path / "cache")


def test_openml_cache_corruption_detected(tmp_path, no_network):
    d = _openml_cache(tmp_path / "cache")
    (d / "dataset.arff").write_text((d / "dataset.arff").read_text().replace("0.5", "0.7"))
    e = entry_from_dict({"name": "toy-oml", "files": [], "origin": {"openml": 4242}})
    with pytest.raises(DataError, match="checksum mismatch"):
        build_dataset(e, data_dirs=[], offline=True, cache_dir=tmp_path / "cache")


def test_user_file_loader(tmp_path):
    import gzip

    p = tmp_path / "mine.csv.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(CSV)
    ds = load_dataset("file", {"path": str(p), "label": "label"})
    assert ds.X.shape == (4, 3) and ds.categorical == ["color"] and ds.meta["files"][0]["sha256"]
    arff = tmp_path / "m.arff"
    arff.write_text("@relation r\r\n@attribute x numeric\r\n@attribute y {a,b}\r\n@data\r\n1,a\r\n2,b\r\n")
    ds = load_dataset("file", {"path": str(arff)})
    assert ds.y.tolist() == ["a", "b"]
    with pytest.raises(DataError, match="does not exist"):
        load_dataset("file", {"path": str(tmp_path / "nope.csv")})
    with pytest.raises(DataError, match="label column `lable` is not a column"):
        load_dataset("file", {"path": str(p), "label": "lable"})
    tr = load_dataset("file", {"path": str(p), "test_path": str(p), "label": "label"})
    assert len(tr.train_index) == 4 and len(tr.test_index) == 4


def test_list_info_fetch(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TREEBENCH_DATA_DIR", raising=False)
    rows = list_datasets(data_dirs=[tmp_path / "empty"])
    by = {r["name"]: r for r in rows}
    assert by["iris"]["availability"] == "embedded" and by["parity-noise"]["kind"] == "generator"
    assert by["car"]["availability"] == "downloadable" and by["car"]["bytes"] > 0  # has an origin URL
    assert by["topk/car"]["availability"] == "missing"  # no public URL for the paper's file
    info = dataset_info("iris")
    assert info["shape"] == [150, 4] and sum(info["class_balance"].values()) == 150
    assert info["feature_types"]["numeric"] == 4
    out = fetch(["iris", "xor2d"], offline=True)
    assert [r["status"] for r in out] == ["ok", "ok"]
    with pytest.raises(DataError, match="dl85/anneal"):
        fetch(["dl85/anneal"], data_dirs=[tmp_path / "empty"], offline=True)


def test_coalesce_merges_identical_rows_with_majority_and_weight():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(300, 4)).astype(np.uint8)
    y = rng.integers(0, 3, size=300)
    w = rng.random(300)
    Xc, yc, wc = coalesce(X, y, w)
    assert len(np.unique(Xc, axis=0)) == len(Xc) <= 16
    assert np.isclose(wc.sum(), w.sum())
    for row, lab, tot in zip(Xc, yc, wc, strict=True):
        m = (X == row).all(axis=1)
        assert np.isclose(w[m].sum(), tot)
        per = np.bincount(y[m], weights=w[m], minlength=3)
        assert per[lab] == per.max()


def test_fetching_a_local_file_says_it_needs_none(tmp_path, monkeypatch):
    """`treebench datasets fetch mine.csv` said "unknown dataset"; a local file needs no
    fetching, and the message says which command reads it."""
    from typer.testing import CliRunner

    from treebench.cli import app

    (tmp_path / "mine.csv").write_text("a,y\n1,0\n2,1\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["datasets", "fetch", "mine.csv", "--offline"])
    assert r.exit_code == 2 and "`mine.csv` is a local file, which needs no fetching" in r.output
    assert "treebench datasets info mine.csv" in " ".join(r.output.split())
