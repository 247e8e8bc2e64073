"""The text helpers shared by every layer: file-name slugs and numbers in rules.

One definition each, so that a figure, a cache file and a printed tree never disagree on how a
name becomes a file name or how a threshold is written.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(text: Any) -> str:
    """A file-name-safe form of ``text``: runs of other characters than letters, digits,
    ``.``, ``_`` and ``-`` become one ``-``; never empty (``"x"``)."""
    return _UNSAFE.sub("-", str(text)).strip("-") or "x"


def fmt_value(v: Any) -> str:
    """A threshold or category as written in rules: floats with 6 significant digits
    (``31.5``, ``0.333333``), anything else as ``str``."""
    if isinstance(v, float | np.floating):
        return f"{float(v):.6g}"
    return str(v)
