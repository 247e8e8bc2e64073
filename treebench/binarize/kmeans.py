"""`kmeans`: k-means bins per numeric feature, then one column per bin (NGI's preprocessing)."""

from __future__ import annotations

import warnings

import numpy as np

from treebench.binarize._common import TableBinarizer, check_int, numeric_values
from treebench.binarize.thresholds import midpoints
from treebench.tree.columns import BinaryColumn
from treebench.registry import BINARIZERS


def kmeans_edges(x: np.ndarray, w: np.ndarray, n_bins: int, random_state) -> np.ndarray:
    """Inner bin edges: midpoints between sorted 1-D k-means centres (weighted by ``w``)."""
    from sklearn.cluster import KMeans

    keep = ~np.isnan(x) & (w > 0)
    x, w = x[keep], w[keep]
    distinct = np.unique(x)
    k = min(n_bins, distinct.size)
    if k <= 1:
        return np.empty(0)
    # values near the largest float: k-means squares them (infinity, refused by scikit-learn);
    # clustered divided by a power of two, which is exact, and the centres multiplied back
    top = float(np.abs(distinct).max())
    scale = 2.0 ** (np.frexp(top)[1] - 400) if top > 2.0 ** 400 else 1.0
    x, distinct = x / scale, distinct / scale
    # start from uniform centres like scikit-learn's KBinsDiscretizer(strategy="kmeans")
    lo, hi = distinct[0], distinct[-1]
    init = (lo + (hi - lo) * (np.arange(k) + 0.5) / k).reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fewer distinct points than clusters is handled above
        km = KMeans(n_clusters=k, init=init, n_init=1, random_state=random_state)
        km.fit(x.reshape(-1, 1), sample_weight=w)
    centres = np.unique(km.cluster_centers_[:, 0])
    return midpoints(centres[:-1], centres[1:]) * scale


@BINARIZERS.register("kmeans", tags=("numeric",))
class KMeansBins(TableBinarizer):
    """Per feature, ``n_bins`` k-means bins (NGI uses 5) one-hot encoded.

    Column i of a feature is ``lo_i <= x < hi_i`` with edges at midpoints between the sorted
    centres (first ``lo`` is −inf, last ``hi`` +inf), so every non-missing value has exactly one 1.
    """

    name = "kmeans"

    def __init__(self, n_bins: int = 5, random_state: int | None = 0):
        self.n_bins = n_bins
        self.random_state = random_state

    def _check_params(self):
        check_int(self.name, "n_bins", self.n_bins, 2)

    def _fit_columns(self, X, y, w):
        out = []
        for f in X.columns:
            edges = kmeans_edges(numeric_values(X[f], str(f)), w, self.n_bins, self.random_state)
            bounds = np.r_[-np.inf, edges, np.inf]
            if edges.size == 0:
                out.append([BinaryColumn(str(f), "in", (-np.inf, np.inf))])
                continue
            out.append(
                [BinaryColumn(str(f), "in", (float(a), float(b))) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
            )
        return out
