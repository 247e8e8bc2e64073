"""Data files whose lines do not fit their declared columns, and values quoted in either of
ARFF's two quote styles: a line one value too long shifted every column without a word (its
first value became a row label), a later double-quoted value was a class of its own, and a
parquet column of lists raised a Python error in every cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from treebench.cli import app
from treebench.data.parsers import read_arff, read_delimited, read_parquet
from treebench.errors import DataError

HEAD = "@relation t\n@attribute a numeric\n@attribute b numeric\n@attribute y {0,1}\n@data\n"


def test_an_arff_line_longer_than_its_attributes_is_named(tmp_path):
    p = tmp_path / "long.arff"
    p.write_text(HEAD + "% a comment\n" + "".join(f"{10 * i},{i},0,1\n" for i in range(1, 7)))
    with pytest.raises(DataError, match=r"line 7 of .* has 4 value\(s\) where its @attribute "
                                        r"lines declare 3"):
        read_arff(p)
    p.write_text(HEAD + "1,2,0\n3,4,1\n5,6,0,{2}\n")  # one line longer (an instance weight)
    with pytest.raises(DataError, match=r"line 8 of .* has 4 value\(s\)"):
        read_arff(p)
    r = CliRunner().invoke(app, ["datasets", "info", str(p)])
    assert r.exit_code == 2 and "line 8" in r.output and "Traceback" not in r.output, r.output


def test_arff_values_in_either_quote_style_are_one_value(tmp_path):
    head = "@relation t\n@attribute a numeric\n@attribute s {'a b',c}\n@attribute y string\n@data\n"
    lines = [f"{i},'a b',yes\n" for i in range(60)] + [f'{i},"a b","yes"\n' for i in range(4)]
    p = tmp_path / "q.arff"
    p.write_text(head + "".join(lines) + '9,c,"it\\"s"\n')
    df, kinds = read_arff(p)
    assert sorted(df["s"].unique()) == ["a b", "c"]
    assert sorted(df["y"].unique()) == ['it"s', "yes"]
    assert df.shape == (65, 3) and kinds["s"] == "nominal"


def test_csv_rows_longer_than_the_header_line_are_refused(tmp_path):
    p = tmp_path / "extra.csv"
    p.write_text("a,b,y\n" + "".join(f"{10 * i},{i},0,1\n" for i in range(1, 7)))
    with pytest.raises(DataError, match="more fields than its header line has names"):
        read_delimited(p, header="first-row")
    with pytest.raises(DataError):  # the default header detection refuses it too
        read_delimited(p, header="auto")
    ok = tmp_path / "ok.csv"
    ok.write_text("a,b,y\n" + "".join(f"{10 * i},{i},1\n" for i in range(1, 7)))
    df = read_delimited(ok, header="first-row")
    assert df["a"].tolist() == [10, 20, 30, 40, 50, 60]


@pytest.mark.parametrize("values", [[[1, 2], [3], [4], [5]], [{"x": 1}, {"x": 2}, {"x": 3}, {"x": 4}]])
def test_a_parquet_column_of_nested_values_is_refused(tmp_path, values):
    p = tmp_path / "nested.parquet"
    pd.DataFrame({"a": values, "y": [0, 1, 0, 1]}).to_parquet(p)
    with pytest.raises(DataError, match="column 'a' of .* holds nested values"):
        read_parquet(p)
    flat = tmp_path / "flat.parquet"
    pd.DataFrame({"a": ["u", "v", None, "u"], "y": np.arange(4)}).to_parquet(flat)
    assert read_parquet(flat).shape == (4, 2)


def test_a_parquet_categorical_of_numbers_is_categorical(tmp_path):
    """A column stored as pandas categories is a categorical feature even when its categories
    are numbers (it was read back as a numeric column)."""
    p = tmp_path / "cat.parquet"
    pd.DataFrame({"a": pd.Categorical([10, 20, 10, 20, 30, 30]), "b": [1.5, 2.5, 1.0, 0.5, 2.0, 3.0],
                  "y": [0, 0, 0, 1, 1, 1]}).to_parquet(p)
    r = CliRunner().invoke(app, ["datasets", "info", str(p), "--label", "y"])
    assert r.exit_code == 0, r.output
    rows = {line.split()[0]: line.split()[1] for line in r.output.splitlines()
            if line.split()[:1] in (["a"], ["b"])}
    assert rows == {"a": "categorical", "b": "numeric"}, r.output


def test_a_trailing_delimiter_on_every_line_is_named(tmp_path):
    """Every line ending in a delimiter makes an empty last column, taken for the label: the
    message blamed "the label is missing in data row 1"."""
    p = tmp_path / "trail.csv"
    p.write_text("a,b,y,\n1,2,0,\n3,4,1,\n5,6,0,\n7,8,1,\n")
    r = CliRunner().invoke(app, ["datasets", "info", str(p)])
    assert r.exit_code == 2 and "is empty in every row" in r.output, r.output
    assert "trailing delimiters" in r.output and "data row 1" not in r.output, r.output


def test_a_label_of_numbers_with_a_missing_value_spelling_is_noted(tmp_path):
    """A 0/1 label with one row of `NA` is a three-class problem (only `?` and empty fields are
    missing by default): said in a note, with the row; `missing_tokens` makes it missing."""
    p = tmp_path / "nalab.csv"
    p.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30)) + "5,1,NA\n")
    r = CliRunner().invoke(app, ["datasets", "info", str(p)])
    out = " ".join(r.output.split())
    assert r.exit_code == 0 and "holding 'NA' (first: data row 31" in out, out
    assert "`missing_tokens:`" in out
    q = tmp_path / "plain.csv"
    q.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{['no', 'yes', 'NA'][i % 3]}\n" for i in range(30)))
    r = CliRunner().invoke(app, ["datasets", "info", str(q)])  # a text label: NA is a class
    assert r.exit_code == 0 and "holding" not in r.output, r.output


def test_numbers_with_a_decimal_comma_are_noted(tmp_path):
    """A `;`-delimited file with decimal commas (`1,5`) has a categorical column of one
    category per value: said in a note; a text column gets none."""
    p = tmp_path / "dec.csv"
    p.write_text("a;b;c;y\n" + "".join(f"{i},{i % 7};{i % 5};{['x', 'y'][i % 2]};{i % 2}\n"
                                      for i in range(30)))
    r = CliRunner().invoke(app, ["datasets", "info", str(p), "--delimiter", ";"])
    out = " ".join(r.output.split())
    assert r.exit_code == 0 and "column `a` is read as categorical, but its values look like " \
        "numbers written with a decimal comma" in out, out
    assert "column `c`" not in out, out
