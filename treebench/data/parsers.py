"""Parsers for the data formats treebench reads: delimited text, ARFF and the DL8.5 format.

Every parser takes a path (plain or gzip-compressed, detected from the file's first bytes, not its
name), returns a DataFrame of raw values (numbers as int/float columns, everything else as text)
and raises `treebench.errors.DataError` naming the file and what went wrong. File quirks (a
pseudo-header line, a stray trailing line, quoted lines) are handled by the line fixes passed in
from the catalog, never by special cases here. Nothing is ever unpickled.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treebench.errors import DataError
from treebench.utils.text import MAX_CHARS, clip, quote_list, show

FORMATS = ("csv", "tsv", "arff", "dl85", "parquet")
HEADER_MODES = ("none", "auto", "first-row")
GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == GZIP_MAGIC


def read_text(path: Path) -> str:
    """The whole file as text (gzip transparently, UTF-8 with a Latin-1 fallback)."""
    raw = gzip.open(path, "rb").read() if is_gzip(path) else Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def guess_format(path: str | Path) -> str:
    """Format from the file name: .csv/.data/.txt → csv, .tsv → tsv, .arff, .parquet (gz stripped)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    suffix = Path(name).suffix
    return {".arff": "arff", ".tsv": "tsv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix, "csv")


def apply_line_fixes(
    text: str,
    skip_lines: Sequence[int] = (),
    drop_trailing_lines: int = 0,
    unquote_lines: bool = False,
) -> str:
    """Line-level catalog fixes on the raw text.

    ``skip_lines``: 1-based physical line numbers to drop (e.g. a pseudo-header);
    ``drop_trailing_lines``: drop that many last non-blank lines (e.g. a stray line after a blank);
    ``unquote_lines``: strip one pair of double quotes wrapping a whole line.
    """
    lines = text.splitlines()
    if skip_lines:
        drop = {int(i) - 1 for i in skip_lines}
        lines = [ln for i, ln in enumerate(lines) if i not in drop]
    if drop_trailing_lines:
        k = int(drop_trailing_lines)
        while k and lines:
            if lines[-1].strip():
                k -= 1
            lines.pop()
    if unquote_lines:
        lines = [ln[1:-1] if len(ln) >= 2 and ln[0] == '"' and ln[-1] == '"' else ln for ln in lines]
    return "\n".join(lines) + "\n"


def _where(path: Path) -> str:
    return f"`{path}`"


def header_mode(header: bool | str | None, default: str = "first-row") -> str:
    """``none``, ``auto`` or ``first-row`` from a config value (``true``/``false`` as in the catalog)."""
    if header is None:
        return default
    if header is True:
        return "first-row"
    if header is False:
        return "none"
    if header not in HEADER_MODES:
        raise DataError(f"`header` must be none, auto or first-row (or true/false), got {show(header)}.")
    return str(header)


def _is_number(v: Any) -> bool:
    if isinstance(v, int | float | np.number):
        return True
    try:
        float(str(v).strip())
    except ValueError:
        return False
    return True


def detect_header(df: pd.DataFrame) -> bool:
    """Whether the first row of a table read without a header is a header (``header: auto``).

    Yes when, in every column whose other values are all numbers, the first value is not a
    number (a numeric file's first data row is never taken for names); an empty first value
    there is an empty name and does not count, but at least one name must be present. A file
    without such columns (all text) has a header when every first-row value is present and
    occurs nowhere else in its column. Missing values are ignored.
    """
    if df.shape[0] < 2:
        return False
    return _first_row_is_header(df.iloc[0], df.iloc[1:], typed=False)


def _first_row_is_header(first: pd.Series, rest: pd.DataFrame, typed: bool) -> bool:
    """`detect_header` on the first row ``first`` and the rows after it, ``rest`` (positional
    columns alike). ``typed``: ``rest`` was parsed on its own, so its numeric columns already
    have numeric dtypes (a text column is one the parser could not read as numbers)."""
    first = pd.Series(first.to_numpy(dtype=object), index=rest.columns)
    numeric = rest.select_dtypes("number")
    numeric_rest = list(numeric.columns[numeric.notna().to_numpy().any(axis=0)])
    if not typed:
        for c in rest.columns.difference(numeric.columns, sort=False):
            vals = rest[c].dropna()
            if not len(vals) or pd.to_numeric(vals.iloc[:200], errors="coerce").isna().any():
                continue  # a text value among the first ones: not a numeric column (fast)
            if pd.to_numeric(vals, errors="coerce").notna().all():
                numeric_rest.append(c)
    if numeric_rest:
        names = [v for v in first[numeric_rest] if pd.notna(v)]
        return bool(names) and not any(_is_number(v) for v in names)
    if first.isna().any():
        return False
    values = rest.to_numpy(dtype=object)
    return not (values == first.to_numpy(dtype=object)[None, :]).any()


def _all_names(row: pd.Series) -> bool:
    """Every value of ``row`` present, not a number, and distinct: a row of column names."""
    vals = [str(v).strip() for v in row]
    return all(pd.notna(v) for v in row) and not any(_is_number(v) for v in vals) and len(set(vals)) == len(vals)


def _names_from_row(row: pd.Series) -> list[str]:
    names: list[str] = []
    seen: set[str] = set()
    for j, v in enumerate(row.tolist()):
        base = str(v).strip() if pd.notna(v) and str(v).strip() else f"x{j}"
        name, k = base, 1
        while name in seen:
            name, k = f"{base}.{k}", k + 1
        names.append(name)
        seen.add(name)
    return names


def _parse(src: Any, path: Path, delimiter: str | None, kw: dict[str, Any]) -> pd.DataFrame:
    """``pd.read_csv(src, **kw)`` from the start of ``src``; a parser error is a `DataError`."""
    if isinstance(src, io.StringIO):
        src.seek(0)
    try:
        return pd.read_csv(src, **kw)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as exc:
        if isinstance(exc, UnicodeDecodeError):
            bad = _first_bad_byte(path)
            if bad is not None:
                raise DataError(f"cannot read {_where(path)} as UTF-8 text: {bad} is not UTF-8; "
                                f"save the file as UTF-8.") from None
        msg = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise DataError(f"cannot parse {_where(path)} as delimited text (delimiter "
                        f"{show(delimiter)}): {clip(msg, 4 * MAX_CHARS)}.") from None


def _first_bad_byte(path: Path) -> str | None:
    """The first byte of ``path`` that is not UTF-8, with its line and column (the parser's
    own message counts from the start of its buffer, not of the file); None for a compressed
    file, one that cannot be read again, or one that decodes."""
    try:
        if is_gzip(path):
            return None
        raw = Path(path).read_bytes()
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return f"byte 0x{raw[exc.start]:02x} at line {line}, column {column}"
    except OSError:
        return None
    return None


def _first_row_and_rest(
    src: Any, path: Path, delimiter: str | None, kw: dict[str, Any]
) -> tuple[pd.Series, pd.DataFrame | None]:
    """The first row as text (missing values and empty fields NaN) and the rows after it
    parsed on their own (numbers as numbers), columns by position; the rest is None when the
    rows after the first have more fields than it (the file is then read again without a
    header, and that error said).

    The rows after the first are parsed apart from it: parsing that row as data makes every
    column text, and converting a hundred thousand columns back to numbers one by one took
    minutes where the parser takes seconds. The first row is read as text on its own and named
    as pandas names a header line (`header_names`): an empty field is read as empty, a
    repeated one keeps its suffix (`_repeated_names` reads the line again for the note). The
    rest skips the first line rather than take it as pandas's header wherever that is the same
    row: pandas's renaming of a header's repeated names is quadratic in the repeats (7 s for
    a header-less line of 20,000 small integers, hours for 100,000 0/1 values)."""
    head = _parse(src, path, delimiter, {**kw, "header": None, "nrows": 1, "dtype": str,
                                         "na_filter": False})
    fields = [str(v) for v in head.iloc[0]] if len(head) else []
    if _starts_with_data(src, path) and not any("\n" in f or "\r" in f for f in fields):
        # the first line is the first row: skipped as a line, so pandas names no header
        skip = {"header": None, "skiprows": 1, "names": list(range(len(fields)))}
    else:  # blank lines before it, or a quoted line break in it: skipped as pandas's header
        skip = {"header": 0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", pd.errors.ParserWarning)
        rest = _parse(src, path, delimiter, {**kw, **skip, "index_col": False})
    missing = {str(t).strip() for t in kw["na_values"]}
    row = pd.Series([np.nan if _unnamed(j, c) or str(c).strip() in missing else str(c)
                     for j, c in enumerate(header_names(fields))], dtype=object)
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        return row, None  # a longer row: pandas dropped its extra fields
    rest = _one_block_per_dtype(rest)
    rest.columns = pd.RangeIndex(rest.shape[1])
    return row, rest


def _starts_with_data(src: Any, path: Path) -> bool:
    """Whether the first line of ``src`` (a path, plain or gzip, or a `io.StringIO`) holds
    more than spaces and tabs: pandas then reads it as the first row, and skipping one line
    skips that row."""
    if isinstance(src, io.StringIO):
        start = src.getvalue()[:65536]
    else:
        try:
            with (gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")) as f:
                start = f.read(65536).decode("utf-8", errors="replace")
        except (OSError, EOFError, gzip.BadGzipFile):
            return False
    text = start.lstrip(" \t")
    return bool(text) and text[0] not in "\r\n"


def header_names(fields: Sequence[str]) -> list[str]:
    """The column names pandas's parser gives a header line of these fields (as its parser
    splits them): an empty field is ``Unnamed: <position>``, and the second and later ``x``
    are ``x.1``, ``x.2``, ..., a suffix that a name of the line already holds being skipped;
    the unnamed columns are renamed after the named ones. The same names as pandas 2-3, in
    linear time: pandas looks each suffixed name up in the list of names, quadratic in the
    repeats (7 s for a header-less line of 20,000 small integers, hours for 100,000 0/1
    values)."""
    names = [f if f != "" else f"Unnamed: {j}" for j, f in enumerate(fields)]
    unnamed = [j for j, f in enumerate(fields) if f == ""]
    held = Counter(names)  # the names of the line as renamed so far
    counts: dict[str, int] = {}
    skip = set(unnamed)
    for j in [j for j in range(len(names)) if j not in skip] + unnamed:
        name = base = names[j]
        seen = counts.get(base, 0)
        while seen > 0:
            counts[base] = seen + 1
            name = f"{base}.{seen}"
            seen = seen + 1 if held[name] > 0 else counts.get(name, 0)
        held[base] -= 1
        held[name] += 1
        names[j] = name
        counts[name] = seen + 1
    return names


def _one_block_per_dtype(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its columns stored together, one 2-D array per dtype (a deep copy does
    that). The parser gives each column an array of its own, and every later step that walks
    them (selecting columns, counting missing values, dropping the label) then costs a Python
    call per column: seconds for a hundred thousand columns, milliseconds once joined."""
    return df.copy(deep=True)


def _unnamed(j: int, name: Any) -> bool:
    """Whether column ``j`` read with a header has no name there (pandas's placeholder, or a
    name of spaces)."""
    return not str(name).strip() or str(name) == f"Unnamed: {j}"


def read_delimited(
    path: str | Path,
    *,
    delimiter: str | None = ",",
    header: bool | str = True,
    missing: Sequence[str] = ("?",),
    names: Sequence[str] | None = None,
    quotechar: str = '"',
    skip_lines: Sequence[int] = (),
    drop_trailing_lines: int = 0,
    unquote_lines: bool = False,
) -> pd.DataFrame:
    """CSV/TSV/space-separated text (any delimiter; ``None`` or ``"space"`` = runs of whitespace).

    ``header``: ``first-row`` (or true) takes the first (remaining) line as column names
    (surrounding spaces stripped); ``none`` (or false) reads every line as data, columns named
    ``x0, x1, ...`` unless ``names`` is given; ``auto`` decides with `detect_header`. Values in
    ``missing`` become NaN, and so do empty fields. Whitespace around a text value is not part
    of it (`_strip_spaces`). Numeric-looking columns become numbers, the others text. The positions of the columns the header line leaves without a name are in
    ``df.attrs[UNNAMED_COLUMNS]`` (such a column is named ``x<position>`` under ``auto`` and
    ``Unnamed: <position>`` under ``first-row``).
    """
    path = Path(path)
    mode = header_mode(header)
    header = mode == "first-row"
    sep = r"\s+" if delimiter in (None, "space", " ", "whitespace") else ("\t" if delimiter == "tab" else delimiter)
    if isinstance(sep, str) and len(sep) != 1 and sep != r"\s+":
        raise DataError(f"{path}: delimiter {show(delimiter)} is {len(sep)} characters; give one "
                        f"character (`,`, `;`, `|`), or tab or space.")
    src: Any
    if skip_lines or drop_trailing_lines or unquote_lines:
        src = io.StringIO(apply_line_fixes(read_text(path), skip_lines, drop_trailing_lines, unquote_lines))
        compression = None
    else:
        src = path
        compression = "gzip" if is_gzip(path) else None
    kw: dict[str, Any] = dict(
        sep=sep,
        header=0 if header else None,
        na_values=list(dict.fromkeys([*missing, ""])),
        keep_default_na=False,
        quotechar=quotechar,
        skipinitialspace=sep != r"\s+",
        skip_blank_lines=True,
        compression=compression,
        low_memory=False,
    )
    unnamed: list[int] = []
    df = None
    if mode == "auto":
        first, rest = _first_row_and_rest(src, path, delimiter, kw)
        if rest is not None and rest.shape[0] == 0 and len(first) and _all_names(first):
            # one line of distinct texts and nothing else: a header without data (read as one
            # data row it would give a "dataset" whose label is the label column's name)
            shown = quote_list([str(v).strip() for v in first], fmt=clip)
            raise DataError(f"{_where(path)} has a header line ({shown}) but no data rows; add the "
                            f"data rows below it.")
        if rest is not None and rest.shape[0] and _first_row_is_header(first, rest, typed=True):
            df, header = rest, True
            df.columns = _names_from_row(first)
            unnamed = [j for j, v in enumerate(first.tolist()) if pd.isna(v) or not str(v).strip()]
    if df is None:
        df = _one_block_per_dtype(_parse(src, path, delimiter, kw))
        if not df.index.equals(pd.RangeIndex(df.shape[0])):  # rows longer than the header line
            raise DataError(
                f"the data rows of {_where(path)} have more fields than its header line has "
                f"names ({df.shape[1]}), so the first field would be read as row labels, every column "
                f"shifted by one; name every column in the header (a column of row "
                f"names too, then drop it with drop_columns).")
    if df.shape[0] == 0:
        raise DataError(f"{_where(path)} holds no data rows; expected {('a header and ' if header else '')}delimited rows.")
    if names is not None:
        if len(names) != df.shape[1]:
            raise DataError(f"{_where(path)} has {df.shape[1]} columns but {len(names)} names were given.")
        df.columns = list(names)
    elif header:
        df.columns = [str(c).strip() for c in df.columns]
        twice = _repeated_names(src, kw, df.columns)
        if twice:
            df.attrs[RENAMED_COLUMNS] = twice
        if mode == "first-row":
            unnamed = [j for j, c in enumerate(df.columns) if _unnamed(j, c)]
    else:
        df.columns = [f"x{j}" for j in range(df.shape[1])]
    if unnamed:
        df.attrs[UNNAMED_COLUMNS] = unnamed
    if sep != r"\s+":
        df = _strip_spaces(df, kw["na_values"])
    if df.shape[1] and df.iloc[:, -1].isna().any():
        _check_short_lines(src, path, sep, quotechar, df.shape[1])
    return df


def _strip_spaces(df: pd.DataFrame, missing: Sequence[str]) -> pd.DataFrame:
    """Text values without the whitespace around them, quoted or not (as header names):
    ``yes``, ``yes `` and ``" yes"`` are one value (one class, one category), ``? `` is
    missing, and a column whose texts are then all numbers is numeric."""
    tokens = set(missing)
    texts = [j for j, t in enumerate(df.dtypes) if t == object or isinstance(t, pd.StringDtype)]
    for j in texts:  # (the dtypes read once: a file may have 10^5 numeric columns)
        col = df.iloc[:, j]
        padded = col.map(lambda v: isinstance(v, str) and v != v.strip())
        if not padded.any():
            continue
        stripped = col.map(lambda v: v.strip() if isinstance(v, str) else v)
        stripped = stripped.where(~stripped.isin(tokens), np.nan)
        try:
            stripped = pd.to_numeric(stripped)
        except (ValueError, TypeError):
            stripped = stripped.astype(col.dtype)
        df.isetitem(j, stripped)
    return df


#: ``DataFrame.attrs`` key: positions of the columns whose name in the header line is empty
UNNAMED_COLUMNS = "unnamed_columns"


#: ``DataFrame.attrs`` key: {name read: name in the header} for header names given twice
RENAMED_COLUMNS = "renamed_columns"


def _repeated_names(src: Any, kw: dict[str, Any], columns: Sequence[str]) -> dict[str, str]:
    """The columns pandas renamed because the header line names them more than once (its second
    ``x`` becomes ``x.1``): {new name: name in the header}. The header line is read again only
    when a column name could be such a rename."""
    cols = [str(c) for c in columns]
    if not any(c.rpartition(".")[0] in cols for c in cols if c.rpartition(".")[2].isdigit()):
        return {}
    if isinstance(src, io.StringIO):
        src.seek(0)
    first = pd.read_csv(src, **{**kw, "header": None, "nrows": 1, "dtype": str})
    row = first.iloc[0].tolist() if len(first) else []
    given = [str(v).strip() if pd.notna(v) else "" for v in row]
    if len(given) != len(cols):
        return {}
    return {c: g for c, g in zip(cols, given) if g and c != g and given.count(g) > 1}


def _field_rows(src: Any, sep: str, quotechar: str) -> Any:
    """The fields of each line of ``src`` (a path or a `io.StringIO`), split as pandas splits
    them; None for a regular-expression separator other than whitespace."""
    lines = io.StringIO(src.getvalue() if isinstance(src, io.StringIO) else read_text(Path(src)))
    if sep == r"\s+":
        return (line.split() for line in lines)
    if len(sep) == 1:
        return csv.reader(lines, delimiter=sep, quotechar=quotechar, skipinitialspace=True)
    return None


def _check_short_lines(src: Any, path: Path, sep: str, quotechar: str, width: int) -> None:
    """Raise `DataError` for a line with fewer fields than the table has columns: pandas fills
    the fields a short line lacks, the label among them, with NaN, so a damaged line would pass
    for missing values. An empty field (``a,,c``) is a missing value and passes. Called only
    when the last column has missing values (the text is read again)."""
    rows = _field_rows(src, sep, quotechar)
    if rows is None:  # a regular-expression separator: pandas's own reading is the only one
        return
    for n, fields in enumerate(rows, start=1):
        if fields and any(f.strip() for f in fields) and len(fields) < width:
            raise DataError(f"line {n} of {_where(path)} has {len(fields)} field(s) where the "
                            f"table has {width} columns; fix or remove that line (an empty "
                            f"field, as in `a,,c`, is a missing value).")


# ------------------------------------------------------------------------------------------ ARFF

_ATTR = re.compile(r"^@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)\s+(.*)$", re.IGNORECASE)


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1].replace("\\'", "'").replace('\\"', '"')
    return s


def _parse_nominal(spec: str) -> list[str]:
    """Values of ``{a, 'b c', "d"}``: quoted values keep their spaces (backslash escapes), unquoted
    values are stripped."""
    inner = spec.strip()[1:-1]
    out: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        while i < n and inner[i] in " \t":
            i += 1
        if i < n and inner[i] in "'\"":
            q, i, buf = inner[i], i + 1, []
            while i < n and inner[i] != q:
                if inner[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(inner[i])
                i += 1
            out.append("".join(buf))
            i += 1
            while i < n and inner[i] != ",":
                i += 1
        else:
            j = inner.find(",", i)
            j = n if j < 0 else j
            out.append(inner[i:j].strip())
            i = j
        i += 1  # skip the comma
    return out


def parse_arff_header(lines: list[str], path: Path) -> tuple[list[tuple[str, str, list[str] | None]], int]:
    """Attributes (name, kind, nominal values) and the index of the first line after ``@data``."""
    attrs: list[tuple[str, str, list[str] | None]] = []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line.lower()
        if low.startswith("@relation"):
            continue
        if low.startswith("@attribute"):
            m = _ATTR.match(line)
            if not m:
                raise DataError(f"cannot parse ARFF attribute line {i + 1} of {_where(path)}: {show(line)}.")
            name, spec = _unquote(m.group(1)), m.group(2).strip()
            if spec.startswith("{"):
                attrs.append((name, "nominal", _parse_nominal(spec)))
            else:
                kind = spec.split()[0].lower()
                if kind in ("numeric", "real", "integer"):
                    attrs.append((name, "numeric", None))
                elif kind in ("string", "date"):
                    attrs.append((name, kind, None))
                else:
                    raise DataError(f"{_where(path)} line {i + 1}: unknown ARFF attribute type {show(spec)}.")
            continue
        if low.startswith("@data"):
            if not attrs:
                raise DataError(f"{_where(path)} has an @data section but no @attribute lines.")
            return attrs, i + 1
        raise DataError(f"{_where(path)} line {i + 1} is neither a comment, @attribute nor @data: {show(line)}.")
    raise DataError(f"{_where(path)} has no @data line; expected an ARFF file.")


def _short_arff_line(lines: list[str], start: int, path: Path, quote: str, width: int,
                     longer: bool = False) -> None:
    """Raise `DataError` for the first data line with fewer values than the @attribute lines
    declare (pandas reads the values it lacks as missing, so the last attribute's check named
    another value), or with ``longer`` with another number of values (pandas takes the extra
    leading values of lines one value too long as row labels and shifts every column)."""
    for n in range(start, len(lines)):
        ln = lines[n]
        if not ln.strip() or ln.lstrip().startswith("%"):
            continue
        fields = next(csv.reader([ln], quotechar=quote, escapechar="\\", skipinitialspace=True))
        if len(fields) < width or (longer and len(fields) != width):
            raise DataError(f"line {n + 1} of {_where(path)} has {len(fields)} value(s) where its "
                            f"@attribute lines declare {width}; fix or remove that line (a "
                            f"missing value is written ?, a value holding a comma is quoted).")


_QUOTED_START = {q: re.compile(r"(?:^|,)\s*" + q) for q in ("'", '"')}


def _arff_quotes(body: list[str]) -> tuple[str, str | None]:
    """The quote the parser reads (the one that opens more values of the data lines; ``'``
    when none does) and the other quote when some value opens with it too (ARFF allows both:
    `_unquote_other` removes it), else None."""
    counts = {q: sum(1 for ln in body if q in ln and rx.search(ln)) for q, rx in _QUOTED_START.items()}
    quote = '"' if counts['"'] > counts["'"] else "'"
    other = "'" if quote == '"' else '"'
    return quote, (other if counts[other] else None)


def _unquote_other(df: pd.DataFrame, other: str) -> pd.DataFrame:
    """``df`` with text values wrapped whole in the ``other`` quote unwrapped (their
    backslash escapes read): the parser reads one quote character, and ARFF lines may quote a
    value with either. A value in the other quote that held a comma was split and made its line
    too long, which `read_arff` refuses."""
    for c in df.columns:
        col = df[c]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            df[c] = col.map(lambda v: _unwrap(v, other))
    return df


def _unwrap(v: Any, q: str) -> Any:
    """``v`` without the quotes ``q`` around it, its backslash escapes read; else ``v``."""
    if isinstance(v, str) and len(v) >= 2 and v[0] == q and v[-1] == q:
        return re.sub(r"\\(.)", r"\1", v[1:-1])
    return v


def _read_arff_body(body: list[str], names: list[str], attrs: list, quote: str,
                    missing: Sequence[str]) -> pd.DataFrame:
    """The data lines ``body`` parsed, one column per attribute (a line with more values than
    attributes is cut with a ParserWarning, which `read_arff` turns into an error)."""
    return pd.read_csv(
        io.StringIO("\n".join(body)),
        header=None,
        names=names,
        index_col=False,
        sep=",",
        quotechar=quote,
        escapechar="\\",
        skipinitialspace=True,
        na_values=list(missing),
        keep_default_na=False,
        dtype={n: str for n, kind, _ in attrs if kind != "numeric"},
        low_memory=False,
    )


def read_arff(path: str | Path, *, missing: Sequence[str] = ("?",)) -> tuple[pd.DataFrame, dict[str, str]]:
    """ARFF (numeric, nominal with quotes, string; ``?`` missing; ``%`` comments; CRLF; gzip).

    Returns the DataFrame and ``{column: "numeric" | "nominal" | "string" | "date"}``. Nominal
    values keep their text (quotes removed); numeric columns are floats. Sparse ARFF is an error.
    """
    path = Path(path)
    lines = read_text(path).splitlines()
    attrs, start = parse_arff_header(lines, path)
    body = [ln for ln in lines[start:] if ln.strip() and not ln.lstrip().startswith("%")]
    if body and body[0].lstrip().startswith("{"):
        raise DataError(f"{_where(path)} is a sparse ARFF file, which treebench does not read; convert it to dense.")
    names = [a[0] for a in attrs]
    quote, other = _arff_quotes(body)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", pd.errors.ParserWarning)
            df = _read_arff_body(body, names, attrs, quote, missing)
    except (pd.errors.ParserError, ValueError) as exc:
        _short_arff_line(lines, start, path, quote, len(names), longer=True)
        raise DataError(f"cannot parse the @data section of {_where(path)}: {str(exc).strip()}.") from None
    if any(issubclass(w.category, pd.errors.ParserWarning) for w in caught):
        _short_arff_line(lines, start, path, quote, len(names), longer=True)  # a longer line
    if other is not None:
        df = _unquote_other(df, other)
    if df.shape[0] != len(body):
        raise DataError(f"{_where(path)}: read {df.shape[0]} rows from {len(body)} data lines; check its quoting.")
    last = df.iloc[:, -1] if df.shape[1] else None
    if last is not None and (last.isna() | (last.astype(object) == "")).any():
        # a short line: pandas reads the values it lacks as missing or empty
        _short_arff_line(lines, start, path, quote, len(names))
    kinds = {}
    for name, kind, values in attrs:
        kinds[name] = kind
        if kind == "numeric":
            col = pd.to_numeric(df[name], errors="coerce")
            bad = col.isna() & df[name].notna()
            if bad.any():
                raise DataError(
                    f"{_where(path)}: numeric attribute `{name}` holds {df[name][bad].iloc[0]!r}; expected a number or ?."
                )
            df[name] = col.astype(np.float64)
        else:
            s = df[name].astype(object)
            s = s.where(s.notna(), None)
            if kind == "nominal" and values is not None:
                declared = set(values)
                s = s.map(lambda v: v.strip() if isinstance(v, str) and v not in declared and v.strip() in declared else v)
                unknown = set(s.dropna().unique()) - declared
                if unknown:
                    raise DataError(
                        f"{_where(path)}: nominal attribute `{name}` holds {sorted(unknown)[0]!r}, which is not "
                        f"among its declared values {{{', '.join(values)}}}."
                    )
            df[name] = s
    return df, kinds


# ------------------------------------------------------------------------------------------ DL8.5


def read_dl85(path: str | Path) -> pd.DataFrame:
    """DL8.5/MurTree format: space-separated 0/1 features with the class label first, no header.

    Returns columns ``label, f0, f1, ...``; a value other than 0/1 in a feature column is an error.
    """
    path = Path(path)
    try:
        arr = pd.read_csv(
            path, sep=r"\s+", header=None, compression="gzip" if is_gzip(path) else None, dtype=np.int64
        ).to_numpy()
    except (pd.errors.ParserError, ValueError, pd.errors.EmptyDataError) as exc:
        raise DataError(f"cannot parse {_where(path)} as DL8.5 format (space-separated integers, label first): {exc}.") from None
    feats = arr[:, 1:]
    bad = (feats != 0) & (feats != 1)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(f"{_where(path)} row {i + 1} column {j + 2} is {feats[i, j]}; the DL8.5 format needs 0/1 features.")
    df = pd.DataFrame(feats.astype(np.uint8), columns=[f"f{j}" for j in range(feats.shape[1])])
    df.insert(0, "label", arr[:, 0])
    return df


def read_parquet(path: str | Path) -> pd.DataFrame:
    """A parquet table; a column of lists, arrays or records (no value treebench can split on)
    is refused, naming it."""
    try:
        df = pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises many types
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DataError(f"cannot read {_where(Path(path))} as parquet: {clip(msg, 4 * MAX_CHARS)}.") from None
    for c in df.columns:
        if df[c].dtype == object:
            nested = df[c].map(lambda v: isinstance(v, list | tuple | dict | np.ndarray))
            if nested.any():
                kind = type(df[c][nested].iloc[0]).__name__
                raise DataError(f"column {show(str(c))} of {_where(Path(path))} holds nested values "
                                f"({kind}); treebench reads numbers, text or true/false in each "
                                f"cell of a table.")
    return df


def parquet_kinds(path: str | Path) -> dict[str, str]:
    """``{column: "nominal"}`` for the columns a parquet file stores as categories (a
    dictionary type, pandas's ``Categorical``): categorical features even when their categories
    are numbers, which the table read back holds as plain numbers."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pq.read_schema(path)
    except Exception:  # read_parquet has said what is wrong with the file
        return {}
    kinds = {f.name: "nominal" for f in schema if pa.types.is_dictionary(f.type)}
    meta = schema.pandas_metadata or {}
    for col in meta.get("columns") or []:
        if isinstance(col, dict) and col.get("pandas_type") == "categorical" and col.get("name"):
            kinds[str(col["name"])] = "nominal"
    return kinds
