"""The Python API guide's script runs, and prints what the page says it prints."""

from __future__ import annotations

import os
import subprocess
import sys

from ._paths import DOCS, EXAMPLES, ROOT


def test_api_guide_example_runs():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    r = subprocess.run([sys.executable, str(EXAMPLES / "api_guide.py")], capture_output=True,
                       text=True, env=env, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    for learner in ("Top-k (k=4)", "DPDT", "GOSDT", "ECART"):
        assert f"\n{learner} " in out, out
    assert "best parameters:" in out and "|-- if " in out and "class: " in out
    page = (DOCS / "python-guide.md").read_text(encoding="utf-8")
    assert '--8<-- "examples/api_guide.py"' in page  # the page shows this very script
    # the output shown on the page is this script's (same seeds, same data)
    shown = page.split("One run printed:", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    assert shown.strip() == out.strip()


def test_the_claims_example_of_the_reproductions_page_is_a_valid_expect_list():
    """Every item of the `expect:` example on the reproductions page passes the schema (the
    `budget` item had no metric, so a user copying it got `metric: required key is missing`)."""
    import re

    import yaml

    from treebench.config.expectations import Expectation

    text = (DOCS / "reproductions" / "index.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "expect:" in b)
    items = yaml.safe_load(block)["expect"]
    assert len(items) == 4
    for item in items:
        Expectation.model_validate(item)
