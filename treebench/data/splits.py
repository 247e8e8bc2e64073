"""Train/test splits, deterministic per seed.

Kinds (``split.kind`` in a config):

* ``kfold``: stratified k-fold (``n_splits``, shuffled with the split seed); one cell per fold,
  repeated for every seed in ``seeds``.
* ``holdout``: repeated random hold-out (``test_size``, stratified unless ``stratify: false``),
  one cell per seed.
* ``permutation``: the Top-k paper's protocol (Blanc et al. 2023, §5): ``order = arange(n)``,
  shuffled by NumPy's legacy generator seeded with ``seed``; the first ``int(train_size * n)``
  rows train, the rest test. ``np.random.RandomState(seed).shuffle`` draws exactly what
  ``np.random.seed(seed); np.random.shuffle`` draws, without touching global state.
* ``train-val-test``: stratified three-way split (NGI uses 70/10/20), one cell per seed.
* ``predefined``: the dataset's own train/test files.
* ``full``: train and evaluate on every row (the papers' "training accuracy on the whole data").

Stratification needs every class in every fold: at least ``n_splits`` rows per class for
``kfold`` and 2 for ``holdout``/``train-val-test``. When a class is smaller the split is drawn
unstratified (plain shuffled k-fold or hold-out) and `Split.warning` says so; the
config option ``split.unstratifiable: error`` refuses such a dataset before anything runs instead
(`treebench.data.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from treebench.utils.text import show

SPLIT_KINDS = ("kfold", "holdout", "permutation", "train-val-test", "predefined", "full")


@dataclass(frozen=True)
class Split:
    train: np.ndarray
    test: np.ndarray
    valid: np.ndarray | None = None
    warning: str | None = None  # why the split is not what was asked (e.g. not stratified)


def split_instances(kind: str, n_splits: int, seeds: list[int]) -> list[tuple[int, int]]:
    """The (fold, seed) pairs a split spec expands to; each becomes its own cells."""
    if kind == "kfold":
        return [(f, s) for s in seeds for f in range(n_splits)]
    if kind in ("predefined", "full"):
        return [(0, seeds[0])]
    return [(0, s) for s in seeds]


@dataclass(frozen=True)
class SplitOptions:
    """What a config's ``split:`` says about one split (its keys that make a cell's split; the
    config's schema is `treebench.config.schema.SplitSpec`)."""

    kind: str
    n_splits: int = 5
    test_size: float = 0.2
    valid_size: float = 0.1
    train_size: float = 0.8
    stratify: bool = True


def make_split(
    options: SplitOptions,
    y: np.ndarray,
    *,
    fold: int,
    seed: int,
    task: str = "classification",
    predefined: tuple[np.ndarray, np.ndarray] | None = None,
) -> Split:
    """Row indices of one split instance. Pure function of its arguments. A ``task="regression"``
    target (continuous) is never stratified: ``kfold`` and ``holdout`` are plain shuffled
    splits, without a warning."""
    kind, n_splits, test_size = options.kind, options.n_splits, options.test_size
    n = len(y)
    if kind == "full":
        idx = np.arange(n)
        return Split(idx, idx)
    if kind == "predefined":
        if predefined is None or predefined[0] is None:
            raise ValueError("this dataset has no predefined train/test split")
        return Split(np.asarray(predefined[0]), np.asarray(predefined[1]))
    if kind == "permutation":
        order = np.arange(n)
        np.random.RandomState(seed).shuffle(order)
        cut = int(options.train_size * n)
        return Split(order[:cut], order[cut:])
    stratify = options.stratify and task != "regression"
    problem = stratification_problem(kind, y, n_splits=n_splits, stratify=stratify,
                                      test_size=test_size)
    strat = y if stratify and problem is None else None
    if kind == "kfold":
        from sklearn.model_selection import KFold, StratifiedKFold

        cv = (StratifiedKFold if strat is not None else KFold)(
            n_splits=n_splits, shuffle=True, random_state=seed
        )
        train, test = list(cv.split(np.zeros(n), y))[fold]
        return Split(np.sort(train), np.sort(test), warning=problem)
    from sklearn.model_selection import train_test_split

    idx = np.arange(n)
    if kind == "holdout":
        tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=strat)
        return Split(np.sort(tr), np.sort(te), warning=problem)
    if kind == "train-val-test":
        rest, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=strat)
        valid = options.valid_size / (1.0 - test_size)
        s2 = y[rest] if strat is not None and _can_stratify(y[rest], valid, 2) else None
        if strat is not None and s2 is None:
            problem = ("the validation rows are not stratified: after the test split a class has "
                       "fewer than 2 rows, or the validation or training part fewer rows than "
                       "there are classes")
        tr, va = train_test_split(
            rest, test_size=valid, random_state=seed, stratify=s2
        )
        return Split(np.sort(tr), np.sort(te), np.sort(va), warning=problem)
    raise ValueError(f"unknown split kind {kind!r}; expected one of {', '.join(SPLIT_KINDS)}")


def stratification_problem(
    kind: str, y: np.ndarray, *, n_splits: int = 5, stratify: bool = True,
    task: str = "classification", test_size: float | None = None,
) -> str | None:
    """Why a stratified ``kind`` split of labels ``y`` cannot be stratified, or None.

    ``kfold`` needs ``n_splits`` rows of every class, ``holdout`` and ``train-val-test`` 2, and
    (given ``test_size``) a test part and a training part of at least one row per class; the
    other kinds, ``stratify: false`` and regression targets never stratify, so they have no problem.
    """
    if not stratify or task == "regression" or kind not in ("kfold", "holdout", "train-val-test"):
        return None
    need = n_splits if kind == "kfold" else 2
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    if len(classes) < 2:
        return None  # a single class is refused before anything runs (treebench.data.checks)
    small = [(c, int(k)) for c, k in zip(classes, counts, strict=True) if k < need]
    if not small:
        return None if kind == "kfold" or test_size is None else _parts_problem(
            len(y), len(classes), test_size, "test")
    listed = ", ".join(f"{_label(c)} ({k} row{'s' if k != 1 else ''})" for c, k in small[:5])
    more = f" and {len(small) - 5} more" if len(small) > 5 else ""
    what = f"the {need} folds" if kind == "kfold" else "the 2 rows a stratified split needs"
    how = "plain shuffled k-fold" if kind == "kfold" else "an unstratified random split"
    who = f"class {listed} has" if len(small) == 1 else f"classes {listed}{more} have"
    return f"not stratified ({how}): {who} fewer rows than {what}"


def _parts_problem(n: int, n_classes: int, part_size: float, part: str) -> str | None:
    """Why a stratified cut of ``n`` rows into a ``part`` of ``part_size`` and the rest cannot
    hold a row of each of ``n_classes`` classes (the part has ``ceil(part_size * n)`` rows, as
    scikit-learn counts them), or None."""
    import math

    n_part = math.ceil(part_size * n)
    small = min((n_part, part), (n - n_part, "training"))
    if small[0] >= n_classes:
        return None
    return (f"not stratified (an unstratified random split): its {small[1]} part has "
            f"{small[0]} row{'s' if small[0] != 1 else ''}, fewer than the {n_classes} classes")


def _label(c) -> str:
    return show(c)  # clipped: a class may be a whole line of a file


def _can_stratify(y: np.ndarray, test_size: float, n_splits: int) -> bool:
    _, counts = np.unique(y, return_counts=True)
    return bool(counts.min() >= n_splits) and len(counts) > 1 \
        and _parts_problem(len(y), len(counts), test_size, "validation") is None
