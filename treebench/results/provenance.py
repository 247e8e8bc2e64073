"""Where and with what a result was produced (recorded on every row and in manifest.json)."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from functools import lru_cache
from pathlib import Path
from typing import Any

from treebench import __version__


@lru_cache(maxsize=1)
def git_sha() -> str | None:
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha or None


@lru_cache(maxsize=None)
def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def provenance() -> dict[str, Any]:
    """Flat provenance columns of the results schema (package versions from their metadata,
    so that nothing heavy is imported just to name it)."""
    return {
        "treebench_version": __version__,
        "git_sha": git_sha(),
        "python_version": platform.python_version(),
        "numpy_version": _version("numpy"),
        "sklearn_version": _version("scikit-learn"),
        "host": socket.gethostname(),
        "cpu_count": os.cpu_count(),
    }


def environment() -> dict[str, Any]:
    """A richer description of the environment for manifest.json."""
    from importlib import metadata

    pkgs = {}
    for name in ("numpy", "pandas", "scikit-learn", "numba", "joblib", "pyarrow", "matplotlib",
                 "pydl8.5", "pystreed", "gosdt", "openml"):
        try:
            pkgs[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pkgs[name] = None
    return {**provenance(), "platform": platform.platform(), "packages": pkgs}
