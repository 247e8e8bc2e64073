"""The execute layer's structure: no import cycle between its modules, one hard-limit formula."""

from __future__ import annotations

import ast
from pathlib import Path

import treebench.execute as execute_pkg
from treebench.execute.limits import Limits, hard_limit

PKG = Path(execute_pkg.__file__).parent


def _imports(path: Path) -> set[str]:
    """The `treebench.execute` modules ``path`` imports, at the top or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "treebench.execute":
                found.update(a.name for a in node.names)
            elif node.module.startswith("treebench.execute."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[2] for a in node.names
                         if a.name.startswith("treebench.execute."))
    return found - {path.stem}


def test_no_import_cycle_between_execute_modules():
    graph = {p.stem: _imports(p) for p in PKG.glob("*.py")}

    def cycle_from(start: str, node: str, seen: tuple[str, ...]) -> tuple[str, ...] | None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                return (*seen, nxt)
            if nxt not in seen:
                found = cycle_from(start, nxt, (*seen, nxt))
                if found:
                    return found
        return None

    cycles = [c for m in sorted(graph) if (c := cycle_from(m, m, (m,)))]
    assert not cycles, f"import cycles in treebench/execute: {cycles}"


def test_the_hard_limit_is_the_time_limit_plus_its_grace_period():
    assert hard_limit(None) is None and hard_limit(0) is None
    assert hard_limit(5) == 7.0  # at least 2 s of grace
    assert hard_limit(100) == 110.0  # 10 %
    assert Limits.of({"time": 100}).hard == 110.0


def test_the_preparation_budget_names_the_limit():
    limits = Limits.of({"prepare": 2})
    assert limits.prepare_verdict(1.5) is None
    assert limits.prepare_verdict(3.0) == ("data preparation took 3 s, over its budget "
                                           "limits.prepare = 2 s (the fit did not run)")
    assert Limits.of(None).prepare_verdict(1e9) is None


def test_a_watcher_waits_no_longer_than_the_next_check():
    assert Limits.of({}).wait_seconds(0.0) is None  # nothing to watch: wait for the exit
    assert Limits.of({"memory": 100}).wait_seconds(0.0) == 0.02
    assert Limits.of({"time": 5}).wait_seconds(6.0) == 1.0
    assert Limits.of({"time": 5}).wait_seconds(9.0) == 0.0
    assert Limits.of({"time": 5}).verdict(7.0, 0, 0)[0] == "timeout"
