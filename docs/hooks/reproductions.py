"""MkDocs hook: the paper-reproduction pages, generated from the configs at build time.

A page line ``<!-- treebench:claims configs/NAME.yaml -->`` becomes a section on that config:
its own header comment, how to run it, the table of its ``expect:`` claims (and those of its
``ci`` profile when the profile brings its own), and the measured verdicts of the last
``make reproduce`` when ``results/reproduce/NAME/report`` exists (set ``REPRO_OUT`` to read
another folder): the verification table and the report's headline figures, copied into the
site. Without results, the section says how to produce them.

Every config with ``profiles:`` (the paper configs `make reproduce` runs) must be named by such
a marker on some page; a config that none names is a build warning.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # read this checkout's treebench, not an installed copy
    sys.path.insert(0, str(ROOT))

MARKER = re.compile(r"^<!-- treebench:claims (\S+) -->$", re.M)
FIGURE = re.compile(r"^!\[([^\]]*)\]\((figures/[^)]+)\)$", re.M)
log = logging.getLogger("mkdocs.hooks.reproductions")
_seen: set[str] = set()


def results_root() -> Path:
    """Where `make reproduce` wrote its results (``REPRO_OUT``, default results/reproduce)."""
    p = Path(os.environ.get("REPRO_OUT") or "results/reproduce")
    return p if p.is_absolute() else ROOT / p


def paper_configs() -> list[Path]:
    """The configs with ``profiles:`` (what `make reproduce` runs), as the Makefile finds them."""
    return sorted(p for p in (ROOT / "configs").glob("*.yaml")
                  if re.search(r"^profiles:", p.read_text(encoding="utf-8"), re.M))


# ----------------------------------------------------------------------------- the claims
def header_comment(text: str) -> str:
    """The config file's leading comment block, without the ``#`` marks."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].removeprefix(" "))
    return "\n".join(lines).strip()


def strip_tracker_refs(text: str) -> str:
    """Drop references to the project's issue tracker (``(issue N)``, ``issue N: ``) from text
    taken from the configs: the pages stand alone."""
    text = re.sub(r"\s*\(issue \d+[^)]*\)", "", text)
    text = re.sub(r"\s*[,;]\s*issue \d+\b", "", text)
    return re.sub(r"\bissue \d+(, item \d+)?: ", "", text)


def notes_quote(note: str) -> str:
    """The config's notes as a Markdown quote that keeps the file's line breaks."""
    return "\n".join("> " + (line + "  " if line else "") for line in note.splitlines())


def _value(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return f"{v:g}" if isinstance(v, float) else str(v)


def where_text(where: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_value(v)}" for k, v in where.items()) or "every row"


def check_text(e: Any) -> str:
    """What an expectation asserts, in words."""
    if e.monotone is not None:
        m = e.monotone
        tol = f" (tolerance {m.tol:g})" if m.tol else ""
        return f"{m.direction} along {m.along}{tol}"
    if e.compare is not None:
        c = e.compare
        sym = {"ge": "≥", "le": "≤", "eq": "="}[c.op]
        off = f" {'+' if c.offset >= 0 else '−'} {abs(c.offset):g}" if c.offset else ""
        tol = f" ± {c.tol:g}" if c.op == "eq" and c.tol else ""
        other = [f"{c.agg or e.agg} {c.metric or e.metric}", f"at {where_text(c.where)}"]
        if c.across:
            other.append(f"across {_value(c.across)}")
        return f"{sym} {' '.join(other)}{off}{tol}"
    if e.value is not None:
        tol = f" ± {e.abs:g}" if e.abs is not None else f" ± {e.rel:g} (relative)" if e.rel else ""
        return f"= {e.value:g}{tol}"
    bounds = ([f"≥ {e.ge:g}"] if e.ge is not None else []) + ([f"≤ {e.le:g}"] if e.le is not None else [])
    return " and ".join(bounds)


def _cell(text: str) -> str:
    return strip_tracker_refs(" ".join(str(text).split())).replace("|", "\\|")


def claims_table(items: list[Any]) -> str:
    """One row per ``expect:`` item: claim, source, rows, measure, check."""
    from treebench.verify import item_name

    rows = ["| claim | source | rows | measure | check |", "|---|---|---|---|---|"]
    for i, e in enumerate(items):
        measure = f"{e.agg} {e.metric}"
        if e.across:
            measure += f", across {_value(e.across)}"
        if e.per:
            measure += f", per {', '.join(e.per)}"
        rows.append("| " + " | ".join(_cell(x) for x in (
            item_name(e, i), e.source, where_text(e.where), measure, check_text(e))) + " |")
    return "\n".join(rows)


def expectations(raw: dict[str, Any], profile: str | None = None) -> list[Any]:
    from treebench.config import apply_profile
    from treebench.config.expectations import Expectation

    if profile is not None:
        raw = apply_profile(raw, profile)
    return [Expectation.model_validate(item) for item in raw.get("expect") or []]


# ----------------------------------------------------------------------------- measured
def measured(stem: str) -> tuple[str, str, list[tuple[str, str]]] | None:
    """(verdict line, verification table, headline figures as (caption, path)) of the last
    `make reproduce` of config ``stem``, or None when there is no such report."""
    report = results_root() / stem / "report"
    table = report / "tables" / "reproduction.md"
    summary = report / "summary.md"
    if not (table.is_file() and summary.is_file()):
        return None
    text = summary.read_text(encoding="utf-8")
    verdict = re.search(r"^## Reproduction\s+\*\*(.+?)\*\*", text, re.M)
    head = text.split("## Headline figures", 1)
    figures = FIGURE.findall(head[1].split("\n## ", 1)[0]) if len(head) == 2 else []
    figures = [(cap, path) for cap, path in figures if (report / path).is_file()]
    return (verdict.group(1) if verdict else "", table.read_text(encoding="utf-8").strip(),
            figures)


def _run_text(rel: str, stem: str, has_ci: bool) -> list[str]:
    if has_ci:
        return ["```bash",
                f"treebench run {rel} --profile ci --verify   # as make reproduce does",
                f"treebench run {rel} --verify                # the full config",
                "```"]
    return ["This config has no `ci` profile, so `make reproduce` does not run it; run it by hand:",
            "", "```bash", f"treebench run {rel} --verify", "```"]


def section(rel: str) -> str:
    """The Markdown that replaces the marker of config ``rel`` (a path from the repo root)."""
    path = ROOT / rel
    text = path.read_text(encoding="utf-8")
    raw = yaml.safe_load(text)
    stem = path.stem
    has_ci = "ci" in (raw.get("profiles") or {})
    out = [f"### `{rel}` {{#{stem}}}", ""]
    note = strip_tracker_refs(header_comment(text))
    if note:
        out += ["The config's own notes:", "", notes_quote(note), ""]
    out += _run_text(rel, stem, has_ci) + [""]
    items = expectations(raw)
    out += [f"**Claims** ({len(items)} `expect:` items of the config):", "", claims_table(items), ""]
    if has_ci and "expect" in (raw["profiles"]["ci"] or {}):
        ci_items = expectations(raw, "ci")
        out += [f"**Claims of the `ci` profile** ({len(ci_items)} items, replacing the above in "
                "`make reproduce`):", "", claims_table(ci_items), ""]
    got = measured(stem) if has_ci else None
    if got is None:
        if has_ci:
            out += ["!!! note \"No measured results in this build\"",
                    f"    Run `make reproduce` (it writes `results/reproduce/{stem}/`), then "
                    "`make docs`: this section then shows each claim's measured value and "
                    "verdict, and the report's headline figures.", ""]
    else:
        verdict, table, figures = got
        out += [f"**Measured** (last `make reproduce`): **{verdict}**", "",
                strip_tracker_refs(table), ""]
        for cap, fig in figures:
            out += [f"![{cap}](figures/{stem}/{Path(fig).name})", ""]
    return "\n".join(out)


# ----------------------------------------------------------------------------- hook events
def on_files(files: Any, config: Any) -> Any:
    """Copy the headline figures of every measured paper config next to the pages."""
    from mkdocs.structure.files import File

    for path in paper_configs():
        got = measured(path.stem)
        if got is None:
            continue
        report = results_root() / path.stem / "report"
        for _, fig in got[2]:
            uri = f"reproductions/figures/{path.stem}/{Path(fig).name}"
            files.append(File.generated(config, uri, abs_src_path=str(report / fig)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def replace(m: re.Match) -> str:
        rel = m.group(1)
        if not (ROOT / rel).is_file():
            log.warning("%s: no config %s for its claims marker", page.file.src_uri, rel)
            return f"(missing config `{rel}`)"
        _seen.add(Path(rel).stem)
        return section(rel)

    return MARKER.sub(replace, markdown)


def on_post_build(config: Any) -> None:
    missing = [p.name for p in paper_configs() if p.stem not in _seen]
    if missing:
        log.warning("paper configs on no reproduction page (add a claims marker): %s",
                    ", ".join(missing))
    _seen.clear()
