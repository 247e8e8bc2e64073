"""Header lines: a header that leaves a column without a name is said in one sentence naming
the column (it used to be read as a data row: with ``label: y`` the error said the label was
not a column, without one the header became a data row and its label a class); and a wide file
(tens of thousands of columns under a header line) reads in seconds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.data.base import load_dataset
from treebench.data.parsers import UNNAMED_COLUMNS, read_delimited

runner = CliRunner()

ROWS = "".join(f"{i % 5},{(i * 7) % 11},{'ab'[i % 2]}\n" for i in range(12))


def _dry_run(tmp_path, text: str, entry: str):
    data = tmp_path / "h.csv"
    data.write_text(text)
    cfg = tmp_path / "h.yaml"
    cfg.write_text(f"name: h\ndatasets: [{{path: {data}{entry}}}]\n"
                   "algorithms: [{name: cart, params: {max_depth: 1}}]\n"
                   "split: {kind: kfold, n_splits: 2}\n"
                   "execution: {n_jobs: 1, backend: sequential}\n")
    return runner.invoke(app, ["run", str(cfg), "--dry-run", "--out", str(tmp_path / "o")])


@pytest.mark.parametrize("entry", [", label: y", "", ", header: first-row, label: y"])
def test_an_empty_column_name_is_named_in_one_sentence(tmp_path, entry):
    res = _dry_run(tmp_path, ",x2,y\n" + ROWS, entry)
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "the header line gives column 1 of 3 (before `x2`) no name" in text
    assert "`drop_columns: [0]`" in text
    assert "is not a column" not in text and "Traceback" not in res.output


def test_an_empty_name_in_the_middle_and_at_the_end(tmp_path):
    res = _dry_run(tmp_path, "x1,,y\n" + ROWS, ", label: y")
    assert res.exit_code == 2 and "column 2 of 3 (before `y`)" in " ".join(res.output.split())
    res = _dry_run(tmp_path, "x1,x2,\n" + ROWS, ", label: 0")
    assert res.exit_code == 2 and "column 3 of 3 (after `x2`)" in " ".join(res.output.split())


def test_dropping_the_unnamed_column_reads_the_rest(tmp_path):
    """A row index saved by pandas (``df.to_csv()``) is the usual unnamed column."""
    res = _dry_run(tmp_path, ",x2,y\n" + ROWS, ", label: y, drop_columns: [0]")
    assert res.exit_code == 0, res.output
    p = tmp_path / "i.csv"
    pd.DataFrame({"x": [1.5, 2.5, 3.5, 4.5], "y": list("abab")}).to_csv(p)
    ds = load_dataset("file", {"path": str(p), "label": "y", "drop_columns": [0]})
    assert list(ds.X.columns) == ["x"] and ds.n_samples == 4 and list(ds.y) == list("abab")


def test_the_parser_marks_empty_names_in_both_header_modes(tmp_path):
    p = tmp_path / "e.csv"
    p.write_text(",x2,y\n" + ROWS)
    auto = read_delimited(p, header="auto")
    first = read_delimited(p, header="first-row")
    assert auto.attrs[UNNAMED_COLUMNS] == [0] == first.attrs[UNNAMED_COLUMNS]
    assert auto.shape == first.shape == (12, 3)
    assert auto["x2"].dtype.kind == "i" and auto.iloc[:, 0].tolist() == [i % 5 for i in range(12)]
    named = tmp_path / "n.csv"
    named.write_text("a,Unnamed: 9,y\n" + ROWS)  # a name of that spelling elsewhere is a name
    assert UNNAMED_COLUMNS not in read_delimited(named, header="auto").attrs


def test_a_headerless_file_with_a_missing_first_value_stays_data(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text(",2,a\n" + ROWS)
    df = read_delimited(p, header="auto")
    assert df.shape == (13, 3) and list(df.columns) == ["x0", "x1", "x2"]
    assert np.isnan(df.iloc[0, 0]) and UNNAMED_COLUMNS not in df.attrs


# ------------------------------------------------------------------ wide files
def _wide(path, n_rows: int, n_cols: int, header: bool) -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 100, (n_rows, n_cols))
    lines = [",".join(f"f{j}" for j in range(n_cols)) + ",y"] if header else []
    lines += [",".join(map(str, X[i])) + f",{'ab'[i % 2]}" for i in range(n_rows)]
    path.write_text("\n".join(lines) + "\n")
    return X


@pytest.mark.parametrize("header", [True, False])
def test_a_wide_file_reads_with_its_header_detected(tmp_path, header):
    """20,000 columns under a header line: the header was found by converting every column
    back from text one by one (and the loader assigned the float columns one by one), minutes
    for 100,000 columns; now a couple of parser passes."""
    p = tmp_path / "wide.csv"
    X = _wide(p, 60, 20_000, header)
    ds = load_dataset("file", {"path": str(p)})
    assert ds.X.shape == (60, 20_000) and ds.n_samples == 60
    assert list(ds.X.columns[:2]) == (["f0", "f1"] if header else ["x0", "x1"])
    assert (ds.X.dtypes == np.float64).all()
    np.testing.assert_array_equal(ds.X.to_numpy(), X)
    assert list(ds.y[:2]) == ["a", "b"]


def test_header_names_are_pandas_names_of_a_header_line():
    """`header_names` names a first row as pandas's parser names a header line (empty fields
    `Unnamed: j`, repeats suffixed, a suffix held by another name skipped, unnamed columns
    last), on random lines of colliding names."""
    import io
    import random

    from treebench.data.parsers import header_names

    rng = random.Random(0)
    alphabet = ["a", "a.1", "a.2", "a.1.1", "b", "", "1", "1.1", "Unnamed: 2", "x"]
    for _ in range(2000):
        fields = [rng.choice(alphabet) for _ in range(rng.randint(1, 9))]
        if not "".join(fields):
            continue  # a blank line: no header line at all
        text = ",".join(fields) + "\n" + ",".join("0" for _ in fields) + "\n"
        want = list(pd.read_csv(io.StringIO(text), header=0, keep_default_na=False).columns)
        assert header_names(fields) == want, fields
