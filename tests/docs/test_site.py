"""The documentation site as a reader meets it: every page loaded in headless Chromium.

The site is built with `mkdocs build --strict` (conftest.py); each page is opened from disk in
one headless Chromium (driven through the DevTools protocol, `tests/browser.py`) and its
rendered DOM is read back. Every page must render its content, and
every relative `<a href>` and `<img src>` in it must resolve to a file of the site (a
`#fragment` to an element id of the target page); images must be real image files. Skipped with
a reason when mkdocs or Chromium is missing (Debian: `apt-get install chromium`).
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.browser import Session, browser

IMAGE_MAGIC = (b"\x89PNG", b"<svg", b"<?xml", b"GIF8", b"\xff\xd8\xff")


class _Refs(HTMLParser):
    """Links, images and element ids of one rendered page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()
        self.article = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "a" and a.get("href") is not None:
            self.links.append(str(a["href"]))
        elif tag == "img" and a.get("src"):
            self.images.append(str(a["src"]))
        elif tag == "article":
            self.article = True


def _local(ref: str) -> tuple[str, str] | None:
    """(path, fragment) of a relative reference; None for absolute URLs and other schemes."""
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc or ref.startswith("/"):
        return None
    return unquote(parts.path), unquote(parts.fragment)


@pytest.fixture(scope="module")
def rendered(built_site: Path, tmp_path_factory) -> dict[Path, _Refs]:
    """Every HTML page of the site, rendered by one headless Chromium (each page loaded, its
    scripts run, its DOM read back), parsed."""
    browser()  # skip when there is none
    pages = sorted(p for p in built_site.rglob("*.html") if p.name != "404.html")
    chromium = Session(tmp_path_factory.mktemp("chromium"))
    out = {}
    try:
        for page in pages:
            refs = _Refs()
            dom = chromium.dom(page)
            assert "<html" in dom, f"{page.name}: no page rendered"
            refs.feed(dom)
            out[page] = refs
    finally:
        chromium.close()
    return out


def test_every_page_renders_its_content(rendered):
    assert len(rendered) >= 20
    empty = [p.name for p, r in rendered.items() if not r.article]
    assert not empty, f"pages without content: {empty}"


def test_relative_links_and_images_resolve(rendered, built_site):
    broken = []
    for page, refs in rendered.items():
        for ref in refs.links + refs.images:
            local = _local(ref)
            if local is None:
                continue
            path, fragment = local
            target = (page.parent / path).resolve() if path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file() or built_site.resolve() not in target.parents:
                broken.append(f"{page.relative_to(built_site)}: {ref}")
            elif fragment and target in rendered and fragment not in rendered[target].ids:
                broken.append(f"{page.relative_to(built_site)}: {ref} (no id {fragment!r})")
    assert not broken, "broken references:\n" + "\n".join(broken)


def test_images_are_real_images(rendered, built_site):
    seen = 0
    for page, refs in rendered.items():
        for ref in refs.images:
            local = _local(ref)
            if local is None or not local[0]:
                continue
            data = (page.parent / local[0]).read_bytes()[:200].lstrip()
            assert data.startswith(IMAGE_MAGIC), f"{page.name}: {ref} is no image"
            seen += 1
    assert seen >= 1  # at least the quickstart figure of Getting started


def test_generated_pages_carry_their_content(rendered, built_site):
    configs = (built_site / "configs.html").read_text(encoding="utf-8")
    assert 'id="config-experiment"' in configs and "n_splits" in configs
    topk = (built_site / "reproductions" / "topk.html").read_text(encoding="utf-8")
    assert "car: train, k=1" in topk
    estimators = (built_site / "reference" / "estimators.html").read_text(encoding="utf-8")
    assert "TopKClassifier" in estimators and "NGIECARTClassifier" in estimators
