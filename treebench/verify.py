"""Check a results table against the expectations of its config (docs/reproductions/index.md).

`verify_table` evaluates `Expectation`s (schema in `treebench.config.expectations`) on a results
table and returns one `Verdict` per check: the measured value, the expected one, their difference
and pass/fail. It reads columns and aggregates them (mean, median, min, max, count); it computes no
metric (metrics are already columns of the results table).

Missing cells never pass silently: a value aggregate over a selection that holds cells whose
status is not ``ok`` (timeouts, errors, crashes) fails with that reason, unless the item says
``missing: ignore`` (drop them) or ``missing: anytime`` (use the best tree that a timed-out
anytime solver returned, fail on cells with no value); an empty selection fails too. ``agg: count`` counts rows of any status, so
``{where: {status: timeout}, agg: count, le: 0}`` bounds the number of timeouts.

`verify_results` reads a results directory: the expectations come from its ``manifest.json``
(the resolved config of the run, including an applied profile) or from a config file; a folder
holding several results directories is verified one experiment at a time (`verify_path`).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from treebench.errors import ConfigError, UserError
from treebench.results.values import (Indexed, MissingColumn, column, indexed, normalize_value,
                                      select_mask, select_rows, sort_key, value_token)
from treebench.execute.experiments import make_record
from treebench.execute import experiments as xp
from treebench.results.certificates import check_certificates
from treebench.results.index import quarantined_cells
from treebench.results import schema
from treebench.results.schema import ALIASES  # the column aliases a claim may name
from treebench.results.store import current_table, holds_results, results_dirs

if TYPE_CHECKING:  # pydantic, which the claims' schema needs, loads when claims are parsed
    from treebench.config.expectations import Expectation

#: exit code of `treebench verify` (and `run --verify`) when an expectation fails
EXIT_FAILED = 5
_EPS = 1e-12  # floating-point slack on every comparison
HEADER = ["expectation", "source", "measured", "expected", "difference", "result"]


@dataclass
class Verdict:
    """The outcome of one check (one per ``per`` group)."""

    item: str
    source: str
    kind: str
    measured: float | None
    measured_text: str
    expected_text: str
    difference: float | None
    passed: bool
    reason: str = ""

    def row(self) -> list[str]:
        diff = "" if self.difference is None else f"{self.difference:+.4g}"
        result = "pass" if self.passed else "FAIL" + (f": {self.reason}" if self.reason else "")
        return [self.item, self.source, self.measured_text, self.expected_text, diff, result]


@dataclass
class Verification:
    """Every verdict of one experiment's results."""

    experiment: str
    directory: Path | None
    profile: str | None
    verdicts: list[Verdict] = field(default_factory=list)
    note: str = ""

    @property
    def n_failed(self) -> int:
        return sum(not v.passed for v in self.verdicts)

    @property
    def passed(self) -> bool:
        return self.n_failed == 0

    def rows(self) -> list[list[str]]:
        return [v.row() for v in self.verdicts]

    def headline(self) -> str:
        who = self.experiment + (f" (profile {self.profile})" if self.profile else "")
        if not self.verdicts:
            return f"{who}: {self.note or 'no expectations to check'}"
        n = len(self.verdicts)
        if self.passed:
            return f"{who}: all {n} expectation(s) hold"
        return f"{who}: {self.n_failed} of {n} expectation(s) FAIL"


class _Fail(Exception):
    """An expectation that cannot be measured (missing cells, empty selection)."""


# ----------------------------------------------------------------------------- values


def _column(table: pd.DataFrame | Indexed, name: str) -> str:
    try:
        return column(table, name, ALIASES)
    except MissingColumn as exc:
        raise _Fail(str(exc)) from None


def select(table: pd.DataFrame | Indexed, where: dict[str, Any],
           wanted: list[str] | None = None) -> pd.DataFrame:
    """The rows of ``table`` matching every condition of ``where`` (a value, a list of values,
    or a mapping of operators eq/ne/in/ge/gt/le/lt); with ``wanted``, only the columns those
    names stand for that the table has (a missing one is reported by its reader)."""
    columns = None
    if wanted is not None:
        df = table.df if isinstance(table, Indexed) else table
        columns = list(dict.fromkeys(c for c in (ALIASES.get(n, n) for n in wanted)
                                     if c in df.columns))
    try:
        return select_rows(table, where, ALIASES, columns)
    except MissingColumn as exc:
        raise _Fail(str(exc)) from None


def _where_text(where: dict[str, Any]) -> str:
    def cond_text(c: Any) -> str:
        if isinstance(c, dict):
            sym = {"eq": "=", "ne": "≠", "in": "∈", "ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
            return " ".join(f"{sym[o]}{_fmt_cond(x)}" for o, x in c.items())
        if isinstance(c, list):
            return "∈" + _fmt_cond(c)
        return "=" + _fmt_cond(c)

    return ", ".join(f"{k}{cond_text(c)}" for k, c in where.items())


def _fmt_cond(x: Any) -> str:
    if isinstance(x, list):
        return "{" + ",".join(str(normalize_value(y)) for y in x) + "}"
    return str(normalize_value(x))


def _token(v: Any) -> str:
    return value_token(normalize_value(v))


def _reduce(values: pd.Series | np.ndarray | list[float], how: str) -> float:
    arr = np.asarray(values, dtype=float)
    return float({"mean": np.mean, "median": np.median, "min": np.min, "max": np.max}[how](arr))


def measure(table: pd.DataFrame | Indexed, where: dict[str, Any], metric: str, agg: str,
            across: dict[str, str], missing: str) -> tuple[float, int]:
    """The aggregate of ``metric`` over the rows selected by ``where``, reduced ``across``
    columns in order; return (value, number of rows used). Raise `_Fail` with the reason when
    the selection is empty or holds cells that did not finish (``missing: fail``).

    Works on the table's per-column arrays (`Indexed`), no frame per call: a verification
    measures thousands of times (a monotone claim once per point of its axis)."""
    ix = indexed(table)
    try:
        idx = np.flatnonzero(select_mask(ix, where, ALIASES))
    except MissingColumn as exc:
        raise _Fail(str(exc)) from None
    if not len(idx):
        raise _Fail(f"no results row matches {_where_text(where) or 'the (empty) selection'}")
    if agg == "count" and "status" in where:  # counts cells by their status, as they are
        return float(len(idx)), len(idx)
    col = None if agg == "count" else _column(ix, metric)
    status = ix.texts("status")[idx]
    usable = status == "ok"
    if missing == "anytime":  # a timed-out anytime solver still returned its best tree
        timed_out = status == "timeout"
        usable |= timed_out if col is None else timed_out & ix.present(col)[idx]
    if missing != "ignore" and not usable.all():
        bad = Counter(status[~usable].tolist())
        counts = ", ".join(f"{s} {n}" for s, n in sorted(bad.items()))
        raise _Fail(f"{int((~usable).sum())} of {len(idx)} selected cells did not finish ({counts})")
    idx = idx[usable]
    if not len(idx):
        raise _Fail("no selected cell finished")
    if col is None:  # count: the finished cells (every selected one, unless `missing: ignore`)
        return float(len(idx)), len(idx)
    vals = ix.numbers(col)[idx]
    nan = np.isnan(vals)
    if nan.any():
        text = nan & ix.present(col)[idx]  # a value that is there, and no number
        if text.any():
            example = ix.texts(col)[idx][np.flatnonzero(text)[0]]
            raise _Fail(f"`{col}` holds text, not numbers, in {int(text.sum())} of {len(vals)} "
                        f"finished cells (e.g. {example!r}); a claim measures a number column")
        raise _Fail(f"`{col}` is missing in {int(nan.sum())} of {len(vals)} finished cells")
    if not across:
        return _reduce(vals, agg), len(idx)
    keys = [ix.tokens(_column(ix, k))[idx] for k in across]
    return _reduce_across(vals, keys, agg, list(across.values())), len(idx)


def _reduce_across(vals: np.ndarray, keys: list[np.ndarray], agg: str, hows: list[str]) -> float:
    """``vals`` reduced with ``agg`` within each combination of the ``keys`` (value tokens, one
    array per column), then with ``hows[i]`` over the values of key ``i``, in order: the first
    key's values are reduced with ``hows[0]`` within each combination of the remaining keys,
    and so on. Groups are taken in the order of their keys and each group's values in row
    order, so every float sum runs in one fixed order."""
    groups: dict[tuple[str, ...], list[float]] = {}
    for i, key in enumerate(zip(*keys, strict=True)):
        groups.setdefault(key, []).append(vals[i])
    items = [(k, _reduce(groups[k], agg)) for k in sorted(groups)]
    for how in hows[:-1]:
        rest: dict[tuple[str, ...], list[float]] = {}
        for k, v in items:
            rest.setdefault(k[1:], []).append(v)
        items = [(k, _reduce(rest[k], how)) for k in sorted(rest)]
    return _reduce([v for _, v in items], hows[-1])


def _fmt(x: float | None, metric: str = "", decimals: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if float(x).is_integer() and abs(x) < 1e12:
        return f"{int(x)}"
    return f"{x:.{decimals}f}" if abs(x) < 1e4 else f"{x:.{max(decimals, 4)}g}"


def _decimals(*steps: float | None) -> int:
    """Decimals that show a difference as small as the smallest positive ``steps`` (a
    tolerance, or the precision a bound is written with): at least 4, at most 12."""
    need = 4
    for step in steps:
        if step is not None and 0 < step < 1e-4:
            need = max(need, min(12, math.ceil(-math.log10(step) - 1e-9)))
    return need


def _written_step(v: float | None) -> float | None:
    """The last decimal place of ``v`` as written (0.325647 → 1e-6)."""
    if v is None or float(v).is_integer():
        return None
    text = repr(float(v))
    if "e" in text:
        return abs(float(v)) / 10
    return 10.0 ** -len(text.split(".")[1])


def _tolerance(e: Expectation) -> float:
    return e.abs if e.abs is not None else (e.rel * abs(e.value) if e.rel is not None else 0.0)


# ----------------------------------------------------------------------------- checks
def item_name(e: Expectation, index: int) -> str:
    """How a claim is named in verdicts and the reproductions page: its ``name``, else its
    position, aggregate and metric (and selection)."""
    if e.name:
        return e.name
    parts = [f"#{index + 1} {e.agg} {e.metric}"]
    if e.where:
        parts.append(_where_text(e.where))
    if e.across:
        parts.append("over " + ", ".join(f"{k} ({v})" for k, v in e.across.items()))
    return " · ".join(parts)


def _merge_where(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    return out


def _check(table: pd.DataFrame, e: Expectation, where: dict[str, Any], name: str) -> Verdict:
    kind = e.kind
    expected_text = _expected_text(e)
    try:
        if kind == "monotone":
            return _check_monotone(table, e, where, name)
        m, _ = measure(table, where, e.metric, e.agg, e.across, e.missing)
        if kind == "value":
            tol = _tolerance(e)
            diff = m - e.value
            ok = abs(diff) <= tol + _EPS + 1e-9 * abs(e.value)
            shown = _fmt(m, decimals=_decimals(tol, _written_step(e.value)))
            return Verdict(name, e.source, kind, m, shown, expected_text, diff, ok,
                           "" if ok else f"off by {abs(diff):.4g} (tolerance {tol:.4g})")
        if kind == "bound":
            ok = (e.ge is None or m >= e.ge - _EPS) and (e.le is None or m <= e.le + _EPS)
            ref = e.ge if e.ge is not None and (e.le is None or m < e.ge) else e.le
            diff = m - ref
            shown = _fmt(m, decimals=_decimals(_written_step(e.ge), _written_step(e.le)))
            return Verdict(name, e.source, kind, m, shown, expected_text, diff, ok,
                           "" if ok else "outside the bound")
        c = e.compare
        assert c is not None
        owhere = _merge_where(where, c.where)
        other, _ = measure(table, owhere, c.metric or e.metric, c.agg or e.agg,
                           e.across if c.across is None else c.across, e.missing)
        ref = other + c.offset
        if c.op == "eq":
            ok = abs(m - ref) <= c.tol + _EPS
        else:
            ok = m >= ref - _EPS if c.op == "ge" else m <= ref + _EPS
        sym = {"ge": "≥", "le": "≤", "eq": "="}[c.op]
        off = f" {'+' if c.offset >= 0 else '−'} {abs(c.offset):g}" if c.offset else ""
        tol = f" ± {c.tol:g}" if c.op == "eq" and c.tol else ""
        shown = _present(table, owhere, {k: v for k, v in c.where.items() if v is not None})
        text = f"{sym} {_fmt(ref)}{tol} ({_fmt(other)}{off} at {_where_text(shown)})"
        return Verdict(name, e.source, kind, m, _fmt(m), text, m - ref, ok,
                       "" if ok else "relation does not hold")
    except _Fail as exc:
        return Verdict(name, e.source, kind, None, "n/a", expected_text, None, False, str(exc))


def _present(table: pd.DataFrame | Indexed, where: dict[str, Any],
             shown: dict[str, Any]) -> dict[str, Any]:
    """``shown`` with each list condition cut to the values the selected rows hold, so that a
    verdict never names values the results do not have (a profile that ran fewer of them)."""
    rows = select(table, where, list(shown))
    out = dict(shown)
    for k, cond in shown.items():
        vals = cond if isinstance(cond, list) else cond.get("in") if isinstance(cond, dict) and \
            set(cond) == {"in"} else None
        if vals is None or k not in rows.columns and ALIASES.get(k, k) not in rows.columns:
            continue
        col = rows[ALIASES.get(k, k)]
        have = {_token(v) for v in col}
        kept = [v for v in vals if _token(v) in have]
        out[k] = kept if isinstance(cond, list) else {"in": kept}
    return out


def _check_monotone(table: pd.DataFrame, e: Expectation, where: dict[str, Any],
                    name: str) -> Verdict:
    mono = e.monotone
    assert mono is not None
    rows = select(table, where, [mono.along])
    if rows.empty:
        raise _Fail(f"no results row matches {_where_text(where) or 'the selection'}")
    col = _column(rows, mono.along)
    values = {}
    for v in rows[col]:
        values.setdefault(_token(v), normalize_value(v))
    axis = sorted(values.values(), key=sort_key)
    if len(axis) < 2:
        raise _Fail(f"`{col}` takes {len(axis)} value(s) in the selection; monotonicity needs two")
    seq, kept = [], []
    for v in axis:
        try:
            seq.append(measure(table, {**where, col: {"eq": v}}, e.metric, e.agg, e.across,
                               e.missing)[0])
            kept.append(v)
        except _Fail:
            if e.missing != "ignore":
                raise
            # missing: ignore drops an axis point none of whose cells finished
    axis = kept
    if len(axis) < 2:
        raise _Fail(f"`{col}` has {len(axis)} point(s) with finished cells; monotonicity needs two")
    steps = np.diff(np.asarray(seq))
    if mono.direction == "decreasing":
        steps = -steps
    worst = float(steps.min())
    ok = worst >= -mono.tol - _EPS
    at = int(np.argmin(steps))
    text = " → ".join(f"{_fmt(s)}" for s in seq) if len(seq) <= 6 else \
        f"{_fmt(seq[0])} → … → {_fmt(seq[-1])} ({len(seq)} values)"
    reason = "" if ok else (f"{'drops' if mono.direction == 'increasing' else 'rises'} by "
                            f"{-worst:.4g} from {col}={axis[at]} to {axis[at + 1]}")
    return Verdict(name, e.source, "monotone", None, text, _expected_text(e), worst, ok, reason)


def _expected_text(e: Expectation) -> str:
    if e.kind == "value":
        assert e.value is not None
        d = _decimals(_tolerance(e), _written_step(e.value))
        if e.rel is not None:
            return f"{_fmt(e.value, decimals=d)} ± {100 * e.rel:g} %"
        return f"{_fmt(e.value, decimals=d)} ± {e.abs or 0:g}"
    if e.kind == "bound":
        d = _decimals(_written_step(e.ge), _written_step(e.le))
        if e.ge is not None and e.le is not None:
            return f"in [{_fmt(e.ge, decimals=d)}, {_fmt(e.le, decimals=d)}]"
        return f"≥ {_fmt(e.ge, decimals=d)}" if e.ge is not None else f"≤ {_fmt(e.le, decimals=d)}"
    if e.kind == "monotone":
        m = e.monotone
        assert m is not None
        return f"{'non-decreasing' if m.direction == 'increasing' else 'non-increasing'} " \
               f"along {m.along}" + (f" (tol {m.tol:g})" if m.tol else "")
    c = e.compare
    assert c is not None
    shown = {k: v for k, v in c.where.items() if v is not None}
    return f"{ {'ge': '≥', 'le': '≤', 'eq': '='}[c.op]} {_where_text(shown)}" + \
        (f" {c.offset:+g}" if c.offset else "")


def _per_groups(table: pd.DataFrame, e: Expectation) -> list[dict[str, Any]]:
    """One ``where`` addition per combination of the ``per`` columns present in the selection."""
    if not e.per:
        return [{}]
    rows = select(table, e.where, list(e.per))
    cols = [_column(table, c) for c in e.per]
    combos: dict[tuple[str, ...], tuple[Any, ...]] = {}
    for r in rows[cols].itertuples(index=False, name=None):  # each column keeps its type
        vals = tuple(normalize_value(v) for v in r)
        combos.setdefault(tuple(_token(v) for v in vals), vals)
    ordered = sorted(combos.values(), key=lambda vs: tuple(sort_key(v) for v in vs))
    return [{c: {"eq": v} for c, v in zip(cols, vals, strict=True)} for vals in ordered]


def verify_table(table: pd.DataFrame | Indexed, expectations: list[Expectation]) -> list[Verdict]:
    """One verdict per expectation (per ``per`` group) on ``table``."""
    out: list[Verdict] = []
    table = indexed(table)  # normalise each column once for all the selections below
    for i, e in enumerate(expectations):
        base = item_name(e, i)
        try:
            groups = _per_groups(table, e)
        except _Fail as exc:
            out.append(Verdict(base, e.source, e.kind, None, "n/a", _expected_text(e), None,
                               False, str(exc)))
            continue
        if not groups:
            out.append(Verdict(base, e.source, e.kind, None, "n/a", _expected_text(e), None,
                               False, f"no results row matches {_where_text(e.where)}"))
        for g in groups:
            label = base if not g else base + " [" + ", ".join(
                f"{k}={v['eq']}" for k, v in g.items()) + "]"
            out.append(_check(table, e, {**e.where, **g}, label))
    return out


#: the name and source of the built-in claim every experiment has (`certificate_verdicts`)
CERTIFICATES = "certificates across solvers (built in)"
CERTIFICATES_SOURCE = "treebench: proven optima of one problem agree (docs/objectives.md)"
#: disagreements a failed certificate verdict names before it says how many more there are
SHOWN_DISAGREEMENTS = 5


def certificate_verdicts(table: pd.DataFrame | Indexed) -> list[Verdict]:
    """The built-in claim of every experiment, checked on ``table``
    (`treebench.results.certificates`): cells of one problem instance whose solvers claim
    optimality agree on the objective, no incumbent beats a proven optimum and no lower bound
    exceeds one. One verdict, naming the cells of each disagreement; none when the table has
    no instance with a proven optimum and a second value to compare it with."""
    df = table.df if isinstance(table, Indexed) else table
    found = check_certificates(df)
    if not found.instances:
        return []
    bad = found.disagreements
    measured = f"{found.comparisons} comparison(s) on {found.instances} instance(s)"
    expected = "no disagreement"
    if not bad:
        return [Verdict(CERTIFICATES, CERTIFICATES_SOURCE, "certificate", 0.0, measured,
                        expected, None, True)]
    shown = [x.text for x in bad[:SHOWN_DISAGREEMENTS]]
    if len(bad) > SHOWN_DISAGREEMENTS:
        shown.append(f"and {len(bad) - SHOWN_DISAGREEMENTS} more")
    return [Verdict(CERTIFICATES, CERTIFICATES_SOURCE, "certificate", float(len(bad)),
                    f"{len(bad)} disagreement(s) in {measured}", expected, None, False,
                    "; ".join(shown))]


# ----------------------------------------------------------------------------- directories
def parse_expectations(items: list[Any], source: str) -> list[Expectation]:
    if not items:
        return []  # the schemas (pydantic) load only for claims
    from pydantic import ValidationError

    from treebench.config import error_location, pydantic_message  # one wording for config errors
    from treebench.config.expectations import Expectation

    out = []
    for i, item in enumerate(items):
        try:
            out.append(Expectation.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            raise ConfigError(f"{source}: key `expect[{i}].{error_location(err.get('loc', ()))}`: "
                              f"{pydantic_message(err)}.") from None
    return out


def _records_from_config(config: str | Path, profile: str | None) -> list[dict[str, Any]]:
    """The experiment record of a config file: its claims and exactly the cells it defines."""
    from treebench.config.cells import expand_all
    from treebench.config import load_config

    exp = load_config(config, profile=profile)
    return [make_record(exp, expand_all(exp).cells, None, "verify")]


def _records_from_manifest(d: Path, profile: str | None) -> list[dict[str, Any]]:
    """The records of the runs recorded in ``d``'s manifest whose claims apply."""
    man = xp.read_manifest(d)
    if man is None:
        raise UserError(
            f"{d}: no manifest.json, so treebench cannot tell which experiment these results "
            f"belong to or what it claims; verify with --config CONFIG (its claims are checked "
            f"on the cells it defines), or run that config again into this folder to rewrite it."
        )
    recs = xp.claim_records(man)
    if profile is None:
        return recs
    mine = [r for r in recs if r.get("profile") == profile]
    if not mine:
        ran = sorted({str(r.get("profile")) for r in recs if r.get("profile")})
        raise UserError(
            f"{d}: these results were run with "
            f"{'profile ' + ', '.join(ran) if ran else 'no profile'}; to check them against "
            f"profile `{profile}`, give its config with --config."
        )
    return mine


def verify_dir(results_dir: str | Path, *, config: str | Path | None = None,
               profile: str | None = None, all_cells: bool = False,
               table: pd.DataFrame | None = None) -> list[Verification]:
    """One `Verification` per experiment recorded in ``results_dir`` (or for ``config``):
    its claims checked on exactly the cells it defines (``all_cells``: on every cell of the
    folder). A defined cell with no usable result fails the claims that select it. ``table``
    is the folder's results table when the caller has it (else it is read, or rebuilt from the
    cell files when stale)."""
    d = Path(results_dir)
    recs = _records_from_config(config, profile) if config is not None else \
        _records_from_manifest(d, profile)
    notes: list[str] = []
    current = None
    if table is None:
        table, notes, current = _table_of(d)
    unusable = quarantined_cells(d)
    if current is not None:
        unusable.update({Path(f).stem: why for f, why in current.problems.items()})
    out = []
    for rec in recs:
        cfg = rec.get("config") or {}
        v = Verification(str(rec.get("name")), d, rec.get("profile"))
        src = str(config) if config is not None else str(d / xp.MANIFEST)
        items = parse_expectations(cfg.get("expect") or [], src)
        sub, more = (table, []) if all_cells else xp.claim_table(table, rec, unusable)
        built_in = certificate_verdicts(sub)
        if not items:
            v.verdicts = built_in
            v.note = "; ".join((notes + more) if built_in else
                               ["the config states no expectations: nothing to check"])
            out.append(v)
            continue
        v.verdicts = verify_table(sub, items) + built_in
        v.note = "; ".join(notes + more)
        out.append(v)
    if not out:
        out.append(Verification(d.name, d, profile,
                                note="no run of a config is recorded here: nothing to check"))
    return out


def _table_of(d: Path):
    if not (d / "cells").is_dir() and not (d / "results.parquet").is_file():
        raise UserError(f"{d}: no results here; run the experiment first.")
    try:
        return current_table(d)
    except schema.SchemaError as exc:
        raise UserError(f"{d}: the results do not follow the schema: {exc}.") from None


def verify_results(results_dir: str | Path, *, config: str | Path | None = None,
                   profile: str | None = None, all_cells: bool = False) -> Verification:
    """Verify one results directory holding one experiment (the first when it holds more)."""
    return verify_dir(results_dir, config=config, profile=profile, all_cells=all_cells)[0]


def experiment_dirs(path: str | Path) -> list[Path]:
    """``path`` itself when it holds results (cells, a manifest or a table), else the results
    directories below it (one experiment each, sorted, at any depth). Raise `UserError` when
    there is none."""
    p = Path(path)
    if holds_results(p):
        return [p]
    if not p.is_dir():
        raise UserError(f"{p}: no such results directory.")
    found = results_dirs(p)
    if not found:
        raise UserError(f"{p}: no results here or in its subdirectories; give a "
                        "directory written by `treebench run`.")
    return found


def verify_path(path: str | Path, *, config: str | Path | None = None,
                profile: str | None = None, all_cells: bool = False,
                on_result: Callable[[Verification], None] | None = None) -> list[Verification]:
    """Verify every experiment under ``path``, one at a time."""
    out = []
    for d in experiment_dirs(path):
        for v in verify_dir(d, config=config, profile=profile, all_cells=all_cells):
            out.append(v)
            if on_result is not None:
                on_result(v)
    return out


def write_json(v: Verification, path: Path) -> Path:
    """The verdicts as JSON (for CI logs and other tools)."""
    data = {
        "experiment": v.experiment, "profile": v.profile, "passed": v.passed,
        "n_failed": v.n_failed, "note": v.note,
        "verdicts": [{"item": x.item, "source": x.source, "kind": x.kind,
                      "measured": x.measured, "measured_text": x.measured_text,
                      "expected": x.expected_text, "difference": x.difference,
                      "passed": x.passed, "reason": x.reason} for x in v.verdicts],
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
