"""Results columns, declared by the code that produces them.

A `Column` is one column of the results table: its name, its pandas dtype, a one-line
description and what produces it. The results schema (`treebench.results.schema`) declares the
identity, data-size, cost, outcome and provenance columns; the metric registry
(`treebench.metrics`) declares one column per metric and split; the learner base
(`treebench.algorithms.solve_info`) declares the solver-status columns every learner may
report; a learner declares its own further columns when it registers
(``@ALGORITHMS.register(..., columns=(...))``). The table accepts exactly the declared columns
plus the ``param_*``/``bparam_*`` parameter columns (docs/results-columns.md).

This module imports nothing of treebench, so that any producer can declare columns.
"""

from __future__ import annotations

from dataclasses import dataclass

#: pandas dtypes of results columns; all nullable ("string", "Int64", "Float64", "boolean")
DTYPES = ("string", "Int64", "Float64", "boolean")
#: the parts a results row is built from, in the table's column order
GROUPS = ("identity", "settings", "data", "metrics", "cost", "solver", "outcome", "provenance")


@dataclass(frozen=True)
class Column:
    """One declared results column. ``group`` is the part of the row it belongs to
    (`GROUPS`); ``producer`` says what fills it (a module, a metric, a learner)."""

    name: str
    dtype: str
    doc: str
    producer: str
    group: str

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"column `{self.name}`: dtype {self.dtype!r} is not one of "
                             f"{', '.join(DTYPES)}")
        if self.group not in GROUPS:
            raise ValueError(f"column `{self.name}`: group {self.group!r} is not one of "
                             f"{', '.join(GROUPS)}")


def declare(producer: str, group: str, *specs: tuple[str, str, str]) -> tuple[Column, ...]:
    """Columns from ``(name, dtype, doc)`` triples that share a producer and a group."""
    return tuple(Column(name, dtype, doc, producer, group) for name, dtype, doc in specs)


def merge(*parts: tuple[Column, ...] | list[Column]) -> dict[str, Column]:
    """name -> Column over ``parts`` in order; a name declared twice must have one dtype (the
    first declaration is kept), else ValueError naming both producers."""
    out: dict[str, Column] = {}
    for part in parts:
        for c in part:
            old = out.get(c.name)
            if old is None:
                out[c.name] = c
            elif old.dtype != c.dtype:
                raise ValueError(f"results column `{c.name}` is declared as {old.dtype} by "
                                 f"{old.producer} and as {c.dtype} by {c.producer}")
    return out
