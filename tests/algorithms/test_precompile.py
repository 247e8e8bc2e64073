"""`treebench.execute.precompile` fills numba's cache with every kernel a learner's warm-up
compiles: after its groups' steps, no learner's warm-up compiles anything more (every
dispatcher in treebench's modules keeps its ``.signatures``). If a warm-up gains a kernel that
no group compiles, a fresh machine would compile it in the timed run instead, and this fails.
The groups themselves share no compiled function (the search engine's and the rest)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from treebench.execute import precompile

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from treebench.execute.precompile import GROUPS, run_steps
from treebench.execute.precompile import compiled_signatures as signatures
from treebench.execute.fit import warm
from treebench.registry import ALGORITHMS

per_group = []
for group in GROUPS:
    before = signatures()
    run_steps(list(group))
    after = signatures()
    per_group.append(sorted(k for k, v in after.items() if v - before.get(k, set())))
before = signatures()
for name in ALGORITHMS.names():
    if ALGORITHMS.get(name).available and not name.startswith("test-"):
        warm(name)
after = signatures()
extra = {k: sorted(v - before.get(k, set())) for k, v in after.items() if v - before.get(k, set())}
print(json.dumps({"groups": per_group, "extra": extra}))
"""


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs compilation")
def test_the_groups_compile_every_warm_up_and_share_no_kernel():
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          cwd=ROOT, timeout=1200, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["extra"] == {}, "compiled by a warm-up, not by precompile: " + str(found["extra"])
    first, second = (set(g) for g in found["groups"])
    assert first and second and not first & second, first & second


def test_a_failing_group_is_reported_and_the_other_still_runs(capsys, monkeypatch):
    monkeypatch.setattr(precompile, "GROUPS", (("treebench.search.numeric:no_such_step",),
                                               ("treebench.text:show",)))
    out = precompile.precompile(precompile.GROUPS)
    assert [code for code, _, _ in out] == [1, 1]  # show() needs an argument: a failure too
    assert "no_such_step" in out[0][2] and "show" in out[1][2]
    monkeypatch.setattr(precompile, "GROUPS", (("treebench.search.numeric:warmup_both",),))
    assert precompile.main([]) == 0
    assert "ready after" in capsys.readouterr().out
