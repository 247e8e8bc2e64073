"""What the CLI, notebooks and tests call: `run_experiment`, `sweep_overrides`, `write_report`,
`report_tree` (a folder of experiments) and `check_inputs` (the dry run's data checks).

No printing of science here beyond progress; return values carry the outcome.

Results are never discarded silently (issue 8, A8): a run or sweep adds its cells to the results
directory, the tables are rebuilt from every cell file there, and rerunning finished cells
(``force``) needs ``overwrite=True``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from treebench.cells import Cell, Skipped, expand_all
from treebench.errors import UserError
from treebench.sweeps import SWEEP_AXES, SweepFlagError, apply_axes, flag_name  # noqa: F401

# the same as `schema.ERROR_STATUSES` and `schema.FAILED_STATUSES` (a test checks it), written
# out so that importing this module (and a rerun with nothing to do) does not load pandas
FAIL_STATUSES = ("oom", "error", "crashed")  # exit code 3; timeouts exit 4 with --fail-on timeout
RETRYABLE = ("timeout", "oom", "error", "crashed")


if TYPE_CHECKING:
    from treebench.config import Experiment

#: bump when cell ids are computed differently (the plan cache must not outlive the scheme)
ID_SCHEME = 2
PLAN_CACHE = ".plan-cache.json"


class SweepError(UserError):
    """A `treebench sweep` flag is wrong (reported as a flag error, not a config error)."""


@dataclass
class Plan:
    cells: list[Cell]
    to_run: list[Cell]
    done: list[Cell]
    skipped: list[Cell]
    pairs_skipped: list[Skipped] = field(default_factory=list)


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
    n_jobs: int = 1
    sweep_applied: dict[str, dict[str, str]] = field(default_factory=dict)
    pairs_skipped: list[Skipped] = field(default_factory=list)
    splits: dict[str, str] = field(default_factory=dict)  # dataset -> the split it got, in words
    data_warnings: list[str] = field(default_factory=list)  # e.g. splits that are not stratified
    cluster: Any = None  # a dask/ray run: its `treebench.execute.cluster.ClusterRun`


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
    from treebench.config import Experiment, load_config

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
    from treebench.config import validate_config
    from treebench.registry import ALGORITHMS

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
    exp = validate_config(raw, source=source)
    return (exp, applied) if with_applied else exp


def _check_flag_values(flag: str, algorithm: str, pname: str, values: list[Any]) -> None:
    """Each value of a sweep flag, checked by the algorithm's own parameter validation."""
    from treebench.registry import ALGORITHMS

    entry = ALGORITHMS.get(algorithm)
    if entry.missing:
        return
    for v in values:
        try:
            obj = entry.obj(**{pname: v})
            if hasattr(obj, "_parameter_constraints"):
                obj._validate_params()
        except Exception as exc:  # the estimator's InvalidParameterError / ValueError
            text = " ".join(str(exc).split())
            raise SweepError(
                f"`{flag_name(flag)}`: value {v!r} is not valid for {algorithm}'s `{pname}`: {text}"
            ) from None


def parse_axis(text: str, flag: str = "param") -> list[Any]:
    """Parse a command-line sweep value: ``1,2,4,all``, ``2..6`` or ``2..4,8``."""
    from treebench.sweeps import parse_axis as _parse

    try:
        return _parse(flag, text)
    except SweepFlagError as exc:
        raise SweepError(str(exc)) from None


def plan(exp: Experiment, out: Path, *, force: bool = False, retry: tuple[str, ...] = ()) -> Plan:
    from treebench.results.store import existing_status

    expansion = expand_all(exp)
    cells = expansion.cells
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
    return Plan(cells, to_run, done, skipped, expansion.skipped)


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


def check_inputs(cells: list[Cell], data_dirs: list[str] | None, offline: bool | None) -> int:
    """The dry run's data check (issue 8, A10): load each dataset (from the cache), make the
    first split and fit each binarization on it, for every dataset/label/binarizer combination
    the cells use, without fitting any learner. Raises `UserError` naming the dataset and the
    binarizer; returns the number of combinations checked."""
    from treebench.cells import canonical_json
    from treebench.execute.worker import dataset_for, prepare

    seen: set[str] = set()
    for c in cells:
        key = canonical_json([c.dataset_loader, c.dataset_params, c.split, c.binarizer, c.binarizer_params])
        if key in seen:
            continue
        seen.add(key)
        dataset_for(c, data_dirs, offline=offline)
        try:
            prepare(c, data_dirs)
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
                   sweep: dict[str, list[Any]] | None = None) -> Path:
    """Write ``manifest.json``: the experiment's config (the first run's; a sweep that adds to
    the directory appends its own config to ``runs`` instead of replacing it), the environment,
    and one entry per run with the ``n_jobs`` asked for and the number of workers used."""
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
        if not isinstance(previous, dict):
            previous = {}
    now = datetime.now(UTC).isoformat(timespec="seconds")
    config = exp.model_dump(mode="json")
    base = previous.get("config") if isinstance(previous.get("config"), dict) else config
    runs = list(previous.get("runs") or [])
    entry: dict[str, Any] = {"at": now, "command": command, "n_cells": n_cells,
                             "n_jobs": n_jobs, "n_jobs_used": n_jobs_used}
    if sweep:
        entry["sweep"] = {k: list(v) for k, v in sweep.items()}
    if config != base:
        entry["config"] = config
    runs.append(entry)
    atomic_write_json(
        p,
        {
            "experiment": previous.get("experiment") or exp.name,
            "config": base,
            "n_cells": n_cells if config == base else previous.get("n_cells", n_cells),
            "n_jobs": n_jobs,
            "n_jobs_used": n_jobs_used,
            "created_at": previous.get("created_at") or now,
            "updated_at": now,
            "runs": runs,
            "environment": environment(),
        },
    )
    return p


def note_cluster_run(out: Path, run: Any) -> None:
    """Record in ``manifest.json`` what ran a dask/ray run's cells (issue 15): the last run's
    entry and the top level get ``n_jobs_used`` = the worker threads that returned records
    (what ran at once, not ``-j``) and ``cluster`` = `ClusterRun.to_manifest` (workers,
    threads, hosts, address). Written also when the run was interrupted or lost its cluster."""
    from treebench.execute.supervise import atomic_write_json

    p = out / "manifest.json"
    try:
        manifest = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(manifest, dict) or not manifest.get("runs"):
        return
    info = run.to_manifest()
    manifest["runs"][-1].update(n_jobs_used=run.n_threads_used, cluster=info)
    manifest.update(n_jobs_used=run.n_threads_used, cluster=info)
    atomic_write_json(p, manifest)


def check_writable(path: Path, what: str = "results directory") -> None:
    """Raise `UserError` (one sentence) when ``path`` cannot be created or written."""
    import os
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=".treebench-probe-", dir=path)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise UserError(
            f"{path}: cannot write to this {what} ({reason.lower()}); give a writable "
            f"directory with --out."
        ) from None


def check_n_jobs(n_jobs: int) -> None:
    if n_jobs == 0:
        raise UserError(
            "--n-jobs 0 runs nothing; give a positive number of workers, or -1 for all cores "
            "(-2 for all but one, as in joblib)."
        )


def _lock(out: Path, hint: str = "wait for it or give another --out.", optional: bool = False):
    """An exclusive lock on ``out`` (`treebench.execute.lock.results_lock`): two processes
    writing the same results directory would remove each other's partial files and race on
    the tables."""
    from treebench.execute.lock import results_lock

    return results_lock(out, hint=hint, optional=optional)


def _remove_partial_files(out: Path) -> None:
    """Temporary files of a run that was killed (never a finished cell: those are renamed)."""
    from treebench.results.store import cells_dir

    for pattern in (".*.child", ".*.tmp"):
        for p in cells_dir(out).glob(pattern):
            p.unlink(missing_ok=True)


def consolidate(exp: Experiment, out: Path, cells: list[Cell] | None = None):
    """Rebuild the tables from every cell file of ``out`` (never only this run's: a sweep that
    adds cells keeps the experiment's own rows). Returns the table and the two paths."""
    from treebench.results.store import load_rows, to_frame, write_tables

    df = to_frame(load_rows(out), experiment=exp.name)
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
    overwrite: bool = False,
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
    address: str | None = None,
) -> RunSummary:
    """Validate, plan and run an experiment; consolidate tables; write the report.

    Finished cells are kept: a rerun resumes, a sweep into the same directory adds its cells,
    ``retry`` reruns the cells with those statuses (under the limits given now; a cell's id does
    not depend on its limits). ``force`` reruns every cell and needs ``overwrite`` when the
    directory holds finished cells.

    A rerun with nothing to do answers from the plan cache (the cell ids that this exact config
    text, overrides and sweep expanded to last time) without validating again or importing any
    learner, so it takes a fraction of a second.

    ``profile`` applies a named reduction of the config first (its ``profiles:``)."""
    if fail_on not in ("error", "timeout", "never"):
        raise UserError(f"--fail-on must be error, timeout or never (got {fail_on!r}).")
    bad = [r for r in retry if r not in RETRYABLE]
    if bad:
        raise UserError(f"--retry takes statuses among {', '.join(RETRYABLE)} (got {bad[0]!r}).")
    if n_jobs is not None:
        check_n_jobs(n_jobs)
    key = _plan_key(config, seed=seed, overrides=overrides, sweep=sweep) if profile is None else None
    if key is not None and not force:
        fast = _nothing_to_do(key, config, out, retry=retry, fail_on=fail_on, report=report)
        if fast is not None:
            return fast
    from treebench.execute.executor import effective_n_jobs

    applied: dict[str, dict[str, str]] = {}
    exp = resolve_experiment(
        config, seed=seed, time_limit=time_limit, memory_limit=memory_limit,
        overrides=overrides, sweep=sweep, applied=applied, profile=profile,
    )
    out_dir = Path(out) if out is not None else default_out(exp)
    if force and not overwrite:
        from treebench.results.store import existing_status

        n_done = sum(1 for st in existing_status(out_dir).values() if st == "ok")
        if n_done:
            raise UserError(
                f"{out_dir}: --force would replace {n_done} finished cell(s); add --overwrite "
                f"to do so, use --retry STATUS to rerun failed cells only, or give another --out."
            )
    pl = plan(exp, out_dir, force=force, retry=retry)
    backend = backend or exp.execution.backend
    n_jobs = n_jobs if n_jobs is not None else exp.execution.n_jobs
    from treebench.config import BACKENDS

    if backend not in BACKENDS:
        raise UserError(f"--backend must be one of {', '.join(BACKENDS)} (got {backend!r}).")
    address = address or exp.execution.address
    if address and backend not in ("dask", "ray"):
        raise UserError(f"--address is for --backend dask or ray (got {backend!r}).")
    check_writable(out_dir)
    data_notes = preflight_datasets(exp, pl.to_run, data_dirs, offline)
    used = 1 if backend == "sequential" else max(1, min(effective_n_jobs(n_jobs), len(pl.to_run)))
    clusters: list[Any] = []  # a dask/ray run's `ClusterRun`, also when the run fails
    with _lock(out_dir):  # released at the end, or by the kernel if this process is killed
        write_manifest(exp, out_dir, len(pl.cells), n_jobs=n_jobs, n_jobs_used=used,
                       command="sweep" if sweep else "run", sweep=sweep)
        _remove_partial_files(out_dir)
        try:
            summary = _run_locked(exp, pl, out_dir, n_jobs=n_jobs, backend=backend,
                                  data_dirs=data_dirs, progress=progress, fail_on=fail_on,
                                  report=report, address=address, clusters=clusters)
        finally:
            if clusters:
                note_cluster_run(out_dir, clusters[0])
    summary.n_jobs = clusters[0].n_threads_used if clusters else used
    summary.sweep_applied = applied
    summary.pairs_skipped = pl.pairs_skipped
    summary.splits, summary.data_warnings = exp.split_summary(), data_notes
    if key is not None and not summary.interrupted:
        _remember_plan(out_dir, key, [c.id for c in pl.cells], exp.name)
    return summary


def _plan_key(config: Any, *, seed: int | None, overrides: dict[str, Any] | None,
              sweep: dict[str, list[Any]] | None) -> str | None:
    """A hash of everything the cell ids depend on: the config file's text, the overrides, the
    sweep and the seed (limits are not identity), plus the id scheme and treebench's version."""
    import hashlib
    import os

    from treebench import __version__
    from treebench.cells import canonical_json

    if not isinstance(config, str | Path):
        return None
    try:
        text = Path(config).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    ov = {k: v for k, v in (overrides or {}).items() if not k.startswith("limits.")}
    # relative file paths in the config resolve against the working directory
    where = [str(Path.cwd()), str(Path(config).resolve().parent), os.environ.get("TREEBENCH_DATA_DIR")]
    blob = canonical_json([ID_SCHEME, __version__, text, ov, sweep or {}, seed, where])
    return hashlib.sha256(blob.encode()).hexdigest()


def _default_out_of(config: Any) -> Path | None:
    """results/<name> from the config's ``name:`` line (or its file stem), without YAML."""
    import re

    try:
        text = Path(config).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    m = re.search(r"^name:\s*['\"]?([A-Za-z0-9][A-Za-z0-9_.\-]*)['\"]?\s*(#.*)?$", text, re.M)
    return Path("results") / (m.group(1) if m else Path(config).stem)


def _nothing_to_do(key: str, config: Any, out: Any, *, retry: tuple[str, ...], fail_on: str,
                   report: bool) -> RunSummary | None:
    """The summary of a run with nothing to do, or None when something might need doing."""
    from treebench.results.store import existing_status

    out_dir = Path(out) if out is not None else _default_out_of(config)
    if out_dir is None:
        return None
    try:
        cache = json.loads((out_dir / PLAN_CACHE).read_text(encoding="utf-8"))
        entry = cache[key]
        ids, name = list(entry["cells"]), str(entry["experiment"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    status = existing_status(out_dir)
    if any(status.get(i) is None or status[i] in retry for i in ids):
        return None
    if not _tables_current(out_dir):
        return None
    if report and not _report_current(out_dir):
        return None
    counts = Counter(status.values())
    s = RunSummary(experiment=name, out=out_dir, counts=counts, n_cells=len(ids),
                   tables=(out_dir / "results.parquet", out_dir / "results.csv"))
    s.exit_code = exit_code_for(counts, fail_on)
    if report:
        s.report_dir = out_dir / "report"
    return s


def _report_current(out: Path) -> bool:
    try:
        return (out / "report" / "index.html").stat().st_mtime_ns >= \
            (out / "results.parquet").stat().st_mtime_ns
    except OSError:
        return False


def _remember_plan(out: Path, key: str, ids: list[str], name: str) -> None:
    from treebench.execute.supervise import atomic_write_json

    p = out / PLAN_CACHE
    try:
        cache = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(cache, dict):
            cache = {}
    except (OSError, ValueError):
        cache = {}
    cache.pop(key, None)
    cache[key] = {"experiment": name, "cells": ids}
    while len(cache) > 16:  # the most recent plans only
        cache.pop(next(iter(cache)))
    atomic_write_json(p, cache)


def _run_locked(exp: Experiment, pl: Plan, out_dir: Path, *, n_jobs: int, backend: str,
                data_dirs: list[str] | None, progress: bool, fail_on: str, report: bool,
                address: str | None = None, clusters: list[Any] | None = None) -> RunSummary:
    summary = RunSummary(experiment=exp.name, out=out_dir, n_cells=len(pl.cells))

    def _on_cluster(run: Any) -> None:
        summary.cluster = run
        if clusters is not None:
            clusters.append(run)

    def _count(_row: dict[str, Any]) -> None:
        summary.n_ran += 1

    if pl.to_run:
        from treebench.execute.executor import run_cells
        from treebench.results.provenance import provenance

        context = {"experiment": exp.name, "provenance": provenance()}
        try:
            run_cells(
                pl.to_run, out_dir, n_jobs=n_jobs, backend=backend, data_dirs=data_dirs,
                context=context, show_progress=progress, on_result=_count,
                address=address, data_dir_on_workers=exp.execution.data_dir_on_workers,
                on_cluster=_on_cluster,
            )
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (`lifetime.Terminated`)
            from treebench.execute.lifetime import exit_code_of

            summary.interrupted = True
            summary.exit_code = exit_code_of(exc)
    tables = (out_dir / "results.parquet", out_dir / "results.csv")
    if summary.n_ran or not _tables_current(out_dir):
        df, tables = consolidate(exp, out_dir)
        counts = Counter(df["status"].astype(str).tolist())
    else:  # nothing ran and the tables are newer than every cell file: no pandas needed
        from treebench.results.store import existing_status

        counts = Counter(existing_status(out_dir).values())
    summary.tables = tables
    summary.counts = counts
    if summary.interrupted:  # 130 for Ctrl-C, 143 for SIGTERM
        return summary
    summary.exit_code = exit_code_for(summary.counts, fail_on)
    if report and sum(counts.values()):
        summary.report_dir = write_report(out_dir)
    return summary


def _tables_current(out: Path) -> bool:
    """Both tables exist and are newer than every cell file."""
    from treebench.results.store import cells_dir

    try:
        t = min((out / "results.parquet").stat().st_mtime_ns, (out / "results.csv").stat().st_mtime_ns)
    except OSError:
        return False
    d = cells_dir(out)
    if not d.is_dir():
        return True
    return all(p.stat().st_mtime_ns <= t for p in d.glob("*.json"))


REPORT_HINT = "wait for it to finish, then write the report."


def write_report(results_dir: str | Path, out: str | Path | None = None, formats=("html", "md", "csv", "latex")) -> Path:
    """Write the report of a results directory; returns the report folder."""
    from treebench.report import write_report as _write

    results_dir = Path(results_dir)
    target = Path(out) if out is not None else results_dir / "report"
    check_writable(target, "report directory")
    with _lock(results_dir, hint=REPORT_HINT, optional=True):  # never beside a run's writes
        _write(results_dir, target, formats=tuple(formats))
    return target


def experiment_dirs(root: str | Path) -> list[Path]:
    """The experiment results directories directly under ``root`` (``results/<experiment>/``)."""
    from treebench.report.index import experiment_dirs as _dirs

    return _dirs(Path(root))


def report_tree(root: str | Path, out: str | Path | None = None,
                formats=("html", "md", "csv", "latex")) -> Path:
    """Report every experiment under ``root`` and write a top-level index (and, when datasets
    repeat, a cross-experiment summary); returns the folder of the index."""
    from treebench.report import parse_formats
    from treebench.report.index import write_tree

    root = Path(root)
    target = Path(out) if out is not None else root
    check_writable(target, "report directory")
    from contextlib import ExitStack

    with ExitStack() as locks:  # never beside a run's writes
        for d in experiment_dirs(root):
            locks.enter_context(_lock(d, hint=REPORT_HINT, optional=True))
        return write_tree(root, target, parse_formats(list(formats)))
