"""`FitContext`: everything a learner may need beyond ``X`` and ``y``, in one typed object.

The runner builds one per cell from the prepared fold; notebooks and tests pass one to
``fit(X, y, context=...)`` or just ``sample_weight=``. Learners read what they use and ignore the
rest, so adding a field never changes a learner's signature:

* ``sample_weight``: validated, non-negative, one per training row (the estimator base fills it);
* ``X_val``, ``y_val``: validation rows of a train-val-test split (same columns as ``X``), for
  learners and tuning rules that select on held-out data;
* ``feature_groups``: for each column of ``X``, the index of the original feature it came from
  (the one-hot or threshold columns of one feature share a group), from the binarizer's table;
* ``feature_costs``: the cost of evaluating each column's test (NGI's c(d)); ``None`` means unit
  costs;
* ``deadline``: an absolute ``time.perf_counter()`` value after which an anytime learner returns
  its best complete result (``None``: no deadline).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, eq=False)
class FitContext:
    sample_weight: np.ndarray | None = None
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    feature_groups: np.ndarray | None = None
    feature_costs: np.ndarray | None = None
    deadline: float | None = None

    def replace(self, **changes) -> FitContext:
        return dataclasses.replace(self, **changes)

    def seconds_left(self) -> float | None:
        """Seconds until the deadline (may be negative), or None without one."""
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def deadline_for(self, time_limit: float | None) -> float | None:
        """The earlier of this context's deadline and ``now + time_limit``."""
        own = None if time_limit is None else time.perf_counter() + float(time_limit)
        if own is None:
            return self.deadline
        return own if self.deadline is None else min(own, self.deadline)

    def checked(self, n_features: int) -> FitContext:
        """Validate the per-column fields against ``n_features``; raise one clear ValueError."""
        out = {}
        for name in ("feature_groups", "feature_costs"):
            v = getattr(self, name)
            if v is None:
                continue
            arr = np.asarray(v, dtype=np.int64 if name == "feature_groups" else np.float64)
            if arr.shape != (n_features,):
                raise ValueError(
                    f"{name} must have one entry per column of X ({n_features}), got shape "
                    f"{arr.shape}."
                )
            if name == "feature_costs" and (not np.all(np.isfinite(arr)) or np.any(arr < 0)):
                raise ValueError("feature_costs must be finite and non-negative.")
            out[name] = arr
        if (self.X_val is None) != (self.y_val is None):
            raise ValueError("X_val and y_val must be given together.")
        if self.X_val is not None:
            xv = np.asarray(self.X_val)
            if xv.dtype not in (np.float64, np.float32, np.uint8):  # compact 0/1 rows stay so
                xv = xv.astype(np.float64)
            if xv.ndim != 2 or xv.shape[1] != n_features or xv.shape[0] != len(self.y_val):
                raise ValueError(
                    f"X_val must be a matrix with {n_features} columns and one row per y_val entry."
                )
            out["X_val"] = xv
            out["y_val"] = np.asarray(self.y_val)
        return self.replace(**out) if out else self
