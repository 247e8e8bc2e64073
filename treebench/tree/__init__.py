"""The one tree structure every algorithm returns (`TreeArrays`, with its numpy prediction),
the one leaf-label tie rule and recount (`labels`), the translators from other solvers' trees
(`adapters`) and the exporters to text, dict and Graphviz (`export`)."""

from treebench.tree.arrays import TreeArrays, TreeBuilder, binary_thresholds, check_tree
from treebench.tree.labels import majority_label, majority_labels, recount

__all__ = [
    "TreeArrays",
    "TreeBuilder",
    "binary_thresholds",
    "check_tree",
    "majority_label",
    "majority_labels",
    "recount",
]
