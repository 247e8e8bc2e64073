"""A documentation site built once per test session (skipped when mkdocs is not installed)."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ._paths import ROOT


def mkdocs_missing() -> str | None:
    """Why the site cannot be built here, or None."""
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (the docs extra: pip install -e '.[docs]' or make docs)"
    return None


def once_per_session(tmp_path_factory, name: str, make) -> Path:
    """The folder ``name`` made by ``make(folder)`` once per test session; the folder.

    With pytest-xdist the workers share the folder of the session's temporary directories: the
    first worker to need the folder makes it there under a file lock while the others wait for
    it, and a failed ``make`` is made again by the next test that asks (its error is that
    test's failure)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this session's folder, shared by its workers
    folder, done = root / name, root / f"{name}.made"
    with open(root / f"{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """`mkdocs build --strict` of this checkout into a temporary folder, once per test session
    (a build is about 15 s of one core); the folder."""
    reason = mkdocs_missing()
    if reason:
        pytest.skip(reason)

    def build(site: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
        r = subprocess.run(
            [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
            cwd=ROOT, capture_output=True, text=True, env=env, timeout=600, check=False)
        assert r.returncode == 0, \
            f"mkdocs build --strict failed:\n{r.stdout[-3000:]}\n{r.stderr[-5000:]}"

    return once_per_session(tmp_path_factory, "docs-site", build)


@pytest.fixture(autouse=True)
def _plugins_removed_after_each_test():
    """The recipes register toy plug-ins (a learner, a binarizer, a dataset, a metric, a
    figure) in this process: remove them after the test, so that no other test of the session
    sees them (the registry tests compare the registered names with the built-in ones)."""
    from treebench.registry import REGISTRIES

    regs = tuple(REGISTRIES.values())
    for r in regs:
        list(r)  # a full load first: what the test adds is then exactly what is new
    saved = [(dict(r._entries), dict(r._where)) for r in regs]
    yield
    for r, (entries, where) in zip(regs, saved, strict=True):
        r._entries.clear()
        r._entries.update(entries)
        r._where.clear()
        r._where.update(where)
