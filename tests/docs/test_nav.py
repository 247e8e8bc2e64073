"""No page is lost: every Markdown page under docs/ is in the site's navigation."""

from __future__ import annotations

import re

import yaml

from ._paths import DOCS, HOOKS, ROOT, load

nav_hook = load(HOOKS / "nav.py")


def pages() -> list[str]:
    """Every documentation page, as MkDocs names it (relative to docs/)."""
    return sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")
                  if "hooks" not in p.relative_to(DOCS).parts)


def configured_nav() -> list:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]


def test_new_pages_land_in_their_section_or_at_the_end():
    nav = [{"Home": "index.md"}, {"Using treebench": [{"Configs": "configs.md"}]}]
    added = nav_hook.place_missing(nav, ["index.md", "configs.md", "stopping.md", "zz-new.md"])
    assert added == ["stopping.md", "zz-new.md"]
    assert nav[1]["Using treebench"][-1] == "stopping.md"
    assert nav[-1] == {nav_hook.FALLBACK: ["zz-new.md"]}
    assert nav_hook.place_missing(nav, ["stopping.md"]) == []  # idempotent


def test_every_page_is_in_the_navigation_after_the_hook():
    nav = configured_nav()
    nav_hook.place_missing(nav, pages())
    assert set(pages()) <= nav_hook.nav_pages(nav)


def test_the_navigation_names_only_existing_pages():
    missing = sorted(nav_hook.nav_pages(configured_nav()) - set(pages()))
    assert not missing, f"mkdocs.yml lists pages that do not exist: {missing}"


def test_every_page_is_linked_from_the_built_navigation(built_site):
    """The rendered site (not only mkdocs.yml): the navigation of the home page links every
    page, so a page added to docs/ can be reached even before mkdocs.yml lists it."""
    home = (built_site / "index.html").read_text(encoding="utf-8")
    nav = home.split('<nav class="md-nav md-nav--primary"', 1)[1].split("</nav>\n</div>", 1)[0]
    linked = set(re.findall(r'href="([^"#]+\.html)"', nav))
    expected = {p.removesuffix(".md") + ".html" for p in pages()}
    assert expected <= linked | {"index.html"}, sorted(expected - linked)
