"""The HTML report as a reader sees it: rendered by headless Chromium, screenshot checked.

Skipped with a reason when no Chromium is installed (Debian: `apt-get install chromium`).
The page must open on the reproduction verdict: its coloured badge is in the first screen.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.browser import browser

from treebench.report import write_report

from .conftest import synthetic_table, write_results

WIDTH, HEIGHT = 1200, 900


def _browser() -> str:
    return browser()


def _screenshot(html: Path, png: Path, profile: Path) -> None:
    cmd = [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
           f"--screenshot={png}", html.resolve().as_uri()]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert png.is_file(), f"no screenshot (exit {r.returncode}): {r.stderr[-2000:]}"


def _manifest(expect: list[dict]) -> dict:
    return {"experiment": "topk_fig2", "created_at": "2026-01-01T00:00:00Z",
            "config": {"name": "topk_fig2", "description": "Top-k vs CART, depth sweep",
                       "metrics": ["accuracy", "n_leaves", "fit_seconds"], "expect": expect},
            "environment": {"python": "3.11.2", "numpy": "2.4.6", "host": "test"}}


def _report(tmp_path: Path, passing: bool) -> Path:
    expect = [{"name": "k=2 beats k=1 on car", "source": "Fig. 2",
               "where": {"dataset": "car", "algorithm": "topk", "param_k": 2},
               "metric": "test_accuracy", "compare": {"where": {"param_k": 1}}},
              {"name": "cart on car reaches 0.99", "source": "Table 9",
               "where": {"dataset": "car", "algorithm": "cart"},
               "metric": "test_accuracy", "ge": 0.5 if passing else 0.99}]
    # the headline figures and one per dataset: the page's layout, not every figure
    d = write_results(tmp_path / "results", synthetic_table(), _manifest(expect),
                      figures=["pareto_*", "critical_difference*", "train_test_accuracy_vs_k"])
    write_report(d)
    return d / "report" / "index.html"


def test_verdict_badge_class_follows_the_outcome(tmp_path, no_figures):
    assert '<span class="verdict pass">' in _report(tmp_path / "p", True).read_text()
    text = _report(tmp_path / "f", False).read_text()
    assert '<span class="verdict fail">' in text and "1 of 2 expectation(s) FAIL" in text


def test_report_page_renders_in_chromium(tmp_path):
    """One browser run (about half a minute): the failing verdict must be on the first screen."""
    from matplotlib import image

    passing = False
    html = _report(tmp_path, passing)
    text = html.read_text(encoding="utf-8")
    # reading order: reproduction, headline figures, summary, failures, ..., provenance last
    order = [text.index(f'id="{k}"') for k in ("reproduction", "headline", "summary", "failures",
                                                "figures", "provenance")]
    assert order == sorted(order)
    assert "<details><summary>Versions" in text

    png = tmp_path / "shot.png"
    _screenshot(html, png, tmp_path / "profile")
    img = image.imread(png)[..., :3]
    assert img.shape[:2] == (HEIGHT, WIDTH), img.shape
    gray = img.mean(axis=2)
    assert gray.std() > 0.05, "the page looks blank"
    assert (gray < 0.5).mean() > 0.005, "no text or figure drawn"
    # the verdict badge (#e8f6ea pass / #fde8e4 fail) is in the first screen
    badge = np.array([0xE8, 0xF6, 0xEA]) / 255 if passing else np.array([0xFD, 0xE8, 0xE4]) / 255
    near = np.abs(img - badge).max(axis=2) < 0.02
    assert near.sum() > 500, "the reproduction verdict is not on the first screen"
