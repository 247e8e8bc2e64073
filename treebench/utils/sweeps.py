"""Sweep values and command-line sweep axes (no dependency on the config or the cells).

* A sweep axis in a config (``algorithms[*].params``, ``binarization.params``) is a list, an
  integer range ``"a..b"``, a comma string ``"1,2,all"`` or a literal ``{value: x}``;
  `expand_values` turns one into a list and `grid` takes the cartesian product of several.
* `treebench sweep` flags (``--k``, ``--depth``, ``--lambda``, ``--param NAME=VALUES``) set an
  axis on every algorithm of the config that takes the parameter; an alias flag maps to the first
  of its parameter names that each algorithm has (`SWEEP_AXES`), and `apply_axes` reports which
  one it became per algorithm, so that ``--lambda`` is never silently CART's ``ccp_alpha``.

This module imports neither the config's schema nor its expansion (`treebench.config.cells`),
which both read sweep values from it.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping
from typing import Any

from treebench.utils.ranges import int_problem

#: ``a..b`` (ends of up to 4,000 digits: Python reads no longer integer from text)
_RANGE = re.compile(r"^\s*(-?[0-9]{1,4000})\s*\.\.\s*(-?[0-9]{1,4000})\s*$")
#: the numbers a command-line value may be written as: ASCII digits only (Python's int() also
#: reads ``1_0`` as 10 and other scripts' digits, so a typo would be another number)
_INT = re.compile(r"^[+-]?[0-9]+$")
_FLOAT = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_FLOAT_WORDS = ("inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan")

#: command-line sweep flags → algorithm parameter names they set (first match per algorithm)
SWEEP_AXES: dict[str, tuple[str, ...]] = {
    "k": ("k",),
    "depth": ("max_depth",),
    "lambda": ("regularization", "lambda_", "lam", "ccp_alpha"),
}


class SweepFlagError(ValueError):
    """A sweep flag's value cannot be used; the message names the flag."""


def expand_values(v: Any) -> list[Any]:
    """A sweep axis as a list: lists stay, ``"a..b"`` is an integer range, ``{value: x}`` is the
    literal ``x``, a comma string ``"1,2,all"`` is split (numbers parsed), anything else is a
    single value."""
    if isinstance(v, dict) and set(v) == {"value"}:
        return [v["value"]]
    if isinstance(v, list):
        out: list[Any] = []
        for item in v:
            out.extend(expand_values(item) if isinstance(item, str) and _RANGE.match(item) else [item])
        return out
    if isinstance(v, str):
        m = _RANGE.match(v)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a:
                raise ValueError(f"range `{v}` is empty; write it as low..high")
            return list(range(a, b + 1))
        if "," in v:
            return [parse_scalar(p) for p in v.split(",") if p.strip()]
    return [v]


def parse_scalar(s: str) -> Any:
    """Parse a command-line value: int, float (ASCII digits, `_INT` and `_FLOAT`), true/false,
    none/null, else the string."""
    s = s.strip()
    low = s.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    if _INT.match(s):
        try:
            return int(s)
        except ValueError:  # longer than Python reads from text (4,300 digits)
            return s
    if _FLOAT.match(s) or low in _FLOAT_WORDS:
        return float(s)
    return s


def grid(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Cartesian product of the sweep axes in ``params`` (sorted keys, stable order)."""
    keys = sorted(params)
    axes = [expand_values(params[k]) for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


def axis_length(v: Any) -> int:
    """How many values the sweep axis ``v`` has (`expand_values`), without listing them."""
    if isinstance(v, dict) and set(v) == {"value"}:
        return 1
    if isinstance(v, list):
        return sum(axis_length(x) if isinstance(x, str) and _RANGE.match(x) else 1 for x in v)
    if isinstance(v, str):
        m = _RANGE.match(v)
        if m:
            return max(int(m.group(2)) - int(m.group(1)) + 1, 0)
        if "," in v:
            return sum(1 for p in v.split(",") if p.strip())
    return 1


def axis_integers(v: str) -> list[Any]:
    """The integers of the sweep axis string ``v`` that bound its values, without expanding it:
    both ends of ``"a..b"``, every integer item of ``"1,2,all"`` (for range checks)."""
    m = _RANGE.match(v)
    if m:
        return [int(m.group(1)), int(m.group(2))]
    if "," in v:
        return [x for x in (parse_scalar(p) for p in v.split(",") if p.strip())
                if isinstance(x, int) and not isinstance(x, bool)]
    return []


def grid_size(params: dict[str, Any]) -> int:
    """The number of points of ``grid(params)``, from the axes' lengths."""
    n = 1
    for v in params.values():
        n *= axis_length(v)
    return n


def parse_axis(flag: str, text: str, written: str | None = None) -> list[Any]:
    """Parse a command-line sweep value: ``1,2,4,all``, ``2..6`` or ``2..4,8``. A range stays
    one ``"a..b"`` item of the list (`expand_values` and `axis_length` read it), so that a
    grid too large to run is counted and refused before anything lists its values; `expand_axes`
    lists them. Integers are checked against the range of the parameter (`int_problem`). Raises
    `SweepFlagError` naming the flag as the user wrote it before its values, ``written``
    (``--param k=``; default ``--flag `` or ``--param NAME ``)."""
    written = written if written is not None else flag_name(flag) + " "
    vals: list[Any] = []
    key = SWEEP_AXES.get(flag, (flag,))[0]
    try:
        parts = [p.strip() for p in text.split(",")]
        if any(not p for p in parts) and any(parts):
            # `1,,2`: a value left out by a typo, not a list of two
            raise ValueError("an item between its commas is empty; give each value once, "
                             "e.g. 1,2,4")
        for part in [p for p in parts if p]:
            m = _RANGE.match(part)
            items = [int(m.group(1)), int(m.group(2))] if m else [parse_scalar(part)]
            for v in items:
                problem = int_problem(v, key)
                if problem:
                    raise ValueError(problem)
            if m and items[1] < items[0]:
                raise ValueError(f"range `{part}` is empty; write it as low..high")
            vals.append(f"{items[0]}..{items[1]}" if m else items[0])
    except ValueError as exc:
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise SweepFlagError(f"`{written}{shown}`: {exc}.") from None
    if not vals:
        raise SweepFlagError(f"`{written.strip()}` gives no values; give a comma list like 1,2,4 "
                             f"or a range like 2..6.")
    return vals


def is_range(v: Any) -> bool:
    """Whether ``v`` is an integer range ``"a..b"``."""
    return isinstance(v, str) and _RANGE.match(v) is not None


def expand_axes(axes: Mapping[str, list[Any]]) -> dict[str, list[Any]]:
    """Sweep axes (`parse_axis`) with their ranges listed: call it once the grid's size is
    checked."""
    return {k: expand_values(list(v)) for k, v in axes.items()}


def flag_name(flag: str) -> str:
    """How the user wrote the axis: ``--depth`` for a named flag, ``--param NAME`` otherwise."""
    return f"--{flag}" if flag in SWEEP_AXES else f"--param {flag}"


def apply_axes(
    algorithms: list[dict[str, Any]],
    axes: Mapping[str, list[Any]],
    parameters_of: Callable[[str], Mapping[str, Any]],
) -> dict[str, dict[str, str]]:
    """Set the sweep ``axes`` (flag or parameter name → values) in place on every algorithm
    entry (``{"name", "params", ...}`` dicts) that takes the parameter; explicit flags beat the
    config. Return, per flag, which parameter it became for each algorithm label. Raise
    `SweepFlagError` when no algorithm takes a flag's parameter."""
    applied: dict[str, dict[str, str]] = {}
    for flag, values in axes.items():
        names = SWEEP_AXES.get(flag, (flag,))
        hit: dict[str, str] = {}
        for alg in algorithms:
            known = parameters_of(alg["name"])
            for pname in names:
                if pname in known:
                    alg.setdefault("params", {})[pname] = list(values)
                    hit[alg.get("label") or alg["name"]] = pname
                    break
        if not hit:
            algs = ", ".join(sorted({a["name"] for a in algorithms}))
            raise SweepFlagError(
                f"`{flag_name(flag)}` sets parameter {' / '.join(names)}, which none of the config's "
                f"algorithms ({algs}) takes."
            )
        applied[flag] = hit
    return applied


def describe_applied(applied: Mapping[str, Mapping[str, str]]) -> list[str]:
    """``--lambda → regularization (gosdt), ccp_alpha (cart)`` lines for the sweep table."""
    lines = []
    for flag, per_alg in applied.items():
        parts = ", ".join(f"{p} ({a})" for a, p in sorted(per_alg.items()))
        lines.append(f"{flag_name(flag)} → {parts}")
    return lines
