"""The environment variables treebench reads, and those of the libraries it runs (numba, OpenMP,
BLAS) that it checks, with the values each takes (docs/input-limits.md).

Every ``TREEBENCH_*`` variable is read here and nowhere else (tests/test_envvars.py scans
the package): `FLAGS` through `flag`, `NUMBERS` through `number`, `PATH_LISTS` through
`path_list` and `DIRECTORIES` through `directory`.

`check` refuses a bad value with one sentence naming the variable before a run reads the
config or starts a worker: a value numba or OpenMP would refuse later (``NUMBA_NUM_THREADS=0``)
would otherwise fail in every cell, or be blamed on the config. The readers of treebench's own
variables (`flag`, `number`) parse them the same way.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from treebench.errors import UserError

#: the words of a yes/no variable (case-insensitive); the empty value means no
YES = ("1", "true", "yes", "on")
NO = ("", "0", "false", "no", "off")

#: yes/no variables
FLAGS = ("TREEBENCH_OFFLINE",)
#: positive numbers (gigabytes), with their defaults; 0 is allowed where it turns a cap off
NUMBERS = {"TREEBENCH_MAX_MATRIX_GB": 4.0, "TREEBENCH_PREPARED_CACHE_GB": 8.0}
ZERO_ALLOWED = ("TREEBENCH_PREPARED_CACHE_GB",)
#: lists of directories, separated by `os.pathsep` like ``PATH``: data files, catalog folders
PATH_LISTS = ("TREEBENCH_DATA_DIR", "TREEBENCH_CATALOG")
#: one directory each: the root of every on-disk cache (``~/.cache/treebench`` when unset)
DIRECTORIES = ("TREEBENCH_CACHE_DIR",)
#: thread counts of the libraries the learners use: one positive integer each (OpenMP's comma
#: list per nesting level is refused by libraries the learners import, which read one integer)
THREADS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


class EnvironmentVariableError(UserError):
    """An environment variable has a value its reader would refuse; the message is one
    sentence naming it."""


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def flag(name: str) -> bool:
    """The yes/no variable ``name`` (`YES`, `NO`); raise `EnvironmentVariableError` for any
    other value."""
    value = os.environ.get(name, "")
    low = value.strip().lower()
    if low in YES:
        return True
    if low in NO:
        return False
    raise EnvironmentVariableError(
        f"the environment variable {name}={_shown(value)} is neither yes nor no; set it to 1 "
        f"(or {', '.join(YES[1:])}) or to 0 (or {', '.join(NO[2:])}), or unset it."
    )


def number(name: str) -> float:
    """The non-negative number of the variable ``name`` (its default from `NUMBERS` when unset);
    raise `EnvironmentVariableError` for anything else (0 only where `ZERO_ALLOWED`)."""
    value = os.environ.get(name, "").strip()
    if not value:
        return NUMBERS[name]
    try:
        x = float(value)
    except ValueError:
        x = math.nan
    if not (math.isfinite(x) and (x > 0 or (x == 0 and name in ZERO_ALLOWED))):
        least = "0 or more" if name in ZERO_ALLOWED else "more than 0"
        raise EnvironmentVariableError(
            f"the environment variable {name}={_shown(value)} is not a number of gigabytes "
            f"({least}, e.g. {NUMBERS[name]:g}); fix it or unset it for the default "
            f"{NUMBERS[name]:g}."
        )
    return x


def path_list(name: str) -> list[Path]:
    """The directories of the path-list variable ``name`` (`PATH_LISTS`) in order; empty
    entries are skipped, so an unset or empty variable is the empty list."""
    if name not in PATH_LISTS:
        raise KeyError(name)
    return [Path(p) for p in os.environ.get(name, "").split(os.pathsep) if p]


def directory(name: str) -> Path | None:
    """The directory of the variable ``name`` (`DIRECTORIES`); None when unset or empty."""
    if name not in DIRECTORIES:
        raise KeyError(name)
    value = os.environ.get(name, "")
    return Path(value) if value else None


def set_flag(name: str, value: bool = True) -> None:
    """Set the yes/no variable ``name`` (`FLAGS`) for this process and the workers it starts."""
    if name not in FLAGS:
        raise KeyError(name)
    os.environ[name] = "1" if value else "0"


def _threads(name: str) -> None:
    value = os.environ.get(name)
    if value is None or not value.strip():  # empty: unset (numba and OpenMP take the default)
        return
    v = value.strip()
    if not (v.isdigit() and len(v) <= 6 and int(v) > 0):
        raise EnvironmentVariableError(
            f"the environment variable {name}={_shown(value)} is not a positive number of "
            f"threads; set it to a whole number such as 1 or 4, or unset it."
        )


def check() -> None:
    """Raise `EnvironmentVariableError` for the first variable of `FLAGS`, `NUMBERS` or
    `THREADS` whose value its reader would refuse."""
    for name in FLAGS:
        flag(name)
    for name in NUMBERS:
        number(name)
    for name in THREADS:
        _threads(name)
