"""The layers of treebench: the import contract in pyproject.toml holds (`lint-imports`), and
the layer diagram of docs/architecture.md lists the same layers, in the same order, and every
top-level module and package of treebench/."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    return [{name.strip() for name in layer.split("|")} for layer in layers]


def _diagram_layers(text: str) -> list[set[str]]:
    """The layers of the first ``text`` block of the page: on each line, the module names before
    the description (``execute/ | experiments.py  where cells run``); indented lines continue
    the description above."""
    block = re.search(r"^```text\n(.*?)^```", text, re.S | re.M).group(1)
    layers = []
    for line in block.splitlines():
        if not line.strip() or line.startswith(" "):
            continue
        names = re.split(r"\s{2,}", line.strip())[0]
        layers.append({n.strip().removesuffix(".py").removesuffix("/") for n in names.split("|")})
    return layers


def test_the_diagram_is_parsed_by_layer():
    text = "```text\ncli.py     print\n           more\nexecute/ | experiments.py  run\n```\n"
    assert _diagram_layers(text) == [{"cli"}, {"execute", "experiments"}]


def test_the_architecture_page_draws_the_contract():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert _diagram_layers(page) == _contract_layers()


def test_every_top_level_module_is_in_a_layer():
    package = ROOT / "treebench"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    placed = set().union(*_contract_layers())
    assert modules - placed == set(), "add these to the layers in pyproject.toml and the docs"
    assert placed - modules == set(), "these layers name no module of treebench/"


def test_the_import_contracts_hold():
    lint = pathlib.Path(sys.executable).with_name("lint-imports")
    assert lint.is_file(), "install the test extra (`pip install -e .[test]`): it has import-linter"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
