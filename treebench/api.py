"""What the CLI, notebooks and tests call: `run_experiment`, `sweep_overrides`, `write_report`.

No printing of science here beyond progress; return values carry the outcome.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from treebench.cells import Cell, expand, expand_values
from treebench.config import BACKENDS, Experiment, load_config
from treebench.errors import ConfigError, UserError
from treebench.results import schema

FAIL_STATUSES = schema.ERROR_STATUSES  # exit code 3; timeouts exit 4 with --fail-on timeout
RETRYABLE = schema.FAILED_STATUSES

#: command-line sweep flags → algorithm parameter names they set (first match per algorithm)
SWEEP_AXES: dict[str, tuple[str, ...]] = {
    "k": ("k",),
    "depth": ("max_depth",),
    "lambda": ("regularization", "lambda_", "lam", "ccp_alpha"),
}


@dataclass
class Plan:
    cells: list[Cell]
    to_run: list[Cell]
    done: list[Cell]
    skipped: list[Cell]


@dataclass
class RunSummary:
    experiment: str
    out: Path
    counts: Counter = field(default_factory=Counter)
    n_cells: int = 0
    n_ran: int = 0
    exit_code: int = 0
    interrupted: bool = False
    tables: tuple[Path, Path] | None = None
    report_dir: Path | None = None
    splits: dict[str, str] = field(default_factory=dict)  # dataset -> the split it got, in words
    data_warnings: list[str] = field(default_factory=list)  # e.g. splits that are not stratified


def resolve_experiment(
    config: str | Path | Experiment,
    *,
    seed: int | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    overrides: dict[str, Any] | None = None,
    sweep: dict[str, list[Any]] | None = None,
    profile: str | None = None,
) -> Experiment:
    ov = dict(overrides or {})
    if seed is not None:
        ov["seed"] = seed
    if time_limit is not None:
        ov["limits.time"] = time_limit
    if memory_limit is not None:
        ov["limits.memory"] = memory_limit
    exp = config if isinstance(config, Experiment) else load_config(config, ov, profile=profile)
    if isinstance(config, Experiment) and (ov or profile is not None):
        from treebench.config import _set_path, apply_profile, validate_config

        raw = exp.model_dump()
        if profile is not None:
            raw = apply_profile(raw, profile, source="<experiment>")
        for k, v in ov.items():
            _set_path(raw, k, v)
        exp = validate_config(raw, source="<experiment>")
    if sweep:
        exp = sweep_overrides(exp, sweep, source=str(config) if not isinstance(config, Experiment) else "<experiment>")
    return exp


def sweep_overrides(exp: Experiment, axes: dict[str, list[Any]], source: str = "<config>") -> Experiment:
    """Set sweep axes on every algorithm entry that has the parameter (explicit flags beat the
    config). ``axes`` maps a flag name (``k``, ``depth``, ``lambda``) or a parameter name to
    its values. Raises `ConfigError` when no algorithm of the config takes the parameter."""
    from treebench.config import validate_config
    from treebench.registry import ALGORITHMS

    raw = exp.model_dump()
    for flag, values in axes.items():
        names = SWEEP_AXES.get(flag, (flag,))
        hit = False
        for alg in raw["algorithms"]:
            known = ALGORITHMS.get(alg["name"]).parameters()
            for pname in names:
                if pname in known:
                    alg["params"][pname] = list(values)
                    hit = True
                    break
        if not hit:
            algs = ", ".join(sorted({a["name"] for a in raw["algorithms"]}))
            raise ConfigError(
                f"{source}: `--{flag}` sets parameter {' / '.join(names)}, which none of the "
                f"config's algorithms ({algs}) takes."
            )
    return validate_config(raw, source=source)


def parse_axis(text: str) -> list[Any]:
    """Parse a command-line sweep value: ``1,2,4,all``, ``2..6`` or ``2..4,8``."""
    vals: list[Any] = []
    try:
        for part in [p for p in text.split(",") if p.strip()]:
            vals.extend(expand_values(part.strip()) if ".." in part else expand_values(part + ","))
    except ValueError as exc:
        raise ConfigError(f"sweep value `{text}`: {exc}.") from None
    if not vals:
        raise ConfigError(f"sweep value `{text}` is empty; give a comma list like 1,2,4 or a range like 2..6.")
    return vals


def plan(exp: Experiment, out: Path, *, force: bool = False, retry: tuple[str, ...] = ()) -> Plan:
    from treebench.results.store import existing_status

    cells = expand(exp)
    status = {} if force else existing_status(out)
    to_run, done, skipped = [], [], []
    for c in cells:
        s = status.get(c.id)
        if s is None or s in retry:
            to_run.append(c)
        elif s == "ok":
            done.append(c)
        else:
            skipped.append(c)
    return Plan(cells, to_run, done, skipped)


def default_out(exp: Experiment) -> Path:
    """``results/<name>``, or ``results/<name>-<profile>`` for a profile's run."""
    return Path("results") / (exp.name + (f"-{exp.profile}" if exp.profile else ""))


def preflight_datasets(exp: Experiment, cells: list[Cell], data_dirs: list[str] | None, offline: bool | None) -> list[str]:
    """Load every dataset that cells will need, in this process, before anything runs: missing
    files, parse errors and labels that would give wrong numbers (`treebench.data.checks`) stop
    the run with exit code 2; downloads (when online) happen here, never in workers. Returns the
    data warnings for the run summary."""
    from treebench.data.checks import check_dataset_split
    from treebench.execute.worker import dataset_for

    index = {n: i for i, n in enumerate(exp.dataset_names())}
    seen: set[str] = set()
    notes: list[str] = []
    for c in cells:
        if c.dataset not in seen:
            seen.add(c.dataset)
            ds = dataset_for(c, data_dirs, offline=offline)
            sp = exp.split_for(index[c.dataset]).model_dump() if c.dataset in index else dict(c.split)
            notes += check_dataset_split(ds, c.dataset, sp)
    return notes


def write_manifest(exp: Experiment, out: Path, n_cells: int) -> Path:
    from treebench.execute.supervise import atomic_write_json
    from treebench.results.provenance import environment

    out.mkdir(parents=True, exist_ok=True)
    p = out / "manifest.json"
    previous: dict[str, Any] = {}
    if p.is_file():
        try:
            previous = json.loads(p.read_text(encoding="utf-8"))
        except ValueError:
            previous = {}
    atomic_write_json(
        p,
        {
            "experiment": exp.name,
            "config": exp.model_dump(mode="json"),
            "n_cells": n_cells,
            "created_at": previous.get("created_at") or datetime.now(UTC).isoformat(timespec="seconds"),
            "updated_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "environment": environment(),
        },
    )
    return p


def _lock(out: Path):
    """An exclusive lock on ``out``: two runs writing the same results directory would remove
    each other's partial files and race on the tables."""
    import fcntl

    out.mkdir(parents=True, exist_ok=True)
    fh = open(out / ".lock", "w")  # noqa: SIM115 - kept open for the lock's lifetime
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise UserError(
            f"{out}: another treebench run is writing to this results directory; wait for it "
            f"or give another --out."
        ) from None
    return fh


def _remove_partial_files(out: Path) -> None:
    """Temporary files of a run that was killed (never a finished cell: those are renamed)."""
    from treebench.results.store import cells_dir

    for pattern in (".*.child", ".*.tmp"):
        for p in cells_dir(out).glob(pattern):
            p.unlink(missing_ok=True)


def consolidate(exp: Experiment, out: Path, cells: list[Cell]):
    from treebench.results.store import load_rows, to_frame, write_tables

    df = to_frame(load_rows(out, [c.id for c in cells]), experiment=exp.name)
    return df, write_tables(out, df)


def exit_code_for(counts: Counter, fail_on: str) -> int:
    if fail_on == "never":
        return 0
    if any(counts.get(s, 0) for s in FAIL_STATUSES):
        return 3
    if fail_on == "timeout" and counts.get("timeout", 0):
        return 4
    return 0


def run_experiment(
    config: str | Path | Experiment,
    *,
    out: str | Path | None = None,
    n_jobs: int | None = None,
    backend: str | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    force: bool = False,
    retry: tuple[str, ...] = (),
    fail_on: str = "error",
    seed: int | None = None,
    sweep: dict[str, list[Any]] | None = None,
    overrides: dict[str, Any] | None = None,
    data_dirs: list[str] | None = None,
    offline: bool | None = None,
    progress: bool = True,
    report: bool = True,
    profile: str | None = None,
) -> RunSummary:
    """Validate, plan and run an experiment; consolidate tables; write the report.
    ``profile`` applies a named reduction of the config first (its ``profiles:``)."""
    if fail_on not in ("error", "timeout", "never"):
        raise UserError(f"--fail-on must be error, timeout or never (got {fail_on!r}).")
    bad = [r for r in retry if r not in RETRYABLE]
    if bad:
        raise UserError(f"--retry takes statuses among {', '.join(RETRYABLE)} (got {bad[0]!r}).")
    exp = resolve_experiment(
        config, seed=seed, time_limit=time_limit, memory_limit=memory_limit,
        overrides=overrides, sweep=sweep, profile=profile,
    )
    out_dir = Path(out) if out is not None else default_out(exp)
    pl = plan(exp, out_dir, force=force, retry=retry)
    backend = backend or exp.execution.backend
    n_jobs = n_jobs if n_jobs is not None else exp.execution.n_jobs
    if backend not in BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(BACKENDS)} (got {backend!r}).")
    data_notes = preflight_datasets(exp, pl.to_run, data_dirs, offline)
    with _lock(out_dir):  # released at the end, or by the kernel if this process is killed
        write_manifest(exp, out_dir, len(pl.cells))
        _remove_partial_files(out_dir)
        summary = _run_locked(exp, pl, out_dir, n_jobs=n_jobs, backend=backend, data_dirs=data_dirs,
                              progress=progress, fail_on=fail_on, report=report)
    summary.splits, summary.data_warnings = exp.split_summary(), data_notes
    return summary


def _run_locked(exp: Experiment, pl: Plan, out_dir: Path, *, n_jobs: int, backend: str,
                data_dirs: list[str] | None, progress: bool, fail_on: str, report: bool) -> RunSummary:
    from treebench.execute.executor import run_cells
    from treebench.results.provenance import provenance

    context = {"experiment": exp.name, "provenance": provenance()}
    summary = RunSummary(experiment=exp.name, out=out_dir, n_cells=len(pl.cells))

    def _count(_row: dict[str, Any]) -> None:
        summary.n_ran += 1

    try:
        run_cells(
            pl.to_run, out_dir, n_jobs=n_jobs, backend=backend, data_dirs=data_dirs,
            context=context, show_progress=progress, on_result=_count,
        )
    except KeyboardInterrupt:
        summary.interrupted = True
    df, tables = consolidate(exp, out_dir, pl.cells)
    summary.tables = tables
    summary.counts = Counter(df["status"].astype(str).tolist())
    if summary.interrupted:
        summary.exit_code = 130
        return summary
    summary.exit_code = exit_code_for(summary.counts, fail_on)
    if report and len(df):
        summary.report_dir = write_report(out_dir)
    return summary


def write_report(results_dir: str | Path, out: str | Path | None = None, formats=("html", "md", "csv", "latex")) -> Path:
    """Write the report of a results directory; returns the report folder."""
    from treebench.report import write_report as _write

    results_dir = Path(results_dir)
    target = Path(out) if out is not None else results_dir / "report"
    _write(results_dir, target, formats=tuple(formats))
    return target
