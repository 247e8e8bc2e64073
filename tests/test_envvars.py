"""treebench's environment variables: every ``TREEBENCH_*`` variable is read through
`treebench.envvars` (a scan of the package's code), and its readers of path lists and
directories parse them as the data lookup and the catalog expect."""

from __future__ import annotations

import ast
import os
import pathlib
import re

import pytest

from treebench import envvars
from treebench.data.catalog import catalog_dirs

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "treebench"


def _names_read(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of each ``TREEBENCH_*`` string given to ``os.environ`` (subscript, get,
    pop, setdefault) or ``os.getenv`` in the module ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            base, keys = node.value, [node.slice]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base, keys = node.func, node.args[:1]
            if node.func.attr == "getenv":
                base = ast.Attribute(value=node.func, attr="environ")
            elif isinstance(node.func.value, ast.Attribute | ast.Name):
                base = node.func.value
        else:
            continue
        if "environ" not in ast.unparse(base):
            continue
        for key in keys:
            if isinstance(key, ast.Constant) and str(key.value).startswith("TREEBENCH_"):
                found.append((node.lineno, key.value))
    return found


def test_the_scan_sees_each_way_of_reading():
    code = ('import os\nfrom os import environ, getenv\nos.environ["TREEBENCH_A"]\n'
            'os.environ.get("TREEBENCH_B", "")\nos.getenv("TREEBENCH_C")\n'
            'environ.get("TREEBENCH_D")\nos.environ.pop("TREEBENCH_E")\n'
            'd.get("TREEBENCH_F")\nos.environ.get("HOME")\n')
    assert [name for _, name in _names_read(ast.parse(code))] == [
        "TREEBENCH_A", "TREEBENCH_B", "TREEBENCH_C", "TREEBENCH_D", "TREEBENCH_E"]


def test_every_treebench_variable_is_read_through_envvars():
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "envvars.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        rel = path.relative_to(ROOT)
        outside += [f"{rel}:{line}: {name}" for line, name in _names_read(tree)]
    assert outside == [], "read these through treebench.envvars (a reader per kind of value)"


def test_every_variable_is_listed_once():
    names = [*envvars.FLAGS, *envvars.NUMBERS, *envvars.PATH_LISTS, *envvars.DIRECTORIES]
    assert len(names) == len(set(names))
    text = "\n".join(p.read_text(encoding="utf-8") for p in PACKAGE.rglob("*.py"))
    used = set(re.findall(r"\bTREEBENCH_[A-Z_]*[A-Z]\b", text))
    assert used - set(names) == set(), "list these in treebench.envvars"


def test_a_path_list_keeps_its_order_and_skips_empty_entries(monkeypatch, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    monkeypatch.setenv("TREEBENCH_DATA_DIR", os.pathsep.join(["", str(a), "", str(b)]))
    assert envvars.path_list("TREEBENCH_DATA_DIR") == [a, b]
    monkeypatch.delenv("TREEBENCH_DATA_DIR")
    assert envvars.path_list("TREEBENCH_DATA_DIR") == []
    with pytest.raises(KeyError):
        envvars.path_list("TREEBENCH_CACHE_DIR")  # one directory, not a list


def test_a_directory_is_none_when_unset_or_empty(monkeypatch, tmp_path):
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", "")
    assert envvars.directory("TREEBENCH_CACHE_DIR") is None
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(tmp_path))
    assert envvars.directory("TREEBENCH_CACHE_DIR") == tmp_path


def test_a_catalog_folder_of_the_path_list_is_read(monkeypatch, tmp_path):
    monkeypatch.setenv("TREEBENCH_CATALOG", os.pathsep.join(["", str(tmp_path)]))
    assert tmp_path in catalog_dirs()
