"""Certificates across solvers: what the proven optima of one experiment must agree on.

Two solvers that prove their trees optimal for the same problem on the same training rows
must report the same objective. Within one results table, the rows of one *instance* (the same
``problem``, objective kind and weight, data, split, fold, seed, binarization, missing-value
handling and ``max_depth``; `INSTANCE`) are checked three ways (docs/objectives.md):

- every proven optimum (``optimal`` true, status ``ok``, a problem that is not `RESTRICTED`)
  has the same ``problem_objective``
  (and, for ``errors-then-nodes``, the same ``problem_tiebreak``);
- no tree that is not proven optimal (an anytime solver's incumbent, a timed-out search)
  has a better objective than a proven optimum;
- every lower bound a solver reports (``bound``, in the unit of its ``solver_objective_kind``)
  is at most every proven optimum, where that unit is the problem's (or, for
  ``errors-then-nodes``, its first key: errors).

Values are compared by the exact-integer rule (`same`): two whole numbers are equal only when
they are; other values are equal within a relative 1e-9 (floating sums of rates and weights
added in another order). `check_certificates` reads only columns of the table; it computes no
objective itself (`treebench.metrics.problem_objective` did, the same way for every learner).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from treebench.algorithms.objectives import RESTRICTED
from treebench.results.values import normalize_value, value_token

#: the columns whose values make one instance of a problem: rows equal on all of them solved
#: the same problem on the same training rows (columns a table lacks are left out)
INSTANCE = ("problem", "problem_objective_kind", "problem_weight", "dataset",
            "data_fingerprint", "split", "split_params", "seed", "fold", "binarizer",
            "binarizer_params", "missing_handling", "n_train", "param_max_depth")
#: the relative tolerance of `same` on values that are not whole numbers
REL_TOL = 1e-9
#: the relative tolerance of the bound rule: a solver's lower bound is its own floating figure
#: (the reference GOSDT package reports 0.0535714328 for a proven optimum of 3/56 =
#: 0.0535714286, 8e-8 apart), not a value recomputed from the tree
BOUND_REL_TOL = 1e-6
#: solver objective kinds whose ``bound`` bounds a problem objective kind from below
BOUND_UNITS = {"errors": ("errors", "errors-then-nodes"),
               "error_rate+lambda*leaves": ("error_rate+lambda*leaves",),
               "errors+alpha*path": ("errors+alpha*path",),
               "sse+alpha*path": ("sse+alpha*path",)}


def same(a: float, b: float) -> bool:
    """The exact-integer rule: whole numbers are equal only when they are equal (an error
    count of 10**10 differs from 10**10 + 1), other values within a relative `REL_TOL`."""
    if float(a).is_integer() and float(b).is_integer():
        return a == b
    return abs(a - b) <= REL_TOL * max(1.0, abs(a), abs(b))


def better(a: tuple[float, float | None], b: tuple[float, float | None]) -> bool:
    """Whether objective ``a`` (value, tie-break or None) is strictly better (lower) than
    ``b``: a lower value by the rule of `same`, or the same value and a lower tie-break."""
    if not same(a[0], b[0]):
        return a[0] < b[0]
    return a[1] is not None and b[1] is not None and a[1] < b[1]


@dataclass(frozen=True)
class Disagreement:
    """One broken certificate: ``kind`` is ``optima differ``, ``incumbent below optimum`` or
    ``bound above optimum``; ``text`` names the instance and the cells."""

    kind: str
    instance: str
    cells: tuple[str, ...]
    text: str


@dataclass
class Certificates:
    """The outcome of `check_certificates`: how many instances had two or more values to
    compare, how many comparisons were made, and what disagreed."""

    instances: int = 0
    comparisons: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.disagreements


@dataclass(frozen=True)
class _Row:
    cell: str
    label: str
    value: tuple[float, float | None] | None
    optimal: bool
    bound: float | None

    @property
    def name(self) -> str:
        return f"`{self.label}` (cell {self.cell})"


def _num(v: Any) -> float | None:
    v = normalize_value(v)
    if v is None or isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v) if math.isfinite(float(v)) else None


def _rows(group: pd.DataFrame) -> list[_Row]:
    out = []
    for r in group.to_dict("records"):
        obj = _num(r.get("problem_objective"))
        status = r.get("status")
        usable = status in ("ok", "timeout") and obj is not None
        tie = _num(r.get("problem_tiebreak")) if r.get("problem_objective_kind") == \
            "errors-then-nodes" else None
        bound = _num(r.get("bound"))
        if bound is not None and r.get("problem_objective_kind") not in \
                BOUND_UNITS.get(str(r.get("solver_objective_kind")), ()):
            bound = None  # a bound in the solver's own unit says nothing of this objective
        # a restricted problem's "optimal" is over the learner's restricted space (Top-k's k,
        # DPDT's candidates, a leaf size), which the instance does not name: no proven optimum
        proven = r.get("optimal") is True and r.get("problem") not in RESTRICTED
        out.append(_Row(str(r.get("cell_id")), str(r.get("algorithm_label")),
                        (obj, tie) if usable else None,
                        bool(usable and status == "ok" and proven), bound))
    return out


def _shown(value: tuple[float, float | None]) -> str:
    text = f"{value[0]:.12g}"
    return text if value[1] is None else f"{text} with {value[1]:.12g} nodes"


def instance_text(key: dict[str, Any]) -> str:
    """An instance named by its problem, dataset, fold, seed and depth (and binarizer)."""
    parts = [f"problem {key.get('problem')}"]
    if key.get("problem_weight"):
        parts[0] += f" (weight {key['problem_weight']:g})"
    for col, word in (("dataset", "dataset"), ("binarizer", "binarizer"), ("fold", "fold"),
                      ("seed", "seed"), ("param_max_depth", "max_depth")):
        if key.get(col) is not None:
            parts.append(f"{word} {key[col]}")
    return ", ".join(parts)


def _check_instance(rows: list[_Row], where: str, out: Certificates) -> None:
    optima = [r for r in rows if r.optimal]
    valued = [r for r in rows if r.value is not None]
    bounded = [r for r in rows if r.bound is not None]
    if not optima or len(valued) + len(bounded) < 2:
        return
    out.instances += 1
    first = optima[0]
    assert first.value is not None
    for r in optima[1:]:
        out.comparisons += 1
        assert r.value is not None
        if better(r.value, first.value) or better(first.value, r.value):
            out.disagreements.append(Disagreement(
                "optima differ", where, (first.cell, r.cell),
                f"{where}: {first.name} and {r.name} both claim optimal with objectives "
                f"{_shown(first.value)} and {_shown(r.value)}"))
    best = min(optima, key=lambda r: (r.value[0], r.value[1] or 0))  # type: ignore[index]
    assert best.value is not None
    for r in valued:
        if r.optimal:
            continue
        out.comparisons += 1
        assert r.value is not None
        if better(r.value, best.value):
            out.disagreements.append(Disagreement(
                "incumbent below optimum", where, (r.cell, best.cell),
                f"{where}: {r.name}, not proven optimal, has objective {_shown(r.value)}, "
                f"below the proven optimum {_shown(best.value)} of {best.name}"))
    low = min(optima, key=lambda r: r.value[0])  # type: ignore[index]
    assert low.value is not None
    for r in bounded:
        out.comparisons += 1
        assert r.bound is not None
        if r.bound > low.value[0] * (1 + BOUND_REL_TOL) + BOUND_REL_TOL:
            out.disagreements.append(Disagreement(
                "bound above optimum", where, (r.cell, low.cell),
                f"{where}: {r.name} reports the lower bound {r.bound:.12g}, above the proven "
                f"optimum {low.value[0]:.12g} of {low.name}"))


def check_certificates(table: pd.DataFrame) -> Certificates:
    """The certificates of ``table`` checked per instance (`INSTANCE`); rows without a
    problem objective (greedy learners, failed cells) take no part."""
    out = Certificates()
    if table is None or len(table) == 0 or "problem_objective" not in table.columns:
        return out
    keys = [c for c in INSTANCE if c in table.columns]
    has = table["problem_objective"].notna() | (
        table["bound"].notna() if "bound" in table.columns else False)
    sub = table[has.to_numpy(dtype=bool)]
    if sub.empty:
        return out
    tokens = sub[keys].apply(lambda col: col.map(lambda v: value_token(normalize_value(v))))
    for _, idx in tokens.groupby(keys, sort=True, dropna=False).groups.items():
        group = sub.loc[idx]
        first = group.iloc[0]
        key = {c: normalize_value(first[c]) for c in keys}
        _check_instance(_rows(group), instance_text(key), out)
    return out
