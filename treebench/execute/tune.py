"""Parameter selection inside one cell, on the validation rows of a ``train-val-test`` split.

A tuning plan is a list of steps, run in order; each step fixes one parameter of the estimator
before the next step starts (sequential tuning, as in the NGI protocol: λ first, then the
pruning strength α). A step is ``{param, grid, metric, rule, tol}``:

* ``metric``: ``val_auc`` (ROC AUC of ``predict_proba`` on the validation rows: binary, or the
  one-vs-rest macro average over the classes present, i.e. scikit-learn's ``roc_auc_score`` on
  the label-indicator matrix) or ``val_accuracy``;
* ``rule: scan_down_tol``: walk the grid **in the order given** (the NGI protocol lists λ from
  large to small), accept the first value, then move on while the score stays
  ``>= previous accepted score − tol`` and stop at the first value that drops by more; the last
  accepted value wins (Zhang & Gionis 2023, §6: "starting with a large λ and gradually
  decreasing it before a significant drop (larger than 1%) is seen");
* ``rule: argmax``: the best score over the whole grid, ties to the first value in grid order
  (the NGI protocol lists α ascending, so ties go to the smallest α).

Every candidate is fitted on the training rows with the values chosen so far. `tune` returns the
estimator fitted with the chosen values (no extra refit) and a JSON-able trace: for every step
the values tried, their scores, and the chosen value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import clone

from treebench import metrics

RULES = ("scan_down_tol", "argmax")
TUNE_METRICS = ("val_auc", "val_accuracy")


@dataclass(frozen=True)
class TuneStep:
    param: str
    grid: tuple[Any, ...]
    metric: str = "val_auc"
    rule: str = "argmax"
    tol: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TuneStep:
        return cls(
            param=str(d["param"]),
            grid=tuple(d["grid"]),
            metric=str(d.get("metric", "val_auc")),
            rule=str(d.get("rule", "argmax")),
            tol=float(d.get("tol", 0.0)),
        )


def check_steps(steps: list[dict[str, Any]], known_params: list[str] | None = None) -> None:
    """Raise ValueError (one sentence) for a malformed plan."""
    if not isinstance(steps, list) or not steps:
        raise ValueError("`tune` must be one step or a non-empty list of steps")
    for k, s in enumerate(steps):
        where = f"step {k}"
        if not isinstance(s, dict):
            raise ValueError(f"{where}: a step is a mapping with param, grid, metric, rule, tol")
        unknown = sorted(set(s) - {"param", "grid", "metric", "rule", "tol"})
        if unknown:
            raise ValueError(f"{where}: unknown key `{unknown[0]}`; a step has param, grid, "
                             "metric, rule, tol")
        if "param" not in s or "grid" not in s:
            raise ValueError(f"{where}: `param` and `grid` are required")
        if known_params is not None and s["param"] not in known_params:
            raise ValueError(f"{where}: the algorithm has no parameter `{s['param']}`; its "
                             f"parameters are: {', '.join(known_params)}")
        if not isinstance(s["grid"], list) or not s["grid"]:
            raise ValueError(f"{where}: `grid` must be a non-empty list of values")
        if s.get("metric", "val_auc") not in TUNE_METRICS:
            raise ValueError(f"{where}: unknown metric `{s.get('metric')}`; known: "
                             f"{', '.join(TUNE_METRICS)}")
        if s.get("rule", "argmax") not in RULES:
            raise ValueError(f"{where}: unknown rule `{s.get('rule')}`; known: {', '.join(RULES)}")
        tol = s.get("tol", 0.0)
        if isinstance(tol, bool) or not isinstance(tol, int | float) or tol < 0:
            raise ValueError(f"{where}: `tol` must be a non-negative number (got {tol!r})")


def validation_score(est, X_val: np.ndarray, y_val: np.ndarray, metric: str) -> float:
    """``val_auc`` or ``val_accuracy`` of a fitted estimator on the validation rows."""
    y_val = np.asarray(y_val)
    if metric == "val_accuracy":
        return metrics.accuracy(y_val, est.predict(X_val))
    proba = est.predict_proba(X_val)
    classes = est.classes_
    auc = metrics.roc_auc(y_val, proba, classes)
    if np.isnan(auc) and len(classes) > 2:  # a class absent from the validation rows
        aucs = [metrics.binary_auc(y_val == c, proba[:, j]) for j, c in enumerate(classes)]
        aucs = [a for a in aucs if not np.isnan(a)]
        auc = float(np.mean(aucs)) if aucs else float("nan")
    return float(auc)


def _better(a: float, b: float) -> bool:
    """a > b with NaN as the worst score."""
    if np.isnan(a):
        return False
    return np.isnan(b) or a > b


def tune(estimator, X, y, X_val=None, y_val=None, steps=(), *, context=None,
         fit_kwargs: dict[str, Any] | None = None):
    """Run the plan ``steps`` (dicts or `TuneStep`); returns ``(fitted estimator, trace)``.

    The validation rows are ``X_val``/``y_val`` or, when those are None, ``context.X_val`` /
    ``context.y_val`` of a `FitContext`; the context (test costs, feature groups) is passed to
    every candidate's ``fit`` when the estimator takes one.
    """
    fit_kwargs = dict(fit_kwargs or {})
    if X_val is None and context is not None:
        X_val, y_val = context.X_val, context.y_val
    if X_val is None or y_val is None or len(y_val) == 0:
        raise ValueError("tuning needs validation rows; use `split: {kind: train-val-test}`.")
    if context is not None and _takes_context(estimator):
        fit_kwargs.setdefault("context", context)
    plan = [s if isinstance(s, TuneStep) else TuneStep.from_dict(s) for s in steps]
    base = clone(estimator)
    fitted = None
    trace: list[dict[str, Any]] = []
    for step in plan:
        tried: list[Any] = []
        scores: list[float] = []
        fits: list[Any] = []

        def evaluate(value):
            est = clone(base).set_params(**{step.param: value})
            est.fit(X, y, **fit_kwargs)
            s = validation_score(est, X_val, y_val, step.metric)
            tried.append(value)
            scores.append(s)
            fits.append(est)
            return s

        if step.rule == "scan_down_tol":
            chosen = 0
            prev = evaluate(step.grid[0])
            for k in range(1, len(step.grid)):
                s = evaluate(step.grid[k])
                if np.isnan(s) or (not np.isnan(prev) and s < prev - step.tol):
                    break
                chosen, prev = k, s
        else:  # argmax
            chosen = 0
            for k, value in enumerate(step.grid):
                evaluate(value)
                if _better(scores[k], scores[chosen]):
                    chosen = k
        value = tried[chosen]
        base = base.set_params(**{step.param: value})
        fitted = fits[chosen]
        trace.append({
            "param": step.param,
            "rule": step.rule,
            "metric": step.metric,
            "values": [_plain(v) for v in tried],
            "scores": [float(s) for s in scores],
            "chosen": _plain(value),
        })
    return fitted, trace


def chosen_params(trace: list[dict[str, Any]]) -> dict[str, Any]:
    """``{param: chosen value}`` of a trace."""
    return {t["param"]: t["chosen"] for t in trace}


def _takes_context(est) -> bool:
    import inspect

    try:
        return "context" in inspect.signature(est.fit).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return False


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
