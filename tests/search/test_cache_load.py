"""treebench's kernels load from numba's disk cache without the refresh of numba's compiler
context (the imports of every implementation numba has); every other function loads as numba
loads it; and with numba internals other than the expected ones nothing is changed."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from treebench.search import _cache_load

#: A module numba imports when it refreshes its compiler context, and nothing else imports.
REFRESH_ONLY = "numba.np.linalg"

PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[2])
    import treebench.search
    if sys.argv[1] == "treebench":
        from treebench.search.bitset import row_hash as kernel
        value = int(kernel(np.arange(5, dtype=np.uint64), 3))
    else:
        from userkernels import total as kernel
        value = float(kernel(np.arange(5, dtype=np.float64)))
    print(json.dumps({"value": value, "hits": sum(kernel.stats.cache_hits.values()),
                      "refreshed": "%s" in sys.modules}))
""" % REFRESH_ONLY)

USER_MODULE = textwrap.dedent("""
    from numba import njit

    @njit(cache=True)
    def total(a):
        return a.sum()
""")


def _probe(which: str, tmp_path) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", PROBE, which, str(tmp_path)], env=env,
                         capture_output=True, text=True, timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs compilation")
def test_a_cached_kernel_loads_without_the_refresh_and_other_functions_with_it(tmp_path):
    (tmp_path / "userkernels.py").write_text(USER_MODULE)
    for which in ("treebench", "user"):
        first = _probe(which, tmp_path)  # compiles and writes the cache: refreshes
        assert first["hits"] == 0 and first["refreshed"]
        again = _probe(which, tmp_path)  # loads it
        assert again["hits"] == 1 and again["value"] == first["value"]
        assert again["refreshed"] is (which == "user")


class _FakeCache:
    def __init__(self, module: str):
        self._py_func = SimpleNamespace(__module__=module)
        self.calls = []

    def load_overload(self, sig, ctx):
        self.calls.append("usual")
        return "usual"

    def _load_overload(self, sig, ctx):
        self.calls.append("short")
        return "short"

    def _guard_against_spurious_io_errors(self):
        return contextlib.nullcontext()


def _fake_classes():
    cls = type("Cache", (_FakeCache,), {})
    rtsys = SimpleNamespace(started=[], initialize=lambda ctx: rtsys.started.append(ctx))
    return cls, rtsys


def test_install_routes_treebench_kernels_to_the_short_path_only_and_is_idempotent():
    cls, rtsys = _fake_classes()
    assert _cache_load.install(cls, rtsys) and _cache_load.install(cls, rtsys)
    assert cls("treebench.search.bitset").load_overload("sig", "ctx") == "short"
    assert rtsys.started == ["ctx"]
    assert cls("treebenchmark.x").load_overload("sig", "ctx") == "usual"
    assert cls("numba.np.arraymath").load_overload("sig", "ctx") == "usual"
    assert rtsys.started == ["ctx"]  # installing twice did not wrap the method twice


@pytest.mark.parametrize("missing", ["_load_overload", "_guard_against_spurious_io_errors"])
def test_other_numba_internals_leave_numba_s_loading_as_it_is(missing):
    cls, rtsys = _fake_classes()
    usual = cls.load_overload
    stripped = type("Cache", (), {k: v for k, v in vars(_FakeCache).items() if k != missing})
    assert not _cache_load.install(stripped, rtsys)
    assert not _cache_load.install(cls, SimpleNamespace())  # a runtime without initialize
    assert cls.load_overload is usual
