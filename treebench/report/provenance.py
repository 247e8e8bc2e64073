"""Provenance and failure summaries shared by the HTML and Markdown pages."""

from __future__ import annotations

import json
from typing import Any

from treebench.report.aggregate import Results, failures, status_counts
from treebench.results.schema import PROVENANCE_COLUMNS
MAX_ERROR_CHARS = 300


def _scalar(v: Any) -> str:
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, default=str)
    return str(v)


def _flatten(prefix: str, value: Any) -> list[tuple[str, str]]:
    """Nested dicts as dotted keys (``environment.packages.numpy``); None values are shown."""
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for k in sorted(value, key=str):
            out += _flatten(f"{prefix}.{k}", value[k])
        return out
    if value is None and prefix == "environment":
        return []
    return [(prefix, _scalar(value))]


def provenance_items(results: Results) -> list[tuple[str, str]]:
    """(key, value) pairs: experiment, creation time, environment from the manifest, and the
    distinct version and host values recorded in the results table."""
    m = results.manifest
    items: list[tuple[str, str]] = [("experiment", results.experiment),
                                    ("results directory", str(results.directory))]
    for key in ("created_at", "finished_at", "treebench_version", "git_sha"):
        if key in m and m[key] is not None:
            items.append((key, _scalar(m[key])))
    for key in ("updated_at", "n_cells"):
        if key in m and m[key] is not None:
            items.append((key, _scalar(m[key])))
    items += _flatten("environment", m.get("environment"))
    t = results.table
    seen = {k for k, _ in items}
    for col in PROVENANCE_COLUMNS:
        values = t[col]
        # the missing ones skipped by mask, not Series.dropna (a new Series per column)
        vals = sorted({str(v) for v, na in zip(values, values.isna().to_numpy()) if not na})
        if vals and col not in seen and f"environment.{col}" not in seen:
            items.append((f"{col} (from results)", ", ".join(vals)))
    items.append(("cells", str(len(t))))
    counts = status_counts(t)
    items.append(("status", ", ".join(f"{n} {s}" for s, n in counts.items() if n) or "none"))
    return items


def description(results: Results) -> str:
    """The experiment's one-line description from the manifest's config ('' when absent)."""
    cfg = results.manifest.get("config")
    d = cfg.get("description") if isinstance(cfg, dict) else None
    return d.strip() if isinstance(d, str) else ""


def config_text(results: Results) -> str | None:
    cfg = results.manifest.get("config")
    if cfg is None:
        return None
    if isinstance(cfg, str):
        return cfg
    return json.dumps(cfg, indent=2, sort_keys=True, default=str)


def short_error(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def failure_rows(results: Results) -> list[list[str]]:
    """Failed cells as rows: cell id, dataset, algorithm, parameters, fold, seed, status, error."""
    f = failures(results)
    return [[str(r.cell_id), str(r.dataset), str(r.algorithm_label), str(r.params), str(r.fold),
             str(r.seed), str(r.status), short_error(r.error)] for r in f.itertuples()]


FAILURE_HEADER = ["cell_id", "dataset", "algorithm", "parameters", "fold", "seed", "status",
                  "error"]
