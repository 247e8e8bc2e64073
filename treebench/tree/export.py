"""Readable exports of a `TreeArrays`: text rules, nested dict/JSON, Graphviz dot.

Feature names come from the binarizer's column table when there is one: a binary column
``age >= 31.5`` prints as ``age < 31.5`` on its left (0) branch and ``age >= 31.5`` on its right
(1) branch. Raw numeric columns print as ``x <= t`` / ``x > t``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from treebench.utils.text import fmt_value as _fmt
from treebench.utils.text import printable
from treebench.tree.arrays import TreeArrays
from treebench.tree.columns import BinaryColumn


def branch_texts(
    tree: TreeArrays,
    node: int,
    feature_names: Sequence[str] | None = None,
    conditions: Sequence[tuple[str, str] | None] | None = None,
) -> tuple[str, str]:
    """(text of the left branch, text of the right branch) at internal ``node``."""
    f = int(tree.feature[node])
    t = float(tree.threshold[node])
    cond = conditions[f] if conditions is not None and f < len(conditions) else None
    if cond is not None and t == 0.5:
        return cond[0], cond[1]
    name = printable(str(feature_names[f])) if feature_names is not None and f < len(feature_names) \
        else f"x[{f}]"
    left, right = f"{name} <= {_fmt(t)}", f"{name} > {_fmt(t)}"
    if tree.missing_left is not None:  # a learner that routes missing values: say where
        if t == float("inf") and not tree.missing_left[node]:  # scikit-learn's "is it missing?" split
            return f"{name} is not missing", f"{name} is missing"
        if tree.missing_left[node]:
            return f"{left} or {name} is missing", right
        return left, f"{right} or {name} is missing"
    return left, right


def conditions_from_columns(columns: Sequence[dict[str, Any]] | None):
    """Branch texts per column from a binarizer column table (``BinaryColumn.to_dict`` list)."""
    if not columns:
        return None, None
    names: list[str] = []
    conds: list[tuple[str, str] | None] = []
    for c in columns:
        col = BinaryColumn.from_dict(c)
        names.append(col.feature)
        conds.append(None if col.op == "raw" else (col.false_text(), col.true_text()))
    return names, conds


_OPS = (">=", "<=", "!=", "==", ">", "<", "not in", "in")


def conditions_from_names(names: Sequence[str], binary: bool = True):
    """Branch texts per column from column *names*, for a learner fitted on a frame whose
    columns are a treebench binarizer's output (``get_feature_names_out``: ``age >= 31.5``,
    ``color == red``, ``smoker = 1``, ``age is missing``). A name that is not a condition is a
    plain feature: with ``binary`` (a 0/1 learner) it prints ``x = 0`` / ``x = 1``, else
    ``x <= t`` / ``x > t``. The 0 side of a column of a feature that has an ``is missing``
    column says ``or … is missing``, as the binarizer's own table does."""
    pattern = re.compile(r"^(?P<f>.+?) (?P<op>" + "|".join(re.escape(o) for o in _OPS)
                         + r") (?P<v>.+)$")
    missing = {n[: -len(" is missing")] for n in names if n.endswith(" is missing")}
    feats: list[str] = []
    conds: list[tuple[str, str] | None] = []
    for n in names:
        col = None
        if n.endswith(" is missing"):
            col = BinaryColumn(n[: -len(" is missing")], "missing")
        elif n.endswith(" = 1"):
            col = BinaryColumn(n[:-4], "is")
        elif (m := pattern.match(n)) and m["op"] in BinaryColumn.NEGATION:
            col = BinaryColumn(m["f"], m["op"], _number(m["v"]), m["f"] in missing)
        if col is not None:
            feats.append(col.feature)
            conds.append((col.false_text(), col.true_text()))
        else:
            feats.append(n)
            conds.append((f"{n} = 0", f"{n} = 1") if binary else None)
    return feats, conds


def _number(text: str) -> Any:
    try:
        return float(text) if any(ch in text for ch in ".eE") else int(text)
    except ValueError:
        return text


def _leaf_text(tree: TreeArrays, node: int, class_names: Sequence[Any] | None) -> str:
    lab = int(tree.label[node])
    name = class_names[lab] if class_names is not None else lab
    v = tree.value[node]
    tot = v.sum()
    counts = "/".join(_num(x) for x in v)
    share = f"{v[lab] / tot:.0%}" if tot > 0 else "n/a"
    return f"class: {name}  ({share} of {_num(tot)}; counts {counts})"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def export_text(
    tree: TreeArrays,
    feature_names: Sequence[str] | None = None,
    class_names: Sequence[Any] | None = None,
    conditions: Sequence[tuple[str, str] | None] | None = None,
) -> str:
    """The tree as indented if/else rules, one line per branch and leaf."""
    lines: list[str] = []
    if tree.feature[0] < 0:
        return _leaf_text(tree, 0, class_names)

    def rec(node: int, indent: int) -> None:
        pad = "|   " * indent
        if tree.feature[node] < 0:
            lines.append(f"{pad}+-- {_leaf_text(tree, node, class_names)}")
            return
        lt, rt = branch_texts(tree, node, feature_names, conditions)
        lines.append(f"{pad}|-- if {lt}")
        rec(int(tree.left[node]), indent + 1)
        lines.append(f"{pad}|-- if {rt}")
        rec(int(tree.right[node]), indent + 1)

    rec(0, 0)
    return "\n".join(lines)


def export_dict(
    tree: TreeArrays,
    feature_names: Sequence[str] | None = None,
    class_names: Sequence[Any] | None = None,
    conditions: Sequence[tuple[str, str] | None] | None = None,
) -> dict[str, Any]:
    """Nested JSON-able dict: leaves ``{"class", "counts"}``, splits ``{"feature", "threshold",
    "left_if", "right_if", "left", "right", "counts"}``."""

    def rec(node: int) -> dict[str, Any]:
        counts = [float(x) for x in tree.value[node]]
        lab = int(tree.label[node])
        cls = class_names[lab] if class_names is not None else lab
        if isinstance(cls, np.generic):
            cls = cls.item()
        if tree.feature[node] < 0:
            return {"class": cls, "counts": counts}
        lt, rt = branch_texts(tree, node, feature_names, conditions)
        return {
            "feature": int(tree.feature[node]),
            "threshold": float(tree.threshold[node]),
            "left_if": lt,
            "right_if": rt,
            "counts": counts,
            "left": rec(int(tree.left[node])),
            "right": rec(int(tree.right[node])),
        }

    return rec(0)


def export_dot(
    tree: TreeArrays,
    feature_names: Sequence[str] | None = None,
    class_names: Sequence[Any] | None = None,
    conditions: Sequence[tuple[str, str] | None] | None = None,
) -> str:
    """Graphviz dot source; internal nodes show the right-branch test, edges say yes/no."""

    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace('"', '\\"')

    out = ["digraph Tree {", '  node [shape=box, style="rounded", fontname="Helvetica"];']
    for i in range(tree.n_nodes):
        if tree.feature[i] < 0:
            out.append(f'  n{i} [label="{esc(_leaf_text(tree, i, class_names))}"];')
        else:
            _, rt = branch_texts(tree, i, feature_names, conditions)
            out.append(f'  n{i} [label="{esc(rt)}?"];')
            out.append(f'  n{i} -> n{int(tree.left[i])} [label="no"];')
            out.append(f'  n{i} -> n{int(tree.right[i])} [label="yes"];')
    out.append("}")
    return "\n".join(out)
