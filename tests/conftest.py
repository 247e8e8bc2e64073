"""Shared pytest configuration.

``tests/`` is put on ``sys.path`` so that test modules in sub-folders can ``import naive``
(the slow reference solvers in ``tests/naive.py``) whatever pytest's import mode.

Under ``NUMBA_DISABLE_JIT=1`` (`make test-nojit`, the coverage pass over compiled code) kernels
run as plain Python, except numba intrinsics, which have no Python body: every intrinsic named
in `PYTHON_TWINS` found in a loaded ``treebench`` module is replaced by its twin from
``tests/naive.py`` (kernels then look it up as a module global when called).
"""

import pathlib
import signal
import sys

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# A suite started in the background by a non-interactive shell (`cmd &` without job control)
# inherits SIGINT *ignored*, and an ignored signal stays ignored across exec: the Ctrl-C tests'
# `treebench run` children would then never see their SIGINT and exit 0. Restore Python's
# default handling here, so children start with SIGINT at its default, as under a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


PYTHON_TWINS = ("popcount", "ctz")


def _python_intrinsics() -> None:
    from numba.core.extending import _Intrinsic

    import naive

    for name, mod in list(sys.modules.items()):
        if not name.startswith("treebench") or mod is None:
            continue
        for twin in PYTHON_TWINS:
            if isinstance(getattr(mod, twin, None), _Intrinsic):
                setattr(mod, twin, getattr(naive, twin))


def pytest_collection_modifyitems(config, items):
    from numba.core import config as numba_config

    if numba_config.DISABLE_JIT:
        _python_intrinsics()
