"""One cell file: a finished cell's record as JSON, with its content hash as the last key.

``cells/<id>.json`` in a results directory (`cells_dir`) holds one record; `encode_record`
writes its bytes, `read_cell` and `decode_record` read them back and refuse (`CellFileError`,
with the reason) a file that is damaged, edited, misnamed or off the results schema.
`treebench.results.store` writes cell files and builds the tables from them;
`treebench.results.index` records which of them are usable.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from treebench.utils.atomic import MAX_READ, NotRegularFile, read_regular
from treebench.results.rows import upgrade_record
from treebench.results.schema import check_row, shown


def cells_dir(out: Path) -> Path:
    return Path(out) / "cells"


class CellFileError(ValueError):
    """A cell file that cannot be used: unreadable, damaged, misnamed or off the schema."""


#: the largest cell file read (a record holds one tree: megabytes at most)
MAX_CELL_BYTES = MAX_READ


# A cell file is the record's JSON with its content hash as the last key:
#   <json of the record without "sha256">[:-1] + ',"sha256":"<64 hex>"}'
# so the hash is checked on the file's bytes without encoding the record again.
_HASH_KEY = b',"sha256":"'
_SUFFIX_LEN = len(_HASH_KEY) + 64 + 2


def encode_record(record: dict[str, Any]) -> tuple[bytes, str]:
    """The bytes of a cell file for ``record`` and the record's content hash (sha256 of the
    record's JSON without its ``sha256`` key)."""
    body = dict(record)
    body.pop("sha256", None)
    text = json.dumps(body, default=str, allow_nan=True).encode("utf-8")
    digest = hashlib.sha256(text).hexdigest()
    return text[:-1] + _HASH_KEY + digest.encode("ascii") + b'"}', digest


def decode_record(data: bytes, name: str,
                  verified: str | None = None) -> tuple[dict[str, Any], str]:
    """(record, content hash) of a cell file's bytes; `CellFileError` with the reason when the
    bytes are not a record or do not match their hash. A record written before content hashes
    existed has none: its hash is that of the file's bytes. ``verified`` is the content hash of
    a record already checked against the schema (`treebench.results.index.scan` did): bytes
    carrying that hash, and matching it, are the same record, so the schema check is not made
    twice."""
    embedded = None
    if len(data) > _SUFFIX_LEN and data[-_SUFFIX_LEN:-66] == _HASH_KEY and data.endswith(b'"}'):
        embedded = data[-66:-2].decode("ascii", "replace")
        body = data[:-_SUFFIX_LEN] + b"}"
        if hashlib.sha256(body).hexdigest() != embedded:
            raise CellFileError("its content does not match its checksum (damaged or edited)")
    try:
        rec = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise CellFileError("it is not valid JSON (truncated or damaged)") from None
    if not isinstance(rec, dict) or not isinstance(rec.get("row"), dict):
        raise CellFileError("it holds no results row")
    if embedded is None and "sha256" in rec:
        raise CellFileError("its checksum is not where treebench writes it (edited)")
    row = upgrade_record(rec)["row"]  # older layouts read as the current one
    if row.get("cell_id") != name:
        raise CellFileError(f"it holds cell `{shown(row.get('cell_id'))}`, not the cell its "
                            f"name says (a copied or renamed file)")
    if verified is None or embedded != verified:
        problem = check_row(row)
        if problem:
            raise CellFileError(problem)
    return rec, embedded or hashlib.sha256(data).hexdigest()


def read_cell(p: Path, verified: str | None = None) -> tuple[dict[str, Any], str]:
    """(record, content hash) of the cell file ``p``; `CellFileError` when it cannot be used,
    also when it is no regular file of the folder (a symbolic link, a FIFO, a device: never
    followed or opened) or larger than any record (`treebench.utils.atomic.read_regular`).
    ``verified``: as in `decode_record`."""
    try:
        data = read_regular(p, MAX_CELL_BYTES)
    except NotRegularFile as exc:
        raise CellFileError(str(exc.strerror)) from None
    except OSError as exc:
        reason = (exc.strerror or type(exc).__name__).lower()
        raise CellFileError(f"it cannot be read ({reason})") from None
    return decode_record(data, p.stem, verified)
