"""Files written whole or not at all, and JSON objects read back without surprises.

Every file treebench writes (cell records, manifests, indexes, report pages, caches of ids) is
written to a temporary name in the same folder, ``.<name>.<pid>.tmp``, then renamed over the
target: a kill at any moment leaves the old file or the new one, never half of one. The
temporary file is removed when the write fails (a full disk, Ctrl-C); one left by a killed
process carries its pid, so the next writer of the folder can tell it is stale
(`treebench.execute.lock`). No fsync: the rename is atomic, and a killed process (SIGKILL
included) loses nothing the kernel already holds; only a power cut could.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def temp_path(path: Path) -> Path:
    """The temporary name a write of ``path`` by this process uses."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; raise OSError (after removing the temporary
    file) when it cannot be written."""
    path = Path(path)
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: Any) -> Path:
    """Write ``obj`` as compact JSON atomically (values JSON cannot hold are written as text).
    ``json.dumps`` runs the C encoder; ``json.dump`` would stream through the Python one."""
    return write_bytes(path, json.dumps(obj, default=str, allow_nan=True).encode("utf-8"))


def read_json_object(path: str | Path) -> dict[str, Any]:
    """The JSON object in ``path``; an empty dict when the file is missing, unreadable, not
    JSON or not an object (the callers treat those files as caches or optional records)."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return obj if isinstance(obj, dict) else {}
