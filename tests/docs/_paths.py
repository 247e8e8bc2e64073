"""Paths shared by the documentation tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
EXAMPLES = DOCS / "examples"
HOOKS = DOCS / "hooks"


def load(path: Path, name: str | None = None) -> ModuleType:
    """Import a file that is no package module (a docs hook or example) under ``name``."""
    name = name or f"treebench_docs_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
