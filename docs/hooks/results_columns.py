"""MkDocs hook: the list of results columns, generated from their declarations at build time.

A page containing the marker ``<!-- treebench:results-columns -->`` gets, in its place, one
table per part of the row (identity, settings, data, metrics, cost, solver, outcome,
provenance) listing every declared column (`treebench.results.schema.declared`, every learner
included): name, dtype, what produces it and what it means. The page cannot drift from the code:
a column is documented by declaring it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # document this checkout's treebench, not an installed copy
    sys.path.insert(0, str(ROOT))

MARKER = "<!-- treebench:results-columns -->"


def _learners_declaring() -> dict[str, list[str]]:
    """column -> the learners that declare it as a column of their own."""
    from treebench.registry import ALGORITHMS

    out: dict[str, list[str]] = {}
    for e in ALGORITHMS:
        for c in e.columns:
            out.setdefault(c.name, []).append(e.name)
    return out


def generate() -> str:
    """The tables of every declared column, by part of the row, in the table's order."""
    from treebench.columns import GROUPS
    from treebench.results.schema import declared

    cols = declared(None)
    own = _learners_declaring()
    parts = []
    for group in GROUPS:
        rows = [c for c in cols.values() if c.group == group]
        if not rows:
            continue
        lines = [f"### {group}", "", "| column | dtype | produced by | meaning |",
                 "| --- | --- | --- | --- |"]
        for c in rows:
            producer = c.producer
            if c.name in own:
                producer += ": " + ", ".join(f"`{n}`" for n in own[c.name])
            doc = c.doc.replace("|", "\\|")
            lines.append(f"| `{c.name}` | {c.dtype} | {producer} | {doc} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, generate())
