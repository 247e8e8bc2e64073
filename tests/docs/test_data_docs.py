"""A new user finds how to download catalog data ahead of a run, and where relative data paths
start, in the README and on the datasets page."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_and_datasets_page_mention_fetch_and_relative_paths():
    for page in (ROOT / "README.md", ROOT / "docs" / "datasets.md"):
        text = " ".join(page.read_text(encoding="utf-8").split())
        assert "treebench datasets fetch" in text, page
        assert "starts at the config file's folder" in text, page
