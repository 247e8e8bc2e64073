"""Tree size after merging sibling leaves that predict the same class.

Greedy learners (CART, greedy, Top-k) keep a split whose two children predict the same label
when it lowers impurity; optimal solvers (DL8.5, STreeD) never do, since such a split does not
change the error. ``n_leaves`` counts the tree as learned; `effective_leaves` counts it after
replacing, bottom-up, every internal node whose two children are leaves with the same label by
one leaf: the number of leaves of the smallest tree that predicts the same everywhere by this
rule, which is what sizes of different families can be compared on.
"""

from __future__ import annotations

import numpy as np

from treebench.tree.arrays import TreeArrays


def merged_labels(tree: TreeArrays) -> tuple[np.ndarray, np.ndarray]:
    """(collapsed, label) per node: ``collapsed[i]`` when node ``i``'s subtree predicts one
    class (its label then in ``label[i]``) after merging same-label sibling leaves recursively."""
    n = tree.n_nodes
    collapsed = tree.feature < 0
    label = tree.label.copy()
    for i in range(n - 1, -1, -1):  # children have larger ids than parents
        if tree.feature[i] >= 0:
            a, b = tree.left[i], tree.right[i]
            if collapsed[a] and collapsed[b] and label[a] == label[b]:
                collapsed[i] = True
                label[i] = label[a]
    return collapsed, label


def effective_leaves(tree: TreeArrays) -> int:
    """Leaves after merging sibling leaves with the same label, recursively."""
    collapsed, _ = merged_labels(tree)
    count = 0
    stack = [0]
    while stack:
        i = stack.pop()
        if collapsed[i]:
            count += 1
        else:
            stack += [int(tree.left[i]), int(tree.right[i])]
    return count
