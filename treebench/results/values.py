"""Values of a results table: normalised, ordered, compared and selected one way everywhere.

A parameter value read back from a table may be a numpy scalar, an integral float (an int
column with nulls), NaN or JSON text; `normalize_value` makes it a plain JSON scalar, so that
``4`` matches ``4.0`` and ``all`` matches the text ``all`` in the verification of claims, in
``treebench cells --where`` and in the report's axes and legends. `NA` marks a parameter that a
learner (or binarizer) does not have. `select_rows` picks the rows matching a set of conditions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd


class _NotApplicable:
    """Marks a parameter that an algorithm (or binarizer) does not have; shown as ''."""

    _instance: _NotApplicable | None = None

    def __new__(cls) -> _NotApplicable:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NA"

    def __bool__(self) -> bool:
        return False


NA = _NotApplicable()


def normalize_value(v: Any) -> Any:
    """A parameter value as a plain JSON scalar: numpy scalars become Python numbers, integral
    floats become ints (an int column with nulls may come back as floats), NaN becomes None, and
    lists or dicts become canonical JSON text. Strings are kept as they are (``"all"``)."""
    if v is None or v is NA or v is pd.NA:
        return None if v is not NA else NA
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return None
        if v.is_integer() and abs(v) < 2**53:
            return int(v)
        return v
    if isinstance(v, (list, tuple, dict)):
        return json.dumps(v, sort_keys=True)
    return v


def sort_key(v: Any) -> tuple:
    """Numbers first (ascending), then strings such as ``"all"``, then None, then not applicable."""
    if v is NA:
        return (4, 0.0, "")
    if v is None:
        return (3, 0.0, "")
    if isinstance(v, bool):
        return (0, float(v), "")
    if isinstance(v, (int, float)):
        return (0, float(v), "")
    return (1, 0.0, str(v))


def value_token(v: Any) -> str:
    """A hashable text key of a normalised value that keeps None, "None" and NA apart."""
    return "\x00NA" if v is NA else json.dumps(v, sort_keys=True, default=str)


# ----------------------------------------------------------------------------- comparing
def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _eq(a: Any, b: Any) -> bool:
    a, b = normalize_value(a), normalize_value(b)
    if a is None or b is None:
        return a is None and b is None
    if _is_num(a) and _is_num(b):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return str(a) == str(b)


def _ordered(a: Any, b: Any, op: str) -> bool:
    a, b = normalize_value(a), normalize_value(b)
    if not (_is_num(a) and _is_num(b)):
        return False
    return {"ge": a >= b, "gt": a > b, "le": a <= b, "lt": a < b}[op]


def matches(v: Any, cond: Any) -> bool:
    """Whether value ``v`` meets ``cond``: a value, a list of values, or a mapping of operators
    eq/ne/in/ge/gt/le/lt (values compared normalised; numbers with a relative slack of 1e-12)."""
    if isinstance(cond, dict):
        for op, x in cond.items():
            if op == "eq" and not _eq(v, x):
                return False
            if op == "ne" and _eq(v, x):
                return False
            if op == "in" and not any(_eq(v, y) for y in x):
                return False
            if op in ("ge", "gt", "le", "lt") and not _ordered(v, x, op):
                return False
        return True
    if isinstance(cond, list):
        return any(_eq(v, y) for y in cond)
    return _eq(v, cond)


# ----------------------------------------------------------------------------- selecting
class Indexed:
    """A results table with each column's values normalised and factorised once, so that the
    many selections of a verification cost one pass over the distinct values of a column."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df
        self._codes: dict[str, tuple[np.ndarray, list[Any]]] = {}
        self._arrays: dict[tuple[str, str], np.ndarray] = {}

    def codes(self, col: str) -> tuple[np.ndarray, list[Any]]:
        if col not in self._codes:
            vals = [normalize_value(v) for v in self.df[col]]
            codes, _ = pd.factorize(pd.Series([value_token(v) for v in vals], dtype=object),
                                    sort=False)
            uniques: dict[int, Any] = {}
            for i, c in enumerate(codes):
                uniques.setdefault(int(c), vals[i])
            self._codes[col] = (codes, [uniques[i] for i in range(len(uniques))])
        return self._codes[col]

    def _array(self, kind: str, col: str, make: Callable[[], np.ndarray]) -> np.ndarray:
        """The array ``kind`` of ``col``, made by ``make`` the first time and kept."""
        key = (kind, col)
        if key not in self._arrays:
            self._arrays[key] = make()
        return self._arrays[key]

    def tokens(self, col: str) -> np.ndarray:
        """Each row's `value_token` of its normalised value in ``col`` (object array)."""
        def make() -> np.ndarray:
            codes, uniques = self.codes(col)
            return np.array([value_token(u) for u in uniques], dtype=object)[codes]
        return self._array("tokens", col, make)

    def texts(self, col: str) -> np.ndarray:
        """``col`` as text, row by row (``astype(str)``)."""
        return self._array("texts", col, lambda: self.df[col].astype(str).to_numpy())

    def numbers(self, col: str) -> np.ndarray:
        """``col`` as floats, row by row; NaN where a value is missing or not a number."""
        return self._array("numbers", col, lambda: pd.to_numeric(
            self.df[col].astype("object"), errors="coerce").astype(float).to_numpy())

    def present(self, col: str) -> np.ndarray:
        """Whether each row holds a value in ``col`` (``notna``)."""
        return self._array("present", col, lambda: self.df[col].notna().to_numpy())


def indexed(table: pd.DataFrame | Indexed) -> Indexed:
    """``table`` as an `Indexed` table (itself when it is one)."""
    return table if isinstance(table, Indexed) else Indexed(table)


class MissingColumn(LookupError):
    """A selection names a column the table does not have."""


def column(table: pd.DataFrame | Indexed, name: str,
           aliases: Mapping[str, str] | None = None) -> str:
    """The column ``name`` stands for (through ``aliases``); `MissingColumn` when absent."""
    col = (aliases or {}).get(name, name)
    df = table.df if isinstance(table, Indexed) else table
    if col not in df.columns:
        raise MissingColumn(f"the results have no column `{col}`")
    return col


def select_rows(table: pd.DataFrame | Indexed, where: dict[str, Any],
           aliases: Mapping[str, str] | None = None,
           columns: list[str] | None = None) -> pd.DataFrame:
    """The rows of ``table`` matching every condition of ``where`` (see `matches`); only the
    ``columns`` given (None: all). Taking a few columns matters: a verification selects
    thousands of times, and copying every column of a wide table each time took most of its
    time (45 s for a 5,670-row table)."""
    ix = indexed(table)
    mask = select_mask(ix, where, aliases)
    return ix.df[mask] if columns is None else ix.df.loc[mask, columns]


def select_mask(ix: Indexed, where: dict[str, Any],
                aliases: Mapping[str, str] | None = None) -> np.ndarray:
    """Which rows of ``ix`` match every condition of ``where`` (see `matches`), as a boolean
    array: each condition is tested once per distinct value of its column."""
    mask = np.ones(len(ix.df), dtype=bool)
    for name, cond in where.items():
        codes, uniques = ix.codes(column(ix, name, aliases))
        hit = np.fromiter((matches(u, cond) for u in uniques), dtype=bool, count=len(uniques))
        mask &= hit[codes] if len(codes) else mask
    return mask
