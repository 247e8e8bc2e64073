"""The solvers section's figures (`treebench.report.solvers` says what they show): a cactus
plot and a performance profile per problem with two or more solvers, and the relative gap over
time per problem and dataset (from the cells' anytime traces where their records hold one,
`read_traces`). Registered figure kinds (`treebench.registry.FIGURES`), so the
report caches and draws them with the other figures; each job carries a digest of its
problem's fits, so a figure is redrawn when they change."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from treebench.report.aggregate import Results
from treebench.report.figures import (ALL_DATASETS, FigureJob, dataset_stem, finish_figure,
                                      line_colors, make_job, new_figure, register_figures)
from treebench.report.solvers import MIN_SECONDS, Problem, problems, profile, read_traces

#: the figure note of the gap curves while the results hold no anytime traces
FINAL_ONLY = ("drawn from each cell's final time, bound and gap (these results hold no anytime "
              "traces): 100 % until the fit ends, then 0 for a proven optimum, else gap / "
              "objective; no bound counts as 100 %")


def _digest(p: Problem) -> str:
    return hashlib.sha256(p.fits.to_csv(index=False).encode()).hexdigest()[:16]


def solver_jobs(results: Results) -> list[FigureJob]:
    """A cactus plot and a performance profile per problem with two or more solvers, and a
    gap-over-time figure per problem and dataset."""
    jobs = []
    for p in problems(results):
        extra = (p.name, _digest(p))
        jobs.append(make_job(f"{p.stem}__cactus", ALL_DATASETS, "solvers_cactus", extra))
        jobs.append(make_job(f"{p.stem}__profile", ALL_DATASETS, "solvers_profile", extra))
        for d in dict.fromkeys(p.fits["dataset"]):
            jobs.append(make_job(f"{p.stem}__gap__{dataset_stem(results, d)}", d, "solvers_gap", extra))
    return jobs


def _problem(results: Results, job: FigureJob) -> Problem | None:
    return next((p for p in problems(results) if p.name == job.extra[0]), None)


def _draw_cactus(results: Results, job: FigureJob):
    """Instances solved against time, one line per solver (a cactus plot)."""
    p = _problem(results, job)
    if p is None:
        return None
    fig, ax = new_figure()
    n = p.fits["instance"].nunique()
    for s, color in zip(p.solvers, line_colors(len(p.solvers)), strict=True):
        times = np.sort(p.fits[(p.fits["solver"] == s) & p.fits["solved"]]["time"].to_numpy(float))
        ax.step(times, np.arange(1, len(times) + 1), where="post", color=color,
                label=f"{s} ({len(times)}/{n})", marker="o", markersize=3)
    ax.set_xscale("log")
    ax.set_ylim(0, n + 0.5)
    finish_figure(fig, ax, f"{p.name}: instances solved within a time (cactus plot)",
                  "instances solved", "fit time (s, log scale)",
                  f"{n} instances; unsolved ones (timeouts, failures, unproven) are not "
                  "counted, the legend gives solved/all", len(p.solvers))
    return fig, ax.get_title()


def _draw_profile(results: Results, job: FigureJob):
    """Dolan & Moré's performance profile: share of instances within τ of the fastest."""
    p = _problem(results, job)
    if p is None:
        return None
    taus, rho = profile(p)
    fig, ax = new_figure()
    for s, color in zip(p.solvers, line_colors(len(p.solvers)), strict=True):
        ax.step(taus, rho[s], where="post", color=color, label=s)
    wide = taus[-1] > 4  # a log scale only where the ratios span more than a factor 4
    if wide:
        ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.02)
    finish_figure(fig, ax, f"{p.name}: performance profile (Dolan & Moré 2002)",
                  "share of instances with ratio ≤ τ", "τ: time / fastest solver's time"
                  + (" (log2 scale)" if wide else ""), "an unsolved instance has ratio ∞ (never "
                  "counted), so a solver's curve ends below 1 by its share of unsolved instances",
                  len(p.solvers))
    return fig, ax.get_title()


def _trace_gap(trace: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The relative gap (incumbent - bound) / |incumbent| of a trace at each time of ``grid``:
    1 before its first entry, then that of the last entry at or before the time."""
    inc, bound = trace[:, 1], trace[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.where(np.abs(inc) > 0, (inc - bound) / np.abs(inc), 0.0)
    gap = np.clip(np.nan_to_num(gap, nan=1.0, posinf=1.0), 0.0, 1.0)
    at = np.searchsorted(trace[:, 0], grid, side="right") - 1
    return np.where(at >= 0, gap[np.maximum(at, 0)], 1.0)


def gap_curves(p: Problem, dataset: str, grid: np.ndarray,
               traces: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Per solver, the relative gap of each of ``dataset``'s fits at each time of ``grid``
    (rows: fits, columns: times): from the fit's anytime trace where ``traces`` has one (by
    cell id), and once the fit ended its final gap; without a trace, 1 until the fit ended."""
    out = {}
    f = p.fits[p.fits["dataset"] == dataset]
    traces = traces or {}
    for s in p.solvers:
        sub = f[f["solver"] == s]
        wall = sub["wall"] if "wall" in sub.columns else sub["time"]  # the traces' clock
        ends = np.array([t if t is not None and t == t else (lim or np.inf)
                         for t, lim in zip(wall, sub["limit"], strict=True)], float)
        final = sub["gap_final"].to_numpy(float)
        before = np.array([_trace_gap(traces[c], grid) if c in traces else np.ones_like(grid)
                           for c in sub["cell_id"]], float).reshape(len(sub), len(grid))
        out[s] = np.where(grid[None, :] >= ends[:, None], final[:, None], before)
    return out


def _draw_gap(results: Results, job: FigureJob):
    """The relative gap of each solver over time on one dataset: median and quartiles."""
    p = _problem(results, job)
    if p is None:
        return None
    f = p.fits[p.fits["dataset"] == job.dataset]
    ts = [t for t in list(f["time"]) + list(f["limit"]) if t is not None and t == t and t > 0]
    if not ts:
        return None
    grid = np.geomspace(max(min(ts) / 2, MIN_SECONDS), max(ts) * 1.2, 200)
    fig, ax = new_figure()
    traces = read_traces(results.directory, list(f["cell_id"]))
    curves = gap_curves(p, job.dataset, grid, traces)
    for s, color in zip(p.solvers, line_colors(len(p.solvers)), strict=True):
        if curves[s].size == 0:
            continue
        q1, med, q3 = np.percentile(curves[s], [25, 50, 75], axis=0)
        ax.step(grid, 100 * med, where="post", color=color, label=f"{s} ({len(curves[s])} fits)")
        ax.fill_between(grid, 100 * q1, 100 * q3, step="post", color=color, alpha=0.15)
    ax.set_xscale("log")
    ax.set_ylim(-2, 102)
    finish_figure(fig, ax, f"{job.dataset}: {p.name}, relative gap over time",
                  "relative gap (%)", "time since the fit started (s, log scale)",
                  "median over the dataset's fits (line) and quartiles (band); "
                  + (FINAL_ONLY if not traces else f"from the anytime traces of {len(traces)} "
                     f"of {len(f)} fits, the others " + FINAL_ONLY.split(" (")[0]),
                  len(p.solvers))
    return fig, ax.get_title()


register_figures("solvers_cactus", solver_jobs, _draw_cactus)
register_figures("solvers_profile", solver_jobs, _draw_profile)
register_figures("solvers_gap", solver_jobs, _draw_gap)
