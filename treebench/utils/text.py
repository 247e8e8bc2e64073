"""The text helpers shared by every layer: file-name slugs, numbers in rules, values quoted in
messages.

One definition each, so that a figure, a cache file and a printed tree never disagree on how a
name becomes a file name or how a threshold is written, and so that no error message prints
kilobytes of a data file: every value a message quotes from data or config goes through `clip`
(`quote`, `show`, `quote_list`), at most `MAX_CHARS` characters per value and `MAX_VALUES`
values (docs/input-limits.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

#: the longest a quoted value gets in a message, and how many values a message lists
MAX_CHARS = 80
MAX_VALUES = 5

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: Any) -> str:
    """A file-name-safe form of ``text``: runs of other characters than letters, digits,
    ``.``, ``_`` and ``-`` become one ``-``; never empty (``"x"``)."""
    return _UNSAFE.sub("-", str(text)).strip("-") or "x"


def fmt_value(v: Any) -> str:
    """A threshold or category as written in rules: floats with 6 significant digits
    (``31.5``, ``0.333333``), anything else as ``str``."""
    import numpy as np

    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return printable(str(v))


def printable(s: str) -> str:
    """``s`` with the characters that are not printable (newlines, NULs, escapes) written as
    Python escapes, so a value read from a data file cannot break a printed rule or line."""
    return s if s.isprintable() else s.encode("unicode_escape", "backslashreplace").decode("ascii")


def fmt_seconds(x: float) -> str:
    """Seconds in one format everywhere: three significant digits, positional
    (``0.00123``, ``0.5``, ``12.3``; whole seconds from 1000 on), never scientific notation."""
    import numpy as np

    if abs(x) >= 1000:
        return f"{x:.0f}"
    return np.format_float_positional(float(x), precision=3, unique=True, fractional=False,
                                      trim="-")


def clip(text: Any, limit: int = MAX_CHARS) -> str:
    """``text`` (any value: its ``str``) as a message may quote it: characters that are not
    printable (newlines, NULs, escapes) written as Python escapes, and cut to ``limit``
    characters with a trailing ``…``."""
    s = printable(str(_plain(text)))
    return s if len(s) <= limit else s[: max(limit - 1, 1)] + "…"


def quote(value: Any, limit: int = MAX_CHARS) -> str:
    """A value quoted in a message: `` `value` `` (clipped)."""
    return f"`{clip(value, limit)}`"


def show(value: Any, limit: int = MAX_CHARS) -> str:
    """A value quoted in a message as Python writes it (``'a'``, ``1.5``, ``None``), clipped."""
    return clip(repr(_plain(value)), limit)


def quote_list(values: Iterable[Any], max_values: int = MAX_VALUES,
               fmt: Callable[[Any], str] = quote) -> str:
    """``a, b, c`` for the first ``max_values`` values (each through ``fmt``), then
    ``and N more``."""
    items = list(values)
    shown = ", ".join(fmt(v) for v in items[:max_values])
    more = len(items) - max_values
    return f"{shown} and {more} more" if more > 0 else shown


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value it holds (``'a'``, not ``np.str_('a')``)."""
    item = getattr(v, "item", None)
    if item is not None and type(v).__module__ == "numpy" and getattr(v, "ndim", 1) == 0:
        return item()
    return v
