"""Shared behaviour of treebench's tree estimators.

Every algorithm is a scikit-learn classifier: ``ClassifierMixin`` first, then ``BaseEstimator``;
``__init__`` stores parameters only; checks live in ``_parameter_constraints``; ``fit`` sets
``tree_`` (a `TreeArrays`), ``classes_``, ``n_features_in_`` and ``solve_info_`` and returns self.

One way in for every learner: ``fit(X, y, sample_weight=None, context=None)``. The base validates
the data, folds the checked ``sample_weight`` into a `FitContext` (validation rows, feature
groups, test costs, deadline) and calls ``_fit_tree(X, y, ctx)``; a learner reads from ``ctx``
what it needs.

``solve_info_`` is a flat dict. Keys with a common meaning across algorithms (all optional):
``optimal`` (bool), ``objective`` (float, in the unit ``objective_kind`` names: one of
`treebench.results.schema.OBJECTIVE_KINDS`), ``bound`` (float), ``gap`` (float), ``operations``
(int: the algorithm's own count of its unit of work), ``timed_out`` (bool), ``compile_seconds``
(float: JIT compilation that happened inside this fit, excluded from fit time). These are the
results columns the base declares (`treebench.algorithms.solve_info`); a learner declares
further ones when it registers.

``trace_`` is the fit's anytime trace, a list of (seconds since the fit's start,
incumbent, lower bound) in the unit of ``solve_info_["objective"]``, for a learner whose search
records one (the optimal searches), else None (`treebench.algorithms.traces`).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _assert_all_finite, _check_sample_weight, check_is_fitted, validate_data,
)

from treebench.algorithms.context import FitContext
from treebench.algorithms.traces import with_trace
from treebench.tree.arrays import TreeArrays  # noqa: F401 (the fitted model's type)
from treebench.tree.labels import majority_label  # noqa: F401 (learners import the tie rule here)
from treebench.tree.export import conditions_from_names, export_dict, export_dot, export_text

from treebench.algorithms.solve_info import SOLVE_INFO_COLUMNS, SOLVE_INFO_KEYS  # noqa: F401,E402


class _TreeModel:
    """What every single-tree estimator shares: the declared input kinds, input checks at
    prediction time, ``apply`` and the tree's size."""

    #: True for learners that accept only 0/1 feature matrices; set by the registry from the
    #: entry's declared input kinds (`treebench.registry.declare_inputs`), like ``input_kinds``
    binary_features_only: bool = False
    input_kinds: frozenset[str] | None = None
    #: True in learners that work on ``float32`` and ``uint8`` matrices as they are: 0/1 data
    #: then stays one byte per entry instead of being copied to float64 (8×) at fit and predict
    compact_input: bool = False
    #: whether a float32 matrix of numeric features gives this learner the same model, so the
    #: runner may prepare one (half the memory, `treebench.execute.precision`): "always" when
    #: the learner rounds its input to float32 itself (scikit-learn's trees), "exact" when
    #: every value is a float32 exactly, "never" (float64)
    float32_input: str = "never"

    def _validate_params(self) -> None:
        """scikit-learn's parameter checks, with a boolean refused where a number is expected
        and a boolean is not (to Python ``True`` is the integer 1: ``k=True`` ran as k = 1, and
        a config refuses it)."""
        for name, options in getattr(self, "_parameter_constraints", {}).items():
            value = getattr(self, name, None)
            if isinstance(value, bool | np.bool_) and isinstance(options, list) and \
                    "boolean" not in options and bool not in options and \
                    any(isinstance(o, Interval) for o in options):
                raise ValueError(f"The {name!r} parameter of {type(self).__name__} must be a "
                                 f"number, not the boolean {value!r}.")
        super()._validate_params()  # type: ignore[misc]

    @staticmethod
    def warmup() -> None:
        """What the runner runs once per worker before timing any fit of this learner (imports
        of a solver library, JIT compilation): nothing by default. A subclass overrides it, or
        its module defines a ``warmup()`` function."""

    def _check_X(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=_dtypes(self), reset=False, ensure_all_finite=_finite(self))
        if self.binary_features_only:
            check_binary_matrix(X)
        return writable(X)

    def _export_args(self, feature_names=None, class_names=None):
        check_is_fitted(self)
        names = feature_names if feature_names is not None else getattr(self, "feature_names_in_", None)
        feats, conds = (None, None) if names is None else conditions_from_names(
            [str(n) for n in names], binary=self.binary_features_only)
        classes = list(class_names) if class_names is not None else getattr(self, "classes_", None)
        return feats, (None if classes is None else list(classes)), conds

    def export_text(self, feature_names=None, class_names=None) -> str:
        """The fitted tree as indented if/else rules. Features are named by ``feature_names``,
        else by the columns of the frame it was fitted on (``feature_names_in_``); columns
        named by a treebench binarizer (``get_feature_names_out``, or a Pipeline with
        ``set_output(transform="pandas")``) print as the conditions they stand for
        (``age >= 31.5`` / ``age < 31.5``)."""
        return export_text(self.tree_, *self._export_args(feature_names, class_names))

    def to_dict(self, feature_names=None, class_names=None) -> dict:
        """The fitted tree as nested dicts (the JSON of ``treebench show --format json``)."""
        return export_dict(self.tree_, *self._export_args(feature_names, class_names))

    def export_graphviz(self, feature_names=None, class_names=None) -> str:
        """The fitted tree in Graphviz dot (``treebench show --format dot``)."""
        return export_dot(self.tree_, *self._export_args(feature_names, class_names))

    def __str__(self) -> str:
        if getattr(self, "tree_", None) is None:
            return repr(self)
        return f"{self!r}\n{self.export_text()}"

    def _repr_html_(self) -> str:
        """In a notebook: the rules of a fitted tree, else scikit-learn's diagram."""
        if getattr(self, "tree_", None) is None:
            return super()._repr_html_()
        import html

        return f"<pre>{html.escape(str(self))}</pre>"

    def apply(self, X):
        """Id of the leaf each row reaches."""
        X = self._check_X(X)  # first, so that an unfitted estimator raises NotFittedError
        return self.tree_.apply(X)

    def get_depth(self) -> int:
        check_is_fitted(self)
        return self.tree_.depth

    def get_n_leaves(self) -> int:
        check_is_fitted(self)
        return self.tree_.n_leaves


class TreeClassifierBase(ClassifierMixin, _TreeModel, BaseEstimator):
    """Base for estimators whose fitted model is a single `TreeArrays` in ``tree_``.

    Subclasses implement ``_fit_tree(X, y_index, ctx) -> (TreeArrays, dict)`` where ``y_index``
    holds class indices into ``classes_`` and ``ctx`` is a `FitContext` whose ``sample_weight``
    is the validated weight vector; this base does validation, label encoding and prediction.
    """

    def fit(self, X, y, sample_weight=None, context: FitContext | None = None):
        """Fit the tree. ``context`` carries validation rows, feature groups, test costs and a
        deadline (`FitContext`); ``sample_weight`` wins over ``context.sample_weight``."""
        self._validate_params()
        X, y = _checked_classification_data(self, X, y)
        X = writable(X)
        ctx = _context_with_weights(X, sample_weight, context)
        if self.binary_features_only:
            check_binary_matrix(X)
        self.classes_, y_index = np.unique(y, return_inverse=True)
        kinds = self.input_kinds
        if kinds is not None and "multiclass" not in kinds and len(self.classes_) > 2:
            raise ValueError(
                f"Only binary classification is supported. {type(self).__name__} takes two "
                f"classes, but y has {len(self.classes_)}; choose a learner that accepts "
                "several classes."
            )
        self.trace_ = None  # a learner sets it in `_fit_tree` or hands it in its info
        tree, info = self._fit_tree(X, y_index.astype(np.int64), ctx)
        self.tree_ = tree
        self.solve_info_, self.trace_ = with_trace(info, self.trace_,
                                                   getattr(self, "time_limit", None))
        return self

    def _fit_tree(self, X, y_index, ctx: FitContext):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X):
        """Predicted class label of every row."""
        X = self._check_X(X)  # first, so that an unfitted estimator raises NotFittedError
        return self.classes_[self.tree_.predict_index(X)]

    def predict_proba(self, X):
        """Training class frequencies in the leaf each row reaches."""
        X = self._check_X(X)
        return self.tree_.predict_proba(X)

    @classmethod
    def predicts_from_tree(cls) -> bool:
        """Whether ``predict`` and ``predict_proba`` are this base's, read off ``tree_`` (so the
        metrics may read predictions off the tree without validating the data again)."""
        return (cls.predict is TreeClassifierBase.predict
                and cls.predict_proba is TreeClassifierBase.predict_proba)

    def __sklearn_tags__(self):
        return _tags_from_inputs(self, super().__sklearn_tags__())


def _check_target_squares(y: np.ndarray, sample_weight: np.ndarray | None) -> None:
    """Refuse regression targets whose weighted squares overflow a float (|y| near 1e154 and
    above): every squared error is then infinite or NaN, and a tree's error read as 0 would be
    reported optimal. One sentence, as for the other input checks."""
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(np.sum(w * y * y))
    if not np.isfinite(total):
        big = float(np.max(np.abs(y)))
        raise ValueError(f"the regression targets are too large: their weighted squares overflow "
                         f"a float (largest |y| {big:.3g}); rescale them, e.g. divide by "
                         f"{10.0 ** np.floor(np.log10(big)):.0e}.")


class TreeRegressorBase(RegressorMixin, _TreeModel, BaseEstimator):
    """Base for regression estimators whose fitted model is one `TreeArrays` (``task ==
    "regression"``) in ``tree_``. Subclasses implement ``_fit_tree(X, y, ctx) -> (TreeArrays,
    dict)`` with ``y`` a float64 vector."""

    def fit(self, X, y, sample_weight=None, context: FitContext | None = None):
        """Fit the tree (see `TreeClassifierBase.fit` for ``context``)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=_dtypes(self), ensure_min_samples=1, y_numeric=True,
                             ensure_all_finite=_finite(self))
        X = writable(X)
        ctx = _context_with_weights(X, sample_weight, context)
        if self.binary_features_only:
            check_binary_matrix(X)
        y = writable(np.asarray(y, dtype=np.float64))
        _check_target_squares(y, ctx.sample_weight)
        self.trace_ = None  # a learner sets it in `_fit_tree` or hands it in its info
        tree, info = self._fit_tree(X, y, ctx)
        self.tree_ = tree
        self.solve_info_, self.trace_ = with_trace(info, self.trace_,
                                                   getattr(self, "time_limit", None))
        return self

    def _fit_tree(self, X, y, ctx: FitContext):  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, X):
        """Mean training target of the leaf each row reaches."""
        X = self._check_X(X)
        return self.tree_.predict_value(X)

    def __sklearn_tags__(self):
        return _tags_from_inputs(self, super().__sklearn_tags__())


def writable(a: np.ndarray) -> np.ndarray:
    """``a``, or a copy of it when it is read-only (a memory map, such as the inputs joblib
    hands its workers). numba types a read-only array apart from a writable one, so each
    kernel would be compiled again for it (a minute and more on a cold cache, inside the
    fit, where the learners' warm-ups compile only the writable types); no learner writes
    into its inputs, and the copy costs far less."""
    return a if a.flags.writeable else np.array(a)


def _checked_classification_data(est, X, y):
    """``X`` and ``y`` validated as scikit-learn's ``validate_data`` and
    ``check_classification_targets`` validate them, with the same errors. Plain numpy input
    that needs no conversion (a 2-D array of a dtype the learner keeps, at least one row and
    one column; a 1-D vector of integer, boolean or string labels of the same length) takes a
    short path with the same outcome: only the finiteness of ``X`` is checked there, since
    nothing else can fail on such input. The full checks cost about 0.7 ms a fit, as much as a
    whole millisecond optimal search."""
    if _plain_classification_data(est, X, y):
        validate_data(est, X, y, skip_check_array=True)  # n_features_in_, feature names
        if X.dtype.kind == "f":
            _assert_all_finite(X, allow_nan=_finite(est) == "allow-nan", input_name="X",
                               estimator_name=type(est).__name__)
        return X, y
    X, y = validate_data(est, X, y, dtype=_dtypes(est), ensure_min_samples=1,
                         ensure_all_finite=_finite(est))
    check_classification_targets(y)
    return X, y


def _plain_classification_data(est, X, y) -> bool:
    """Whether ``X`` and ``y`` are numpy arrays that ``validate_data`` would return unchanged
    and ``check_classification_targets`` would accept (see `_checked_classification_data`)."""
    if type(X) is not np.ndarray or type(y) is not np.ndarray:
        return False
    dtypes = _dtypes(est)
    kept = dtypes if isinstance(dtypes, list) else [dtypes]
    return (X.ndim == 2 and X.shape[0] >= 1 and X.shape[1] >= 1 and X.dtype in kept
            and y.ndim == 1 and y.shape[0] == X.shape[0] and y.dtype.kind in "iubU")


def _dtypes(est) -> type | list[type]:
    """The dtypes ``validate_data`` keeps (others are converted to the first)."""
    return [np.float64, np.float32, np.uint8] if est.compact_input else np.float64


def accepts_missing(est) -> bool:
    """Whether the learner declares the input kind ``missing``: it takes NaN in its features
    and routes such rows itself."""
    return est.input_kinds is not None and "missing" in est.input_kinds


def _finite(est) -> bool | str:
    """``validate_data``'s ``ensure_all_finite``: NaN passes for learners that declare
    ``missing``; infinite values never do."""
    return "allow-nan" if accepts_missing(est) else True


def _tags_from_inputs(est, tags):
    """scikit-learn's tags from the registry declaration (``input_kinds``): only learners that
    declare ``missing`` take NaN, ``categorical`` input is declared, and a learner without
    ``multiclass`` is a binary classifier."""
    tags.input_tags.allow_nan = accepts_missing(est)
    kinds = est.input_kinds
    if kinds is not None:
        tags.input_tags.categorical = "categorical" in kinds
        if tags.classifier_tags is not None:
            tags.classifier_tags.multi_class = "multiclass" in kinds
    return tags


def _context_with_weights(X, sample_weight, context: FitContext | None) -> FitContext:
    """The context with its checked per-column fields and the validated weight vector:
    negative or all-zero weights, and weights whose total overflows a float (every
    objective, error count and accuracy would be inf or NaN), are refused here, once, for
    every algorithm."""
    ctx = (context or FitContext()).checked(X.shape[1])
    if sample_weight is None:
        sample_weight = ctx.sample_weight
    sw = writable(_check_sample_weight(sample_weight, X, dtype=np.float64,
                                       ensure_non_negative=True))
    with np.errstate(over="ignore"):
        total = float(np.sum(sw))
    if not np.isfinite(total):
        raise ValueError("sample weights sum to more than the largest float "
                         f"({np.finfo(float).max:.3g}); scale them down.")
    return ctx.replace(sample_weight=sw)


def check_binary_matrix(X: np.ndarray) -> None:
    """Raise a clear ValueError when ``X`` has a value other than 0 or 1 (in blocks of rows, so
    the check allocates no full-size temporary)."""
    if X.size == 0:
        return
    if X.dtype in (np.uint8, np.bool_):
        if X.max() <= 1:
            return
    step = max(1, 2**22 // max(1, X.shape[1]))
    for start in range(0, X.shape[0], step):
        block = X[start : start + step]
        bad = (block != 0) & (block != 1)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise ValueError(
                f"this algorithm needs 0/1 features, but column {c} has the value "
                f"{X[start + r, c].item()!r} (row {start + r}); binarize the features first: in "
                "Python, `make_pipeline(treebench.binarize.make_binarizer('quantile'), "
                "learner)` (a scikit-learn transformer fitted on the training rows); in a "
                "config, `binarization: {method: quantile}`."
            )
