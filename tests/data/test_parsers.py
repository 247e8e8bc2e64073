"""Parsers on tricky inputs: property-based round trips for CSV and ARFF, DL8.5, gzip, errors."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treebench.data.parsers import apply_line_fixes, read_arff, read_delimited, read_dl85
from treebench.errors import DataError

LETTERS = "abcxyzABC"
TEXT = st.text(alphabet=LETTERS + " ,;\t'\"-_.%{}", min_size=0, max_size=8).map(lambda s: "k" + s)
NUM = st.one_of(st.integers(-10**6, 10**6).map(float), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda v: round(v, 6)))
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(path: Path, text: str, gz: bool) -> Path:
    if gz:
        path = path.with_suffix(path.suffix + ".gz")
        with gzip.open(path, "wt", newline="") as fh:
            fh.write(text)
    else:
        path.write_text(text, newline="")
    return path


@st.composite
def tables(draw):
    n = draw(st.integers(1, 12))
    kinds = draw(st.lists(st.sampled_from(["num", "text"]), min_size=1, max_size=5))
    cols = {}
    for j, k in enumerate(kinds):
        vals = draw(st.lists(NUM if k == "num" else TEXT, min_size=n, max_size=n))
        miss = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        if not all(miss):  # keep at least one value so the column type is defined
            vals = [None if m else v for v, m in zip(vals, miss, strict=True)]
        cols[f"c{j}"] = vals
    return pd.DataFrame(cols)


@SETTINGS
@given(df=tables(), delim=st.sampled_from([",", ";", "\t", "|"]), header=st.booleans(), gz=st.booleans(), crlf=st.booleans())
def test_csv_round_trip(tmp_path_factory, df, delim, header, gz, crlf):
    import csv

    buf = io.StringIO()
    df.to_csv(buf, sep=delim, index=False, header=header, quoting=csv.QUOTE_NONNUMERIC, na_rep="?",
              lineterminator="\r\n" if crlf else "\n")
    text = buf.getvalue().replace('"?"', "?")
    p = _write(tmp_path_factory.mktemp("csv") / "t.csv", text, gz)
    got = read_delimited(p, delimiter=delim, header=header, missing=("?",))
    assert got.shape == df.shape
    if header:
        assert list(got.columns) == list(df.columns)
    for j, c in enumerate(df.columns):
        exp, out = df[c], got.iloc[:, j]
        assert list(exp.isna()) == list(out.isna())
        e, o = exp.dropna().tolist(), out.dropna().tolist()
        if all(isinstance(v, float) for v in e):
            np.testing.assert_allclose(np.asarray(o, dtype=float), np.asarray(e, dtype=float))
        else:  # whitespace around a text value, quoted or not, is not part of it
            assert [str(v) for v in o] == [str(v).strip() for v in e]


def _arff_quote(v: str) -> str:
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


@SETTINGS
@given(df=tables(), crlf=st.booleans(), gz=st.booleans(), comments=st.booleans())
def test_arff_round_trip(tmp_path_factory, df, crlf, gz, comments):
    lines = ["% a comment", "@RELATION 'my relation'", ""] if comments else ["@relation r"]
    for c in df.columns:
        if df[c].dropna().map(lambda v: isinstance(v, str)).all():
            values = sorted(set(df[c].dropna()))
            lines.append(f"@attribute {c} {{{', '.join(_arff_quote(v) for v in values)}}}")
        else:
            lines.append(f"@ATTRIBUTE '{c}' NUMERIC")
    lines.append("@data")
    if comments:
        lines.append("% data comment")
    for _, row in df.iterrows():
        cells = ["?" if v is None or (isinstance(v, float) and np.isnan(v)) else (_arff_quote(v) if isinstance(v, str) else repr(float(v))) for v in row]
        lines.append(",".join(cells))
    text = ("\r\n" if crlf else "\n").join(lines) + "\n"
    p = _write(tmp_path_factory.mktemp("arff") / "t.arff", text, gz)
    got, kinds = read_arff(p)
    assert list(got.columns) == list(df.columns) and got.shape == df.shape
    for c in df.columns:
        assert list(df[c].isna()) == list(got[c].isna())
        e, o = df[c].dropna().tolist(), got[c].dropna().tolist()
        if kinds[c] == "numeric":
            np.testing.assert_allclose(np.asarray(o, dtype=float), np.asarray(e, dtype=float))
        else:
            assert o == e


def test_arff_errors_name_the_file(tmp_path):
    p = tmp_path / "bad.arff"
    p.write_text("@relation r\n@attribute a {x,y}\n@data\nz\n")
    with pytest.raises(DataError, match=r"bad\.arff.*`a` holds 'z'"):
        read_arff(p)
    p.write_text("@relation r\n@attribute a numeric\n@data\nhello\n")
    with pytest.raises(DataError, match="expected a number"):
        read_arff(p)
    p.write_text("just,some\ncsv,text\n")
    with pytest.raises(DataError, match="bad.arff"):
        read_arff(p)
    p.write_text("@relation r\n@attribute a numeric\n@data\n{0 1}\n")
    with pytest.raises(DataError, match="sparse ARFF"):
        read_arff(p)


@pytest.mark.parametrize("last", ["{p,n}", "numeric", "string"])
def test_an_arff_line_with_too_few_values_is_named(tmp_path, last):
    """A data line that lacks values is named with its line number in the file (comments and
    blank lines counted); it was read with missing last values, and a numeric attribute then
    "held" the label. A ``?`` or an empty quoted value is no short line."""
    p = tmp_path / "s.arff"
    head = f"@relation t\n@attribute a numeric\n@attribute b numeric\n@attribute y {last}\n@data\n"
    value = "p" if last != "numeric" else "1"
    p.write_text(head + f"1,2,{value}\n% a comment\n\n2,{value}\n3,1,{value}\n")
    with pytest.raises(DataError, match=r"line 9 of `.*s\.arff` has 2 value\(s\) where its "
                                        r"@attribute lines declare 3"):
        read_arff(p)
    p.write_text(head + f"1,2,{value}\n2,?,?\n")
    df, _ = read_arff(p)
    assert df.shape == (2, 3) and df["y"].isna().tolist() == [False, True]


def test_dl85_format_and_errors(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text("1 0 1 1 \n0 1 0 0\n")  # trailing space on a line, as in the DL8.5 files
    df = read_dl85(p)
    assert list(df.columns) == ["label", "f0", "f1", "f2"]
    assert df["label"].tolist() == [1, 0] and df.iloc[:, 1:].to_numpy().tolist() == [[0, 1, 1], [1, 0, 0]]
    p.write_text("1 0 2\n")
    with pytest.raises(DataError, match="0/1 features"):
        read_dl85(p)


def test_line_fixes():
    text = "pseudo,header\na,1\nb,2\n\n1,4,4\n"
    assert apply_line_fixes(text, skip_lines=[1], drop_trailing_lines=1).split() == ["a,1", "b,2"]
    assert apply_line_fixes('"1\t2"\n"3\t4"\n', unquote_lines=True) == "1\t2\n3\t4\n"


def test_whitespace_delimiter_and_blank_line(tmp_path):
    p = tmp_path / "w.txt"
    p.write_text("h1,h2\n\n1,x\n2,?\n")
    df = read_delimited(p)
    assert df.shape == (2, 2) and df["h2"].isna().tolist() == [False, True]
    q = tmp_path / "s.txt"
    q.write_text("0  0.5 1\n1 0.25   0 \n")
    df = read_delimited(q, delimiter="space", header=False)
    assert df.shape == (2, 3) and list(df.columns) == ["x0", "x1", "x2"]


def test_unparseable_csv_is_a_clear_error(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text("a,b\n1,2\n3,4,5,6\n")
    with pytest.raises(DataError, match=r"cannot parse .*r\.csv"):
        read_delimited(p)
    e = tmp_path / "e.csv"
    e.write_text("a,b\n")
    with pytest.raises(DataError, match="no data rows"):
        read_delimited(e)


@pytest.mark.parametrize("sep, text", [
    (",", "x1,x2,y\n1,2,a\n3,4\n5,6,b\n"),
    (" ", "1 2 a\n3 4\n5 6 b\n"),
])
def test_a_line_with_too_few_fields_is_named_not_read_as_missing_values(tmp_path, sep, text):
    """pandas fills the fields a short line lacks with NaN (the label among them): a damaged
    line is named instead; an empty field is a missing value and still reads."""
    p = tmp_path / "d.csv"
    p.write_text(text)
    with pytest.raises(DataError, match=r"line \d of .* has 2 field\(s\) where the table has 3"):
        read_delimited(p, delimiter=sep, header=sep == ",")
    p.write_text("x1,x2,y\n1,2,a\n3,,\n5,6,b\n")
    df = read_delimited(p, header=True)
    assert df.shape == (3, 3) and df["y"].isna().sum() == 1 and df["x2"].isna().sum() == 1


@pytest.mark.parametrize("delim", [",", ";", "\t"])
def test_whitespace_around_a_text_value_is_not_part_of_it(tmp_path, delim):
    """``yes``, ``yes `` and ``"yes "`` are one class, ``? `` is missing, and a column of
    numbers with one padded missing token is numeric (it was text, ``? `` a category)."""
    rows = [["1", "2 ", "yes"], ["2", "? ", "yes "], ["3", "1", '"no "'], ["4", "4", " no"],
            ["5", "5", "no\t" if delim != "\t" else "no"], ["6", "1", '" yes"']]
    p = tmp_path / "t.csv"
    p.write_text("\n".join(delim.join(r) for r in [["a", "b", "y"], *rows]) + "\n")
    got = read_delimited(p, delimiter=delim, header="auto")
    assert got["y"].tolist() == ["yes", "yes", "no", "no", "no", "yes"]
    assert pd.api.types.is_numeric_dtype(got["b"])
    assert got["b"].isna().tolist() == [False, True, False, False, False, False]
    assert got["b"].dropna().tolist() == [2, 1, 4, 5, 1]
