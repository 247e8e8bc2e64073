"""The range every integer of the input must lie in: config values, sweep flags and command-line
flags (docs/input-limits.md).

A seed (a key named ``seed``, ``seeds``, ``random_state`` or ending in ``_seed``) is an integer
from 0 to 2**32 - 1, what numpy and scikit-learn accept. Any other integer fits a signed 64-bit
integer, the type of the results table's integer columns; a learner's own constraints (a depth
of at least 1) are checked on top of it. One function, `int_problem`, decides both, so that every
reader of integers (`treebench.config.checks`, `treebench.utils.sweeps`, the run options) says
the same.
"""

from __future__ import annotations

from typing import Any

#: the smallest and largest seed
SEED_RANGE = (0, 2**32 - 1)
#: the smallest and largest of any other integer (a signed 64-bit integer)
INT_RANGE = (-(2**63), 2**63 - 1)

SEED_KEYS = ("seed", "seeds", "random_state")


def is_seed_key(key: str) -> bool:
    """Whether integers under the key ``key`` (its last name) are seeds."""
    return key in SEED_KEYS or key.endswith("_seed")


def int_range(key: str) -> tuple[int, int]:
    """The smallest and largest integer allowed under the key ``key``."""
    return SEED_RANGE if is_seed_key(key) else INT_RANGE


def describe_range(key: str) -> str:
    lo, hi = int_range(key)
    if (lo, hi) == SEED_RANGE:
        return f"a seed is an integer from {lo} to {hi:,} (2**32 - 1)"
    return f"an integer here lies between {lo:,} and {hi:,} (a signed 64-bit integer)"


def int_problem(value: Any, key: str) -> str | None:
    """None when ``value`` is no integer or lies in the range of ``key`` (`int_range`); else
    what is wrong, as the end of a sentence: ``12345 is out of range: a seed is ...``."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    lo, hi = int_range(key)
    if lo <= value <= hi:
        return None
    digits = int(value.bit_length() * 0.30103) + 1  # log10(2) per bit
    shown = str(value) if value.bit_length() <= 100 else f"an integer of about {digits} digits"
    return f"{shown} is out of range: {describe_range(key)}"
