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
                                               ("treebench.utils.text:show",)))
    out = precompile.precompile(precompile.GROUPS)
    assert [code for code, _, _ in out] == [1, 1]  # show() needs an argument: a failure too
    assert "no_such_step" in out[0][2] and "show" in out[1][2]
    monkeypatch.setattr(precompile, "GROUPS", (("treebench.search.numeric:warmup_both",),))
    assert precompile.main([]) == 0
    assert "ready after" in capsys.readouterr().out


FAST = (("os:getcwd", "os:getpid"), ("os:getcwd",))


def test_progress_names_each_group_its_steps_done_and_the_time_elapsed():
    """A cold precompile compiles for minutes: off a terminal (a log, CI) every finished step
    is a line with its group, how far the group is and the seconds elapsed."""
    import io

    from rich.console import Console

    buf = io.StringIO()
    progress = precompile.PrecompileProgress(FAST, Console(file=buf, force_terminal=False,
                                                           soft_wrap=True))
    out = precompile.precompile(FAST, progress)
    progress.close()
    assert [code for code, _, _ in out] == [0, 0]
    text = buf.getvalue()
    assert "compiling the learners' numba kernels in 2 processes" in text
    for line in ("group 1: 1/2 steps done (os.getcwd)", "group 1: 2/2 steps done (os.getpid)",
                 "group 2: 1/1 steps done (os.getcwd)"):
        assert line in text, text
    assert text.count("s elapsed") == 3


def test_progress_on_a_terminal_is_a_bar_per_group():
    import io

    from rich.console import Console

    buf = io.StringIO()
    progress = precompile.PrecompileProgress(FAST, Console(file=buf, force_terminal=True,
                                                           width=120))
    precompile.precompile(FAST, progress)
    assert progress.done == [2, 1]
    assert [progress.describe(i) for i in range(2)] == ["done", "done"]
    progress.close()
    text = buf.getvalue()
    assert "group 1" in text and "group 2" in text and "2/2" in text and "1/1" in text
    assert "0:00:0" in text  # the elapsed column


def test_the_command_reports_progress_on_stderr():
    code = ("import sys; from treebench.execute import precompile as p; "
            f"p.GROUPS = {FAST!r}; sys.exit(p.main([]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "group 1: 2/2 steps done" in proc.stderr and "elapsed" in proc.stderr
    assert "group 1 (os.getcwd, os.getpid) ready after" in proc.stdout


def test_a_groups_child_imports_only_its_own_steps():
    """A group's child (``--steps``) imports the modules of its steps, not every learner's
    (reading the declared groups imports scikit-learn, about 2.5 s a process)."""
    code = ("import sys; from treebench.execute import precompile as p; "
            "p.main(['--steps', 'os:getcwd']); "
            "print(sorted(m for m in ('sklearn', 'treebench.algorithms.topk') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines() == ["done 1", "[]"], proc.stdout
    from treebench.execute.precompile import GROUPS  # the parent still reads them on demand

    assert GROUPS and "treebench.algorithms.topk:warmup" in GROUPS[0]


def test_the_longest_group_keeps_the_priority_the_others_yield(tmp_path):
    """The first group (the longest: when it ends, every kernel is ready) runs at the caller's
    priority; every other group's process lowers its own by `OTHERS_NICE`, so that on a busy
    machine the shorter groups, not the longest, give way."""
    (tmp_path / "nice_probe.py").write_text(
        "import os, sys\n"
        "def record():\n"
        "    with open(os.environ['NICE_LOG'], 'a') as f:\n"
        "        f.write(f\"{' '.join(sys.argv[1:3])} {os.nice(0)}\\n\")\n")
    groups = (("nice_probe:record",), ("nice_probe:record", "os:getcwd"))
    log = tmp_path / "nice.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)]),
           "NICE_LOG": str(log)}
    code = ("import sys; from treebench.execute import precompile as p; "
            f"p.GROUPS = {groups!r}; sys.exit(p.main([]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    base, lower = os.nice(0), precompile.OTHERS_NICE
    assert sorted(log.read_text().splitlines()) == sorted(
        [f"--steps nice_probe:record {base}", f"--nice {lower} {min(base + lower, 19)}"])
