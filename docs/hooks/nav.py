"""MkDocs hook: every page under docs/ is in the navigation.

mkdocs.yml lists the pages in reading order. A page that it does not list (a new page written
beside a code change) is appended to the section named for it in `SECTIONS`, or else to
`FALLBACK`, so that no page is published without a way to reach it. The build log says which
pages were placed this way; list them in mkdocs.yml to choose their position.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("mkdocs.hooks.nav")

#: pages expected to arrive, with the top-level section they belong to
SECTIONS = {
    "input-limits.md": "Using treebench",
    "stopping.md": "Using treebench",
    "results-columns.md": "Using treebench",
}
#: the section of any other page that mkdocs.yml does not list
FALLBACK = "More pages"


def nav_pages(nav: Any) -> set[str]:
    """Every page path named in a MkDocs ``nav`` value (nested lists and mappings)."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(nav_pages(v) for v in nav.values())) if nav else set()
    if isinstance(nav, list):
        return set().union(*(nav_pages(v) for v in nav)) if nav else set()
    return set()


def _section(nav: list[Any], title: str) -> list[Any]:
    """The item list of the top-level section ``title``, created at the end when absent."""
    for item in nav:
        if isinstance(item, dict) and title in item and isinstance(item[title], list):
            return item[title]
    items: list[Any] = []
    nav.append({title: items})
    return items


def place_missing(nav: list[Any], pages: list[str]) -> list[str]:
    """Append every page of ``pages`` that ``nav`` does not name to its section (in place);
    return the pages added, in order."""
    known = nav_pages(nav)
    added = [p for p in sorted(pages) if p not in known]
    for page in added:
        _section(nav, SECTIONS.get(page, FALLBACK)).append(page)
    return added


def on_files(files: Any, config: Any) -> Any:
    if config.get("nav") is None:
        return files  # no explicit nav: MkDocs lists every page itself
    pages = [f.src_uri for f in files.documentation_pages()]
    added = place_missing(config["nav"], pages)
    if added:
        log.info("pages not listed in mkdocs.yml, added to the navigation: %s", ", ".join(added))
    return files
