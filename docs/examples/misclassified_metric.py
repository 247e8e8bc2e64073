"""A new metric: the weighted number of misclassified rows of a split.

The metric recipe of docs/extending.md. A plug-in package names this module in its
``treebench.metrics`` entry point; importing it registers the metric, and its columns
(``train_misclassified``, ``val_misclassified``, ``test_misclassified``) are then part of every
results table. tests/docs/test_extending.py installs it that way and runs an experiment.
"""

from __future__ import annotations

import numpy as np

from treebench.metrics import Inputs, Metric, register


def misclassified(d: Inputs) -> float:
    """Σ weights of the rows whose predicted class is wrong."""
    w = np.ones(len(d.y)) if d.sample_weight is None else np.asarray(d.sample_weight, float)
    return float(w[d.pred != d.y].sum())


MISCLASSIFIED = register(Metric(
    "misclassified", "weighted count of wrongly predicted rows", "pred", "classification",
    greater_is_better=False, fn=misclassified))
