"""The report's solvers section: solvers of one problem compared the way solver papers do.

Drawn for each problem (``problem`` column, one with a global objective) that two or more
solvers of the experiment solve. A *solver* is a config entry (``algorithm_label``; with the
parameters that vary within the entry on one instance, when there are such); an *instance* is
one fit of the problem: dataset, its fingerprint, split, fold, seed, binarization, problem
weight and ``max_depth``. An instance is *solved* by a solver when its cell finished (status
``ok``) within its time limit (the median fit time at most ``time_limit``) and the solver did
not say its tree is unproven (``optimal`` false); every other cell (timeout, error, crash,
memory) is unsolved and is kept as a censored observation, never dropped, and a fit that
finished past its limit counts as a timeout:

- a cactus plot: instances solved (y) within a time (x, log scale), one line per solver;
- a performance profile (Dolan & Moré 2002, Math. Program. 91, §2): for each instance the
  ratio r = time / the fastest solver's time, ρ(τ) = share of all instances with r ≤ τ, an
  unsolved instance counting r = ∞ (eq. 1 and the r_M convention of §2); the ECDF is
  `scipy.stats.ecdf` of the finite ratios scaled by their share;
- PAR-2 per solver: the mean over instances of the fit time, an unsolved instance counting
  twice its cell's time limit (no limit: PAR-2 is not given);
- gap-over-time per dataset: the median (line) and quartiles (band) over the dataset's
  instances of each solver's relative gap at each time, from the cells' anytime traces
  where their records hold one (`read_traces`); without, from each cell's final time, bound
  and gap (100 % until the fit ends, then 0 for a proven optimum or gap / objective), and the
  figure says which;
- a primal-integral table: per instance and solver, the primal integral over the cell's time
  limit (Berthold 2013, `treebench.algorithms.traces.primal_integral`: the primal gap, 1 until
  the first incumbent, integrated and divided by the limit) against the best objective any
  solver of the problem reached on that instance; from the fit's anytime trace where its
  record holds one in the problem's unit, else its final tree at the fit's end (a fit that
  ended without a tree counts 1); shown when the fits have a time limit;
- a per-fit ratio table against a reference solver (``report: {reference_solver: LABEL}`` in
  the config, default the first solver of the problem): the ratio of the median fit times,
  with the quartiles of the ratios of every pair of repeats (``repeat:``) as its spread, ``>``
  or ``<`` where one side did not solve the instance (censored at its time limit), and per
  solver the geometric mean of the uncensored ratios with a 95 % bootstrap interval
  (`scipy.stats.bootstrap`) and the largest of them;
- the times are the cells' wall times (``fit_seconds``), or with ``report: {clock: cpu}``
  the CPU times of their fitting processes (``fit_cpu_seconds``), which do not grow while a
  fit waits for a core on a loaded machine; a fit is solved only when its wall time is
  within its limit either way;
- a per-fit ratio table of every solver against the fastest *other* solver of each instance
  (`fastest_other`), in the same form: what a claim "faster than the fastest peer" needs.
  ``report: {rivals: [LABEL, ...]}`` restricts the rivals to those entries (the peers, when
  the experiment holds several solvers of one's own); ``report: {min_reference_seconds: S}``
  leaves the ratios whose reference fit took under S seconds out of both tables' means and
  largest ratios (they stay in the rows): timer noise dominates a ratio of two millisecond
  fits. When the instances have several ``max_depth``,
  both tables add the mean and the largest ratio of each depth.

The section also shows the certificate check (`treebench.results.certificates`): a
disagreement between proven optima is a red line. Nothing here computes a metric: times,
statuses, bounds and gaps are columns of the results table.
"""

from __future__ import annotations

import html as _html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from treebench.algorithms.objectives import PROBLEM_OBJECTIVES
from treebench.algorithms.traces import primal_integral
from treebench.report.aggregate import Results, entry_labels, report_option
from treebench.report.figures import FigureInfo
from treebench.report.tables import Display, fmt_seconds, md_link, md_text, to_html, to_markdown
from treebench.results.cellfile import CellFileError, cells_dir, read_cell
from treebench.results.certificates import Certificates, check_certificates
from treebench.results.traces import record_trace
from treebench.results.values import normalize_value, value_token
from treebench.utils.text import slug

#: the columns of one instance of a problem (the problem weight is added per row)
INSTANCE = ("dataset", "data_fingerprint", "split", "split_params", "fold", "seed",
            "binarizer", "binarizer_params", "param_max_depth")
#: the shortest time a ratio divides by (a fit reported as 0 s)
MIN_SECONDS = 1e-6


@dataclass
class Problem:
    """One problem's comparison: ``fits`` has one row per (solver, instance) with ``time``
    (median fit seconds), ``solved``, ``limit``, ``repeats`` (list of seconds), ``status``,
    ``gap_final``; ``solvers`` in config order; ``reference`` the ratio table's solver;
    ``min_seconds`` the shortest reference time a ratio needs to enter a geometric mean;
    ``rivals`` the entries' labels the fastest-rival table measures against (None: all)."""

    name: str
    fits: pd.DataFrame
    solvers: list[str]
    reference: str
    notes: list[str] = field(default_factory=list)
    min_seconds: float = 0.0
    rivals: list[str] | None = None

    def is_rival(self, solver: str) -> bool:
        """Whether ``solver`` (a label, or ``label (param=value)``) is one of ``rivals``."""
        return self.rivals is None or any(_of_entry(solver, r) for r in self.rivals)

    @property
    def stem(self) -> str:
        """The start of the names of this problem's figures (`treebench.report.solver_figures`)."""
        return f"solvers__{slug(self.name)}"


def _num(v: Any) -> float | None:
    v = normalize_value(v)
    if v is None or isinstance(v, bool) or not isinstance(v, int | float):
        return None
    return float(v) if math.isfinite(float(v)) else None


def _repeats(row: dict[str, Any], time: float | None, column: str) -> list[float]:
    text = row.get(column)
    if isinstance(text, str):
        try:
            vals = [float(x) for x in json.loads(text)]
            if vals:
                return vals
        except (ValueError, TypeError):
            pass
    return [] if time is None else [time]


def _final_gap(row: dict[str, Any], solved: bool) -> float:
    """The relative gap a cell ended with: 0 when solved, gap / |objective| when the solver
    reports both, else 1 (nothing known)."""
    if solved:
        return 0.0
    gap, obj = _num(row.get("gap")), _num(row.get("solver_objective"))
    if gap is None or obj is None or obj == 0 or row.get("status") not in ("ok", "timeout"):
        return 1.0
    return float(min(max(gap / abs(obj), 0.0), 1.0))


def _solver_names(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    """``algorithm_label``, with the parameters that vary within it on one instance."""
    names = df["algorithm_label"].astype(str)
    params = [c for c in df.columns if c.startswith("param_") and c not in keys]
    out = names.copy()
    for label, sub in df.groupby(names, sort=False):
        varying = [c for c in params if sub.groupby("_instance")[c].agg(
            lambda s: len({value_token(normalize_value(v)) for v in s})).max() > 1]
        for i, r in sub.iterrows():
            if varying:
                out[i] = f"{label} (" + ", ".join(
                    f"{c[6:]}={normalize_value(r[c])}" for c in varying) + ")"
    return out


def _fits(rows: pd.DataFrame, clock: str = "wall") -> pd.DataFrame:
    """One row per (solver, instance) of the problem's results ``rows`` (`Problem`'s
    ``fits``), timed (``time``, ``repeats``) by ``clock``: ``wall`` (``fit_seconds``) or
    ``cpu`` (``fit_cpu_seconds``); whether a fit finished within its limit is its wall
    time's, and ``wall`` and ``seconds`` (its wall time when solved, and in any case) place it
    on the time axis of the anytime measures (the primal integral, gap over time), which the
    traces give in wall time."""
    keys = [c for c in INSTANCE if c in rows.columns]
    column = "fit_cpu_seconds" if clock == "cpu" else "fit_seconds"
    df = rows.copy()
    weights = {}  # a failed cell has no problem_weight: take its entry's from another cell
    for params, w in zip(df["algorithm_params"], df["problem_weight"], strict=True):
        if _num(w) is not None:
            weights.setdefault(params, _num(w))
    df["_weight"] = [weights.get(p, _num(w)) for p, w in
                     zip(df["algorithm_params"], df["problem_weight"], strict=True)]
    df["_instance"] = df[keys + ["_weight"]].apply(
        lambda r: "\x1f".join(value_token(normalize_value(v)) for v in r), axis=1)
    df["_solver"] = _solver_names(df, keys)
    out = []
    for r in df.to_dict("records"):
        wall, limit = _num(r.get("fit_seconds")), _num(r.get("time_limit"))
        time = _num(r.get(column))
        late = r.get("status") == "ok" and _over_limit(wall, limit)
        solved = (r.get("status") == "ok" and r.get("optimal") is not False and time is not None
                  and not late)
        out.append({"solver": r["_solver"], "instance": r["_instance"],
                    "dataset": str(r.get("dataset")), "label": _instance_label(r, keys),
                    "depth": normalize_value(r.get("param_max_depth")),
                    "time": max(time, MIN_SECONDS) if solved else None, "solved": solved,
                    "limit": limit, "status": "timeout" if late else str(r.get("status")),
                    "repeats": _repeats(r, time, column + "_repeats") if solved else [],
                    "gap_final": _final_gap(r, solved), "cell_id": str(r.get("cell_id")),
                    "finished_at": str(r.get("finished_at")), "seconds": wall,
                    "wall": max(wall, MIN_SECONDS) if solved and wall is not None else None,
                    "objective": _num(r.get("problem_objective"))
                    if r.get("status") in ("ok", "timeout") else None,
                    "trace_unit": r.get("solver_objective_kind") is not None
                    and r.get("solver_objective_kind") == r.get("problem_objective_kind")})
    return pd.DataFrame(out).drop_duplicates(["solver", "instance"], keep="last")


def _clocked_fits(rows: pd.DataFrame, clock: Any) -> tuple[pd.DataFrame, list[str]]:
    """`_fits` of one problem's ``rows`` by the report's ``clock`` option, and the notes that
    say so: with ``cpu``, CPU seconds, unless a finished cell has none (results written
    before they were recorded), when every time is wall time, as a note says."""
    if clock != "cpu":
        return _fits(rows), []
    done = rows[rows["status"] == "ok"] if "status" in rows.columns else rows
    cpu = done.get("fit_cpu_seconds", pd.Series(index=done.index, dtype=float))
    if len(done) and pd.to_numeric(cpu, errors="coerce").isna().any():
        return _fits(rows), ["`clock: cpu` was asked for, but some finished cells have no CPU "
                             "time (`fit_cpu_seconds`: written by a treebench that did not "
                             "record it): the times here are wall seconds (`fit_seconds`)"]
    return _fits(rows, "cpu"), ["times are CPU seconds of the fitting process "
                                "(`fit_cpu_seconds`, `clock: cpu`); a fit counts as solved "
                                "when its wall time is within its limit"]


def _over_limit(time: float | None, limit: float | None) -> bool:
    """Whether a finished fit's (median) time exceeds its time limit: it then counts as a
    timeout, whatever it returned, as a solver competition counts a run past its limit (a
    search that looks at its clock now and then can end a little after the limit)."""
    return time is not None and limit is not None and time > limit


def _instance_label(r: dict[str, Any], keys: list[str]) -> str:
    parts = [str(r.get("dataset"))]
    for col, word in (("param_max_depth", "d"), ("fold", "fold "), ("seed", "seed ")):
        v = normalize_value(r.get(col))
        if v is not None:
            parts.append(f"{word}{v}")
    if r.get("_weight"):
        parts.append(f"w {r['_weight']:g}")
    return " · ".join(parts)


def problems(results: Results) -> list[Problem]:
    """The problems of ``results`` that two or more solvers solve, in table order (computed
    once per `Results`: the tables, each figure and the pages ask for them)."""
    hit = _LAST.get("problems")
    if hit is not None and hit[0] is results:
        return hit[1]
    out = _problems(results)
    _LAST["problems"] = (results, out)
    return out


#: the last `Results` asked for its problems, and their problems
_LAST: dict[str, tuple[Results, list[Problem]]] = {}


def _problems(results: Results) -> list[Problem]:
    t = results.table
    if t.empty or "problem" not in t.columns:
        return []
    ref = _reference_option(results)
    floor = _num(report_option(results, "min_reference_seconds")) or 0.0
    rivals = report_option(results, "rivals")
    rivals = [str(r) for r in rivals] if isinstance(rivals, list) and rivals else None
    clock = report_option(results, "clock")
    out = []
    for name in dict.fromkeys(str(p) for p in t["problem"].dropna()):
        if name not in PROBLEM_OBJECTIVES:
            continue
        rows = t[t["problem"].astype(str) == name]
        fits, notes = _clocked_fits(rows, clock)
        solvers = _in_config_order(list(dict.fromkeys(fits["solver"])), results)
        if len(solvers) < 2:
            continue
        reference = solvers[0]
        if ref is not None:
            if ref in solvers:
                reference = ref
            else:
                notes.append(f"the reference solver `{ref}` does not solve {name} here; the "
                             f"ratios are against `{reference}`, the first solver")
        out.append(Problem(name, fits, solvers, reference, notes, floor, rivals))
    return out


def _in_config_order(solvers: list[str], results: Results) -> list[str]:
    """``solvers`` in the order of their algorithm entries in the config (an entry's
    ``label``, else its ``name``; a solver named ``label (param=value)`` sits with its
    entry), then the solvers of no entry in the order given: the first is the ratio table's
    reference unless ``report: {reference_solver: ...}`` names another."""
    order = {label: i for i, label in enumerate(entry_labels(results))}
    longest_first = sorted(order, key=len, reverse=True)

    def entry(solver: str) -> int:
        return next((order[label] for label in longest_first if _of_entry(solver, label)),
                    len(order))

    return sorted(solvers, key=entry)  # stable: ties keep the order given


def _of_entry(solver: str, label: str) -> bool:
    """Whether ``solver`` (`_solver_names`: a label, or ``label (param=value, ...)``) is of
    the algorithm entry labelled ``label``."""
    return solver == label or solver.startswith(label + " (")


def _reference_option(results: Results) -> str | None:
    ref = report_option(results, "reference_solver")
    return ref if isinstance(ref, str) else None


# ----------------------------------------------------------------------------- statistics
def par2(fits: pd.DataFrame) -> float | None:
    """PAR-2 of one solver's ``fits``: mean fit time, an unsolved fit counting twice its time
    limit; None when an unsolved fit has no limit."""
    vals = []
    for solved, time, limit in zip(fits["solved"], fits["time"], fits["limit"], strict=True):
        if solved:
            vals.append(float(time))
        elif limit is None or not math.isfinite(limit):
            return None
        else:
            vals.append(2.0 * float(limit))
    return float(np.mean(vals)) if vals else None


def profile(p: Problem) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Dolan & Moré's performance profile of ``p``: the τ grid and ρ_s(τ) per solver, over
    every instance any solver ran (an unsolved one has ratio ∞, so ρ may stay below 1)."""
    from scipy import stats

    wide = p.fits.pivot(index="instance", columns="solver", values="time")
    wide = wide.reindex(columns=p.solvers).astype(float)
    best = wide.min(axis=1, skipna=True)
    ratios = wide.div(best, axis=0)
    finite = ratios.to_numpy()[np.isfinite(ratios.to_numpy())]
    top = max(float(finite.max()) if finite.size else 1.0, 1.0)
    taus = np.geomspace(1.0, top * 1.05 + 1e-9, 200)
    out = {}
    n = len(ratios)
    for s in p.solvers:
        r = ratios[s].to_numpy(dtype=float)
        r = r[np.isfinite(r)]
        if r.size == 0:
            out[s] = np.zeros_like(taus)
            continue
        out[s] = stats.ecdf(r).cdf.evaluate(taus) * (r.size / n)
    return taus, out


@dataclass(frozen=True)
class Ratio:
    """One fit's time against the reference: ``value`` (median over median), ``low`` and
    ``high`` (quartiles over pairs of repeats), ``censor`` ``>``/``<``/``both``/``""``."""

    value: float | None
    low: float | None = None
    high: float | None = None
    censor: str = ""

    def text(self) -> str:
        if self.censor == "both":
            return "neither solved"
        if self.value is None:
            return ""
        v = f"{self.censor} {self.value:.3g}".strip()
        if self.low is not None and self.high is not None and self.high > self.low:
            v += f" [{self.low:.3g}, {self.high:.3g}]"
        return v


def ratio(fit: dict[str, Any] | None, ref: dict[str, Any] | None) -> Ratio:
    """The ratio of ``fit`` to ``ref`` (rows of `Problem.fits`); censored at the time limit
    of the side that did not solve the instance."""
    if fit is None or ref is None:
        return Ratio(None)
    if fit["solved"] and ref["solved"]:
        pairs = np.divide.outer(np.asarray(fit["repeats"], float),
                                np.maximum(np.asarray(ref["repeats"], float), MIN_SECONDS))
        lo, hi = (np.percentile(pairs, [25, 75]) if pairs.size > 1 else (None, None))
        return Ratio(fit["time"] / ref["time"], None if lo is None else float(lo),
                     None if hi is None else float(hi))
    if not fit["solved"] and not ref["solved"]:
        return Ratio(None, censor="both")
    if not fit["solved"]:
        lim = _num(fit["limit"])
        return Ratio(None if lim is None else lim / ref["time"], censor=">")
    lim = _num(ref["limit"])
    return Ratio(None if lim is None else fit["time"] / lim, censor="<")


def geometric_mean(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """The geometric mean of ``values`` and its 95 % bootstrap interval (`scipy.stats`
    bootstrap of the mean log ratio, BCa; None with fewer than three values)."""
    if not values:
        return None, None, None
    logs = np.log(np.asarray(values, dtype=float))
    gm = float(np.exp(logs.mean()))
    if len(values) < 3 or np.ptp(logs) == 0:
        return gm, None, None
    from scipy import stats

    ci = stats.bootstrap((logs,), np.mean, confidence_level=0.95, n_resamples=1999,
                         random_state=0).confidence_interval
    return gm, float(np.exp(ci.low)), float(np.exp(ci.high))


# ----------------------------------------------------------------------------- tables
def par2_display(p: Problem) -> Display:
    header = ["solver", "instances", "solved", "timeouts", "other failures",
              "PAR-2 (s)", "median time solved (s)", "median spread over repeats (s)"]
    rows = []
    for s in p.solvers:
        f = p.fits[p.fits["solver"] == s]
        solved = f[f["solved"]]
        score = par2(f)
        spreads = [max(r) - min(r) for r in solved["repeats"] if len(r) > 1]
        rows.append([s, str(len(f)), str(len(solved)), str(int((f["status"] == "timeout").sum())),
                     str(int((~f["solved"] & (f["status"] != "timeout")).sum())),
                     "n/a (no time limit)" if score is None else fmt_seconds(score),
                     fmt_seconds(float(solved["time"].median())) if len(solved) else "",
                     fmt_seconds(float(np.median(spreads))) if spreads else ""])
    return Display(f"par2_{slug(p.name)}", header, rows, ["l"] + ["r"] * 7, [])


def ratio_display(p: Problem) -> Display:
    """One row per instance, one column per other solver: its ratio to the reference; the
    last rows: geometric means with their bootstrap intervals, and the largest ratios."""
    others = [s for s in p.solvers if s != p.reference]
    by = _by_fit(p)

    def reference(solver: str, inst: str) -> dict[str, Any] | None:
        return by.get((p.reference, inst))

    def second(inst: str) -> str:
        ref = by.get((p.reference, inst))
        return "" if ref is None or not ref["solved"] else fmt_seconds(ref["time"])

    rows, first = _ratio_rows(p, by, others, (reference, second), name_reference=False)
    header = ["instance", f"{p.reference} time (s)"] + [f"{s} / {p.reference}" for s in others]
    return Display(f"ratios_{slug(p.name)}", header, rows, ["l"] + ["r"] * (len(header) - 1),
                   [first])


def fastest_other(p: Problem, by: dict[tuple[str, str], dict[str, Any]], solver: str,
                  inst: str) -> dict[str, Any] | None:
    """The fit of ``inst`` that ``solver`` is measured against in `fastest_display`: the
    fastest of the other solvers (of ``p.rivals`` when given) that solved it; when none did,
    the other fit with the shortest time limit (the ratio is then censored at that limit);
    None when no other solver ran it."""
    others = [by[(o, inst)] for o in p.solvers
              if o != solver and p.is_rival(o) and (o, inst) in by]
    solved = [r for r in others if r["solved"]]
    if solved:
        return min(solved, key=lambda r: r["time"])
    limited = [r for r in others if _num(r["limit"]) is not None]
    if limited:
        return min(limited, key=lambda r: _num(r["limit"]))
    return others[0] if others else None


def fastest_display(p: Problem) -> Display:
    """One row per instance, one column per solver: its ratio to the fastest *other* solver
    of the instance (named in the cell), so that every solver meets its strongest rival on
    each fit; the last rows: geometric means with their bootstrap intervals, and the largest
    ratios."""
    by = _by_fit(p)

    def reference(solver: str, inst: str) -> dict[str, Any] | None:
        return fastest_other(p, by, solver, inst)

    def second(inst: str) -> str:
        done = [by[(s, inst)] for s in p.solvers
                if p.is_rival(s) and (s, inst) in by and by[(s, inst)]["solved"]]
        if not done:
            return ""
        best = min(done, key=lambda r: r["time"])
        return f"{fmt_seconds(best['time'])} ({best['solver']})"

    rows, first = _ratio_rows(p, by, p.solvers, (reference, second), name_reference=True)
    word = "fastest other" if p.rivals is None else "fastest rival"
    header = ["instance", "fastest (s)" if p.rivals is None else "fastest rival (s)"] + [
        f"{s} / {word}" for s in p.solvers]
    return Display(f"fastest_{slug(p.name)}", header, rows, ["l"] + ["r"] * (len(header) - 1),
                   [first])


def _by_fit(p: Problem) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["solver"], r["instance"]): r for r in p.fits.to_dict("records")}


def _ratio_rows(p: Problem, by: dict[tuple[str, str], dict[str, Any]], solvers: list[str],
                columns, name_reference: bool) -> tuple[list[list[str]], int]:
    """The rows of a ratio table and the index of its first summary row. ``by`` is
    `_by_fit`; ``columns`` is ``(reference, second)``: per instance its label,
    ``second(instance)`` and for each of ``solvers`` its `ratio` to
    ``reference(solver, instance)`` (named when ``name_reference``); then a geometric-mean row
    and a largest-ratio row over the uncensored ratios whose reference took at least
    ``p.min_seconds``, and, when the instances have several ``max_depth``, one such row per
    depth."""
    reference, second = columns
    instances = list(dict.fromkeys(p.fits["instance"]))
    labels = dict(zip(p.fits["instance"], p.fits["label"], strict=True))
    depths = (dict(zip(p.fits["instance"], p.fits["depth"], strict=True))
              if "depth" in p.fits.columns else {})
    rows, kept = [], {s: [] for s in solvers}
    counts = {"censored": dict.fromkeys(solvers, 0), "short": dict.fromkeys(solvers, 0)}
    for inst in instances:
        row = [labels[inst], second(inst)]
        for s in solvers:
            ref = reference(s, inst)
            r = ratio(by.get((s, inst)), ref)
            text = r.text()
            if name_reference and text and r.censor != "both":
                text += f" vs {ref['solver']}"
            row.append(text)
            if r.censor and r.censor != "both":
                counts["censored"][s] += 1
            elif r.value is not None and ref["time"] < p.min_seconds:
                counts["short"][s] += 1
            elif r.value is not None:
                kept[s].append((depths.get(inst), r.value))
        rows.append(row)
    return rows + _summary_rows(p, solvers, kept, counts), len(rows)


def _summary_rows(p: Problem, solvers: list[str], kept: dict[str, list[tuple[Any, float]]],
                  counts: dict[str, dict[str, int]]) -> list[list[str]]:
    """The geometric-mean and largest-ratio rows of `_ratio_rows` (``kept``: per solver its
    (depth, ratio) pairs in the means), then one row per depth when there are several."""
    means = ["geometric mean (95 % bootstrap CI)", ""]
    largest = ["largest ratio (how many of those in the mean are above 1)", ""]
    for s in solvers:
        vals = [v for _, v in kept[s]]
        text = _mean_text(vals)
        if counts["censored"][s]:
            text += f"; {counts['censored'][s]} censored"
        if counts["short"][s]:
            text += (f"; {counts['short'][s]} left out (reference under "
                     f"{fmt_seconds(p.min_seconds)} s)")
        means.append(text.lstrip("; "))
        largest.append(f"{max(vals):.3g} ({sum(v > 1 for v in vals)} of {len(vals)})"
                       if vals else "")
    out = [means, largest]
    depths = sorted({d for s in solvers for d, _ in kept[s] if d is not None})
    for d in depths if len(depths) > 1 else []:
        row = [f"max_depth {d}: geometric mean [95 % CI]; largest (fits)", ""]
        for s in solvers:
            vals = [v for dd, v in kept[s] if dd == d]
            row.append(f"{_mean_text(vals)}; {max(vals):.3g} ({len(vals)})" if vals else "")
        out.append(row)
    return out


def _mean_text(values: list[float]) -> str:
    gm, lo, hi = geometric_mean(values)
    return "" if gm is None else f"{gm:.3g}" + (f" [{lo:.3g}, {hi:.3g}]" if lo else "")


def read_traces(directory: Path, cells: list[str]) -> dict[str, np.ndarray]:
    """cell id -> its anytime trace (n x 3: seconds, incumbent, bound; `record_trace`), in
    time order, for the ``cells`` of ``directory`` whose learner recorded one; cells without
    one, or whose file cannot be used, are left out."""
    out = {}
    for cell in cells:
        try:
            rec, _ = read_cell(cells_dir(directory) / f"{cell}.json")
        except (CellFileError, OSError):
            continue
        arr = record_trace(rec)
        if arr is not None:
            out[cell] = arr[np.argsort(arr[:, 0], kind="stable")]
    return out


def _flag(v: Any) -> bool:
    """Whether a cell of a boolean column is true (a missing value is not)."""
    return isinstance(v, bool | np.bool_) and bool(v)


def primal_integrals(p: Problem, directory: Path) -> dict[tuple[str, str], float] | None:
    """(solver, instance) -> the fit's primal integral over its time limit against the best
    objective any solver reached on the instance (see the module's docstring); None when a
    fit has no time limit. Traces are read from the cells of ``directory``."""
    fits = p.fits.to_dict("records")
    if not fits or any(_num(f.get("limit")) is None for f in fits):
        return None
    traces = read_traces(directory, [f["cell_id"] for f in fits if _flag(f.get("trace_unit"))])
    best: dict[str, float] = {}
    for f in fits:
        if _num(f.get("objective")) is not None:
            best[f["instance"]] = min(best.get(f["instance"], math.inf), _num(f["objective"]))
    out = {}
    for f in fits:
        rows = traces.get(f["cell_id"]) if _flag(f.get("trace_unit")) else None
        obj, secs = _num(f.get("objective")), _num(f.get("seconds"))
        if rows is None and obj is not None and secs is not None:
            rows = np.array([[secs, obj, 0.0]])  # its tree at the end
        ref = best.get(f["instance"])
        pi = None if rows is None or ref is None else primal_integral(rows, ref, f["limit"])
        out[(f["solver"], f["instance"])] = 1.0 if pi is None else pi
    return out


def primal_display(p: Problem, directory: Path) -> Display | None:
    """One row per instance: the best objective reached and each solver's primal integral;
    the last row: each solver's mean and on how many instances its integral is the lowest
    (ties count for each), both over the instances every solver ran, so that the solvers are
    compared on one set (the row says so when some ran fewer). None without time limits.
    Computed once per problem and folder: the tables, the HTML page and the Markdown page show
    it, and each computation reads every fit's anytime trace from its cell file."""
    hit = _PRIMAL.get(p.name)
    if hit is not None and hit[0] is p and hit[1] == directory:
        return hit[2]
    out = _primal_display(p, directory)
    _PRIMAL[p.name] = (p, directory, out)
    return out


#: problem name -> the last problem shown, its folder and its primal-integral table
_PRIMAL: dict[str, tuple[Problem, Path, Display | None]] = {}


def _primal_display(p: Problem, directory: Path) -> Display | None:
    pis = primal_integrals(p, directory)
    if pis is None:
        return None
    instances = list(dict.fromkeys(p.fits["instance"]))
    labels = dict(zip(p.fits["instance"], p.fits["label"], strict=True))
    best = p.fits.groupby("instance")["objective"].min() if "objective" in p.fits else {}
    common = [i for i in instances if all((s, i) in pis for s in p.solvers)]
    rows, lowest = [], dict.fromkeys(p.solvers, 0)
    for inst in instances:
        vals = {s: pis[(s, inst)] for s in p.solvers if (s, inst) in pis}
        if inst in common:
            low = min(vals.values())
            for s, v in vals.items():
                lowest[s] += v == low
        b = normalize_value(best.get(inst)) if len(best) else None
        rows.append([labels[inst], "" if b is None else f"{b:g}"]
                    + [f"{vals[s]:.4f}" if s in vals else "" for s in p.solvers])
    if len(common) == len(instances):
        title = f"mean (lowest on, of {len(instances)})"
    else:
        title = (f"mean over the {len(common)} of {len(instances)} instances every solver ran "
                 f"(lowest on)")
    rows.append([title, ""] + [f"{np.mean([pis[(s, i)] for i in common]):.4f} ({lowest[s]})"
                               if common else "" for s in p.solvers])
    return Display(f"primal_{slug(p.name)}", ["instance", "best objective"] + p.solvers, rows,
                   ["l"] + ["r"] * (len(p.solvers) + 1), [len(rows) - 1])


def _displays(p: Problem, directory: Path) -> list[Display]:
    """The section's tables of problem ``p``, in the order written."""
    primal = primal_display(p, directory)
    return ([par2_display(p)] + ([] if primal is None else [primal])
            + [ratio_display(p), fastest_display(p)])


def write_tables(results: Results, out: Path, formats: set[str]) -> dict[str, list[Path]]:
    """``tables/solvers_par2_<problem>.*``, ``tables/solvers_primal_<problem>.*`` (with time
    limits), ``tables/solvers_ratios_<problem>.*`` and ``tables/solvers_fastest_<problem>.*``
    (csv, md) for each problem with two or more solvers."""
    written: dict[str, list[Path]] = {}
    tdir = out / "tables"
    for p in problems(results):
        tdir.mkdir(parents=True, exist_ok=True)
        for d in _displays(p, results.directory):
            base = tdir / f"solvers_{d.title}"
            if "csv" in formats:
                path = base.with_name(base.name + ".csv")
                pd.DataFrame(d.rows, columns=d.header).to_csv(path, index=False)
                written.setdefault("csv", []).append(path)
            if "md" in formats:
                path = base.with_name(base.name + ".md")
                path.write_text(to_markdown(d), encoding="utf-8")
                written.setdefault("md", []).append(path)
    return written


# ----------------------------------------------------------------------------- the section
@dataclass
class Section:
    """What the section shows: the problems compared, the certificate check, and the
    figures of the section (by problem)."""

    problems: list[Problem]
    certificates: Certificates
    figures: dict[str, list[FigureInfo]]


def section(results: Results, figures: list[FigureInfo]) -> Section | None:
    """The solvers section of ``results``, None when no problem has two solvers and no
    certificate disagrees."""
    probs = problems(results)
    certs = check_certificates(results.table)
    if not probs and certs.passed:
        return None
    figs = {p.name: [f for f in figures if f.stem.startswith(p.stem + "__")] for p in probs}
    return Section(probs, certs, figs)


#: the sentence above the primal-integral table
PRIMAL_NOTE = ("Primal integral over the time limit (Berthold 2013): the gap of the tree held "
               "to the best objective any solver reached, 1 before the first tree, averaged "
               "over the limit; lower is better.")


def certificate_lines(certs: Certificates) -> list[str]:
    """The certificate check in sentences: one per disagreement, or one that all agree."""
    if certs.disagreements:
        return [f"Certificate disagreement: {d.text}." for d in certs.disagreements]
    if certs.instances:
        return [f"Certificates agree: {certs.comparisons} comparison(s) on "
                f"{certs.instances} instance(s) (proven optima equal, no incumbent below and "
                "no bound above one)."]
    return []


def _esc(text: object) -> str:
    return _html.escape(str(text))


def section_html(results: Results, figures: list[FigureInfo], figure_html) -> str:
    """The section as HTML (empty when `section` is None); ``figure_html(info)`` embeds a
    figure."""
    sec = section(results, figures)
    if sec is None:
        return ""
    parts = ['<h2 id="solvers">Solvers</h2>']
    for line in certificate_lines(sec.certificates):
        cls = "verdict fail" if sec.certificates.disagreements else "verdict pass"
        parts.append(f'<p><span class="{cls}">{_esc(line)}</span></p>')
    for p in sec.problems:
        parts.append(f"<h3>{_esc(p.name)}: {_esc(', '.join(p.solvers))}</h3>")
        parts += [f'<p class="note">{_esc(n)}</p>' for n in p.notes]
        parts.append(f'<div class="wide">{to_html(par2_display(p))}</div>')
        primal = primal_display(p, results.directory)
        if primal is not None:
            parts.append(f"<p>{_esc(PRIMAL_NOTE)}</p>")
            parts.append(f'<div class="wide">{to_html(primal)}</div>')
        parts.append('<div class="figs">' + "".join(figure_html(f) for f in sec.figures[p.name])
                     + "</div>")
        parts.append(f"<details><summary>Fit time against {_esc(p.reference)}, per fit "
                     "(ratio of medians [quartiles over repeats]; &gt;/&lt;: censored at "
                     "the time limit)</summary>"
                     f'<div class="wide">{to_html(ratio_display(p))}</div></details>')
        parts.append(f"<details><summary>{_esc(fastest_note(p))}</summary>"
                     f'<div class="wide">{to_html(fastest_display(p))}</div></details>')
    return "\n".join(parts)


def section_markdown(results: Results, figures: list[FigureInfo], out: Path) -> list[str]:
    """The section as Markdown lines (none when `section` is None)."""
    sec = section(results, figures)
    if sec is None:
        return []
    lines = ["## Solvers", ""]
    for line in certificate_lines(sec.certificates):
        lines += [f"**{md_text(line)}**" if sec.certificates.disagreements else md_text(line), ""]
    for p in sec.problems:
        lines += [f"### {md_text(p.name)}: {md_text(', '.join(p.solvers))}", ""]
        lines += [f"> {md_text(n)}" for n in p.notes]
        lines += [to_markdown(par2_display(p)), ""]
        primal = primal_display(p, results.directory)
        if primal is not None:
            lines += [PRIMAL_NOTE, "", to_markdown(primal), ""]
        for f in sec.figures[p.name]:
            img = f.paths.get("png") or f.paths.get("svg")
            if img is not None:
                lines += [f"![{md_text(f.title)}]({md_link(Path(img).relative_to(out).as_posix())})", ""]
        lines += [f"Fit time against {md_text(p.reference)}, per fit (ratio of medians [quartiles "
                  "over repeats]; > and <: censored at the time limit):", ""]
        lines += [to_markdown(ratio_display(p)), ""]
        lines += [md_text(fastest_note(p)) + ":", "", to_markdown(fastest_display(p)), ""]
    return lines


def fastest_note(p: Problem) -> str:
    """The sentence above `fastest_display`."""
    floor = (f"; the means leave out ratios whose rival took under {fmt_seconds(p.min_seconds)}"
             " s" if p.min_seconds > 0 else "")
    whom = ("the fastest other solver" if p.rivals is None else
            "the fastest other solver among " + ", ".join(p.rivals))
    return (f"Fit time against {whom} of each fit (ratio of medians "
            "[quartiles over repeats], the rival named; > and <: censored at the time limit"
            f"{floor})")
