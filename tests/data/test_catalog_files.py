"""Catalog entries against the shared data directory: checksums, shapes, splits, provenance."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from treebench.data.catalog import build_dataset, load_catalog
from treebench.errors import DataError

DATA_DIR = os.environ.get("TREEBENCH_DATA_DIR", "").split(os.pathsep)[0]
CATALOG = load_catalog()
SLOW = {"kdd99", "kdd99-multiclass", "skin"}


def _data_dir() -> Path:
    if not DATA_DIR or not Path(DATA_DIR).is_dir():
        pytest.skip("TREEBENCH_DATA_DIR is not set to the shared datasets directory")
    return Path(DATA_DIR)


def _manifest(d: Path) -> dict[str, dict[str, str]]:
    p = d / "MANIFEST.tsv"
    if not p.is_file():
        pytest.skip("no MANIFEST.tsv in the data directory")
    with open(p) as fh:
        return {r["path"]: r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE)}


def test_catalog_is_complete_and_well_formed():
    names = set(CATALOG)
    assert len(names) >= 120
    for required in ["car", "monks-1", "topk/car", "topk/hayes-roth", "topk/tic-tac-toe", "topk/avila", "gosdt/compas",
                     "gosdt/coupon-carryout", "quantbnb/avila", "dl85/anneal", "kdd99", "kdd99-multiclass", "topk/fico-1000"]:
        assert required in names, required
    for e in CATALOG.values():
        assert e.files, e.name
        for f in e.files:
            assert f.sha256 and len(f.sha256) == 64, (e.name, f.path)
        assert e.spec.get("licence") and e.spec.get("citation") is not None and e.spec.get("origin"), e.name
        assert e.spec.get("shape") and e.spec.get("n_classes", 0) >= 2, e.name
    assert {a for e in CATALOG.values() for a in e.aliases} >= {"gosdt/takeaway", "gosdt/restaurant"}


@pytest.mark.data
def test_catalog_checksums_match_the_data_manifest():
    d = _data_dir()
    man = _manifest(d)
    seen = 0
    for e in CATALOG.values():
        for f in e.files:
            if f.path in man:
                assert man[f.path]["sha256"] == f.sha256, f.path
                assert int(man[f.path]["bytes"]) == f.bytes, f.path
                seen += 1
    assert seen >= 150
    # every data file of the directory is named by some catalog entry (SOURCE/names files aside)
    named = {p for e in CATALOG.values() for f in e.files for p in (f.path, *f.alt_paths)}
    unnamed = [p for p, r in man.items() if r["format"] != "names" and p not in named and not p.endswith("dataset_info.csv")]
    assert unnamed == []


@pytest.mark.data
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(CATALOG)]
)
def test_every_catalog_dataset_loads_with_its_shape(name, tmp_path):
    d = _data_dir()
    e = CATALOG[name]
    if not all(any((d / c).is_file() for c in f.candidates()) for f in e.files):
        pytest.skip(f"files of {name} are not in the data directory")
    ds = build_dataset(e, data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert list(ds.X.shape) == e.spec["shape"]
    assert len(ds.y) == ds.X.shape[0]
    assert len(np.unique(ds.y)) == e.spec["n_classes"]
    assert set(ds.categorical) <= set(ds.X.columns)
    for c in [c for c in ds.X.columns if c not in set(ds.categorical)]:
        assert ds.X[c].dtype == np.float64
    if "n_train" in e.spec:
        assert len(ds.train_index) == e.spec["n_train"]
        assert len(ds.train_index) + len(ds.test_index) == ds.n_samples
    if ds.train_index is not None and len(ds.test_index):
        # its test file is what a run uses by default: it must pass the preflight checks
        from treebench.data.checks import check_dataset_split

        assert check_dataset_split(ds, name, {"kind": "predefined"}) == []
    assert all(f["sha256"] for f in ds.meta["files"]) and ds.meta["task"] == "classification"
    assert ds.meta["licence"] and "origin" in ds.meta
    # the parsed cache gives back the same data
    again = build_dataset(e, data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert list((tmp_path / "parsed").glob("*.tbarrow"))
    assert again.X.equals(ds.X) and np.array_equal(again.y, ds.y) and again.categorical == ds.categorical


@pytest.mark.data
def test_topk_categorical_files_are_all_categorical_and_onehot_in_order(tmp_path):
    from treebench.binarize import make_binarizer

    d = _data_dir()
    ds = build_dataset(CATALOG["topk/car"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert ds.categorical == list(ds.X.columns)
    b = make_binarizer("onehot", {}, ds.categorical).fit(ds.X, ds.y)
    assert b.n_columns_ == 21  # 4 + 4 + 4 + 3 + 3 + 3 values
    cols = [(c.feature, c.value) for c in b.columns_]
    assert cols[:4] == [("buying", v) for v in ["high", "low", "med", "vhigh"]]
    assert cols[8:12] == [("doors", 2), ("doors", 3), ("doors", 4), ("doors", "5more")] or cols[8:12] == [
        ("doors", v) for v in ["2", "3", "4", "5more"]
    ]


@pytest.mark.data
def test_predefined_and_prefix_splits(tmp_path):
    d = _data_dir()
    q = build_dataset(CATALOG["quantbnb/bank"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert (len(q.train_index), len(q.test_index)) == (1097, 275)
    k = build_dataset(CATALOG["monks-1"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert (len(k.train_index), len(k.test_index)) == (124, 432)


@pytest.mark.data
def test_quirk_fixes_hayes_roth_soybean_steel(tmp_path):
    d = _data_dir()
    h = build_dataset(CATALOG["hayes-roth"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert h.X.shape == (132, 4) and "name" not in h.X.columns
    s = build_dataset(CATALOG["soybean-small"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert "outcome" not in set(s.y) and set(s.y) == {"D1", "D2", "D3", "D4"}
    st = build_dataset(CATALOG["steel-plates-faults"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert set(st.y) == {"Pastry", "Z_Scratch", "K_Scatch", "Stains", "Dirtiness", "Bumps", "Other_Faults"}


@pytest.mark.data
def test_checksum_mismatch_is_a_clear_error(tmp_path):
    d = _data_dir()
    bad = tmp_path / "data" / "originals" / "car"
    bad.mkdir(parents=True)
    (bad / "car.arff").write_text((d / "originals/car/car.arff").read_text().replace("vhigh", "vlow", 1))
    with pytest.raises(DataError, match=r"checksum mismatch for .*car\.arff.*expected sha256 361952e8"):
        build_dataset(CATALOG["car"], data_dirs=[tmp_path / "data"], offline=True, cache_dir=tmp_path / "c")


@pytest.mark.data
@pytest.mark.slow
def test_kdd99_targets(tmp_path):
    d = _data_dir()
    b = build_dataset(CATALOG["kdd99"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert set(b.y) == {"normal", "attack"} and b.categorical == ["protocol_type", "service", "flag"]
    m = build_dataset(CATALOG["kdd99-multiclass"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert len(np.unique(m.y[m.train_index])) == 23


@pytest.mark.data
def test_fico_1000_distinct_values_give_1407_features(tmp_path):
    """Top-k §5 (scalability): the 1000-row FICO sample has 1407 binary features, one per distinct
    value of each of its 23 features; `midpoints` gives Σ(k_j − 1) = 1407 − 23 of them."""
    from treebench.binarize import make_binarizer

    d = _data_dir()
    ds = build_dataset(CATALOG["topk/fico-1000"], data_dirs=[d], offline=True, cache_dir=tmp_path)
    assert ds.X.shape == (1000, 23)
    assert make_binarizer("onehot", {}, list(ds.X.columns)).fit(ds.X).n_columns_ == 1407
    assert make_binarizer("midpoints", {}, []).fit(ds.X).n_columns_ == 1407 - 23


@pytest.mark.parametrize("where, key, hint", [
    ("file", "sha256_typo", "sha256"), ("entry", "lable", "label"),
    ("entry", "drop_columns", None), ("fixes", "drop_colums", "drop_columns")])
def test_an_unknown_catalog_key_is_refused(tmp_path, monkeypatch, where, key, hint):
    """A misspelt or misplaced key of an entry, a file or `fixes` was ignored: a misspelt
    `sha256` turned the file's check off, `drop_columns` beside `fixes` did nothing."""
    from treebench.data.catalog import load_catalog

    entry = {"name": "mine", "title": "t", "format": "csv", "label": "y",
             "files": [{"path": "mine/mine.csv", "role": "full"}], "fixes": {}}
    target = {"file": entry["files"][0], "entry": entry, "fixes": entry["fixes"]}[where]
    target[key] = ["x"]
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(entry), encoding="utf-8")
    monkeypatch.setenv("TREEBENCH_CATALOG", str(tmp_path))
    with pytest.raises(DataError, match=f"entry `mine`: .* unknown key `{key}`") as info:
        load_catalog()
    assert (hint is None) or f"did you mean `{hint}`" in str(info.value)


def test_catalog_setting_errors_are_one_sentence(tmp_path, monkeypatch):
    from treebench.data.catalog import load_catalog

    (tmp_path / "bad.yaml").write_text("name: bad\ntitle: [unclosed\n", encoding="utf-8")
    monkeypatch.setenv("TREEBENCH_CATALOG", str(tmp_path))
    with pytest.raises(DataError, match=r"`.*bad\.yaml` is not valid YAML: .* at line 3, "
                                        r"column 1; fix it or move it") as info:
        load_catalog()
    assert "\n" not in str(info.value)
    monkeypatch.setenv("TREEBENCH_CATALOG", str(tmp_path / "bad.yaml"))
    with pytest.raises(DataError, match="TREEBENCH_CATALOG names .* which is a file"):
        load_catalog()
