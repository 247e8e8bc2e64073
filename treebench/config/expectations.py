"""The schema of ``expect:`` items in a config: what a reproduction claims about its results.

An expectation names a selection of rows of the results table (``where:`` on any column), a
metric column, an aggregate over the selected rows (folds and seeds) and exactly one check:

- ``value`` with an ``abs`` or ``rel`` tolerance (a golden value from a paper's table),
- a bound ``ge`` and/or ``le``,
- ``compare``: a relation to another selection (``op`` ge/le and an ``offset``, or ``eq`` within
  ``tol``), e.g. "mean test accuracy of Top-k with k = 4 is at least that of k = 1 minus 0.005",
- ``monotone``: the aggregate never decreases (or never increases) along a sweep axis.

``across`` reduces in stages, in the order written: ``{dataset: mean}`` takes ``agg`` within
each dataset, then the mean over datasets; ``{dataset: mean, param_k: max}`` then takes the best
k. ``per`` repeats the whole check for each value of the listed columns (one verdict each).
``missing`` says what cells that did not finish do: ``fail`` (the default: the item fails with
that reason), ``ignore`` (they are left out) or ``anytime`` (a timed-out cell counts with the
best tree its solver returned). Every item carries ``source:`` (paper, table or figure) so
reports can cite it.

The evaluation lives in `treebench.verify`; this module only checks the shape, so that a bad
item is a `ConfigError` naming its key before anything runs.
"""

from __future__ import annotations

import math

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator,
)

from treebench.results import schema
from treebench.errors import did_you_mean
from treebench.utils.text import show

AGGS = ("mean", "median", "min", "max", "count")
REDUCERS = ("mean", "median", "min", "max")
WHERE_OPS = ("eq", "ne", "in", "ge", "gt", "le", "lt")
#: columns a ``where`` may name besides the schema's, with the column they stand for (the old
#: name ``algorithm`` of ``algorithm_label`` among them)
COLUMN_ALIASES = schema.ALIASES


def check_column(name: str, what: str = "column") -> str:
    """A results column (schema column, ``param_*`` or ``bparam_*``, or an alias); raise
    ValueError naming it otherwise."""
    col = COLUMN_ALIASES.get(name, name)
    if schema.is_declared(col):
        return col
    known = list(schema.declared()) + list(COLUMN_ALIASES)
    raise ValueError(
        f"unknown {what} `{name}`{did_you_mean(name, known)}; use a results column "
        f"(dataset, algorithm_label, seed, fold, status, ...), param_<name> or bparam_<name>"
    )


def check_numeric(col: str, agg: str) -> None:
    """Refuse a text column (``dataset``, ``status``, ...) as a claim's metric unless the claim
    counts rows: a mean or a bound of names has no number, and the verdict said the column was
    "missing" in every cell."""
    if agg == "count":
        return
    kinds = {c.name: c.dtype for c in schema.learner_columns(None)} | {
        n: c.dtype for n, c in schema.declared(None).items()}
    if kinds.get(col) in ("string", "str", "object"):
        raise ValueError(f"metric `{col}` holds text, not numbers; a claim measures a number "
                         f"column such as test_accuracy (with `agg: count` any column counts "
                         f"the selected rows)")


def _check_where(where: dict[str, Any]) -> dict[str, Any]:
    """``where`` with each key as the column it names (an alias such as ``algorithm`` becomes
    ``algorithm_label``, so that an item's and its comparison's conditions merge by column),
    each condition checked by `_check_condition`."""
    out: dict[str, Any] = {}
    for col, cond in where.items():
        canon = check_column(col, "where column")
        if canon in out:
            raise ValueError(f"where names the column `{canon}` twice (`{col}` is another "
                             f"name for it)")
        out[canon] = cond
        _check_condition(col, canon, cond)
    return out


#: the operators that order numbers
ORDER_OPS = ("ge", "gt", "le", "lt")
#: the pandas dtypes of declared columns that hold numbers
NUMBER_DTYPES = ("Int64", "Float64", "int64", "float64")


def _is_condition(x: Any) -> bool:
    """Whether ``x`` is a mapping of where operators (``{ge: 2}``)."""
    return isinstance(x, dict) and bool(x) and all(op in WHERE_OPS for op in x)


def number_column(col: str) -> bool:
    """Whether the declared column ``col`` holds numbers (False for text, true/false and
    parameter columns, whose values are whatever the config gives)."""
    kinds = {c.name: c.dtype for c in schema.learner_columns(None)} | {
        n: c.dtype for n, c in schema.declared(None).items()}
    return kinds.get(col) in NUMBER_DTYPES


def condition_values(cond: Any) -> list[Any]:
    """The values a where condition compares with: the value itself, a list's items, or an
    operator mapping's values (the items of its ``in`` list)."""
    if isinstance(cond, dict):
        return [x for op, x in cond.items() if op != "in"] + list(cond.get("in") or [])
    return list(cond) if isinstance(cond, list) else [cond]


def written(x: Any) -> str:
    """``x`` as a message quotes it: a boolean as YAML writes it (``true``), else `show`."""
    return str(x).lower() if isinstance(x, bool) else show(x)


def _check_condition(col: str, canon: str, cond: Any) -> None:
    """Refuse a condition that would select nothing, or everything, by mistake: an empty
    operator mapping (it would drop the condition), ``.nan`` (no value equals or orders with
    it), an order operator (ge/gt/le/lt) given anything but a number, a condition nested in
    ``eq``, ``ne`` or ``in``, and a boolean compared with a declared column of numbers."""
    if isinstance(cond, dict):
        if not cond:
            raise ValueError(f"where `{col}`: empty condition `{{}}`; give a value or operators "
                             f"such as {{ge: 4}} ({', '.join(WHERE_OPS)})")
        bad = [op for op in cond if op not in WHERE_OPS]
        if bad:
            raise ValueError(
                f"where `{col}`: unknown operator `{bad[0]}`; use {', '.join(WHERE_OPS)}"
            )
        if "in" in cond and not isinstance(cond["in"], list):
            raise ValueError(f"where `{col}`: `in` takes a list of values")
        for op in ORDER_OPS:
            if op in cond and (not isinstance(cond[op], int | float) or isinstance(cond[op], bool)):
                raise ValueError(f"where `{col}`: `{op}` orders numbers, so it takes a number, "
                                 f"not {written(cond[op])}")
    for x in condition_values(cond):
        if isinstance(x, float) and math.isnan(x):
            raise ValueError(f"where `{col}`: `.nan` is no value a row can hold or be ordered "
                             f"by; select rows without a value with `null`")
        if _is_condition(x):
            raise ValueError(f"where `{col}`: a condition cannot nest inside another "
                             f"({show(x)}); write its operators side by side, as {{ge: 2, le: 4}}")
        if isinstance(x, bool) and number_column(canon):
            raise ValueError(f"where `{col}`: the column holds numbers, not a boolean (YAML "
                             f"reads true/false/yes/no/on/off as booleans)")


def _finite(v: Any) -> Any:
    """Refuse ``.nan``, ``.inf`` and numbers too large for a float (``1e400``): no aggregate
    can equal, reach or stay within them, and the verdicts could not be written; and a YAML
    boolean, which pydantic would read as 1 or 0 (``abs: true`` a tolerance of 1)."""
    if isinstance(v, bool):
        raise ValueError("expected a number, not a boolean (YAML reads true/false/yes/no/on/off "
                         "as booleans)")
    try:
        x = float(v) if isinstance(v, int | float | str) and not isinstance(v, bool) else None
    except (ValueError, OverflowError):
        x = None
    if x is not None and not math.isfinite(x):
        raise ValueError("expected a finite number (.nan, .inf and numbers beyond 1.8e308 "
                         "are not); give the number the claim states")
    return v


#: a number of an expectation: finite (a YAML ``.nan``/``.inf`` or ``1e400`` is refused)
Finite = Annotated[float, BeforeValidator(_finite), Field(allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Compare(_Strict):
    """The other side of a relation: a selection (``where`` merged over the item's own, a
    ``null`` value drops a key) with the item's metric, agg and across unless given here."""

    where: dict[str, Any] = Field(default_factory=dict)
    metric: str | None = None
    agg: Literal["mean", "median", "min", "max", "count"] | None = None
    across: dict[str, Literal["mean", "median", "min", "max"]] | None = None
    op: Literal["ge", "le", "eq"] = "ge"
    offset: Finite = 0.0
    tol: Finite = Field(0.0, ge=0, description="for op eq: the largest |difference| that passes")

    @field_validator("where")
    @classmethod
    def _where(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _check_where(v)  # a null value (it drops the key) passes as it is

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str | None) -> str | None:
        return None if v is None else check_column(v, "metric")

    @field_validator("across")
    @classmethod
    def _across(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        return None if v is None else {check_column(c, "across column"): a for c, a in v.items()}


class Monotone(_Strict):
    """The aggregate along ``along`` (sorted: numbers ascending, then strings such as "all")
    never drops by more than ``tol`` (``increasing``) or never rises by more than ``tol``."""

    along: str
    direction: Literal["increasing", "decreasing"] = "increasing"
    tol: Finite = Field(0.0, ge=0)

    @field_validator("along")
    @classmethod
    def _along(cls, v: str) -> str:
        return check_column(v, "monotone axis")


class Expectation(_Strict):
    """One checked claim (see the module docstring)."""

    name: str | None = None
    source: str = Field(min_length=1)
    where: dict[str, Any] = Field(default_factory=dict)
    metric: str
    agg: Literal["mean", "median", "min", "max", "count"] = "mean"
    across: dict[str, Literal["mean", "median", "min", "max"]] = Field(default_factory=dict)
    per: list[str] = Field(default_factory=list)
    missing: Literal["fail", "ignore", "anytime"] = "fail"
    value: Finite | None = None
    abs: Finite | None = Field(None, ge=0)
    rel: Finite | None = Field(None, ge=0)
    ge: Finite | None = None
    le: Finite | None = None
    compare: Compare | None = None
    monotone: Monotone | None = None
    note: str = ""

    @field_validator("where")
    @classmethod
    def _where(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _check_where(v)

    @field_validator("metric")
    @classmethod
    def _metric(cls, v: str) -> str:
        return check_column(v, "metric")

    @field_validator("per")
    @classmethod
    def _per(cls, v: list[str]) -> list[str]:
        return [check_column(c, "per column") for c in v]

    @field_validator("across")
    @classmethod
    def _across(cls, v: dict[str, str]) -> dict[str, str]:
        return {check_column(c, "across column"): a for c, a in v.items()}

    @model_validator(mode="after")
    def _one_check(self) -> Expectation:
        kinds = [k for k, on in (("value", self.value is not None),
                                 ("bound", self.ge is not None or self.le is not None),
                                 ("compare", self.compare is not None),
                                 ("monotone", self.monotone is not None)) if on]
        if len(kinds) != 1:
            got = ", ".join(kinds) if kinds else "none"
            raise ValueError(
                "give exactly one check: `value` (with `abs` or `rel`), `ge`/`le`, `compare` "
                f"or `monotone` (got {got})"
            )
        check_numeric(self.metric, self.agg)
        if self.compare is not None:
            check_numeric(self.compare.metric or self.metric, self.compare.agg or self.agg)
        if (self.abs is not None or self.rel is not None) and self.value is None:
            raise ValueError("`abs` and `rel` are tolerances of `value`; give `value` too")
        if self.value is not None and self.abs is not None and self.rel is not None:
            raise ValueError("give one tolerance of `value`: `abs` or `rel`, not both")
        if self.ge is not None and self.le is not None and self.ge > self.le:
            raise ValueError(f"`ge` ({self.ge}) is above `le` ({self.le}); nothing can pass")
        if self.agg == "count" and self.across:
            raise ValueError("`across` reduces aggregates of values; it does not apply to count")
        if self.monotone is not None and self.monotone.along in self.across:
            raise ValueError(f"`monotone.along` ({self.monotone.along}) is also in `across`")
        return self

    @property
    def kind(self) -> str:
        if self.value is not None:
            return "value"
        if self.compare is not None:
            return "compare"
        if self.monotone is not None:
            return "monotone"
        return "bound"
