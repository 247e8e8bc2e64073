"""What the CLI, notebooks and tests call: `run_experiment`, `sweep_overrides`, `write_report`,
`report_tree` (a folder of experiments), `report_results` (either), `dry_run` and
`check_inputs` (the dry run's data checks). What must answer without loading this module
(the plan cache's answers, listings, reading cells, and the reports: `write_report`,
`report_tree` and `report_results` are defined there and named here) is in
`treebench.api_light`.

No printing of science here beyond progress; return values carry the outcome.

Results are never discarded silently: a run or sweep adds its cells to the results
directory, the tables are rebuilt from every cell file there, and rerunning finished cells
(``force``) needs ``overwrite=True``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from treebench.execute import experiments as xp
from treebench.api_light import (  # noqa: F401 - parse_axis, ResultsCheck, refresh_results...: API
    LOCK_HINT,
    REPORT_HINT,
    ResultsCheck,
    SweepError,
    check_results,
    check_writable,
    experiment_dirs,
    lock_results,
    parse_axis,
    refresh_results,
    report_page,
    report_results,
    report_tree,
    write_report,
)
from treebench.utils.atomic import read_json_object, write_json
from treebench.results.cell import Cell, canonical_json
from treebench.config.cells import expand_all
from treebench.config import (
    BACKENDS,
    Experiment,
    apply_profile,
    check_learner_params,
    load_config,
    set_dotted_key,
    validate_config,
)
from treebench.config.grid import Skipped
from treebench.errors import DataWarning, UserError
from treebench.execute.cost import cost_lines
from treebench.execute.executor import ClusterTarget, run_cells
from treebench.execute import fold
from treebench.execute.jobs import check_n_jobs, effective_n_jobs  # noqa: F401 - API
from treebench.execute.lifetime import exit_code_of
from treebench.execute.slurm import run_slurm
from treebench.execute.slurm_submit import plan_lines
from treebench.execute.experiments import record_key
from treebench.execute.plan_cache import (  # noqa: F401 - RunOptions, RunSummary...: API
    FAIL_STATUSES, RETRYABLE, RunOptions, RunSummary, answer, check_options,
    count_warnings, exit_code_for, failure_kinds, remember_plan, report_unchanged,
)
from treebench.registry import ALGORITHMS
from treebench.results.cellfile import cells_dir
from treebench.results.index import add_hashes, quarantine, refuse_foreign_tables, scan
from treebench.results.provenance import environment, provenance
from treebench.results.store import existing_status, refresh_tables
from treebench.utils.sweeps import SWEEP_AXES, SweepFlagError, apply_axes, flag_name  # noqa: F401
from treebench.utils.sweeps import axis_integers, expand_axes, is_range
from treebench.utils.text import MAX_CHARS, clip, show


@dataclass
class Plan:
    cells: list[Cell]
    to_run: list[Cell]
    done: list[Cell]
    skipped: list[Cell]
    pairs_skipped: list[Skipped] = field(default_factory=list)
    #: the data files the cells' fingerprints were computed from (path → stat key)
    data_files: dict[str, list[int]] = field(default_factory=dict)
    #: when the cells' statuses were read (`time.time_ns`): a cell file modified since was
    #: written after the planning (by a task of an earlier, still running submission)
    planned_ns: int = 0


def resolve_experiment(
    config: str | Path | Experiment,
    *,
    seed: int | None = None,
    time_limit: float | None = None,
    memory_limit: float | None = None,
    overrides: dict[str, Any] | None = None,
    sweep: dict[str, list[Any]] | None = None,
    applied: dict[str, dict[str, str]] | None = None,
    profile: str | None = None,
) -> Experiment:
    """The validated experiment of ``config`` with command-line overrides and sweep axes.
    ``applied`` (when given) receives, per sweep flag, the parameter it set per algorithm."""
    ov = dict(overrides or {})
    if seed is not None:
        ov["seed"] = seed
    if time_limit is not None:
        ov["limits.time"] = time_limit
    if memory_limit is not None:
        ov["limits.memory"] = memory_limit
    exp = config if isinstance(config, Experiment) else load_config(config, ov, profile=profile)
    if isinstance(config, Experiment) and (ov or profile is not None):
        raw = exp.model_dump()
        if profile is not None:
            raw = apply_profile(raw, profile, source="<experiment>")
        for k, v in ov.items():
            set_dotted_key(raw, k, v)
        exp = keep_written_paths(exp, validate_config(raw, source="<experiment>"))
    if sweep:
        source = str(config) if not isinstance(config, Experiment) else "<experiment>"
        exp, done = sweep_overrides(exp, sweep, source=source, with_applied=True)
        if applied is not None:
            applied.update(done)
    return exp


def sweep_overrides(exp: Experiment, axes: dict[str, list[Any]], source: str = "<config>",
                    with_applied: bool = False):
    """Set sweep axes on every algorithm entry that has the parameter (explicit flags beat the
    config). ``axes`` maps a flag name (``k``, ``depth``, ``lambda``) or a parameter name to
    its values. Raises `SweepError` naming the flag when no algorithm takes the parameter or
    an algorithm refuses one of the values. Returns the experiment (and, with
    ``with_applied``, which parameter each flag became per algorithm)."""
    raw = exp.model_dump()
    try:
        applied = apply_axes(raw["algorithms"], axes, lambda n: ALGORITHMS.get(n).parameters())
    except SweepFlagError as exc:
        raise SweepError(str(exc)) from None
    for flag, per_alg in applied.items():
        for alg in raw["algorithms"]:
            pname = per_alg.get(alg.get("label") or alg["name"])
            if pname is not None:
                _check_flag_values(flag, alg["name"], pname, axes[flag])
    exp = keep_written_paths(exp, validate_config(raw, source=source))
    return (exp, applied) if with_applied else exp


def keep_written_paths(old: Experiment, new: Experiment) -> Experiment:
    """``new`` (``old`` validated again from its dump, with other algorithms or settings) with
    each dataset's paths as its config wrote them, which the dump leaves out: cells are
    identified by those (`DatasetSpec.identity_params`), so a sweep of a config finds the cells
    its run made, from any folder."""
    for a, b in zip(old.datasets, new.datasets, strict=True):
        b._written = dict(a._written)
    return new


def _check_flag_values(flag: str, algorithm: str, pname: str, values: list[Any]) -> None:
    """Each value of a sweep flag, checked by the algorithm's own parameter validation (a
    range's two ends)."""
    entry = ALGORITHMS.get(algorithm)
    if entry.missing:
        return
    # a range "a..b" is checked at its two ends (constraints bound an interval), never listed
    for v in [end for x in values for end in (axis_integers(x) if is_range(x) else [x])]:
        try:
            check_learner_params(entry, {pname: v})
        except Exception as exc:  # the estimator's InvalidParameterError / ValueError
            text = clip(" ".join(str(exc).split()), 4 * MAX_CHARS)
            raise SweepError(
                f"`{flag_name(flag)}`: value {show(v)} is not valid for {algorithm}'s `{pname}`: {text}"
            ) from None


def plan(exp: Experiment, out: Path, *, force: bool = False, retry: tuple[str, ...] = (),
         data_dirs: list[str] | None = None) -> Plan:
    """The experiment's cells, sorted by what a run does with them: run (no usable result, or a
    status in ``retry``; every cell with ``force``), done (ok) or skipped (failed before). The
    cells' ids hash the fingerprints of their data, so a changed data file makes cells to run."""
    expansion = expand_all(exp, data_dirs)
    planned_ns = time.time_ns()  # before the statuses are read: a file written since is new
    pl = classify(expansion.cells, {} if force else existing_status(out), retry,
                  expansion.skipped)
    pl.data_files = expansion.data_files
    pl.planned_ns = planned_ns
    return pl


def data_change_notes(exp: Experiment, cells: list[Cell], out: Path,
                      variant: dict[str, Any] | None = None) -> list[str]:
    """What a run of ``cells`` into ``out`` would say of data changed since the experiment's
    last run there (`treebench.execute.experiments.data_changes`)."""
    try:
        man = xp.read_manifest(out)
    except xp.ManifestError:
        return []
    return xp.data_changes(man, record_key(exp, variant), xp.data_of(cells))


@dataclass
class DryRun:
    """What `dry_run` found: the experiment, its plan, the results folder, which parameter each
    sweep flag set per algorithm, the dataset/binarization combinations checked and the data
    warnings."""

    experiment: Experiment
    plan: Plan
    out: Path
    applied: dict[str, dict[str, str]]
    n_checked: int
    notes: list[str]
    backend: str

    def cost_lines(self) -> list[str]:
        """What running the cells would cost, from earlier results of the same cells
        (`treebench.execute.cost`); with the slurm backend, the job arrays it would submit."""
        lines = cost_lines(self.plan.cells, self.plan.to_run, Path(self.out))
        if self.backend == "slurm" and self.plan.to_run:
            lines += plan_lines(self.plan.to_run, self.experiment.execution.slurm)
        return lines


def dry_run(config: str | Path | Experiment, o: RunOptions) -> DryRun:
    """What a run of ``config`` under ``o`` (options `check_options` accepted) checks before
    it fits a learner: the config, the execution settings, the plan (which cells run, are done
    or skipped), the data of every dataset/binarization combination (loaded from the cache and
    binarized, `check_inputs`) and what changed in the data since the last run into the
    folder. Runs nothing and writes no result (nor checks the folder as a run does)."""
    applied: dict[str, dict[str, str]] = {}
    exp = resolve_experiment(
        config, seed=o.seed, time_limit=o.time_limit, memory_limit=o.memory_limit,
        sweep=o.sweep, overrides=o.overrides, applied=applied, profile=o.profile,
    )
    resolved = resolve_execution(exp, o)  # checked as the run checks them
    out_dir = o.out or default_out(exp)
    pl = plan(exp, out_dir, force=o.force, retry=o.retry, data_dirs=o.data_dirs)
    notes: list[str] = []
    n_checked = check_inputs(pl.cells, o.data_dirs, o.offline, notes)
    notes += data_change_notes(exp, pl.cells, Path(out_dir),
                               variant_of(expand_axes(o.sweep) if o.sweep else None,
                                          o.overrides, o.seed))
    return DryRun(exp, pl, out_dir, applied, n_checked, notes, str(resolved.backend))


def classify(cells: list[Cell], status: dict[str, str], retry: tuple[str, ...],
             pairs_skipped: list[Skipped]) -> Plan:
    """`plan`'s sorting of ``cells`` by their ``status`` (cell id → status of a usable file)."""
    to_run, done, skipped = [], [], []
    for c in cells:
        s = status.get(c.id)
        if s is None or s in retry:
            to_run.append(c)
        elif s == "ok":
            done.append(c)
        else:
            skipped.append(c)
    return Plan(cells, to_run, done, skipped, pairs_skipped)


def default_out(exp: Experiment) -> Path:
    """``results/<name>``, or ``results/<name>-<profile>`` for a profile's run."""
    return Path("results") / (exp.name + (f"-{exp.profile}" if exp.profile else ""))


def _dataset_said_once(c: Cell, data_dirs: list[str] | None, offline: bool | None) -> Any:
    """The dataset of cell ``c``, without its load-time `DataWarning`: the same notes are in
    ``meta["parse_notes"]``, which the checks return for the run's summary (said once, there)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return fold.dataset_for(c, data_dirs, offline=offline)


def preflight_datasets(exp: Experiment, cells: list[Cell], data_dirs: list[str] | None, offline: bool | None) -> list[str]:
    """Load every dataset that cells will need, in this process, before anything runs: missing
    files, parse errors and labels that would give wrong numbers (`treebench.data.checks`) stop
    the run with exit code 2; downloads (when online) happen here, never in workers. Returns the
    data warnings for the run summary."""
    from treebench.data.checks import check_dataset_split, check_missing
    index = {n: i for i, n in enumerate(exp.dataset_names())}
    seen: set[str] = set()
    notes: list[str] = []
    for c in cells:
        if c.dataset not in seen:
            seen.add(c.dataset)
            ds = _dataset_said_once(c, data_dirs, offline)
            sp = exp.split_for(index[c.dataset]).model_dump() if c.dataset in index else dict(c.split)
            notes += check_dataset_split(ds, c.dataset, sp)
            notes += check_missing(ds, c.dataset, _missing_uses(cells, c.dataset))
    return notes


def _missing_uses(cells: list[Cell], dataset: str) -> list[tuple[str, dict[str, Any], str]]:
    """(binarizer, its params, algorithm) of the cells on ``dataset``, once each."""
    out: list[tuple[str, dict[str, Any], str]] = []
    for c in cells:
        use = (c.binarizer, dict(c.binarizer_params), c.algorithm)
        if c.dataset == dataset and use not in out:
            out.append(use)
    return out


def check_inputs(cells: list[Cell], data_dirs: list[str] | None, offline: bool | None,
                 notes: list[str] | None = None) -> int:
    """The dry run's data check: load each dataset (from the cache), run the
    checks the run's preflight runs (labels, split, missing and infinite values against the
    learners, `treebench.data.checks`), make the first split and fit each binarization on it,
    for every dataset/label/binarizer combination the cells use, without fitting any learner.
    Raises `UserError` naming the dataset and the binarizer; appends the data warnings to
    ``notes``; returns the number of combinations checked."""
    from treebench.data.checks import check_dataset_split, check_missing
    seen: set[str] = set()
    datasets: set[str] = set()
    for c in cells:
        key = canonical_json([c.dataset_loader, c.dataset_params, c.split, c.binarizer, c.binarizer_params])
        if key in seen:
            continue
        seen.add(key)
        ds = _dataset_said_once(c, data_dirs, offline)
        if c.dataset not in datasets:
            datasets.add(c.dataset)
            found = check_dataset_split(ds, c.dataset, dict(c.split))
            found += check_missing(ds, c.dataset, _missing_uses(cells, c.dataset))
            if notes is not None:
                notes += found
        try:
            fold.prepare(c, data_dirs)
        except UserError:
            raise
        except (ValueError, TypeError, KeyError) as exc:
            text = " ".join(str(exc).split())
            raise UserError(
                f"dataset `{c.dataset}` with binarization `{c.binarizer}` "
                f"{canonical_json(c.binarizer_params)}: {text}"
            ) from None
    return len(seen)


def write_manifest(exp: Experiment, out: Path, n_cells: int, *, n_jobs: int | None = None,
                   n_jobs_used: int | None = None, command: str = "run",
                   sweep: dict[str, list[Any]] | None = None, cells: list[Cell] | None = None,
                   variant: dict[str, Any] | None = None) -> list[str]:
    """Write ``manifest.json``: one experiment record per config (and profile) and per variant
    of it that ran here, with the cells it defines (`treebench.execute.experiments`), the
    environment, and one entry per run with the ``n_jobs`` asked for and the workers used.
    Returns notes (a damaged manifest is set aside and rewritten)."""
    out.mkdir(parents=True, exist_ok=True)
    p = out / xp.MANIFEST
    notes: list[str] = []
    try:
        previous = xp.read_manifest(out) or {}
    except xp.ManifestError:
        bad = out / f"manifest.damaged.{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.json"
        p.replace(bad)
        notes.append(f"{p} was damaged; kept it as {bad.name} and wrote a new one (records of "
                     f"earlier sweeps in it are lost: their cells count as other cells)")
        previous = {}
    now = datetime.now(UTC).isoformat(timespec="seconds")
    rec = xp.make_record(exp, list(cells or []), variant, command)
    notes += xp.data_changes(previous, rec["key"], rec["data"])
    entry: dict[str, Any] = {"at": now, "command": command, "experiment": rec["key"],
                             "n_cells": n_cells, "n_jobs": n_jobs, "n_jobs_used": n_jobs_used}
    if sweep:
        entry["sweep"] = {k: list(v) for k, v in sweep.items()}
    man = xp.upsert(dict(previous), rec)
    runs = [r for r in xp.claim_records(man) if r.get("kind") == "run"]
    head = runs[0] if runs else rec
    man.update({
        "experiment": head["name"],
        "config": head["config"],
        "n_cells": head["n_cells"],
        "n_jobs": n_jobs,
        "n_jobs_used": n_jobs_used,
        "created_at": previous.get("created_at") or now,
        "updated_at": now,
        "runs": list(previous.get("runs") or []) + [entry],
        "environment": environment(),
    })
    write_json(p, man)
    return notes


def note_cluster_run(out: Path, run: Any) -> None:
    """Record in ``manifest.json`` what ran a dask/ray run's cells: the last run's
    entry and the top level get ``n_jobs_used`` = the worker threads that returned records
    (what ran at once, not ``-j``) and ``cluster`` = `ClusterRun.to_manifest` (workers,
    threads, hosts, address). Written also when the run was interrupted or lost its cluster."""
    p = out / "manifest.json"
    manifest = read_json_object(p)
    if not manifest.get("runs"):
        return
    info = run.to_manifest()
    manifest["runs"][-1].update(n_jobs_used=run.n_threads_used, cluster=info)
    manifest.update(n_jobs_used=run.n_threads_used, cluster=info)
    write_json(p, manifest)


def _remove_partial_files(out: Path) -> None:
    """Temporary files of a run that was killed (never a finished cell: those are renamed)."""
    for pattern in (".*.child", ".*.tmp"):
        for p in cells_dir(out).glob(pattern):
            p.unlink(missing_ok=True)


def run_experiment(config: str | Path | Experiment, options: RunOptions | None = None) -> RunSummary:
    """Validate, plan and run an experiment; consolidate tables; write the report.

    Finished cells are kept: a rerun resumes, a sweep into the same directory adds its cells,
    ``options.retry`` reruns the cells with those statuses (under the limits given now; a cell's
    id does not depend on its limits).

    A rerun with nothing to do answers from the plan cache (the cell ids that this exact config
    text, overrides and sweep expanded to last time) without validating again or importing any
    learner, so it takes a fraction of a second.

    Each run records in ``manifest.json`` the cells its config defines, so that the config's
    claims are checked on exactly those (`treebench.execute.experiments`)."""
    o = options if options is not None else RunOptions()
    key, fast = answer(config, o)  # checks the options first (`check_options`)
    if fast is not None:
        return fast
    applied: dict[str, dict[str, str]] = {}
    exp = resolve_experiment(
        config, seed=o.seed, time_limit=o.time_limit, memory_limit=o.memory_limit,
        overrides=o.overrides, sweep=o.sweep, applied=applied, profile=o.profile,
    )
    if o.sweep:  # its size is checked: list the ranges for the manifest's record of it
        o = replace(o, sweep=expand_axes(o.sweep))
    out_dir = Path(o.out) if o.out is not None else default_out(exp)
    _check_out_dir(exp, out_dir, o)
    pl = plan(exp, out_dir, force=o.force, retry=o.retry, data_dirs=o.data_dirs)
    o = resolve_execution(exp, o)
    check_writable(out_dir)
    data_notes = preflight_datasets(exp, pl.to_run, o.data_dirs, o.offline)
    summary, pl = _run_under_lock(exp, pl, out_dir, o)
    summary.sweep_applied = applied
    summary.pairs_skipped = pl.pairs_skipped
    summary.splits, summary.data_warnings = exp.split_summary(), data_notes
    if key is not None and not summary.interrupted:
        remember_plan(out_dir, key, [c.id for c in pl.cells], exp.name,
                      record_key(exp, variant_of(o.sweep, o.overrides, o.seed)), pl.data_files)
    return summary


def _check_out_dir(exp: Experiment, out_dir: Path, o: RunOptions) -> None:
    """Refuse ``force`` over finished cells without ``overwrite``, and a folder holding another
    experiment's cells without ``add_experiment``."""
    if o.force and not o.overwrite:
        n_done = sum(1 for st in existing_status(out_dir).values() if st == "ok")
        if n_done:
            raise UserError(
                f"{out_dir}: --force would replace {n_done} finished cell(s); add --overwrite "
                f"to do so, use --retry STATUS to rerun failed cells only, or give another --out."
            )
    refuse_foreign_tables(out_dir, "a run would replace it: move it away, or give another "
                                   "--out.", unbacked=True)
    try:
        xp.check_other_experiments(xp.read_manifest(out_dir), exp, out_dir, o.add_experiment)
    except xp.ManifestError:
        pass  # rewritten by this run (with a note)


def resolve_execution(exp: Experiment, o: RunOptions) -> RunOptions:
    """``o`` with backend, n_jobs and address taken from the config's ``execution:`` where the
    options leave them unset, checked."""
    backend = o.backend or exp.execution.backend
    if backend not in BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(BACKENDS)} (got {backend!r}).")
    address = o.address or exp.execution.address
    if address and backend not in ("dask", "ray"):
        raise UserError(f"--address is for --backend dask or ray (got {backend!r}).")
    if o.detach and backend != "slurm":
        raise UserError(f"--detach is for --backend slurm (got {backend!r}).")
    n_jobs = o.n_jobs if o.n_jobs is not None else exp.execution.n_jobs
    return replace(o, backend=backend, address=address, n_jobs=n_jobs)


def _run_under_lock(exp: Experiment, pl: Plan, out_dir: Path,
                    o: RunOptions) -> tuple[RunSummary, Plan]:
    """Hold the results directory's lock: set damaged cell files aside, write the manifest, run
    the cells and refresh the tables. Returns the summary and the plan that ran."""
    n_jobs = int(o.n_jobs)  # resolved by `resolve_execution`
    used = 1 if o.backend == "sequential" else max(1, min(effective_n_jobs(n_jobs), len(pl.to_run)))
    clusters: list[Any] = []  # a dask/ray run's `ClusterRun`, also when the run fails
    with lock_results(out_dir):  # released at the end, or by the kernel if this process is killed
        current = scan(out_dir, save=True)  # under the lock: the index may be written
        notes = quarantine(out_dir, current)
        notes += add_hashes(out_dir, current)  # before this run writes files that carry them
        if notes and not o.force:  # the set-aside cells are not done after all
            status = {cid: e.status for cid, e in current.cells.items()}
            pl = classify(pl.cells, status, o.retry, pl.pairs_skipped)
        notes += write_manifest(exp, out_dir, len(pl.cells), n_jobs=n_jobs, n_jobs_used=used,
                                command="sweep" if o.sweep else "run", sweep=o.sweep,
                                cells=pl.cells, variant=variant_of(o.sweep, o.overrides, o.seed))
        _remove_partial_files(out_dir)
        try:
            summary = _run_locked(exp, pl, out_dir, o, clusters)
        finally:
            if clusters:
                note_cluster_run(out_dir, clusters[0])
    summary.notes = notes + summary.notes
    summary.n_jobs = clusters[0].n_threads_used if clusters else used
    return summary, pl


def variant_of(sweep: dict[str, list[Any]] | None, overrides: dict[str, Any] | None,
             seed: int | None) -> dict[str, Any] | None:
    """What makes a run a variant of its config (its claims are not checked on it): sweep
    axes, overrides other than limits and execution settings, an experiment seed given on the
    command line."""
    ov = {k: v for k, v in (overrides or {}).items()
          if not k.startswith(("limits.", "execution."))}  # settings, not cells
    v: dict[str, Any] = {}
    if sweep:
        v["sweep"] = {k: list(x) for k, x in sweep.items()}
    if ov:
        v["overrides"] = ov
    if seed is not None:
        v["seed"] = seed
    return v or None


def _run_locked(exp: Experiment, pl: Plan, out_dir: Path, o: RunOptions,
                clusters: list[Any] | None = None) -> RunSummary:
    """Run the plan's cells under resolved options (`resolve_execution`), then refresh the
    tables and write the report; the caller holds the directory's lock."""
    summary = RunSummary(experiment=exp.name, out=out_dir, n_cells=len(pl.cells))

    def _on_cluster(run: Any) -> None:
        summary.cluster = run
        if clusters is not None:
            clusters.append(run)

    warned: Counter = Counter()

    def _count(row: dict[str, Any]) -> None:
        summary.n_ran += 1
        count_warnings(warned, row)

    if pl.to_run:
        context = {"experiment": exp.name, "provenance": provenance()}
        try:
            if o.backend == "slurm":  # job arrays; the tasks write the cell files
                run_slurm(pl.to_run, out_dir, spec=exp.execution.slurm, data_dirs=o.data_dirs,
                          context=context, detach=o.detach, on_result=_count,
                          show_progress=o.progress, on_start=_on_cluster,
                          planned_ns=pl.planned_ns)
            else:
                run_cells(
                    pl.to_run, out_dir, n_jobs=int(o.n_jobs), backend=str(o.backend),
                    data_dirs=o.data_dirs, context=context, show_progress=o.progress,
                    on_result=_count, cluster=ClusterTarget(
                        o.address, exp.execution.data_dir_on_workers, _on_cluster),
                )
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (`lifetime.Terminated`)
            summary.interrupted = True
            summary.exit_code = exit_code_of(exc)
    tables = (out_dir / "results.parquet", out_dir / "results.csv")
    _, why, current = refresh_tables(out_dir, exp.name)  # a no-op when they are current
    if why is not None and not summary.n_ran:
        summary.notes.append(f"rewrote the results tables from the cell files ({why})")
    summary.notes += quarantine(out_dir, current)  # files that broke during the run
    # the outcome of this run is that of the cells its config defines: cells of other
    # experiments and sweeps count in their own runs, and cells of no recorded experiment
    # (left over from an edited config) in none
    mine = {c.id for c in pl.cells}
    counts = Counter(e.status for c, e in current.cells.items() if c in mine)
    summary.failures = failure_kinds(out_dir, [c for c, e in current.cells.items()
                                               if e.status != "ok" and c in mine])
    summary.fit_warnings = [(label, text, n) for (label, text), n in warned.most_common()]
    summary.notes += stale_note(out_dir, current)
    summary.tables = tables
    summary.counts = counts
    if summary.interrupted:  # 130 for Ctrl-C, 143 for SIGTERM
        return summary
    if o.detach and pl.to_run:
        summary.notes.append(f"the cells run as SLURM jobs: `treebench status {out_dir}` shows "
                             f"them, the same command run again collects them")
        return summary
    summary.exit_code = exit_code_for(summary.counts, o.fail_on)
    if o.report and sum(counts.values()):
        try:
            summary.report_dir = write_report(out_dir)
        except KeyboardInterrupt as exc:  # the cells and tables are whole: say so, and how
            summary.interrupted = True
            summary.exit_code = exit_code_of(exc)
            summary.notes.append(f"the report was not finished; `treebench report {out_dir}` "
                                 f"writes it")
    return summary


def stale_note(out_dir: Path, current: Any) -> list[str]:
    """A note on the usable cells of ``current`` that no recorded experiment defines (none
    when there are none or the manifest cannot tell)."""
    try:
        stale = xp.stale_cells(xp.read_manifest(out_dir), current.cells)
    except xp.ManifestError:
        return []
    if not stale:
        return []
    return [f"{len(stale)} cell(s) here belong to no recorded experiment (left over from a config "
            f"since edited or data since changed); they count in no run's outcome, and the "
            f"tables and the report leave them out (results-earlier.csv lists them): "
            f"`treebench results check {out_dir} --prune-stale` moves them to quarantine/"]


