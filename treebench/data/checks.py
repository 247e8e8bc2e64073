"""Checks of a loaded dataset against the split it will get, before anything runs.

The runner's preflight calls `check_dataset_split` once per (dataset, split): what would give
wrong numbers with exit code 0 is refused with one sentence (`DataError`, exit code 2), what only
needs saying is returned as warnings for the run summary (issue 8):

* a label with a single class (A4): nothing to learn, every accuracy is 1;
* a predefined test file whose labels the training rows never have (A3): those rows can never
  be predicted, so accuracy is silently low (adult's test file writes ``<=50K.`` with a dot);
  ``label_map:`` fixes the spelling, ``unseen_test_labels: allow`` accepts them knowingly
  (KDD Cup 99's test file adds attack types on purpose);
* ``split: predefined`` on a dataset without a test file;
* a stratified split that cannot stay stratified (A15): a warning, or a refusal with
  ``split.unstratifiable: error``;
* a regression target (``meta["task"] == "regression"``) has no classes: only a constant
  target is refused, and its splits are never stratified;
* values read as missing because they were no numbers (``bad_values: missing``): a warning.
"""

from __future__ import annotations

import difflib
from typing import Any

import numpy as np

from treebench.data.base import Dataset
from treebench.data.splits import stratification_problem
from treebench.errors import DataError
from treebench.text import MAX_CHARS, MAX_VALUES, clip, show


def _show(v: Any) -> str:
    return show(v)  # clipped: a label value may be a whole line of a file


def _test_file(ds: Dataset) -> str:
    for f in ds.meta.get("files", []) or []:
        if f.get("role") == "test":
            return str(f.get("found_at") or f.get("path"))
    return "its test part"


def check_labels(ds: Dataset, name: str) -> None:
    """Refuse a label with fewer than two classes."""
    classes, counts = np.unique(np.asarray(ds.y), return_counts=True)
    if classes.size < 2:
        only = f"the single class {_show(classes[0])}" if classes.size else "no rows"
        raise DataError(
            f"dataset `{name}`: the label has {only} in all {ds.n_samples} rows, so there is nothing to "
            f"learn; check its `label` column (or `label_map`) and the rows it keeps."
        )


def check_target(ds: Dataset, name: str) -> None:
    """Refuse a regression target that is constant (R² is undefined, nothing to learn)."""
    y = np.asarray(ds.y, dtype=np.float64)
    if y.size == 0 or np.all(y == y[0]):
        raise DataError(
            f"dataset `{name}`: the regression target is constant in all {ds.n_samples} rows, so there is "
            f"nothing to learn; check its `label` column and the rows it keeps."
        )


def check_predefined(ds: Dataset, name: str) -> None:
    """Refuse a predefined split that is missing, single-class in training, or whose test file
    has labels the training file never has (unless the dataset says ``unseen_test_labels: allow``)."""
    if ds.train_index is None or ds.test_index is None:
        raise DataError(
            f"dataset `{name}` has no test file, so `split: {{kind: predefined}}` cannot apply; give it a "
            f"`test_path` or choose another split kind."
        )
    if len(ds.test_index) == 0:
        raise DataError(f"dataset `{name}` has no test rows, so `split: {{kind: predefined}}` cannot apply; choose another split kind.")
    y = np.asarray(ds.y)
    ytr, yte = y[ds.train_index], y[ds.test_index]
    train_classes = np.unique(ytr)
    if train_classes.size < 2:
        raise DataError(
            f"dataset `{name}`: its training file has the single class {_show(train_classes[0]) if train_classes.size else 'none'}, "
            f"so there is nothing to learn; check its `label` column."
        )
    unseen, counts = np.unique(yte[~np.isin(yte, train_classes)], return_counts=True)
    if unseen.size and ds.meta.get("unseen_test_labels", "error") != "allow":
        shown = ", ".join(f"{_show(u)} ({int(k)} rows)" for u, k in zip(unseen[:MAX_VALUES], counts[:MAX_VALUES], strict=True))
        more = f" and {unseen.size - MAX_VALUES} more" if unseen.size > MAX_VALUES else ""
        known = [str(c) for c in train_classes]
        pairs = []
        for u in unseen[:3]:
            close = difflib.get_close_matches(str(u), known, n=1, cutoff=0.6) if len(str(u)) <= 4 * MAX_CHARS else []
            pairs.append(f"'{clip(u)}': '{clip(close[0] if close else known[0])}'")
        raise DataError(
            f"the test file `{_test_file(ds)}` of dataset `{name}` has label(s) {shown}{more} that the training rows "
            f"never have, so they could never be predicted; map them to training labels with `label_map:` "
            f"(e.g. `label_map: {{{', '.join(pairs)}}}`) or, if they are meant to be unseen, set "
            f"`unseen_test_labels: allow`."
        )


def check_dataset_split(ds: Dataset, name: str, split: dict[str, Any]) -> list[str]:
    """Refuse what would give wrong numbers for ``ds`` under ``split`` (a `SplitSpec` dump);
    return the warnings to report (e.g. a split that is not stratified)."""
    notes = [f"dataset `{name}`: {n}." for n in ds.meta.get("parse_notes", []) or []]
    kind = split.get("kind", "kfold")
    if ds.meta.get("task") == "regression":
        check_target(ds, name)
        if kind == "predefined" and (ds.train_index is None or ds.test_index is None or len(ds.test_index) == 0):
            raise DataError(
                f"dataset `{name}` has no test file, so `split: {{kind: predefined}}` cannot apply; give it a "
                f"`test_path` or choose another split kind."
            )
        return notes
    check_labels(ds, name)
    if kind == "predefined":
        check_predefined(ds, name)
        return notes
    problem = stratification_problem(
        kind, np.asarray(ds.y), n_splits=int(split.get("n_splits", 5)), stratify=bool(split.get("stratify", True))
    )
    if problem is None:
        return notes
    if split.get("unstratifiable", "warn") == "error":
        raise DataError(
            f"dataset `{name}`: the {kind} split would be {problem}; merge or drop the small classes, use "
            f"fewer folds, or set `split.unstratifiable: warn` to run it unstratified."
        )
    return [*notes, f"dataset `{name}`: {problem}."]
