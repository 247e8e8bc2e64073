"""Which cells of a results directory its recorded experiments define.

``manifest.json`` keeps one *experiment record* per config (and profile) that ran in the
directory and one per sweep or variant of it, each with the ids of the cells it defines
(`treebench.execute.experiments` writes them). The results tables hold exactly the cells some record
defines; a usable cell that none defines is a cell of an earlier definition (a config since
edited, or data since changed: a cell's id hashes its data's fingerprint), kept in ``cells/``
and listed in ``results-earlier.parquet``/``.csv`` (`treebench.results.store`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from treebench.errors import UserError
from treebench.results.cell import canonical_json

MANIFEST = "manifest.json"


class ManifestError(UserError):
    """manifest.json is missing or damaged where it is needed."""


def read_manifest(out: Path) -> dict[str, Any] | None:
    """The manifest of ``out``: None when there is none; `ManifestError` when it is damaged."""
    p = Path(out) / MANIFEST
    if not p.is_file():
        return None
    try:
        man = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        man = None
    if not isinstance(man, dict):
        raise ManifestError(damaged_message(p, "not a JSON object"))
    check_records(p, man)
    return man


#: the way out of a damaged manifest that `treebench verify` adds
VERIFY_WITH_CONFIG = ", or verify with --config CONFIG"


def damaged_message(path: Path, why: str, also: str = VERIFY_WITH_CONFIG) -> str:
    """The sentence saying that the manifest at ``path`` is damaged (``why``) and what to do;
    ``also`` is another way out where there is one."""
    return (f"{path}: damaged ({why}), so treebench cannot tell which experiment these cells "
            f"belong to; run the experiment's config again into this folder (finished cells are "
            f"kept) to rewrite it{also}.")


def check_records(path: Path, man: dict[str, Any], also: str = VERIFY_WITH_CONFIG) -> None:
    """Raise `ManifestError` when the experiment records of the manifest ``man`` (read from
    ``path``) are damaged (`record_damage`)."""
    why = record_damage(man)
    if why is not None:
        raise ManifestError(damaged_message(path, why, also))


#: the kinds of experiment record a run writes (`treebench.execute.experiments.make_record`)
RECORD_KINDS = ("run", "variant")


def record_damage(man: dict[str, Any]) -> str | None:
    """What is wrong with the experiment records of ``man``, or None when they are whole: a
    record that is no object, has no key, an unknown kind, no config, a config whose hash is
    not the ``config_sha256`` written beside it (an edited claim would otherwise be checked as
    the run's), or a damaged cell list (`cell_list_damage`). A manifest written before records
    existed (a top-level ``config``) must hold a config object."""
    if "experiments" not in man:
        return None if isinstance(man.get("config"), dict) else "no experiment records"
    recs = man["experiments"]
    if not isinstance(recs, list):
        return "`experiments` is not a list"
    for i, rec in enumerate(recs):
        where = f"experiment record {i}"
        if not isinstance(rec, dict) or not isinstance(rec.get("key"), str):
            return f"{where} is not an object with a key"
        if rec.get("kind") not in RECORD_KINDS:
            return f"{where} has an unknown kind"
        cfg = rec.get("config")
        if not isinstance(cfg, dict):
            return f"{where} has no config"
        why = _hash_damage(rec, "config_sha256", lambda: canonical_json(cfg), "config")
        if why is not None:
            return f"{where}'s {why}"
        cells = rec.get("cells")
        why = None if cells is None else cell_list_damage(cells)
        if why is None and cells is not None:
            why = _count_damage(rec, cells["cell_id"])
        if why is not None:
            return f"{where}'s cell list is damaged: {why}"
    return None


def cell_ids_digest(ids: list[str]) -> str:
    """The SHA-256 of a record's cell ids in their order (a cell's id hashes all it is)."""
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()


def _hash_damage(rec: dict[str, Any], key: str, text: Any, what: str) -> str | None:
    """What is wrong with the hash ``rec[key]`` of ``text()``: absent is an older record's
    layout (accepted); present, it must be the hash (null is an edited record)."""
    if key not in rec:
        return None
    digest = rec[key]
    if digest != hashlib.sha256(text().encode()).hexdigest():
        return f"{what} does not match the hash its run recorded"
    return None


def _count_damage(rec: dict[str, Any], ids: list[str]) -> str | None:
    """What is wrong with a whole cell list against the count and the hash its run wrote
    beside it (``n_cells``, ``cells_sha256``; an older record without them is accepted)."""
    n = rec.get("n_cells")
    if isinstance(n, int) and not isinstance(n, bool) and n != len(ids):
        return f"it lists {len(ids)} cells where its run recorded {n}"
    if "cells_sha256" in rec and rec["cells_sha256"] != cell_ids_digest(ids):
        return "its cell ids do not match the hash its run recorded"
    return None


#: the identity columns of a record's cell list, in every layout a run wrote (the learner's
#: label is `algorithm` in the first one); `treebench.execute.experiments.identity_columns`
CELL_LIST_COLUMNS = ("dataset", "split", "fold", "seed", "binarizer", "binarizer_params",
                     ("algorithm_label", "algorithm"), "algorithm_params")


def cell_list_damage(cells: Any) -> str | None:
    """What is wrong with the cell list of an experiment record, or None when it is whole: an
    object of columns, each a list with one value per cell, ``cell_id`` a list of ids
    (non-empty strings), every column of `CELL_LIST_COLUMNS` present."""
    if not isinstance(cells, dict) or not isinstance(cells.get("cell_id"), list):
        return "it is not an object with a `cell_id` list"
    ids = cells["cell_id"]
    bad = next((i for i, c in enumerate(ids) if not isinstance(c, str) or not c), None)
    if bad is not None:
        return f"its cell id number {bad + 1} is not a non-empty string"
    for col in CELL_LIST_COLUMNS:
        names = col if isinstance(col, tuple) else (col,)
        if not any(n in cells for n in names):
            return f"it has no `{names[0]}` column"
    odd = next((k for k, v in cells.items() if not isinstance(v, list) or len(v) != len(ids)), None)
    if odd is not None:
        return f"its `{odd}` column does not hold one value per cell"
    return None


def records(man: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The experiment records of a manifest; a manifest written before records existed gives
    one record of kind ``legacy`` (its config, no cell list)."""
    if not man:
        return []
    recs = man.get("experiments")
    if isinstance(recs, list):
        return [r for r in recs if isinstance(r, dict) and isinstance(r.get("key"), str)]
    cfg = man.get("config")
    if not isinstance(cfg, dict):
        return []
    name = str(man.get("experiment") or cfg.get("name") or "experiment")
    return [{"key": name + (f"@{cfg['profile']}" if cfg.get("profile") else ""), "name": name,
             "profile": cfg.get("profile"), "kind": "legacy", "config": cfg, "cells": None}]


def cell_ids(rec: dict[str, Any]) -> list[str] | None:
    cells = rec.get("cells")
    if not isinstance(cells, dict) or not isinstance(cells.get("cell_id"), list):
        return None
    return [str(c) for c in cells["cell_id"]]


#: why a cell of no recorded experiment is set aside by ``results check --prune-stale``
STALE = ("it belongs to no experiment recorded in manifest.json (a cell of a config since "
         "edited or removed, or of data since changed)")


def stale_cells(man: dict[str, Any] | None, usable: Any) -> set[str]:
    """The ids among ``usable`` that no experiment record of ``man`` defines: cells left over
    from a config since edited or data since changed (its record now lists its new cells). Empty when the manifest
    has no record, or one that does not list its cells (written before records did), since
    then nothing tells which cells are current."""
    return stale_and_labels(man, usable)[0]


def stale_and_labels(man: dict[str, Any] | None, usable: Any) -> tuple[set[str], dict[str, str]]:
    """`stale_cells` of ``usable``, and cell id -> the entry label of the cell in the current
    record (not one of the `outdated_variants`) that ran it last. A label is no part of a
    cell's id, so a config that renames an entry keeps its cells: the tables show them under
    the config's label now, not the one the cell file was written with."""
    recs = records(man)
    old = outdated_variants(recs) if recs else set()
    now = [r for r in recs if r["key"] not in old]
    labels: dict[str, str] = {}
    for r in sorted(now, key=lambda r: str(r.get("last_at") or "")):
        cells = r.get("cells")
        if isinstance(cells, dict) and isinstance(cells.get("cell_id"), list) \
                and isinstance(cells.get("algorithm_label"), list):
            labels.update((str(c), str(lab)) for c, lab in zip(
                cells["cell_id"], cells["algorithm_label"], strict=False) if lab is not None)
    lists = [cell_ids(r) for r in recs]
    if not recs or any(ids is None for ids in lists):
        return set(), labels
    defined = {i for r, ids in zip(recs, lists, strict=True) if r["key"] not in old
               for i in ids or []}
    return {str(c) for c in usable} - defined, labels


#: the config keys that define a cell's protocol (its data, split, binarization, seeds, test
#: costs) besides the learners, which a sweep changes
PROTOCOL_KEYS = ("datasets", "split", "binarization", "seed", "costs")


def outdated_variants(recs: list[dict[str, Any]]) -> set[str]:
    """The keys of the variant records (sweeps, overrides) made on an earlier definition of
    their experiment: data whose fingerprint differs from the one the run record of the
    experiment (same name and profile) holds now, or a protocol key (`PROTOCOL_KEYS`) the
    variant did not override that differs from the run's config now (the config was edited
    from 2 folds to 3 after the sweep). Such a variant's cells are of an earlier definition,
    like the run's own cells of the old data or protocol."""
    runs = {(r.get("name"), r.get("profile")): r for r in recs if r.get("kind") == "run"}
    return {r["key"] for r in recs if r.get("kind") == "variant"
            and _outdated(r, runs.get((r.get("name"), r.get("profile"))))}


def _outdated(var: dict[str, Any], run: dict[str, Any] | None) -> bool:
    if run is None:
        return False
    now, data = run.get("data"), var.get("data")
    if isinstance(now, dict) and isinstance(data, dict) and any(
            name in now and now[name] != fp for name, fp in data.items()):
        return True
    how = var.get("variant") if isinstance(var.get("variant"), dict) else {}
    overridden = {str(k).split(".")[0] for k in (how.get("overrides") or {})}
    if "seed" in how:
        overridden.add("seed")
    cfg, base = var.get("config"), run.get("config")
    if not isinstance(cfg, dict) or not isinstance(base, dict):
        return False
    return any(cfg.get(k) != base.get(k) for k in PROTOCOL_KEYS if k not in overridden)


