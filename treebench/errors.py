"""Errors meant for people.

`UserError` (and its subclasses) carry one clear sentence that names the file, key or column,
what was expected and what to do. The CLI turns them into that sentence plus exit code 2, with no
traceback unless `--debug`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from treebench.utils.text import MAX_CHARS, quote


class UserError(Exception):
    """Bad input from the user (config, data file, parameter, flag): exit code 2."""

    exit_code = 2


class ConfigError(UserError):
    """The experiment config is malformed or names something unknown."""


class DataError(UserError):
    """A data file is missing, has the wrong checksum or cannot be parsed."""


class ParameterError(UserError, ValueError):
    """An estimator or binarizer parameter is invalid."""


class GridSizeWarning(UserWarning):
    """A config whose grid has more than `treebench.config.grid.WARN_CELLS` cells."""


class DataWarning(UserWarning):
    """Data read with a caveat (e.g. unparsable values read as missing): shown, never silent."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ' (did you mean `x`?)' for the closest choice, or ''."""
    if len(str(name)) > 4 * MAX_CHARS:  # a value pasted from a file: no name is that long
        return ""
    close = difflib.get_close_matches(str(name), sorted(choices), n=1, cutoff=0.5)
    return f" (did you mean {quote(close[0])}?)" if close else ""
