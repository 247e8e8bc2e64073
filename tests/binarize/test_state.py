"""A fitted binarizer as data (`treebench.binarize.state`): every registered binarizer goes
through JSON and an ``.npz`` read without pickle and comes back the same fitted transformer
(same attributes of the same types, same transform output, same prepared-matrix key)."""

from __future__ import annotations

import dataclasses
import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from treebench.binarize import Binarizer, BinaryColumn, make_binarizer
from treebench.binarize.state import from_state, to_state
from treebench.registry import BINARIZERS


def _frames(binary: bool, seed: int = 0):
    """Training and other rows: two numeric features with missing values (0/1 values for
    `none`), a text feature and a numeric-coded categorical one; the other rows hold unseen
    categories and values outside the training range."""
    rng = np.random.default_rng(seed)

    def frame(n, unseen):
        num = (lambda: rng.integers(0, 2, n).astype(float)) if binary else (lambda: rng.normal(size=n).round(2) * 10)
        X = pd.DataFrame({"a": num(), "b": num(),
                          "color": rng.choice(["red", "green", "blue"] + (["mauve"] if unseen else []), n),
                          "size": rng.choice([1, 2, 3] + ([9] if unseen else []), n)})
        if not binary:
            X.loc[X.index[::7], "a"] = np.nan
        X.loc[X.index[::5], "color"] = None
        return X

    X, other = frame(80, False), frame(40, True)
    y = ((X["a"].fillna(0) > 0).to_numpy() ^ (X["color"] == "red").to_numpy()).astype(int)
    return X, y, other


def _through_files(binz: Binarizer) -> Binarizer:
    """`to_state`, strict JSON and an ``.npz`` read with ``allow_pickle=False``, `from_state`."""
    state, arrays = to_state(binz)
    text = json.dumps(state, allow_nan=False)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as z:
        return from_state(json.loads(text), {k: z[k] for k in z.files})


def _same(a, b, where="binarizer"):
    """Equal values of the same types, recursively (a numpy float is not a Python float)."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True):
            _same(x, y, where)
    elif isinstance(a, Binarizer):
        _same(a.get_params(deep=False), b.get_params(deep=False), f"{where}.params")
        _same(vars(a), vars(b), where)
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            if k != "fit_time_":
                _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, BinaryColumn):  # every field, of the same type
        _same(dataclasses.astuple(a), dataclasses.astuple(b), where)
    elif isinstance(a, float | np.floating) and math.isnan(a):
        assert math.isnan(b), where
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _fitted(name: str, X, y):
    """The binarizer ``name`` as the runner makes it (numeric method, or categorical one)."""
    if "categorical" in BINARIZERS.get(name).tags:
        return make_binarizer("quantile", {"max_splits": 3, "categorical": name}, ["size"]).fit(X, y)
    return make_binarizer(name, {}, ["size"]).fit(X, y)


@pytest.mark.parametrize("name", sorted(BINARIZERS.names()))
def test_every_registered_binarizer_round_trips_to_the_same_transformer(name):
    from treebench.execute.prepared import matrix_key

    X, y, other = _frames(binary=name == "none")
    for binz in (_fitted(name, X, y), _standalone(name, X, y)):
        if binz is None:
            continue
        back = _through_files(binz)
        _same(binz, back)
        for rows in (X, other):
            want, got = binz.transform(rows), back.transform(rows)
            assert got.dtype == want.dtype and got.flags.c_contiguous
            np.testing.assert_array_equal(got, want)
        assert [repr(c.value) for c in back.columns_] == [repr(c.value) for c in binz.columns_]
        assert [c.to_dict() for c in back.columns_] == [c.to_dict() for c in binz.columns_]  # the rules' text
        if hasattr(binz, "parts_"):  # what the prepared-matrix cache keys a matrix by
            assert matrix_key("d", back, np.float32, 120) == matrix_key("d", binz, np.float32, 120)


def _standalone(name, X, y):
    """The registered class itself, fitted on the columns it takes."""
    cls = BINARIZERS.get(name).obj
    cols = ["color", "size"] if "categorical" in BINARIZERS.get(name).tags else ["a", "b"]
    return cls().fit(X[cols], y)


def test_values_of_every_kept_type_come_back_exactly():
    binz = make_binarizer("quantile", {}, []).fit(pd.DataFrame({"a": [1.0, 2.0, 3.0]}), [0, 1, 1])
    binz.extra_ = {"f": [1.5, math.inf, -math.inf, math.nan], "np": (np.float32(0.1), np.int64(2**40),
                   np.bool_(True), np.str_("x")), 3: None, "arr": np.arange(6, dtype=np.int16).reshape(2, 3),
                   "text": np.array(["a", "bc"]), "obj": np.array([1, "a", None], dtype=object),
                   "types": [np.float64, np.uint8, np.dtype("<f4")], "empty": ((), [], {})}
    _same(binz, _through_files(binz))


def test_a_value_of_another_type_is_refused_not_pickled():
    binz = make_binarizer("onehot", {}, []).fit(pd.DataFrame({"a": ["x", "y"]}))
    binz.model_ = object()
    with pytest.raises(TypeError, match="cannot keep a value of type builtins.object"):
        to_state(binz)
    binz.model_ = pd.Series([1, 2])
    with pytest.raises(TypeError, match="pandas"):
        to_state(binz)


@pytest.mark.parametrize("edit, match", [
    (lambda s: s["$binarizer"].update({"class": "os.system"}), "unknown binarizer class"),
    (lambda s: s["$binarizer"].update({"class": "builtins.object"}), "unknown binarizer class"),
    (lambda s: s["$binarizer"]["fitted"].update({"transform": None}), "attribute 'transform'"),
    (lambda s: s["$binarizer"]["fitted"].update({"__class__": None}), "attribute '__class__'"),
    (lambda s: s["$binarizer"]["fitted"].update({"x_": {"$pickle": "gASV"}}), "unknown tag"),
    (lambda s: s["$binarizer"]["fitted"].update({"x_": {"$np": ["|O", 1]}}), "dtype object"),
])
def test_a_state_that_to_state_could_not_have_written_is_refused(edit, match):
    binz = make_binarizer("quantile", {}, []).fit(pd.DataFrame({"a": [1.0, 2.0, 3.0]}), [0, 1, 1])
    state, arrays = to_state(binz)
    edit(state)
    with pytest.raises(ValueError, match=match):
        from_state(state, arrays)
