"""The plan cache: a rerun with nothing to do answered without validating the config.

`treebench run` on a config whose cells are all done, in a folder whose report is current,
answers from ``.plan-cache.json`` (the cell ids this exact config text, overrides, sweep and
seed expanded to last time), the manifest and the cell index, without importing the config
schema, any learner or numpy: a fraction of a second. Anything that does not match (another
config text, a cell file removed or damaged, tables or report out of date, a cell to retry)
returns None and the caller takes the full path. The summary of a run (`RunSummary`) and its
exit code (`exit_code_for`) live here because both paths produce them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from treebench import __version__, envvars
from treebench.utils import safe_yaml
from treebench.execute import experiments as xp
from treebench.utils.atomic import files_key, files_unchanged, read_json_object, write_json
from treebench.results.cell import canonical_json
from treebench.errors import UserError
from treebench.execute.jobs import check_n_jobs
from treebench.utils.ranges import int_problem
from treebench.results.index import scan, tables_state
from treebench.results.store import Selection, earlier_state, load_rows, select

if TYPE_CHECKING:
    from treebench.config.grid import Skipped

# the same as `schema.ERROR_STATUSES` (a test checks it), written out where the run's exit
# codes are decided
FAIL_STATUSES = ("oom", "error", "crashed")  # exit code 3; timeouts exit 4 with --fail-on timeout
#: the statuses ``--retry`` takes
RETRYABLE = ("timeout", "oom", "error", "crashed")
#: the values ``--fail-on`` takes (`exit_code_for`)
FAIL_ON = ("error", "timeout", "never")

#: bump when cell ids are computed differently (the plan cache must not outlive the scheme;
#: 3: ids hash the fingerprint of the data a cell reads; 4: and the data paths as the config
#: wrote them, not as they are opened from the current folder)
ID_SCHEME = 4
PLAN_CACHE = ".plan-cache.json"


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
    pairs_skipped: list[Skipped] = field(default_factory=list)  # config.grid.Skipped
    splits: dict[str, str] = field(default_factory=dict)  # dataset -> the split it got, in words
    data_warnings: list[str] = field(default_factory=list)  # e.g. splits that are not stratified
    notes: list[str] = field(default_factory=list)  # what the results store found and did
    failures: list[tuple[str, str, int]] = field(default_factory=list)  # status, message, cells
    #: warnings the cells run now raised (their rows' ``fit_warnings``): learner label,
    #: warning, number of cells; most frequent first
    fit_warnings: list[tuple[str, str, int]] = field(default_factory=list)
    cluster: Any = None  # a dask/ray run: its `treebench.execute.cluster.ClusterRun`


@dataclass(frozen=True)
class RunOptions:
    """How `run_experiment` runs a config: the options of ``treebench run`` and ``sweep``.

    ``seed``, ``time_limit``, ``memory_limit``, ``sweep``, ``overrides`` and ``profile`` change
    the experiment (``profile`` applies a named reduction of its ``profiles:``); ``out``,
    ``n_jobs``, ``backend`` and ``address`` say where and how its cells run (the config's
    ``execution:`` when None). ``retry`` reruns the cells with those statuses; ``force`` reruns
    every cell and needs ``overwrite`` when the directory holds finished cells;
    ``add_experiment`` lets a config write into a folder that holds another experiment's cells.
    ``fail_on`` picks the exit code (`exit_code_for`); ``report=False`` skips the report."""

    out: str | Path | None = None
    n_jobs: int | None = None
    backend: str | None = None
    address: str | None = None
    seed: int | None = None
    time_limit: float | None = None
    memory_limit: float | None = None
    sweep: dict[str, list[Any]] | None = None
    overrides: dict[str, Any] | None = None
    profile: str | None = None
    force: bool = False
    overwrite: bool = False
    retry: tuple[str, ...] = ()
    add_experiment: bool = False
    fail_on: str = "error"
    data_dirs: list[str] | None = None
    offline: bool | None = None
    progress: bool = True
    report: bool = True
    #: ``--backend slurm``: submit the job arrays and return without following them
    detach: bool = False


#: the command-line flags that set a config key (named in messages about the key's value)
OVERRIDE_FLAGS = {"execution.max_cells": "--max-cells"}


def check_options(o: RunOptions) -> None:
    """Refuse options that no config or results folder can make valid, one sentence each,
    before anything else looks at the config or the folder: ``--retry`` and ``--fail-on``
    words, the environment variables (`treebench.envvars.check`), the limits (finite and
    positive), ``--n-jobs`` (not 0), ``--backend`` (a known one), ``--out`` naming a file, and every integer of the options and overrides in the
    range of its key (`treebench.utils.ranges.int_problem`)."""
    envvars.check()
    if o.fail_on not in FAIL_ON:
        raise UserError(f"--fail-on must be {', '.join(FAIL_ON[:-1])} or {FAIL_ON[-1]} "
                        f"(got {o.fail_on!r}).")
    bad = [r for r in o.retry if r not in RETRYABLE]
    if bad:
        raise UserError(f"--retry takes statuses among {', '.join(RETRYABLE)} (got {bad[0]!r}).")
    for flag, value, unit in (("--time-limit", o.time_limit, "seconds"),
                              ("--memory-limit", o.memory_limit, "megabytes")):
        if value is not None and not (isinstance(value, int | float) and 0 < value < math.inf):
            raise UserError(f"{flag} must be a positive, finite number of {unit} (got {value}).")
    ints = {"--seed": ("seed", o.seed), "--n-jobs": ("n_jobs", o.n_jobs)}
    ints |= {OVERRIDE_FLAGS.get(k, f"`{k}`"): (k.split(".")[-1], v)
             for k, v in (o.overrides or {}).items()}
    for flag, (key, value) in ints.items():
        problem = int_problem(value, key)
        if problem:
            raise UserError(f"{flag}: {problem}.")
    if o.n_jobs is not None:
        check_n_jobs(o.n_jobs)
    if o.backend is not None:
        from treebench.config.schema import BACKENDS  # the config layer only when asked

        if o.backend not in BACKENDS:
            raise UserError(f"--backend must be one of {', '.join(BACKENDS)} "
                            f"(got {o.backend!r}).")
    if o.out is not None and Path(o.out).exists() and not Path(o.out).is_dir():
        raise UserError(f"--out {o.out} is a file, not a folder; give the results folder.")


def exit_code_for(counts: Counter, fail_on: str) -> int:
    if fail_on == "never":
        return 0
    if any(counts.get(s, 0) for s in FAIL_STATUSES):
        return 3
    if fail_on == "timeout" and counts.get("timeout", 0):
        return 4
    return 0


def failure_kinds(out: Path, cell_ids: list[str]) -> list[tuple[str, str, int]]:
    """(status, first line of the error, number of cells) for each distinct failure among
    ``cell_ids``, most frequent first."""
    kinds: Counter = Counter()
    for row in load_rows(out, sorted(cell_ids)):
        first = str(row.get("error") or "").strip().splitlines()
        kinds[(str(row.get("status")), first[0][:200] if first else "")] += 1
    return [(st, msg, n) for (st, msg), n in kinds.most_common()]


def count_warnings(kinds: Counter, row: dict[str, Any]) -> None:
    """Add the finished cell's ``row`` to ``kinds``: one per (learner label, warning) of its
    ``fit_warnings`` (a JSON list; a value that is not one counts as itself)."""
    text = row.get("fit_warnings")
    if not text:
        return
    try:
        items = json.loads(text)
    except (TypeError, ValueError):
        items = [text]
    label = str(row.get("algorithm_label") or row.get("algorithm") or "")
    for item in items if isinstance(items, list) else [items]:
        kinds[(label, str(item))] += 1


def plan_key(config: Any, *, seed: int | None, overrides: dict[str, Any] | None,
              sweep: dict[str, list[Any]] | None) -> str | None:
    """A hash of everything the cell ids depend on: the config file's text, the overrides, the
    sweep and the seed (limits are not identity), plus the id scheme and treebench's version."""
    if not isinstance(config, str | Path):
        return None
    try:
        text = Path(config).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    ov = {k: v for k, v in (overrides or {}).items() if not k.startswith("limits.")}
    # relative file paths in the config resolve against the working directory
    where = [str(Path.cwd()), str(Path(config).resolve().parent),
             [str(p) for p in envvars.path_list("TREEBENCH_DATA_DIR")]]
    blob = canonical_json([ID_SCHEME, __version__, text, ov, sweep or {}, seed, where])
    return hashlib.sha256(blob.encode()).hexdigest()


def default_out_of(config: Any) -> Path | None:
    """results/<name> of a config file, cheaply: its top-level ``name`` as the safe YAML reader
    reads it (a few milliseconds, no schema, no learner imported), else its file stem. None
    when the file cannot be read or the name is no single folder name; the full path then runs
    and reports why. A plan cache is trusted only for the exact config text that wrote it, so a
    name the schema would refuse can never take this path to a wrong result."""
    try:
        raw = safe_yaml.load(Path(config).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    name = raw.get("name", Path(config).stem) if isinstance(raw, dict) else None
    if not isinstance(name, str) or not name or Path(name).name != name or name.startswith("."):
        return None
    return Path("results") / name


def nothing_to_do(key: str, config: Any, out: Any, *, retry: tuple[str, ...], fail_on: str,
                   report: bool) -> RunSummary | None:
    """The summary of a run with nothing to do, or None when something might need doing."""
    out_dir = Path(out) if out is not None else default_out_of(config)
    if out_dir is None:
        return None
    try:
        entry = read_json_object(out_dir / PLAN_CACHE)[key]
        ids, name = list(entry["cells"]), str(entry["experiment"])
        data_files = dict(entry["data_files"])
    except (KeyError, TypeError, ValueError):
        return None
    if not files_unchanged(data_files):  # a data file changed: its cells are other cells
        return None
    try:
        recorded = {r["key"]: r for r in xp.records(xp.read_manifest(out_dir))}
    except xp.ManifestError:
        return None
    rec = recorded.get(str(entry.get("record")))
    if rec is None or sorted(ids) != sorted(xp.cell_ids(rec) or []):
        return None  # the manifest does not record this run's cells (deleted, rewritten)
    if entry.get("config_sha256") is None or rec.get("config_sha256") != entry["config_sha256"]:
        # the record is another config's with the same cells (its claims edited since): the
        # full path writes this config's record, which `verify` and the report then read
        return None
    sel = current_selection(out_dir)
    if sel is None:
        return None
    current = sel.scan
    status = {cid: e.status for cid, e in current.cells.items()}
    if any(status.get(i) is None or status[i] in retry for i in ids):
        return None
    if report and not report_current(out_dir, sel.digest):
        return None
    counts = Counter(status[i] for i in ids)  # the outcome of this config's cells only
    s = RunSummary(experiment=name, out=out_dir, counts=counts, n_cells=len(ids),
                   tables=(out_dir / "results.parquet", out_dir / "results.csv"))
    s.exit_code = exit_code_for(counts, fail_on)
    s.failures = failure_kinds(out_dir, [i for i in ids if status[i] != "ok"])
    if report:
        s.report_dir = out_dir / "report"
    return s


REPORT_STAMP = ".built-from.json"


def report_code_key() -> str:
    """A key of the code that writes reports: treebench's version and the size and modification
    time of every module of the package (the report reads results, metrics and certificate
    code beside its own; an edited or upgraded treebench makes a report out of date even when
    its cells are not). About 150 stat calls: a millisecond."""
    key = f"{__version__}:{files_key(Path(__file__).resolve().parents[1])}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def report_files(report_dir: Path) -> dict[str, list[int]]:
    """Every file of a report folder (but its stamp), relative path → [size, mtime_ns]."""
    found = {}
    for p in sorted(report_dir.rglob("*")):
        if p.name == REPORT_STAMP or p.name.endswith(".tmp") or not p.is_file():
            continue
        st = p.stat()
        found[p.relative_to(report_dir).as_posix()] = [st.st_size, st.st_mtime_ns]
    return found


def manifest_key(out: Path) -> str:
    """The sha256 of ``out``'s manifest.json ("" when there is none or it cannot be read): the
    report shows the experiments' claims and verdicts from it, so an edited ``expect:`` (a
    run of the changed config rewrites the manifest, often without running a cell) makes the
    report out of date even when its cells are not."""
    try:
        return hashlib.sha256((Path(out) / xp.MANIFEST).read_bytes()).hexdigest()
    except OSError:
        return ""


def report_stamp(digest: str, formats: tuple[str, ...], report_dir: Path,
                 manifest: str = "", options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a report records of what it was written from: the digest of the cells, the
    manifest (`manifest_key`), the formats, the report options given over the run's
    (`report_options`), the drawing code (`report_code_key`) and its own files."""
    return {"digest": digest, "manifest": manifest, "formats": sorted(set(formats)),
            "options": report_options(options), "code": report_code_key(),
            "files": report_files(report_dir)}


def report_options(options: dict[str, Any] | None) -> dict[str, str]:
    """The report options given (`treebench report --reference-solver ...`; None values are
    not given) as a report's stamp records them: {} for the report of the run's own."""
    return {k: str(v) for k, v in sorted((options or {}).items()) if v is not None}


def report_current(out: Path, digest: str, formats: tuple[str, ...] | None = None,
                   options: dict[str, Any] | None = None) -> bool:
    """The report in ``out / "report"`` was written from the cells whose digest is ``digest``
    and from ``out``'s manifest as it is now, by this drawing code, with these report
    ``options`` (none: the run's own report; `report_options`) (and in ``formats`` when
    given), and its files are as it wrote them (none missing, none changed)."""
    rdir = out / "report"
    stamp = read_json_object(rdir / REPORT_STAMP)
    if stamp.get("digest") != digest or stamp.get("code") != report_code_key():
        return False
    if stamp.get("manifest") != manifest_key(out):
        return False
    if formats is not None and stamp.get("formats") != sorted(set(formats)):
        return False
    if stamp.get("options", {}) != report_options(options):
        return False
    files = stamp.get("files")
    try:
        return isinstance(files, dict) and "index.html" in files and report_files(rdir) == files
    except OSError:
        return False


def report_unchanged(out: Path, formats: tuple[str, ...],
                     options: dict[str, Any] | None = None) -> bool:
    """Whether ``treebench report out`` would write the report that is there: the tables match
    the usable cell files (none damaged, none stale), the manifest can be read and the report
    is current (`report_current`) in these ``formats``. Reads no table and imports no learner,
    pandas or matplotlib: an unchanged report is answered in a fraction of a second."""
    out = Path(out)
    if not (out / "cells").is_dir() or not (out / "report" / REPORT_STAMP).is_file():
        return False
    try:
        xp.read_manifest(out)
    except xp.ManifestError:  # select() then takes every cell; the full path notes the damage
        return False
    sel = current_selection(out)
    if sel is None or sel.earlier:  # cells of earlier definitions: the full path says so
        return False
    return report_current(out, sel.digest, formats, options)


def current_selection(out: Path) -> Selection | None:
    """The `Selection` of ``out``'s usable cells when its tables (and the table of earlier
    definitions) are exactly those cells and no cell file is unusable; None when a run or a
    report must take the full path to rebuild or report something."""
    sel = select(out, scan(out))
    if sel.problems or tables_state(out, sel) is not None or earlier_state(out, sel):
        return None
    return sel


def remember_plan(out: Path, key: str, ids: list[str], name: str, record: str,
                  data_files: dict[str, list[int]] | None = None) -> None:
    """Remember the cell ids of the plan ``key``, the data files (path → stat key) their
    fingerprints were computed from and the config hash of the manifest's record ``record``:
    the plan is trusted only while none of them changed."""
    p = out / PLAN_CACHE
    try:  # the config its record holds now: a later run of another config replaces it
        sha = next((r.get("config_sha256") for r in xp.records(xp.read_manifest(out))
                    if r.get("key") == record), None)
    except xp.ManifestError:
        sha = None
    cache = read_json_object(p)
    cache.pop(key, None)
    cache[key] = {"experiment": name, "cells": ids, "record": record,
                  "data_files": dict(data_files or {}), "config_sha256": sha}
    while len(cache) > 16:  # the most recent plans only
        cache.pop(next(iter(cache)))
    write_json(p, cache)


def answer(config: Any, o: RunOptions) -> tuple[str | None, RunSummary | None]:
    """(the plan key of ``config`` under the options ``o``, or None when a profile is applied
    or the file cannot be read; the summary of a rerun with nothing to do, or None when the
    run must take the full path: forced, adding an experiment, or anything out of date). The
    options are checked first (`check_options`), whatever the folder holds."""
    check_options(o)
    key = None if o.profile is not None else plan_key(
        config, seed=o.seed, overrides=o.overrides, sweep=o.sweep)
    if key is None or o.force or o.add_experiment:
        return key, None
    return key, nothing_to_do(key, config, o.out, retry=o.retry, fail_on=o.fail_on,
                              report=o.report)
