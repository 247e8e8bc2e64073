"""The ``treebench`` command's way out (`treebench.cli.entry`): it skips the interpreter's
teardown, so it must still give the exit code, every byte of output, the ``atexit``
functions and any thread that is still working."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: runs `entry` with a stand-in for the typer app: ``argv[1]`` says how the command ends
PROGRAM = r"""
import atexit, sys, threading, time
from treebench import cli

mode = sys.argv[1]
out = sys.argv[2]

def app():
    atexit.register(lambda: open(out, "a").write("atexit ran\n"))
    sys.stdout.write("x" * 200_000)  # more than a pipe's buffer: must all be flushed
    if mode == "thread":
        def late():
            time.sleep(0.5)
            open(out, "a").write("thread finished\n")
        threading.Thread(target=late).start()
    if mode == "usage":
        raise SystemExit(2)
    if mode == "message":
        raise SystemExit("treebench: a message instead of a code")
    if mode == "none":
        raise SystemExit(None)

cli.app = app
cli.entry()
"""


@pytest.mark.parametrize(("mode", "code"), [("ok", 0), ("usage", 2), ("none", 0),
                                            ("message", 1), ("thread", 0)])
def test_entry_keeps_codes_output_exit_functions_and_threads(tmp_path, mode, code):
    out = tmp_path / "side.txt"
    r = subprocess.run([sys.executable, "-c", PROGRAM, mode, str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == code, r.stderr
    assert r.stdout == "x" * 200_000
    side = out.read_text().splitlines()
    assert "atexit ran" in side
    if mode == "thread":  # the ordinary exit waited for the working thread
        assert "thread finished" in side
    if mode == "message":
        assert "a message instead of a code" in r.stderr


def test_console_script_is_the_fast_entry():
    """The installed command and ``python -m treebench.cli`` both go through `entry`."""
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "treebench"]
    assert ep.value == "treebench.cli:entry"
    r = subprocess.run([sys.executable, "-m", "treebench.cli", "--help"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "run" in r.stdout
