"""The one tree structure every algorithm returns, with predict kernels and exporters."""

from treebench.tree.arrays import TreeArrays, TreeBuilder, check_tree

__all__ = ["TreeArrays", "TreeBuilder", "check_tree"]
