"""The column table of a tree's inputs: what each 0/1 (or passed-through numeric) column tests.

A binarizer fitted on the training rows keeps one `BinaryColumn` per output column (original
feature, operator, value), so that trees print as rules (`treebench.tree.export`) and test costs
can be charged per original feature. The table lives here, beside the tree, because both the
binarizers that write it and the exporters that read it use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from treebench.utils.text import fmt_value as _fmt
from treebench.utils.text import printable


@dataclass(frozen=True)
class BinaryColumn:
    """Output column = 1 when ``feature <op> value`` holds.

    ``op`` is one of ``>=``, ``<=``, ``>``, ``<``, ``==`` (categorical value), ``in`` (value is a
    tuple of categories or an interval), ``is`` (the column is the 0/1 feature itself) or
    ``missing`` (1 when the feature's value is missing). ``raw`` marks a numeric feature passed
    through unchanged (the ``raw`` binarizer): it has no fixed condition, so use `split_text`
    with the tree's threshold instead of true/false_text.

    A missing value satisfies no condition: it gives 0 in every column of its feature but the
    ``missing`` one (docs/missing-values.md). ``missing=True`` marks the columns of a feature
    that had missing values when the binarizer was fitted, so that the 0 side of such a column
    says so (``score < 50.7 or score is missing``) instead of claiming a value it does not know.
    """

    feature: str
    op: str
    value: Any = None
    missing: bool = False

    NEGATION = {">=": "<", "<=": ">", ">": "<=", "<": ">=", "==": "!=", "in": "not in"}

    def split_text(self, threshold: float = 0.5) -> tuple[str, str]:
        """(text of the left branch ``x <= threshold``, text of the right branch)."""
        if self.op == "raw":
            name = printable(self.feature)
            return f"{name} <= {_fmt(threshold)}", f"{name} > {_fmt(threshold)}"
        return self.false_text(), self.true_text()

    def true_text(self) -> str:
        """The condition of the column's 1 side, as printed in rules (names and categories
        with the characters that are not printable escaped)."""
        name = printable(self.feature)
        if self.op == "raw":
            return name
        if self.op == "is":
            return f"{name} = 1"
        if self.op == "missing":
            return f"{name} is missing"
        return f"{name} {self.op} {_fmt(self.value)}"

    def false_text(self) -> str:
        name = printable(self.feature)
        if self.op == "raw":
            raise ValueError(f"raw column `{name}` has no fixed condition; use split_text")
        if self.op == "missing":
            return f"{name} is not missing"
        text = f"{name} = 0" if self.op == "is" else f"{name} {self.NEGATION[self.op]} {_fmt(self.value)}"
        return f"{text} or {name} is missing" if self.missing else text

    def to_dict(self) -> dict[str, Any]:
        v = self.value
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, tuple):
            v = list(v)
        d = {"feature": self.feature, "op": self.op, "value": v}
        if self.missing:  # only when set: tables of features without missing values are unchanged
            d["missing"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BinaryColumn:
        v = d.get("value")
        return cls(d["feature"], d["op"], tuple(v) if isinstance(v, list) else v, bool(d.get("missing", False)))
