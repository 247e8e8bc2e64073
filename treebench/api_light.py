"""The light half of the API: what the command line calls without loading `treebench.api`
(the config schema, the executors and the report), so that a rerun with nothing to do, an
unchanged report and the listings answer at once.

* the plan cache's answers (`answer`, `report_unchanged`) and the run options they check;
* sweep axes read from the command line (`sweep_axes`, `parse_axis`);
* the registries' declarations (`algorithm_rows`, `binarizer_rows`, `metric_rows`) and the
  datasets (`dataset_rows`, `describe_dataset`, `fetch_datasets`);
* the cells of a results folder (`matching_cells`, `cell_tree_text`), its tables refreshed
  and checked (`refresh_results`, `check_results`), the state of a SLURM run
  (`slurm_status`) and the verification of a config's claims (`verify_dir`).

Modules that load numpy or pandas are imported inside the functions that need them.
`treebench.api` re-exports `parse_axis`, `SweepError`, `refresh_results`, `check_results` and
`ResultsCheck`.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from treebench.utils import atomic
from treebench.execute import experiments as xp
from treebench import report
from treebench.algorithms.objectives import askable, problem_of
from treebench.errors import ConfigError, UserError
from treebench.execute.lock import LOCK_NAME, holders, results_lock
from treebench.execute.plan_cache import (  # noqa: F401 - the run options and the fast answers: API
    REPORT_STAMP,
    RunOptions,
    answer,
    check_options,
    manifest_key,
    report_stamp,
    report_unchanged,
)
from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS, METRICS
from treebench.results.cellfile import cells_dir
from treebench.results.index import (add_hashes, foreign_tables, quarantine, read_index,
                                     refuse_foreign_tables, scan, set_aside, tables_state)
from treebench.results.store import (ResultsWriteError, earlier_state, existing_status,
                                     refresh_tables, select)
from treebench.utils.sweeps import SweepFlagError, describe_applied  # noqa: F401 - API
from treebench.utils.sweeps import SWEEP_AXES, expand_values, parse_scalar
from treebench.utils.sweeps import parse_axis as _parse


class SweepError(UserError):
    """A `treebench sweep` flag is wrong (reported as a flag error, not a config error)."""


def parse_axis(text: str, flag: str = "param", written: str | None = None) -> list[Any]:
    """Parse a command-line sweep value: ``1,2,4,all``, ``2..6`` or ``2..4,8``; an error names
    the flag as ``written`` before its values (``--param k=``; default ``--flag ``)."""
    try:
        return _parse(flag, text, written)
    except SweepFlagError as exc:
        raise SweepError(str(exc)) from None


def sweep_axes(k: str | None = None, depth: str | None = None, lambda_: str | None = None,
               params: list[str] | None = None) -> dict[str, list[Any]]:
    """The axes of `treebench sweep`: ``--k``, ``--depth``, ``--lambda`` and each ``--param
    NAME=VALUES`` (``params``), their values parsed by `parse_axis`. Raises `UserError` for a
    ``--param`` without ``=`` and when no axis is given."""
    axes: dict[str, list[Any]] = {}
    for flag, text in (("k", k), ("depth", depth), ("lambda", lambda_)):
        if text is not None:
            axes[flag] = parse_axis(text, flag)
    flags = set(axes)
    for item in params or []:
        if "=" not in item:
            raise UserError(f"--param `{item}`: write it as NAME=VALUES, e.g. --param min_samples_leaf=1,5.")
        name, _, text = item.partition("=")
        name = name.strip()
        if not name:
            raise UserError(f"--param `{item}` names no parameter; write it as NAME=VALUES, e.g. "
                            f"--param min_samples_leaf=1,5.")
        _no_second_setting(flags, name, [item.partition("=")[0].strip() for item in params or []])
        axes[name] = parse_axis(text, name, f"--param {name}=")
    if not axes:
        raise UserError("sweep needs at least one axis: --k, --depth, --lambda or --param NAME=VALUES.")
    return axes


def _no_second_setting(flags: set[str], name: str, param_names: list[str]) -> None:
    """Refuse ``--param NAME=...`` when another flag sets the parameter ``NAME`` too
    (``--param`` with the same name, or one of the ``flags`` given, ``--k``/``--depth``/
    ``--lambda``, that stands for it): one of the two values would be dropped without a word."""
    if param_names.count(name) > 1:
        raise UserError(f"--param `{name}` is given twice; give its values once, e.g. "
                        f"--param {name}=1,2.")
    for flag in flags:
        if name in SWEEP_AXES[flag]:
            raise UserError(f"--{flag} and --param {name} both set `{name}`; give its values "
                            f"with one of them.")


def _key_values(items: list[str] | None, flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` options given with ``flag`` (values parsed as numbers, booleans, null, or
    comma lists)."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise UserError(f"{flag} `{item}`: write it as KEY=VALUE, e.g. {flag} max_splits=8.")
        key, _, text = item.partition("=")
        vals = expand_values(text) if "," in text else [parse_scalar(text)]
        out[key.strip()] = vals if "," in text else vals[0]
    return out


def report_formats(text: str) -> list[str]:
    """``--format`` of `treebench report` as the report reads it (`report.parse_formats`:
    case, aliases such as ``tex``; an unknown name is a `UserError`)."""
    return report.parse_formats(text)


def report_page(folder: Path, formats: list[str], tree: bool) -> Path:
    """The page to open in a report folder: index.html, else the Markdown index (``index.md``
    of a folder of experiments, ``summary.md`` of one), else the folder."""
    if "html" in formats:
        return folder / "index.html"
    if "md" in formats:
        return folder / ("index.md" if tree else "summary.md")
    return folder


# ----------------------------------------------------------------------------- registries
def algorithm_rows(all_: bool = False) -> list[tuple[str, ...]]:
    """One row per registered algorithm (test-only ones with ``all_``): name, availability,
    the inputs it takes, the problem its defaults solve (with the objectives an entry may ask
    for, `treebench.algorithms.objectives`), its parameters with their defaults, its
    description."""
    rows = []
    for e in ALGORITHMS:
        if "test" in e.tags and not all_:
            continue
        avail = "yes" if e.available else f"no: needs {', '.join(e.missing)}"
        params = ", ".join(f"{k}={v!r}" for k, v in e.parameters().items())
        solves = problem_of(e.name, e.parameters(), tuple(e.tags))
        if askable(e.name):
            solves += f" ({', '.join(askable(e.name))})"
        rows.append((e.name, avail, _takes(e.inputs), solves, params, e.description))
    return rows


def _takes(kinds: frozenset[str]) -> str:
    """The input kinds of a learner in the words of `treebench algorithms`."""
    words = {"numeric": "raw", "categorical": "categorical", "missing": "missing",
             "weights": "weights", "multiclass": "multiclass", "regression": "regression"}
    shown = ["0/1" if "numeric" not in kinds else "0/1, raw"]
    shown += [w for k, w in words.items() if k in kinds and k != "numeric"]
    return ", ".join(shown)


def binarizer_rows() -> list[tuple[str, ...]]:
    """One row per registered binarizer: name, the columns it is for (numeric, categorical or
    any), its parameters with their defaults (``-`` for none), its description."""
    rows = []
    for e in BINARIZERS:
        params = ", ".join(f"{k}={v!r}" for k, v in e.parameters().items())
        kind = ", ".join(x for x in e.tags if x in ("numeric", "categorical")) or "any"
        rows.append((e.name, kind, params or "-", e.description))
    return rows


def metric_rows() -> list[tuple[str, ...]]:
    """One row per metric of the metric registry (`treebench.metrics`): name, results columns,
    task, which way is better (higher, lower or blank), description."""
    from treebench import metrics

    rows = []
    for m in metrics.all_metrics():
        better = {True: "higher", False: "lower", None: ""}[m.greater_is_better]
        rows.append((m.name, ", ".join(m.columns()), m.task, better, m.description))
    return rows


def metric_import_errors() -> dict[str, str]:
    """The plug-in metrics that could not be imported, with why (shown, never raised)."""
    return dict(METRICS.import_errors)


# ----------------------------------------------------------------------------- datasets
def dataset_rows(data_dirs: list[str] | None = None, tags: tuple[str, ...] | list[str] = ()
                 ) -> list[tuple[str, ...]]:
    """One row per dataset of the catalog (those with every tag of ``tags``): name,
    availability (embedded, local, downloadable, missing), the folder its files were found in
    or where to get it, shape, size, loader parameters with their defaults, description."""
    from treebench.data.manage import list_datasets

    rows = []
    for r in list_datasets(data_dirs, tags=tags):
        size = "" if not r.get("bytes") else f"{r['bytes'] / 1e6:.2f} MB"
        shape = "" if not r.get("shape") else " x ".join(str(v) for v in r["shape"])
        params = ", ".join(f"{k}={v!r}" for k, v in DATASETS.get(r["name"]).parameters().items())
        rows.append((r["name"], str(r.get("availability", "")), _where_found(r), shape, size,
                     params, r.get("description") or ""))
    return rows


def _where_found(row: dict[str, Any]) -> str:
    """The folder a dataset's files were found in, else where to get it."""
    found = [w for w in row.get("where") or [] if w]
    if found:
        return str(Path(str(found[0])).parent)
    return row.get("source") or ("bundled" if row.get("availability") == "embedded" else "")


def file_options(options: list[str] | None = None, *, label: str | None = None,
                 header: str | None = None, delimiter: str | None = None,
                 categorical: str | None = None, test_path: str | None = None) -> dict[str, Any]:
    """The loader options of a local data file from the command line: each ``KEY=VALUE`` of
    ``options``, then the named ones (``label`` parsed as a name or a position,
    ``categorical`` as auto, all, none or a comma list of names and positions)."""
    opts = _key_values(options, "--option")
    for key, value in (("label", label), ("header", header), ("delimiter", delimiter),
                       ("test_path", test_path)):
        if value is not None:
            opts[key] = parse_scalar(value) if key == "label" else value
    if categorical is not None:
        cats = [parse_scalar(c) for c in categorical.split(",") if c.strip()]
        opts["categorical"] = categorical if categorical in ("auto", "all", "none") else cats
    return opts


def describe_dataset(name: str, options: dict[str, Any] | None = None,
                     binarization: str | None = None, params: list[str] | None = None,
                     data_dirs: list[str] | None = None, offline: bool | None = None
                     ) -> dict[str, Any]:
    """Load a dataset of the catalog, or the local file ``name`` with loader ``options``
    (`file_options`), and describe it (`treebench.data.manage.describe`); with
    ``binarization``, also what that binarizer makes of it under ``params`` (``KEY=VALUE``).
    Load-time caveats are not warned: the description holds them."""
    import warnings

    from treebench.data.base import load_dataset
    from treebench.data.manage import binarization_summary, describe

    opts = dict(options or {})
    is_file = Path(name).expanduser().is_file() or (name not in DATASETS and ("/" in name or "." in name))
    if not is_file and opts:
        raise UserError(f"`{name}` is a registered dataset; --label, --header, ... and --option apply to local files only.")
    if is_file:
        try:
            DATASETS.get("file").check_param_names(opts)
        except ConfigError as exc:
            raise UserError(f"--option: {exc}") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # caveats are printed as notes
        if is_file:
            ds = load_dataset("file", {"path": name, **opts})
        else:
            ds = load_dataset(name, None, data_dirs=data_dirs, offline=offline)
    info = describe(ds)
    if binarization is not None:
        info["binarization"] = binarization_summary(ds, binarization, _key_values(params, "--param"))
    elif params:
        raise UserError("--param needs --binarization NAME (see `treebench binarizers`).")
    return info


def format_dataset_info(info: dict[str, Any]) -> str:
    """`describe_dataset`'s description as text for people."""
    from treebench.data.manage import format_info

    return format_info(info)


def downloadable_datasets(data_dirs: list[str] | None = None) -> list[str]:
    """The catalog datasets that can be downloaded and are not here yet (aliases left out)."""
    from treebench.data.manage import list_datasets

    return [r["name"] for r in list_datasets(data_dirs)
            if r.get("availability") == "downloadable" and not r.get("alias_of")]


def fetch_datasets(names: list[str], data_dirs: list[str] | None = None,
                   offline: bool | None = None) -> list[dict[str, Any]]:
    """Download ``names`` into the user cache and parse them, checking each file's sha256
    (`treebench.data.manage.fetch`); one row (name, status, message) per dataset."""
    from treebench.data.manage import fetch

    return fetch(names, data_dirs=data_dirs, offline=offline)


# ----------------------------------------------------------------------------- results folders
def matching_cells(results_dir: Path, where: list[str] | None = None,
                   status: list[str] | None = None, *, all_cells: bool = False) -> tuple[Any, list[str]]:
    """The cells of ``results_dir`` matching the ``--where`` conditions and ``status``, as a
    table, and a note per unusable cell file (`treebench.results.find.matching_cells`)."""
    from treebench.results import find

    return find.matching_cells(results_dir, where, status, all_cells=all_cells)


def cell_columns(rows: Any) -> tuple[list[str], list[str]]:
    """The columns a listing of the cells ``rows`` shows, and which of them are parameters
    whose values differ between the rows (placed after cell_id, dataset and algorithm)."""
    from treebench.results.find import SHOWN

    varying = [c for c in rows.columns if c.startswith(("param_", "bparam_"))
               and rows[c].astype(str).nunique() > 1]
    cols = [c for c in SHOWN if c in rows.columns and c != "algorithm_params"]
    cols[3:3] = varying
    return cols, varying


def cell_text(v: Any) -> str:
    """A value of the cells table as shown: blank when missing, a float to 4 significant
    digits."""
    import pandas as pd

    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def check_show_request(cell_id: str | None, where: list[str] | None, format: str) -> None:
    """Refuse a `treebench show` request that names no cell, names it twice, or asks for an
    unknown format (`UserError`)."""
    from treebench.results import show

    show.check_request(cell_id, where, format)


def one_cell_id(rows: Any, results_dir: Path, where: list[str]) -> str:
    """The id of the one cell of ``rows`` (the cells matching ``where``); `UserError` when
    none or several match."""
    from treebench.results import find

    return find.one_cell_id(rows, results_dir, where)


def cell_tree_text(results_dir: Path, cell_id: str, format: str = "text") -> str:
    """The fitted tree of a cell (an id or a unique prefix of one) as readable rules, JSON or
    Graphviz dot, under a header naming the cell."""
    from treebench.results import show

    return show.tree_text(show.read_shown(results_dir, cell_id), format)


def slurm_status(results_dir: Path) -> Any:
    """The cells of a SLURM run by state (queued, running, done, failed, not run), from the
    results folder and the scheduler (`treebench.execute.slurm.status`); `UserError` when no
    job was submitted there."""
    from treebench.execute import slurm

    if not slurm.submissions(results_dir):
        raise UserError(f"{results_dir}: no SLURM submission here; `treebench run CONFIG "
                        f"--backend slurm` makes them.")
    return slurm.status(results_dir, existing_status(results_dir))


# ----------------------------------------------------------------------------- verify
def experiments_to_verify(path: Path) -> list[Path]:
    """``path`` when it holds results, else the results directories below it
    (`treebench.verify.experiment_dirs`)."""
    from treebench import verify

    return verify.experiment_dirs(path)


def verify_dir(results_dir: Path, *, config: Path | None = None, profile: str | None = None,
               all_cells: bool = False) -> list[Any]:
    """One `treebench.verify.Verification` per experiment recorded in ``results_dir`` (or for
    ``config``): its claims checked on exactly the cells it defines (``all_cells``: on every
    cell of the folder)."""
    from treebench import verify

    return verify.verify_dir(results_dir, config=config, profile=profile, all_cells=all_cells)


def verdict_table(v: Any) -> tuple[list[str], list[list[str]]]:
    """The column names of a verification's table and one row of text per verdict."""
    from treebench.verify import HEADER

    return list(HEADER), v.rows()


def verify_exit_code(verifications: list[Any]) -> int:
    """0 when every verification passed, else `treebench.verify.EXIT_FAILED`."""
    from treebench.verify import EXIT_FAILED

    return 0 if all(v.passed for v in verifications) else EXIT_FAILED


def write_verdicts(found: list[tuple[Path, Any]], json_out: Path) -> None:
    """Write the verdicts of ``found`` ((results directory, verification) pairs) as JSON:
    to the file ``json_out`` for one, else into the folder ``json_out``, one file per
    directory (per directory and experiment when a directory holds several)."""
    from treebench.verify import write_json

    many = len(found) > 1
    if many and json_out.exists() and not json_out.is_dir():
        raise UserError(f"--json {json_out}: the verdicts of {len(found)} experiments go into a "
                        f"folder, one file each, and this is a file; give a folder.")
    if not many and json_out.is_dir():
        raise UserError(f"--json {json_out}: this is a folder; give the file to write the "
                        f"verdicts to, e.g. {json_out / 'verdicts.json'}.")
    targets = []
    for d, v in found:
        target = json_out
        if many:
            name = d.name if sum(x is d for x, _ in found) == 1 else f"{d.name}-{v.experiment}"
            target = json_out / f"{name}.json"
        _check_verdicts_target(target, [x for x, _ in found])
        targets.append(target)
    for (d, v), target in zip(found, targets):
        try:
            if many:
                json_out.mkdir(parents=True, exist_ok=True)
            write_json(v, target)
        except OSError as exc:
            reason = (exc.strerror or type(exc).__name__).lower()
            raise UserError(f"--json {target}: cannot write the verdicts ({reason}).") from None


def _check_verdicts_target(target: Path, results_dirs: list[Path]) -> None:
    """Refuse to write verdicts to ``target`` when it lies inside a results directory (a cell
    file, the manifest or a table would be replaced) or is an existing file that holds no
    verdicts (a config, a table, a user's file): `write_verdicts` replaces only its own files."""
    where = target.resolve()
    for d in results_dirs:
        if where.is_relative_to(Path(d).resolve()):
            raise UserError(f"--json {target}: this is inside the results directory {d}, whose "
                            f"files only treebench run writes; give a path outside it.")
    if target.is_file():
        try:
            data = json.loads(target.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            data = None
        if not (isinstance(data, dict) and {"experiment", "verdicts"} <= data.keys()):
            raise UserError(f"--json {target}: this file exists and holds no verdicts of "
                            f"`treebench verify`, so it is not replaced; give a new path.")


# ----------------------------------------------------------------------------- results check
#: what a command that meets a results folder locked by a run tells to do
LOCK_HINT = "wait for it or give another --out."


def refresh_results(results_dir: str | Path) -> list[str]:
    """Rewrite the tables of ``results_dir`` when they no longer match its usable cell files
    (changed cells, a damaged or missing table), under the directory's lock; a directory that
    another run is writing, or that cannot be written, is left as it is (readers then rebuild
    the table in memory). Returns a note when the tables were rewritten."""
    d = Path(results_dir)
    if not (d / "cells").is_dir():
        refuse_foreign_tables(d, "give a directory written by `treebench run`.")
        return []
    refuse_foreign_tables(d, "rewriting the tables would replace it: move it away first.")
    try:
        with results_lock(d, hint=LOCK_HINT, optional=True):
            _, why, current = refresh_tables(d)
        notes = [f"rewrote the results tables from the cell files ({why})"] if why else []
    except ResultsWriteError as exc:  # a read-only folder, a full disk
        current, notes = scan(d), [f"{str(exc).split(';')[0]}, so the results tables were not "
                                   f"rewritten; the results are read from the cell files"]
    except (UserError, OSError):  # another run writes it
        return []
    # an unusable cell file is named wherever it is met: its cell is missing from the tables
    problems = current.problem_notes(d)
    notes += problems[:MAX_NAMED]
    if len(problems) > MAX_NAMED:
        notes.append(f"and {len(problems) - MAX_NAMED} more unusable cell file(s): "
                     f"`treebench results check {d}` lists them all")
    if problems:
        notes.append(f"their cells are missing from the tables and the report; `treebench run` "
                     f"with the config runs them again, `treebench results check {d} --repair` "
                     f"sets the files aside")
    return notes


#: the unusable cell files named one per line by `refresh_results` (the rest are counted)
MAX_NAMED = 5


@dataclass
class ResultsCheck:
    """What `check_results` found in a results directory (and did, with ``repair``)."""

    directory: Path
    counts: Counter = field(default_factory=Counter)
    problems: dict[str, str] = field(default_factory=dict)  # cell file -> why it is unusable
    tables: str | None = None  # why the tables are stale, None when current
    manifest: str = "ok"
    experiments: list[tuple[str, int, int]] = field(default_factory=list)  # key, defined, missing
    n_unclaimed: int = 0  # usable cells that no recorded experiment defines
    repaired: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)  # stale cells moved to quarantine/
    foreign: dict[str, str] = field(default_factory=dict)  # table files treebench did not write

    @property
    def healthy(self) -> bool:
        return not self.problems and self.tables is None and self.manifest == "ok" \
            and not self.foreign

    @property
    def repairable(self) -> bool:
        """Whether `--repair` would change something: unusable files to set aside or tables
        to rewrite (neither a manifest nor another tool's table is for it to fix)."""
        return not self.foreign and (bool(self.problems) or self.tables is not None)


def check_results(results_dir: str | Path, *, repair: bool = False,
                  prune_stale: bool = False) -> ResultsCheck:
    """Check a results directory: every cell file against its content hash, name and the
    schema; the tables against the set of usable cells; the manifest and the cells each
    recorded experiment defines. ``repair`` (under the directory's lock) quarantines unusable
    cell files and rewrites stale or damaged tables; ``prune_stale`` (a repair too) also moves
    the cells that no recorded experiment defines into quarantine/."""
    d = Path(results_dir)
    if not cells_dir(d).is_dir():
        raise UserError(f"{d}: no cells/ folder here; give a directory written by `treebench run`.")
    res = ResultsCheck(d)
    repair = repair or prune_stale
    if repair:
        refuse_foreign_tables(d, "rewriting the tables would replace it: move it away first.")
    res.foreign = foreign_tables(d)
    with results_lock(d, hint=LOCK_HINT) if repair else contextlib.nullcontext():
        current = scan(d, save=repair, full=True)  # every file read: the index is not evidence
        res.problems = dict(current.problems)
        if prune_stale:
            try:
                stale = xp.stale_cells(xp.read_manifest(d), current.cells)
            except xp.ManifestError:
                stale = set()
            res.pruned = set_aside(d, {current.cells[c].file: xp.STALE for c in sorted(stale)},
                                   "is stale")
            for c in stale:
                current.cells.pop(c)
        if repair:
            res.repaired += quarantine(d, current)
            res.repaired += add_hashes(d, current)
            res.problems = {}
            _, why, _ = refresh_tables(d, current=current)
            if why is not None:
                res.repaired.append(f"rewrote results.parquet and results.csv ({why})")
        else:
            sel = select(d, current)
            res.tables = tables_state(d, sel) or earlier_state(d, sel)
    res.counts = Counter(e.status for e in current.cells.values())
    try:
        man = xp.read_manifest(d)
        res.manifest = "ok" if man is not None else "missing"
    except xp.ManifestError:
        man, res.manifest = None, "damaged"
    claimed: set[str] = set()
    for rec in xp.records(man):
        ids = xp.cell_ids(rec)
        if ids is None:
            continue
        claimed |= set(ids)
        res.experiments.append((rec["key"], len(ids), sum(i not in current.cells for i in ids)))
    res.n_unclaimed = len(set(current.cells) - claimed) if res.experiments else 0
    return res


# ----------------------------------------------------------------------------- reports
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


def lock_results(out: Path, hint: str = LOCK_HINT, optional: bool = False):
    """An exclusive lock on ``out`` (`treebench.execute.lock.results_lock`): two processes
    writing the same results directory would remove each other's partial files and race on
    the tables."""
    return results_lock(out, hint=hint, optional=optional)


REPORT_HINT = "wait for it to finish, then write the report."


#: the mark a report written without figures adds to the formats its stamp records, so that a
#: report asked for with figures is not taken for it (`stamp_formats`)
NO_FIGURES = "no-figures"


def stamp_formats(formats, figures: bool = True) -> tuple[str, ...]:
    """What a report's stamp records of how it was asked for: its formats, and `NO_FIGURES`
    when it was written without figures."""
    return tuple(formats) + (() if figures else (NO_FIGURES,))


def write_report(results_dir: str | Path, out: str | Path | None = None,
                 formats=("html", "md", "csv", "latex"), *, keep_current: bool = True,
                 figures: bool = True, options=None) -> Path:
    """Write the report of a results directory (its figures unless ``figures`` is False: the
    tables and pages alone, without matplotlib; ``options``: report options over the run's,
    `treebench.report.write_report`); returns the report folder. With ``keep_current``, a
    report in the default folder that is current
    (`treebench.execute.plan_cache.report_unchanged`) and was asked for alike is kept as it
    is; the command line asks that before it imports this module and passes False."""
    results_dir = Path(results_dir)
    target = Path(out) if out is not None else results_dir / "report"
    refuse_foreign_tables(results_dir, "give a directory written by `treebench run`.")
    check_writable(target, "report directory")
    stamp = stamp_formats(formats, figures)
    with lock_results(results_dir, hint=REPORT_HINT, optional=True), \
            _out_lock(target, out is not None):  # never beside a run's writes, or a report's
        if keep_current and out is None and report_unchanged(results_dir, stamp, options):
            return target
        try:
            report.write_report(results_dir, target, formats=tuple(formats), figures=figures,
                                options=options)
        except OSError as exc:
            raise report_write_error(target, results_dir, exc) from None
        if out is None:
            _stamp_report(results_dir, stamp, options)
    return target


def _out_lock(target: Path, given: bool):
    """The lock of a report folder given with ``--out`` (`lock_results`, reentrant when it is
    the results folder itself): two reports written into one folder at once left one's pages
    beside the other's tables and figures, and both said they were done."""
    if not given:
        return contextlib.nullcontext()  # RESULTS_DIR/report: the results folder's lock holds it
    return lock_results(target, hint="wait for it, or give another --out.", optional=True)


def report_write_error(target: Path, results_dir: Path, exc: OSError) -> UserError:
    """The one sentence for a report that could not be written: the file at fault, the cause
    and what to do about that cause (a full disk, a permission, a file or folder in the way)."""
    import errno

    where = Path(exc.filename2 or exc.filename) if (exc.filename2 or exc.filename) else target
    if where.name.startswith(".") and where.name.endswith(".tmp"):  # `atomic.temp_path`'s name
        where = where.with_name(where.name[1:].rsplit(".", 2)[0])
    reason = (exc.strerror or type(exc).__name__).lower()
    fix = {errno.ENOSPC: "free space", errno.EDQUOT: "free space",
           errno.EACCES: "fix the permissions", errno.EPERM: "fix the permissions",
           errno.EROFS: "give a writable --out"}.get(exc.errno or 0,
                                                     f"move {where} out of the way")
    return UserError(f"{where}: cannot write the report ({reason}); the results tables and "
                     f"cell files are complete: {fix}, then run `treebench report "
                     f"{results_dir}` again.")


def _stamp_report(results_dir: Path, formats: tuple[str, ...], options=None) -> None:
    """Record what the report was built from, and the report ``options`` given
    (`treebench.execute.plan_cache.report_current`)."""
    digest = (read_index(results_dir).get("tables") or {}).get("digest")
    manifest = manifest_key(results_dir)  # under the lock that kept runs out while it was read
    if digest:
        with contextlib.suppress(OSError):  # a read-only folder: the report is redrawn next time
            atomic.write_json(results_dir / "report" / REPORT_STAMP,
                              report_stamp(digest, formats, results_dir / "report", manifest,
                                           options))


def experiment_dirs(root: str | Path) -> list[Path]:
    """The experiment results directories directly under ``root`` (``results/<experiment>/``)."""
    from treebench.report.index import experiment_dirs as _dirs

    return _dirs(Path(root))


def report_tree(root: str | Path, out: str | Path | None = None,
                formats=("html", "md", "csv", "latex"), figures: bool = True) -> Path:
    """Report every experiment under ``root`` (with figures unless ``figures`` is False) and
    write a top-level index (and, when datasets repeat, a cross-experiment summary); returns
    the folder of the index."""
    from treebench.report.index import write_tree

    root = Path(root)
    target = Path(out) if out is not None else root
    check_writable(target, "report directory")
    from contextlib import ExitStack

    with ExitStack() as locks:  # never beside a run's writes
        for d in experiment_dirs(root):
            locks.enter_context(lock_results(d, hint=REPORT_HINT, optional=True))
        return write_tree(root, target, report.parse_formats(list(formats)), figures=figures)


def report_results(results_dir: str | Path, out: str | Path | None = None,
                   formats=("html", "md", "csv", "latex"), *, keep_current: bool = True,
                   figures: bool = True, options=None) -> Path:
    """The report of a results directory (`write_report`, with the report ``options`` given)
    or of a folder of them (`report_tree`; options name one experiment's solvers, so they
    are refused there), with figures unless ``figures`` is False; returns the page to open
    (`treebench.api_light.report_page`). Raises
    `UserError` for a folder with no results, naming the run that is writing its first cells."""
    results_dir = Path(results_dir)
    fmts = list(formats)
    if (results_dir / "results.parquet").is_file() or (results_dir / "cells").is_dir():
        written = write_report(results_dir, out, formats=fmts, keep_current=keep_current,
                               figures=figures, options=options)
        return report_page(written, fmts, False)
    if results_dir.is_dir() and experiment_dirs(results_dir):
        flags = [f for k, f in report.OPTION_FLAGS.items() if (options or {}).get(k) is not None]
        if flags:
            raise UserError(f"{results_dir} is a folder of experiments' results, and "
                            f"{flags[0]} names the solvers of one experiment; give that "
                            f"experiment's results folder.")
        return report_page(report_tree(results_dir, out, formats=fmts, figures=figures), fmts,
                           True)
    writers = holders(results_dir / LOCK_NAME)
    if writers:
        raise UserError(
            f"{results_dir}: a run (pid {writers[0]}) is writing this folder and has not "
            f"written its results tables yet; {REPORT_HINT}")
    raise UserError(
        f"{results_dir}: no results.parquet here or in its sub-folders; give a directory "
        f"written by `treebench run` (or the folder that holds several)."
    )
