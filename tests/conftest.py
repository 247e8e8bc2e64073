"""Shared pytest configuration.

``tests/`` is put on ``sys.path`` so that test modules in sub-folders can ``import naive``
(the slow reference solvers in ``tests/naive.py``) whatever pytest's import mode.
"""

import pathlib
import sys

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
