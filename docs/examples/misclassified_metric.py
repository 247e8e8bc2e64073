"""A new metric: the weighted number of misclassified rows of a split.

The metric recipe of docs/extending.md. A built-in metric is one more `Metric(...)` in the tuple
registered in treebench/metrics.py (the results schema reads the registry when it is imported);
tests/docs/test_extending.py checks this definition against scikit-learn on a fitted tree.
"""

from __future__ import annotations

import numpy as np

from treebench.metrics import Inputs, Metric


def misclassified(d: Inputs) -> float:
    """Σ weights of the rows whose predicted class is wrong."""
    w = np.ones(len(d.y)) if d.sample_weight is None else np.asarray(d.sample_weight, float)
    return float(w[d.pred != d.y].sum())


MISCLASSIFIED = Metric("misclassified", "weighted count of wrongly predicted rows", "pred",
                       "classification", greater_is_better=False, fn=misclassified)
