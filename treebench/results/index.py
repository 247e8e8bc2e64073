"""The integrity of a results directory: which cell files are usable, what the tables were built
from, and where damaged files go.

A results directory's truth is the set of its usable cell files, each identified by its cell id
and the content hash stored in it (`treebench.results.cellfile.encode_record`). `scan` lists that
set and the files that cannot be used (unreadable, damaged, named after another cell, off the
schema), with the reason for each. The consolidated tables are a function of the set alone: its
*digest* (sha256 over the sorted ``cell_id:hash`` pairs) is recorded with the sha256 of each
table file when they are written, and the tables are current exactly when the digest and both
files' hashes still match (`tables_state`). No timestamp is ever compared with another: files
copied in with old timestamps, a table replaced by garbage or a truncated table are all seen.

``.cells-index.json`` caches, per cell file, its (inode, size, mtime, ctime) and the verified
id, hash and status, so a scan of an unchanged directory stats files without reading them; a
sha256 of these entries is written with them, and an index whose entries do not match it is
not used. ``treebench results check`` reads every file whatever the index says. The
ctime is set by the kernel on every change and cannot be copied with a file (``cp -p``,
``rsync -a`` copy the mtime only), so a changed file is always read again. The index is only a
cache: deleting it costs one full read.

A cell file without a content hash was written before treebench recorded them. It is usable
only in a folder where no usable cell file carries one (a folder written before hashes existed);
beside files that do, it is unusable (`UNVERIFIED`): its content cannot be checked. The first
run into such an older folder, or ``treebench results check --repair``, adds the hashes to its
files (`add_hashes`), so its older cells and its new ones are checked alike.

Unusable files are set aside by `quarantine` (the run and ``treebench results check --repair``
do it) into ``quarantine/`` with their reasons in ``quarantine/reasons.json``; their cells then
count as not run, so the next run of their experiment runs them again.

Only the folder's own regular files are read: `scan` never opens a symbolic link, FIFO, device
or directory named like a cell file (each is unusable, with what it is as the reason; setting
it aside moves its name, never its target), and ``cells/`` or ``quarantine/`` that is a
symbolic link stops the command with one sentence (`own_folder`), so that nothing outside the
folder is read or moved.

`foreign_tables` tells the folder's table files that treebench did not write (another tool's
``results.parquet``, say) from its own; the commands that would replace them refuse first
(`refuse_foreign_tables`).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from treebench.utils.atomic import (check_regular, kind_of, read_json_object, sha256_of,
                              write_bytes, write_json, write_text)
from treebench.errors import UserError
from treebench.results.cellfile import CellFileError, cells_dir, encode_record, read_cell

INDEX = ".cells-index.json"
#: raised when the rules a cell file is checked against change (2: integers beyond 64 bits are
#: refused; 3: a whole-number column holds whole numbers up to 2**53, text is UTF-8, every
#: column is declared; 4: an entry keeps the label its cell file was written with), so that
#: files verified under older rules are read and checked again
INDEX_VERSION = 4
#: the layout of the rows a cell file reads as (`treebench.results.rows.upgrade_record`),
#: raised when a column read from older cell files changes (2: ``split_params``); tables and
#: reports built under another layout are rebuilt
TABLE_LAYOUT = 2
QUARANTINE = "quarantine"
TABLES = ("results.parquet", "results.csv")


@dataclass(frozen=True)
class CellEntry:
    """One usable cell file; ``hashed``: it carries its content hash (files written before
    content hashes existed do not)."""

    file: str
    hash: str
    status: str
    hashed: bool = True
    label: str | None = None  # the entry label the cell file was written with


#: why a cell file without a content hash is refused in a folder whose cell files carry one
UNVERIFIED = ("it carries no checksum while the other cell files here do, so its content "
              "cannot be verified (edited, or its checksum removed)")


@dataclass
class Scan:
    """The usable cell files of a directory (by cell id) and the unusable ones (file → reason)."""

    cells: dict[str, CellEntry] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """sha256 of the table layout and the sorted ``cell_id:hash`` pairs: what the tables
        (and the report) must be built from."""
        h = hashlib.sha256(f"layout {TABLE_LAYOUT}\n".encode())
        for cid in sorted(self.cells):
            h.update(f"{cid}:{self.cells[cid].hash}\n".encode())
        return h.hexdigest()

    def problem_notes(self, out: Path) -> list[str]:
        return [f"{Path(out) / 'cells' / name} cannot be used ({why})"
                for name, why in sorted(self.problems.items())]


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


#: cell files this process wrote, by their folder: file name → the index entry (stat key, cell
#: id, content hash, status, hashed), so that the scan after a run does not read them back
_WRITTEN: dict[str, dict[str, list[Any]]] = {}


def remember_written(path: Path, cell_id: str, digest: str, status: str,
                     label: str | None = None) -> None:
    """Note that this process has just written the cell file ``path`` (atomically: the file on
    disk is exactly what it encoded, and its record passed the schema when it was built): the
    next `scan` of its folder takes its entry without reading it, as long as its status (inode,
    size, modification and change time) is still the one seen here."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        folder = _WRITTEN.setdefault(str(Path(path).parent.resolve()), {})
        folder[Path(path).name] = _stat_key(st) + [cell_id, digest, status, True, label]


def _files_digest(files: Any) -> str:
    """The sha256 of the index's file entries (canonical JSON), kept beside them."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def read_index(out: Path) -> dict[str, Any]:
    """The index of ``out``; empty (every cell file is read) when it is missing, of another
    version, or its file entries do not match the digest written with them (an edited or
    damaged index is never trusted)."""
    idx = read_json_object(Path(out) / INDEX)
    if idx.get("version") != INDEX_VERSION:
        return {}
    files = idx.get("files", {})  # none before the first cell file (a run stopped before it)
    if not isinstance(files, dict) or idx.get("digest") != _files_digest(files):
        return {}
    return idx


def write_index(out: Path, idx: dict[str, Any]) -> None:
    """Write the index atomically; a failure (read-only folder, full disk) only costs speed."""
    idx["version"] = INDEX_VERSION
    idx["digest"] = _files_digest(idx.get("files", {}))
    with contextlib.suppress(OSError):
        write_json(Path(out) / INDEX, idx)


def own_folder(out: Path, name: str) -> Path:
    """``out / name`` when it is no symbolic link (it may not exist yet); `UserError` when it
    is one: treebench reads, writes and moves files only inside the results folder."""
    p = Path(out) / name
    if p.is_symlink():
        raise UserError(f"{p} is a symbolic link (to {os.readlink(p)}); treebench reads, writes "
                        f"and moves files only inside the results folder: replace the link by "
                        f"a folder (or give another --out).")
    return p


def scan(out: Path, *, save: bool = False, full: bool = False) -> Scan:
    """The usable and unusable cell files of ``out``. Files unchanged since the index saw them
    are not read again, unless ``full`` (``treebench results check`` reads every file against
    its content hash). ``save`` writes the refreshed index (the caller holds the lock).

    Only regular files are read, without following a link: a symbolic link, a FIFO, a device
    or a directory named like a cell file is unusable, with what it is as the reason, and is
    never opened. `UserError` when ``cells/`` itself is a symbolic link."""
    d = own_folder(out, "cells")
    result = Scan()
    if not d.is_dir():
        return result
    idx = read_index(out)
    known: dict[str, Any] = {} if full else idx.get("files", {})
    written = {} if full else _WRITTEN.get(str(d.resolve()), {})
    fresh: dict[str, Any] = {}
    try:
        with os.scandir(d) as it:
            entries = sorted((e for e in it if e.name.endswith(".json")
                              and not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        entries = []
    for e in entries:
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            result.problems[e.name] = f"it is {kind_of(st.st_mode)}, not a regular file"
            continue
        key = _stat_key(st)
        hit = known.get(e.name)
        if not (isinstance(hit, list) and len(hit) == 9 and hit[:4] == key):
            hit = written.get(e.name)
        if isinstance(hit, list) and len(hit) == 9 and hit[:4] == key:
            cid, digest, status, hashed, label = hit[4:]
        else:
            try:
                rec, digest = read_cell(d / e.name)
            except CellFileError as exc:
                result.problems[e.name] = str(exc)
                continue
            cid, status, hashed = rec["row"]["cell_id"], rec["row"]["status"], "sha256" in rec
            label = rec["row"].get("algorithm_label")
        label = None if label is None else str(label)
        fresh[e.name] = key + [cid, digest, status, bool(hashed), label]
        result.cells[cid] = CellEntry(e.name, digest, status, bool(hashed), label)
    if any(e.hashed for e in result.cells.values()):  # hashless files are legacy only alone
        for cid, e in list(result.cells.items()):
            if not e.hashed:
                result.problems[e.file] = UNVERIFIED
                del result.cells[cid]
    if save and fresh != known:
        idx["files"] = fresh
        write_index(out, idx)
    return result


def add_hashes(out: Path, current: Scan) -> list[str]:
    """In a folder written before content hashes existed (no usable cell file of ``current``
    carries one), rewrite each usable cell file with its content hash, its record unchanged,
    so that the cells written from now on and these are checked alike; return a note (none
    when there was nothing to do). The caller holds the lock."""
    legacy = [e for e in current.cells.values() if not e.hashed]
    if not legacy or len(legacy) < len(current.cells):
        return []
    d = cells_dir(out)
    done = 0
    for e in legacy:
        try:
            rec, _ = read_cell(d / e.file)
            data, digest = encode_record(rec)
            write_bytes(d / e.file, data)
        except (CellFileError, OSError):
            continue  # left as it is: read again (and judged) by the next scan
        current.cells[rec["row"]["cell_id"]] = CellEntry(e.file, digest, e.status, True, e.label)
        done += 1
    return [f"added content hashes to {done} cell file(s) written before treebench recorded "
            f"them (their results are unchanged)"] if done else []


def file_sha256(p: Path) -> str | None:
    """sha256 of the regular file ``p`` (not followed when a link); None when there is none."""
    try:
        check_regular(p)
        fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with open(fd, "rb") as fh:
            return sha256_of(fh)
    except OSError:
        return None


def _is_regular(p: Path) -> bool:
    try:
        check_regular(p)
    except OSError:
        return False
    return True


def tables_state(out: Path, current: Scan) -> str | None:
    """None when both tables were written from exactly the cells of ``current`` and are
    unchanged since; else the reason they must be rebuilt, in words."""
    out = Path(out)
    rec = read_index(out).get("tables")
    missing = [t for t in TABLES if not _is_regular(out / t)]
    if missing:
        return f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing"
    if not isinstance(rec, dict):
        return "no record of what the tables were built from"
    if rec.get("layout", 1) != TABLE_LAYOUT:
        return "they were written with an older column layout"
    if rec.get("digest") != current.digest:
        return "the cell files changed since the tables were built"
    for t in TABLES:
        if rec.get(t) != file_sha256(out / t):
            return f"{t} does not match what treebench wrote (damaged or edited)"
    return None


#: columns every results table treebench writes has, whatever its version
OWN_COLUMNS = ("cell_id", "dataset", "status")


def _table_columns(p: Path) -> list[str]:
    """The column names of the table file ``p`` (parquet or CSV); FileNotFoundError when there
    is none, `treebench.utils.atomic.NotRegularFile` when it is no regular file, ValueError when it
    cannot be read as a table."""
    check_regular(p)
    if p.suffix == ".csv":
        try:
            fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                head = os.read(fd, 1 << 20)
            finally:
                os.close(fd)
            line = head.decode("utf-8").splitlines()[0] if head.strip() else ""
        except (OSError, UnicodeDecodeError):
            raise ValueError("it cannot be read as CSV") from None
        return next(csv.reader([line]), [])
    try:
        import pyarrow.parquet as pq

        return list(pq.read_schema(p).names)
    except Exception:  # pyarrow raises many types for files that are not parquet
        raise ValueError("it cannot be read as a parquet table") from None


def _has_rows(p: Path) -> bool:
    """Whether the table file ``p`` (parquet or CSV) holds a row; True when that cannot be
    told (an unreadable file is kept as if it held results)."""
    try:
        if p.suffix == ".csv":
            with open(p, "rb") as fh:
                return sum(1 for line in fh if line.strip()) > 1
        import pyarrow.parquet as pq

        return pq.ParquetFile(p).metadata.num_rows > 0
    except Exception:  # pyarrow raises many types for files that are not parquet
        return True


def foreign_tables(out: Path) -> dict[str, str]:
    """The table files of ``out`` (`TABLES`) that treebench cannot recognise as its own, each
    with why. Where treebench recorded the tables it wrote (`record_tables`), files under
    their names are its own, current or damaged (they are rewritten); elsewhere (a folder
    whose index was deleted, written before the index existed, or not written by treebench) a
    table is its own when it is a regular file whose columns include `OWN_COLUMNS`."""
    out = Path(out)
    if isinstance(read_index(out).get("tables"), dict):
        return {}
    found = {}
    for t in TABLES:
        try:
            cols = _table_columns(out / t)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            found[t] = str(exc.strerror if isinstance(exc, OSError) else exc)
            continue
        missing = [c for c in OWN_COLUMNS if c not in cols]
        if missing:
            shown = ", ".join(repr(str(c)) for c in cols[:5]) + (", ..." if len(cols) > 5 else "")
            found[t] = (f"its columns are {shown or 'none'}, without "
                        f"{', '.join(missing)}")
    return found


def refuse_foreign_tables(out: Path, hint: str, *, unbacked: bool = False) -> None:
    """Raise `UserError` (one sentence ending with ``hint``) when a table file of ``out`` is
    not one treebench wrote (`foreign_tables`). ``unbacked`` (a run, which rebuilds the tables
    from the cell files): also when a table of treebench's lies in a folder without its cell
    files and without treebench's record of it, so that the run would drop its rows."""
    out = Path(out)
    foreign = foreign_tables(out)
    if foreign:
        name, why = sorted(foreign.items())[0]
        raise UserError(f"{out / name} is not a results table treebench wrote ({why}); {hint}")
    if unbacked and not cells_dir(out).is_dir() and not read_index(out).get("tables"):
        have = [t for t in TABLES if _is_regular(out / t) and _has_rows(out / t)]
        if have:
            raise UserError(f"{out / have[0]} holds results whose cell files are not here (no "
                            f"cells/ folder), and a run rebuilds the tables from the cell files "
                            f"it writes; {hint}")


def record_tables(out: Path, current: Scan) -> None:
    """Remember that the tables now on disk were built from ``current`` (with their hashes)."""
    out = Path(out)
    idx = read_index(out)
    idx["tables"] = {"digest": current.digest, "layout": TABLE_LAYOUT,
                     "n_cells": len(current.cells),
                     **{t: file_sha256(out / t) for t in TABLES}}
    write_index(out, idx)


def quarantine(out: Path, current: Scan) -> list[str]:
    """Move every unusable cell file of ``current`` into ``quarantine/`` (with its reason in
    ``quarantine/reasons.json``); return one note per file. The caller holds the lock."""
    notes = set_aside(out, current.problems, "cannot be used")
    current.problems.clear()
    return notes


def set_aside(out: Path, files: dict[str, str], what: str) -> list[str]:
    """Move the cell files ``files`` (name in cells/ → reason) into ``quarantine/``, with their
    reasons in ``quarantine/reasons.json``; nothing is deleted. One note per file moved
    (``cells/<name> <what> (<reason>); moved it to ...``). The caller holds the lock."""
    if not files:
        return []
    out = Path(out)
    qdir = own_folder(out, QUARANTINE)
    qdir.mkdir(exist_ok=True)
    reasons_path = qdir / "reasons.json"
    reasons = read_json_object(reasons_path)
    now = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    notes = []
    for name, why in sorted(files.items()):
        target = qdir / f"{Path(name).stem}.{now}.json"
        try:
            os.replace(out / "cells" / name, target)
        except OSError:
            continue
        reasons[target.name] = {"file": f"cells/{name}", "reason": why, "at": now}
        notes.append(f"cells/{name} {what} ({why}); moved it to "
                     f"{QUARANTINE}/{target.name}, and its cell counts as not run")
    with contextlib.suppress(OSError):
        write_text(reasons_path, json.dumps(reasons, indent=1, sort_keys=True))
    return notes


def quarantined_cells(out: Path) -> dict[str, str]:
    """cell id (from the file name) → reason, for the files set aside in ``quarantine/``."""
    out_map = {}
    for entry in read_json_object(Path(out) / QUARANTINE / "reasons.json").values():
        if isinstance(entry, dict) and isinstance(entry.get("file"), str):
            out_map[Path(entry["file"]).stem] = str(entry.get("reason"))
    return out_map
