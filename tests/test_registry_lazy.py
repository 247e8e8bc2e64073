"""The registries' built-in name lists: looking up one name imports only the
module that registers it, and the lists agree with what the modules register."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from treebench import registry
from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS, FIGURES, METRICS


@pytest.mark.parametrize("reg", [ALGORITHMS, BINARIZERS, METRICS, FIGURES], ids=lambda r: r.kind)
def test_builtin_names_are_exactly_the_registered_ones(reg):
    registered = {e.name for e in reg}  # a full load
    assert set(reg._where) == registered - set(reg.import_errors)


def test_builtin_dataset_names_plus_the_catalog_are_every_dataset():
    names = {e.name for e in DATASETS}
    catalog = {e.name for e in DATASETS if "catalog" in e.extra}
    assert set(DATASETS._where) == names - catalog


@pytest.mark.parametrize("reg", [ALGORITHMS, BINARIZERS, DATASETS, METRICS, FIGURES],
                         ids=lambda r: r.kind)
def test_each_listed_module_registers_its_names(reg):
    import importlib

    for name, mod in reg._where.items():
        importlib.import_module(mod)
        assert name in reg._entries, f"{mod} does not register {name!r}"
        assert reg.get(name).name == name


_PROBE = """
import json, sys
from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS
ok = "cart" in ALGORITHMS and "raw" in BINARIZERS and "iris" in DATASETS
ALGORITHMS.get("cart").parameters()
print(json.dumps({"ok": ok, "loaded": [ALGORITHMS._loaded, BINARIZERS._loaded, DATASETS._loaded],
                  "numba": "numba" in sys.modules,
                  "topk": "treebench.algorithms.topk" in sys.modules,
                  "gosdt": "treebench.algorithms.gosdt" in sys.modules}))
"""


def test_one_name_imports_one_module():
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True)
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got == {"ok": True, "loaded": [False, False, False], "numba": False, "topk": False,
                   "gosdt": False}


def test_unknown_name_loads_everything_and_suggests():
    from treebench.errors import ConfigError

    with pytest.raises(ConfigError, match="did you mean `cart`"):
        ALGORITHMS.get("crat")
    assert ALGORITHMS._loaded


def test_parameters_are_read_once_and_copied():
    e = ALGORITHMS.get("cart")
    a = e.parameters()
    a["max_depth"] = "changed"
    assert e.parameters()["max_depth"] != "changed"
    assert (e.obj, e.kind) in registry._PARAMETERS
