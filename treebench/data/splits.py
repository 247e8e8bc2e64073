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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SPLIT_KINDS = ("kfold", "holdout", "permutation", "train-val-test", "predefined", "full")


@dataclass(frozen=True)
class Split:
    train: np.ndarray
    test: np.ndarray
    valid: np.ndarray | None = None


def split_instances(kind: str, n_splits: int, seeds: list[int]) -> list[tuple[int, int]]:
    """The (fold, seed) pairs a split spec expands to; each becomes its own cells."""
    if kind == "kfold":
        return [(f, s) for s in seeds for f in range(n_splits)]
    if kind in ("predefined", "full"):
        return [(0, seeds[0])]
    return [(0, s) for s in seeds]


def make_split(
    kind: str,
    y: np.ndarray,
    *,
    fold: int,
    seed: int,
    n_splits: int = 5,
    test_size: float = 0.2,
    valid_size: float = 0.1,
    train_size: float = 0.8,
    stratify: bool = True,
    predefined: tuple[np.ndarray, np.ndarray] | None = None,
) -> Split:
    """Row indices of one split instance. Pure function of its arguments."""
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
        cut = int(train_size * n)
        return Split(order[:cut], order[cut:])
    strat = y if stratify and _can_stratify(y, test_size, n_splits if kind == "kfold" else 2) else None
    if kind == "kfold":
        from sklearn.model_selection import KFold, StratifiedKFold

        cv = (StratifiedKFold if strat is not None else KFold)(
            n_splits=n_splits, shuffle=True, random_state=seed
        )
        train, test = list(cv.split(np.zeros(n), y))[fold]
        return Split(np.sort(train), np.sort(test))
    from sklearn.model_selection import train_test_split

    idx = np.arange(n)
    if kind == "holdout":
        tr, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=strat)
        return Split(np.sort(tr), np.sort(te))
    if kind == "train-val-test":
        rest, te = train_test_split(idx, test_size=test_size, random_state=seed, stratify=strat)
        s2 = y[rest] if strat is not None and _can_stratify(y[rest], valid_size, 2) else None
        tr, va = train_test_split(
            rest, test_size=valid_size / (1.0 - test_size), random_state=seed, stratify=s2
        )
        return Split(np.sort(tr), np.sort(te), np.sort(va))
    raise ValueError(f"unknown split kind {kind!r}; expected one of {', '.join(SPLIT_KINDS)}")


def _can_stratify(y: np.ndarray, test_size: float, n_splits: int) -> bool:
    _, counts = np.unique(y, return_counts=True)
    return bool(counts.min() >= n_splits) and len(counts) > 1
