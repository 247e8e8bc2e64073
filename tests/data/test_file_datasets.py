"""Users' own files: headers, categorical truth, labels, names, splits."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from treebench.config import validate_config
from treebench.data.base import load_dataset
from treebench.data.checks import check_dataset_split
from treebench.data.parsers import detect_header, read_delimited
from treebench.data.splits import SplitOptions, make_split, stratification_problem
from treebench.errors import ConfigError, DataError, DataWarning


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# ------------------------------------------------------------------ A6 header detection
WINE = "7.4;0.7;0;1.9;5\n7.8;0.88;0;2.6;5\n7.8;0.76;0.04;2.3;6\n11.2;0.28;0.56;1.9;6\n"


def test_headerless_numeric_csv_keeps_its_first_row(tmp_path):
    p = _write(tmp_path / "winequality.csv", WINE)
    ds = load_dataset("file", {"path": str(p), "delimiter": ";"})
    assert ds.n_samples == 4 and list(ds.X.columns) == ["x0", "x1", "x2", "x3"]
    assert ds.X.iloc[0].tolist() == [7.4, 0.7, 0.0, 1.9]
    assert ds.categorical == []


def test_header_auto_finds_names_over_numbers(tmp_path):
    p = _write(tmp_path / "w.csv", "acidity;sugar;alcohol;density;quality\n" + WINE)
    ds = load_dataset("file", {"path": str(p), "delimiter": ";"})
    assert ds.n_samples == 4 and list(ds.X.columns) == ["acidity", "sugar", "alcohol", "density"]
    assert ds.categorical == [] and ds.X["acidity"].dtype == np.float64


def test_header_modes_are_obeyed(tmp_path):
    p = _write(tmp_path / "w.csv", WINE)
    assert load_dataset("file", {"path": str(p), "delimiter": ";", "header": "none"}).n_samples == 4
    # first-row: the user says the first row is names, even if numeric
    assert load_dataset("file", {"path": str(p), "delimiter": ";", "header": "first-row"}).n_samples == 3
    with pytest.raises(DataError, match="none, auto or first-row"):
        load_dataset("file", {"path": str(p), "header": "sometimes"})


def test_detect_header_rules():
    num = pd.DataFrame({0: [1.0, 2.0, 3.0], 1: [4, 5, 6]})
    assert not detect_header(num)
    named = pd.DataFrame({0: ["a", "1", "2"], 1: ["b", "3", "4"]})
    assert detect_header(named)
    # one stray string in the first row of one numeric column only: not a header row
    stray = pd.DataFrame({0: ["oops", "1", "2"], 1: [4.0, 5.0, 6.0]})
    assert not detect_header(stray)
    # all text: a header when each first value never recurs in its column
    text = pd.DataFrame({0: ["colour", "red", "red", "blue"], 1: ["class", "yes", "no", "yes"]})
    assert detect_header(text)
    data = pd.DataFrame({0: ["red", "red", "blue"], 1: ["yes", "no", "yes"]})
    assert not detect_header(data)


def test_all_text_file_with_header(tmp_path):
    p = _write(tmp_path / "t.csv", "colour,size,class\nred,big,yes\nblue,big,no\nred,small,no\n")
    ds = load_dataset("file", {"path": str(p)})
    assert list(ds.X.columns) == ["colour", "size"] and ds.n_samples == 3 and sorted(ds.y) == ["no", "no", "yes"]


def test_read_delimited_auto_directly(tmp_path):
    p = _write(tmp_path / "a.csv", "1,2\n3,4\n")
    assert read_delimited(p, header="auto").shape == (2, 2)


# ------------------------------------------------------------------ A5 categorical truth
def test_categorical_list_is_the_truth_and_stray_values_are_errors(tmp_path):
    p = _write(tmp_path / "d.csv", "age,colour,y\n31,red,a\n45,blue,b\nn/a,red,a\n50,blue,b\n")
    with pytest.raises(DataError) as ei:
        load_dataset("file", {"path": str(p), "categorical": ["colour"]})
    msg = str(ei.value)
    assert "data row 3" in msg and "`age`" in msg and "'n/a'" in msg and "bad_values: missing" in msg
    assert str(p) in msg
    with pytest.warns(DataWarning, match=r"column `age`: 1 value that is not a number read as missing"):
        ds = load_dataset("file", {"path": str(p), "categorical": ["colour"], "bad_values": "missing"})
    assert ds.categorical == ["colour"] and ds.X["age"].dtype == np.float64 and np.isnan(ds.X["age"].iloc[2])
    assert ds.meta["parse_notes"]
    # without `categorical:` (auto) the column is text, hence categorical: the old behaviour
    assert "age" in load_dataset("file", {"path": str(p)}).categorical


def test_numeric_looking_column_can_be_declared_categorical_by_position(tmp_path):
    p = _write(tmp_path / "d.csv", "zip,size,y\n1000,1.5,a\n2000,2.5,b\n1000,3.5,a\n")
    ds = load_dataset("file", {"path": str(p), "categorical": [0]})
    assert ds.categorical == ["zip"] and "size" not in ds.categorical
    with pytest.raises(DataError, match="is the label"):
        load_dataset("file", {"path": str(p), "categorical": [2]})


def test_row_numbers_count_in_the_test_file(tmp_path):
    tr = _write(tmp_path / "tr.csv", "a,c,y\n1,p,u\n2,q,v\n")
    te = _write(tmp_path / "te.csv", "a,c,y\n3,p,u\n4,q,v\nbad,q,v\n")
    with pytest.raises(DataError, match=r"data row 3 of `.*te\.csv`, column `a`: 'bad'"):
        load_dataset("file", {"path": str(tr), "test_path": str(te), "categorical": ["c"]})


# ------------------------------------------------------------------ A3 unseen test labels
def _adult(tmp_path):
    tr = _write(tmp_path / "adult.data", "39,State-gov,<=50K\n50,Private,>50K\n38,Private,<=50K\n53,Private,>50K\n")
    te = _write(tmp_path / "adult.test", "25,Private,<=50K.\n38,Private,>50K.\n28,Local-gov,>50K.\n")
    return tr, te


def test_unseen_test_labels_are_an_error_naming_labels_and_file(tmp_path):
    tr, te = _adult(tmp_path)
    ds = load_dataset("file", {"path": str(tr), "test_path": str(te), "header": "none"})
    with pytest.raises(DataError) as ei:
        check_dataset_split(ds, "adult.data", {"kind": "predefined"})
    msg = str(ei.value)
    assert "'<=50K.'" in msg and "'>50K.'" in msg and str(te) in msg and "label_map" in msg
    assert "'<=50K.': '<=50K'" in msg  # the hint suggests the closest training label
    fixed = load_dataset("file", {"path": str(tr), "test_path": str(te), "header": "none",
                                  "label_map": {"<=50K.": "<=50K", ">50K.": ">50K"}})
    assert check_dataset_split(fixed, "adult.data", {"kind": "predefined"}) == []
    assert set(fixed.y[fixed.test_index]) == {"<=50K", ">50K"}
    allowed = load_dataset("file", {"path": str(tr), "test_path": str(te), "header": "none", "unseen_test_labels": "allow"})
    assert check_dataset_split(allowed, "adult.data", {"kind": "predefined"}) == []


def test_unseen_test_labels_exit_2_from_the_cli(tmp_path):
    from typer.testing import CliRunner

    from treebench.cli import app

    tr, te = _adult(tmp_path)
    cfg = _write(tmp_path / "c.yaml", f"""
name: adult
datasets:
  - {{path: {tr}, test_path: {te}, header: none}}
algorithms: [{{name: cart, params: {{max_depth: 1}}}}]
binarization: raw
""")
    res = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "out"), "--quiet"])
    assert res.exit_code == 2, res.output
    assert "label_map" in res.output and "Traceback" not in res.output


# ------------------------------------------------------------------ A4 single class
def test_single_class_label_is_refused(tmp_path):
    p = _write(tmp_path / "one.csv", "a,b,y\n1,2,yes\n3,4,yes\n5,6,yes\n")
    ds = load_dataset("file", {"path": str(p)})
    with pytest.raises(DataError, match=r"single class 'yes' in all 3 rows"):
        check_dataset_split(ds, "one.csv", {"kind": "kfold", "n_splits": 2})


def test_single_class_refused_before_running(tmp_path):
    from treebench import api

    p = _write(tmp_path / "one.csv", "a,b,y\n1,2,yes\n3,4,yes\n5,6,yes\n")
    exp = validate_config({"name": "x", "datasets": [str(p)], "algorithms": ["cart"], "binarization": "raw"})
    with pytest.raises(DataError, match="single class"):
        api.run_experiment(exp, api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    assert not (tmp_path / "o" / "cells").exists()


# ------------------------------------------------------------------ A15 stratification
def test_unstratifiable_kfold_says_so():
    y = np.array(["a"] * 10 + ["b"] * 10 + ["c"] * 3)
    problem = stratification_problem("kfold", y, n_splits=5)
    assert "'c' (3 rows)" in problem and "5 folds" in problem and "not stratified" in problem
    sp = make_split(SplitOptions("kfold", n_splits=5), y, fold=0, seed=0)
    assert sp.warning == problem
    assert make_split(SplitOptions("kfold", n_splits=3), y, fold=0, seed=0).warning is None
    assert make_split(SplitOptions("kfold", n_splits=5, stratify=False), y, fold=0, seed=0).warning is None
    y2 = np.array(["a"] * 10 + ["b"])
    assert "2 rows" in make_split(SplitOptions("holdout"), y2, fold=0, seed=0).warning


def test_unstratifiable_warn_or_refuse():
    from treebench.data.base import Dataset

    y = np.array([0] * 8 + [1] * 2)
    ds = Dataset("d", pd.DataFrame({"a": np.arange(10.0)}), y)
    notes = check_dataset_split(ds, "d", {"kind": "kfold", "n_splits": 5})
    assert len(notes) == 1 and "dataset `d`" in notes[0]
    with pytest.raises(DataError, match="unstratifiable: warn"):
        check_dataset_split(ds, "d", {"kind": "kfold", "n_splits": 5, "unstratifiable": "error"})


def test_unstratifiable_warning_reaches_row_and_summary(tmp_path):
    from treebench import api
    from treebench.results.store import read_table

    rows = "\n".join(f"{i},{i % 3},{'a' if i < 12 else 'b'}" for i in range(14))
    p = _write(tmp_path / "small.csv", "u,v,y\n" + rows + "\n")
    exp = validate_config({
        "name": "x", "datasets": [str(p)], "algorithms": [{"name": "cart", "params": {"max_depth": 1}}],
        "binarization": {"method": "quantile", "params": {"max_splits": 2}}, "split": {"kind": "kfold", "n_splits": 3},
        "execution": {"n_jobs": 1, "backend": "sequential"},
    })
    s = api.run_experiment(exp, api.RunOptions(out=tmp_path / "o", progress=False, report=False))
    assert s.exit_code == 0 and any("not stratified" in w for w in s.data_warnings)
    assert s.splits == {"small.csv": "kfold (3 folds x 1 seed)"}
    df = read_table(tmp_path / "o" / "results.parquet")
    assert df["data_warnings"].str.contains("not stratified").all()
    import json

    per = json.loads(df["binary_columns_per_feature"].iloc[0])
    assert per == {"u": 2, "v": 2}


# ------------------------------------------------------------------ A7 names, B short forms
def _exp(datasets, **kw):
    return validate_config({"name": "x", "datasets": datasets, "algorithms": ["cart"], **kw})


def test_same_basename_in_two_folders_are_two_datasets(tmp_path):
    a = _write(tmp_path / "red" / "wine.csv", WINE)
    b = _write(tmp_path / "white" / "wine.csv", WINE)
    c = _write(tmp_path / "other.csv", WINE)
    exp = _exp([str(a), str(b), str(c)])
    assert exp.dataset_names() == ["red/wine.csv", "white/wine.csv", "other.csv"]
    from treebench.config.cells import expand

    cells = expand(exp)
    assert {c.dataset for c in cells} == {"red/wine.csv", "white/wine.csv", "other.csv"}
    # the same file twice with different options: numbered
    exp = _exp([{"path": str(a), "label": 0}, {"path": str(a), "label": -1}])
    assert exp.dataset_names() == ["wine.csv", "wine.csv#2"]
    with pytest.raises(ConfigError, match="already used"):
        _exp([{"path": str(a), "name": "w"}, {"path": str(b), "name": "w"}])


def test_short_and_named_forms(tmp_path):
    p = _write(tmp_path / "data" / "mine.csv", WINE)
    exp = _exp([str(p), {"red": str(p)}, {"blue": {"path": str(p), "label": 0}},
                {str(p): {"label": 1, "delimiter": ";"}}, "iris",
                {"name": "file", "params": {"path": str(p)}}])
    d = exp.datasets
    assert d[0].path == str(p) and d[1].display_name == "red" and d[2].label == 0 and d[3].delimiter == ";"
    assert d[4].name == "iris" and d[5].display_name == "mine.csv"
    assert exp.dataset_names()[1:3] == ["red", "blue"]
    assert d[3].loader() == ("file", {"path": str(p), "label": 1, "delimiter": ";"})
    with pytest.raises(ConfigError, match="option of a local file"):
        _exp([{"name": "iris", "header": "none"}])


# ------------------------------------------------------------------ A17 predefined test files
def test_a_dataset_with_a_test_file_uses_it_by_default(tmp_path):
    tr, te = _adult(tmp_path)
    exp = _exp(["kdd99", "iris", {"path": str(tr), "test_path": str(te)}])
    assert [exp.split_for(i).kind for i in range(3)] == ["predefined", "kfold", "predefined"]
    s = exp.split_summary()
    assert s["kdd99"].startswith("predefined") and s["iris"].startswith("kfold")
    from treebench.config.cells import expand

    kinds = {(c.dataset, c.split["kind"]) for c in expand(exp)}
    assert ("kdd99", "predefined") in kinds and ("iris", "kfold") in kinds
    assert len([c for c in expand(exp) if c.dataset == "kdd99"]) == 1
    # the config chooses another split: per dataset, or `test_files: merge` for all
    exp = _exp([{"name": "kdd99", "split": {"kind": "holdout"}}])
    assert exp.split_for(0).kind == "holdout"
    exp = _exp(["kdd99"], split={"kind": "kfold", "test_files": "merge"})
    assert exp.split_for(0).kind == "kfold"


def test_warnings_module_is_quiet_for_clean_files(tmp_path):
    p = _write(tmp_path / "w.csv", WINE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_dataset("file", {"path": str(p), "delimiter": ";"})


def test_the_datasets_page_documents_every_file_option():
    from pathlib import Path

    from treebench.config import FILE_KEYS

    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "datasets.md").read_text()
    for key in (*FILE_KEYS, "name"):
        assert f"| `{key}` |" in text, key
    text = "\n".join(p.read_text() for p in sorted(docs.glob("*.md")))
    for words in ("treebench binarizers", "treebench datasets info", "max_columns", "unstratifiable", "test_files"):
        assert words in text, words


# ------------------------------------------------------------------ properties
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=3, max_size=3),
                min_size=2, max_size=12))
def test_header_auto_never_swallows_a_numeric_row(tmp_path_factory, rows):
    p = tmp_path_factory.mktemp("h") / "n.csv"
    p.write_text("\n".join(",".join(repr(v) for v in r) for r in rows) + "\n")
    df = read_delimited(p, header="auto")
    assert df.shape == (len(rows), 3)
    np.testing.assert_allclose(df.to_numpy(dtype=float), np.asarray(rows))
    named = tmp_path_factory.mktemp("h") / "h.csv"
    named.write_text("a,b,c\n" + p.read_text())
    assert read_delimited(named, header="auto").shape == (len(rows), 3)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(["a", "b"]),
                          st.sampled_from(["x.csv", "y.csv"])), min_size=1, max_size=6))
def test_file_display_names_are_unique_and_short(tmp_path_factory, files):
    from treebench.config import DatasetSpec, unique_dataset_names

    specs = [DatasetSpec(path=f"{a}/{b}/{f}") for a, b, f in files]
    names = unique_dataset_names(specs)
    distinct_paths = {s.path for s in specs}
    assert len(set(names)) == len(names)
    for s, n in zip(specs, names, strict=True):
        base = n.split("#")[0]
        assert s.path.endswith(base)
        if len([t for t in distinct_paths if t.endswith("/" + s.path.rsplit("/", 1)[1])]) == 1 and "#" not in n:
            assert n == s.path.rsplit("/", 1)[1]  # a unique file name stays short


def test_datasets_info_binarization_on_a_catalog_name():
    from typer.testing import CliRunner

    from treebench.cli import app

    r = CliRunner().invoke(app, ["datasets", "info", "iris", "--binarization", "quantile", "--param", "max_splits=2"])
    assert r.exit_code == 0, r.output
    assert "8 binary columns" in r.output


def test_label_map_with_numeric_yaml_keys(tmp_path):
    from treebench.config.cells import expand

    p = _write(tmp_path / "lm.csv", "a,y\n1,0\n2,1\n3,2\n4,0\n5,1\n6,2\n")
    exp = _exp([{"path": str(p), "label_map": {0: "neg", 1: "pos", "*": "other"}}], split={"kind": "kfold", "n_splits": 2})
    name, kw = exp.datasets[0].loader()
    assert list(load_dataset(name, kw).y) == ["neg", "pos", "other"] * 2
    assert len(expand(exp)) == 2  # cell ids hash the mapping (text keys)


def test_auto_categorical_says_when_a_stray_string_made_a_column_text(tmp_path):
    rows = "\n".join(f"{i},{'n/a' if i == 7 else i * 1.5},{'a' if i % 2 else 'b'}" for i in range(20))
    p = _write(tmp_path / "s.csv", "id,age,y\n" + rows + "\n")
    with pytest.warns(DataWarning, match=r"column `age` is read as categorical because 1 of its 20 values is not a number \(first: data row 8"):
        ds = load_dataset("file", {"path": str(p)})
    assert "age" in ds.categorical and ds.meta["parse_notes"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a real text column is no news
        load_dataset("file", {"path": str(_write(tmp_path / "t.csv", "c,y\nred,a\nblue,b\nred,a\n"))})


def test_auto_categorical_says_when_integers_too_large_for_64_bits_made_a_column_text(tmp_path):
    """Integers beyond 64 bits are kept as text by the reader, so the column is categorical:
    every value a number, the load says why and how to read them as numbers."""
    rows = "\n".join(f"{10**30 + i},{i * 0.5},{i % 2}" for i in range(12))
    p = _write(tmp_path / "big.csv", "a,b,y\n" + rows + "\n")
    with pytest.warns(DataWarning, match=r"column `a` is read as categorical: each of its 12 "
                                         r"values is a number, .*integers too large for 64 bits"):
        ds = load_dataset("file", {"path": str(p)})
    assert ds.categorical == ["a"]


def test_a_byte_that_is_not_utf8_is_named_where_it_is(tmp_path):
    """The parser's own message counts bytes from the start of its buffer ("position 0");
    the error says the byte, its line and its column in the file."""
    from treebench.errors import DataError

    p = tmp_path / "bad.csv"
    p.write_bytes(b"a,b,y\n1,2,0\n3,\xff4,1\n5,6,0\n")
    with pytest.raises(DataError, match=r"byte 0xff at line 3, column 3 is not UTF-8"):
        load_dataset("file", {"path": str(p)})


def test_a_header_naming_a_column_twice_is_said(tmp_path):
    """`x,x`: the second column is read as `x.1` and the load says so (the label `x` would
    otherwise silently be the first of the two); a real column named `b.1` is no news."""
    p = _write(tmp_path / "d.csv", "x,x,y\n1,2,a\n3,4,b\n5,6,a\n")
    with pytest.warns(DataWarning, match=r"header names `x` more than once; the repeats are read as `x\.1`"):
        ds = load_dataset("file", {"path": str(p)})
    assert list(ds.X.columns) == ["x", "x.1"] and ds.X["x.1"].tolist() == [2, 4, 6]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = load_dataset("file", {"path": str(_write(tmp_path / "e.csv", "a,b.1,b,y\n1,2,3,a\n3,4,5,b\n"))})
    assert list(ds.X.columns) == ["a", "b.1", "b"]
    # with line fixes the text is read from memory: the header line is found there too
    q = _write(tmp_path / "f.csv", "junk line\nx,x,y\n1,2,a\n3,4,b\n")
    with pytest.warns(DataWarning, match=r"`x\.1`"):
        load_dataset("file", {"path": str(q), "skip_lines": [1]})


def test_a_data_warning_is_said_once_by_a_run(tmp_path):
    """The load-time note (header `x,x`) goes into the run's summary, and only there."""
    import yaml
    from typer.testing import CliRunner

    from treebench.cli import app

    p = _write(tmp_path / "d.csv", "x,x,y\n1,2,a\n3,4,b\n5,6,a\n1,2,b\n3,4,a\n5,6,b\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({
        "name": "dup", "datasets": [{"file": {"path": str(p), "label": "y"}}],
        "split": {"kind": "kfold", "n_splits": 2},
        "algorithms": [{"name": "cart", "params": {"max_depth": 1}}],
        "execution": {"n_jobs": 1, "backend": "sequential"}}))
    for extra in ([], ["--dry-run"]):
        with warnings.catch_warnings(record=True) as shown:
            warnings.simplefilter("always")
            r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(tmp_path / "o"), "--no-report", *extra])
        assert r.exit_code == 0, r.output
        assert r.output.count("more than once") == 1, r.output  # the summary's line
        assert not [w for w in shown if issubclass(w.category, DataWarning)]  # no second one


def test_a_test_file_with_the_same_columns_in_another_order_is_lined_up_by_name(tmp_path):
    tr = _write(tmp_path / "train.csv", "a,b,y\n0.5,100,1\n-0.5,-200,0\n1.5,300,1\n-1.5,-50,0\n")
    te = _write(tmp_path / "test.csv", "b,a,y\n-7,0.25,1\n90,-0.75,0\n")
    ds = load_dataset("file", {"path": str(tr), "test_path": str(te)})
    test = ds.X.iloc[ds.test_index]
    assert list(test["a"]) == [0.25, -0.75] and list(test["b"]) == [-7, 90]
    # names of its own at every position (as MONK-3's test file has): matched by position
    own = _write(tmp_path / "own.csv", "p,q,y\n0.25,-7,1\n-0.75,90,0\n")
    ds = load_dataset("file", {"path": str(tr), "test_path": str(own)})
    assert list(ds.X.iloc[ds.test_index]["a"]) == [0.25, -0.75]
    # a shared name at another position, with other names beside it: refused
    mixed = _write(tmp_path / "mixed.csv", "b,z,y\n-7,0.25,1\n90,-0.75,0\n")
    with pytest.raises(DataError, match="column `b` at position 1 and the training file's at 2"):
        load_dataset("file", {"path": str(tr), "test_path": str(mixed)})


def test_whole_labels_beyond_2_to_53_stay_distinct(tmp_path):
    rows = "".join(f"{i},{i % 5},{['1e20', '2e20', '-3e19', '0'][i % 4]}\n" for i in range(40))
    ds = load_dataset("file", {"path": str(_write(tmp_path / "big.csv", "a,b,y\n" + rows))})
    assert sorted(np.unique(ds.y).tolist()) == [-3e19, 0.0, 1e20, 2e20]
    small = load_dataset("file", {"path": str(_write(tmp_path / "s.csv", "a,y\n1,0.0\n2,1.0\n3,1.0\n"))})
    assert small.y.dtype.kind == "i" and sorted(set(small.y.tolist())) == [0, 1]


def test_label_map_keys_name_whole_number_labels_as_they_are_read(tmp_path):
    """Labels written 0.0/1.0/2.0 are the classes 0, 1, 2: a map `{0: neg, 1: neg, 2: pos}`
    matched nothing (its keys were compared with the text `0.0`) and every cell then failed
    in scikit-learn. A map none of whose keys is a label is refused."""
    p = _write(tmp_path / "f.csv", "a,y\n" + "".join(f"{i},{i % 3}.0\n" for i in range(30)))
    ds = load_dataset("file", {"path": str(p), "label_map": {0: "neg", 1: "neg", 2: "pos"}})
    assert sorted(set(ds.y.tolist())) == ["neg", "pos"]
    with pytest.raises(DataError, match="none of its labels .`a`. is a label of the data"):
        load_dataset("file", {"path": str(p), "label_map": {"a": "neg"}})


@pytest.mark.parametrize("kind,sizes", [("holdout", {"test_size": 0.05}),
                                        ("holdout", {"test_size": 0.95}),
                                        ("train-val-test", {"test_size": 0.1, "valid_size": 0.05})])
def test_a_part_smaller_than_the_number_of_classes_is_drawn_unstratified_with_a_warning(kind, sizes):
    """21 rows of 3 classes: a stratified test (or training, or validation) part of 2 rows
    cannot hold every class, and scikit-learn refused the split in every cell; the problem is
    named before the run (`stratification_problem`) and the split drawn unstratified."""
    y = np.array([0, 1, 2] * 7)
    opts = SplitOptions(kind=kind, **sizes)
    sp = make_split(opts, y, fold=0, seed=0)
    assert len(sp.train) + len(sp.test) + (len(sp.valid) if sp.valid is not None else 0) == 21
    assert sp.warning and "fewer" in sp.warning
    if kind == "holdout":
        assert stratification_problem(kind, y, test_size=sizes["test_size"]) == sp.warning
    assert stratification_problem("holdout", y, test_size=0.3) is None  # 7 test rows: fine


@pytest.mark.parametrize("value", [None, True, [1, 2], float("nan")])
def test_a_label_map_value_that_is_no_label_is_refused(tmp_path, value):
    """`{0: null}` did nothing, `{0: [1, 2]}` made a class named `[1, 2]`, `{0: true}` a class
    `True` beside the class 1."""
    from treebench.errors import ParameterError

    p = _write(tmp_path / "f.csv", "a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(20)))
    with pytest.raises(ParameterError, match="a label is a text or a number"):
        load_dataset("file", {"path": str(p), "label_map": {0: value}})


@pytest.mark.parametrize("fmt", ["csv", "arff", "dl85"])
@pytest.mark.parametrize("damage", ["truncated", "garbled"])
def test_a_damaged_gzip_file_is_a_clear_error(tmp_path, fmt, damage):
    """A truncated or garbled ``.gz`` data file is one sentence naming the file (`treebench`
    printed only "Aborted!" and exited 1: click read the EOFError as Ctrl-D)."""
    import gzip

    from treebench.data.catalog import parse_file

    text = {"csv": "a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(400)),
            "arff": "@relation r\n@attribute a numeric\n@attribute y {p,n}\n@data\n"
                    + "".join(f"{i},{'pn'[i % 2]}\n" for i in range(400)),
            "dl85": "".join(f"{i % 2} {i % 3 % 2} {i % 5 % 2}\n" for i in range(400))}[fmt]
    packed = gzip.compress(text.encode())
    bad = packed[: len(packed) // 2] if damage == "truncated" else packed[:10] + b"x" * 60
    p = tmp_path / f"d.{'txt' if fmt == 'dl85' else fmt}.gz"
    p.write_bytes(bad)
    with pytest.raises(DataError, match=r"cannot read `.*d\..*\.gz`: the compressed file is "
                                        r"damaged or truncated \(.+\); copy or download it again"):
        parse_file(p, {"format": fmt})


def test_whole_labels_beyond_64_bits_are_distinct_classes(tmp_path):
    """Labels 1, 10**30 and 10**30 + 1: pandas keeps the big ones as Python integers, which
    scikit-learn took for an unknown target type (every cell failed while `--dry-run` refused
    the file); they are their decimal text, each one a class."""
    from sklearn.tree import DecisionTreeClassifier

    big = 10**30
    labels = [1, big, big + 1] * 10
    p = tmp_path / "big.csv"
    p.write_text("a,y\n" + "".join(f"{i % 3},{v}\n" for i, v in enumerate(labels)))
    ds = load_dataset("file", {"path": str(p)})
    assert sorted(set(ds.y.tolist())) == sorted({"1", str(big), str(big + 1)})
    assert DecisionTreeClassifier().fit(ds.X, ds.y).score(ds.X, ds.y) == 1.0
