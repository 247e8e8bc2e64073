"""A fitted binarizer as data: `to_state` gives JSON-able values plus numeric arrays, and
`from_state` rebuilds the same fitted transformer from them, without `pickle`.

What is saved is generic: the binarizer's class (by name, looked up among the imported
subclasses of `Binarizer`; nothing is imported or called by name), its constructor parameters
(``get_params(deep=False)``) and every other attribute of the instance (the fitted state:
``columns_``, ``feature_names_in_``, the private ``_blocks`` the transform reads, ...). A
binarizer that gains a fitted attribute needs no change here, as long as the attribute is made
of the types below; an attribute of another type makes `to_state` raise `TypeError` (the
fitted binarizer is then not cached), and the round-trip test over every registered binarizer
fails, so it cannot go unnoticed.

Types kept exactly (a numpy float stays a numpy float: the prepared-matrix key prints values
with ``repr``): ``None``, ``bool``, ``int``, ``float`` (NaN and infinities included), ``str``,
lists, tuples, dicts, numpy scalars and arrays of booleans, numbers or text, arrays of such
objects (``feature_names_in_``), numpy types (``output_dtype_``), `BinaryColumn` and nested
binarizers (a `ColumnBinarizer`'s parts and prototypes).

In the JSON, plain strings, numbers, booleans, null and lists stand for themselves; every other
value is an object with a single ``$``-tag key, e.g. ``{"$tuple": [...]}``,
``{"$np": ["<f8", 0.5]}``, ``{"$array": "a0"}`` (the name of an array beside the JSON).
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
from collections.abc import Mapping
from typing import Any

import numpy as np

from treebench.binarize.base import Binarizer
from treebench.tree.columns import BinaryColumn
from treebench.registry import BINARIZERS

#: array kinds kept in the arrays beside the JSON (never object arrays: no pickle)
_ARRAY_KINDS = "biufU"
#: attribute names a state may set: plain identifiers, no dunder
_ATTR = re.compile(r"^_?[A-Za-z][A-Za-z0-9_]*$")
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def to_state(binz: Binarizer) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``(state, arrays)``: the fitted ``binz`` as a JSON-able ``state`` and the numeric arrays
    it refers to by name. Raises `TypeError` for a value of a type not listed above."""
    arrays: dict[str, np.ndarray] = {}
    return _encode(binz, arrays), arrays


def from_state(state: Any, arrays: Mapping[str, np.ndarray]) -> Binarizer:
    """The fitted binarizer that `to_state` described. Raises `ValueError` for anything that
    `to_state` could not have written (unknown class or tag, bad attribute name, missing array)."""
    out = _decode(state, arrays)
    if not isinstance(out, Binarizer):
        raise ValueError("the state does not describe a binarizer")
    return out


# ------------------------------------------------------------------ encoding


def _encode(v: Any, arrays: dict[str, np.ndarray]) -> Any:
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        return v if math.isfinite(v) else {"$float": repr(v)}
    if t is list:
        return [_encode(x, arrays) for x in v]
    if t is tuple:
        return {"$tuple": [_encode(x, arrays) for x in v]}
    if t is dict:
        if all(type(k) is str for k in v):
            return {"$map": {k: _encode(x, arrays) for k, x in v.items()}}
        return {"$dict": [[_encode(k, arrays), _encode(x, arrays)] for k, x in v.items()]}
    if isinstance(v, np.generic) and v.dtype.kind in _ARRAY_KINDS:
        return {"$np": [v.dtype.str, _encode(v.item(), arrays)]}
    if t is np.ndarray:
        return _encode_array(v, arrays)
    if isinstance(v, type) and issubclass(v, np.generic):
        return {"$type": np.dtype(v).str}
    if isinstance(v, np.dtype):
        return {"$dtype": v.str}
    if t is BinaryColumn:  # every field, whatever fields the class gains
        return {"$column": {f.name: _encode(getattr(v, f.name), arrays) for f in dataclasses.fields(v)}}
    if isinstance(v, Binarizer):
        return {"$binarizer": _encode_binarizer(v, arrays)}
    raise TypeError(f"cannot keep a value of type {t.__module__}.{t.__qualname__} in a binarizer's state")


def _encode_array(v: np.ndarray, arrays: dict[str, np.ndarray]) -> Any:
    if v.dtype.kind in _ARRAY_KINDS:
        name = f"a{len(arrays)}"
        arrays[name] = v
        return {"$array": name}
    if v.dtype.kind == "O":
        return {"$objects": [list(v.shape), [_encode(x, arrays) for x in v.ravel().tolist()]]}
    raise TypeError(f"cannot keep an array of dtype {v.dtype} in a binarizer's state")


def _encode_binarizer(b: Binarizer, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    params = b.get_params(deep=False)
    fitted = {k: v for k, v in vars(b).items() if k not in params}
    return {
        "class": _class_name(type(b)),
        "params": {k: _encode(v, arrays) for k, v in params.items()},
        "fitted": {k: _encode(v, arrays) for k, v in fitted.items()},
    }


def _class_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# ------------------------------------------------------------------ decoding


def _decode(v: Any, arrays: Mapping[str, np.ndarray]) -> Any:
    if v is None or type(v) in (bool, int, float, str):
        return v
    if type(v) is list:
        return [_decode(x, arrays) for x in v]
    if type(v) is not dict or len(v) != 1:
        raise ValueError("not a value of a binarizer's state")
    (tag, body), = v.items()
    decode = _DECODERS.get(tag)
    if decode is None:
        raise ValueError(f"unknown tag {tag!r} in a binarizer's state")
    return decode(body, arrays)


def _decode_float(body: Any, arrays: Mapping[str, np.ndarray]) -> float:
    return _NONFINITE[body]


def _decode_np(body: Any, arrays: Mapping[str, np.ndarray]) -> np.generic:
    dtype, value = body
    dt = np.dtype(dtype)
    if dt.kind not in _ARRAY_KINDS:
        raise ValueError(f"numpy scalar of dtype {dt} in a binarizer's state")
    return dt.type(_decode(value, arrays))


def _decode_array(body: Any, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    a = np.asarray(arrays[body])
    if a.dtype.kind not in _ARRAY_KINDS:
        raise ValueError(f"array of dtype {a.dtype} in a binarizer's state")
    return a


def _decode_objects(body: Any, arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    shape, items = body
    out = np.empty(len(items), dtype=object)
    out[:] = [_decode(x, arrays) for x in items]
    return out.reshape([int(s) for s in shape])


def _decode_type(body: Any, arrays: Mapping[str, np.ndarray]) -> type:
    return np.dtype(body).type


def _decode_dtype(body: Any, arrays: Mapping[str, np.ndarray]) -> np.dtype:
    return np.dtype(body)


def _decode_column(body: Any, arrays: Mapping[str, np.ndarray]) -> BinaryColumn:
    known = {f.name for f in dataclasses.fields(BinaryColumn)}
    if not set(body) <= known:
        raise ValueError(f"a column with the unknown field(s) {sorted(set(body) - known)}")
    return BinaryColumn(**{k: _decode(x, arrays) for k, x in body.items()})


def _decode_binarizer(body: Any, arrays: Mapping[str, np.ndarray]) -> Binarizer:
    cls = _binarizer_classes().get(body["class"])
    if cls is None:
        raise ValueError(f"unknown binarizer class {body['class']!r}")
    est = cls(**{str(k): _decode(x, arrays) for k, x in body["params"].items()})
    for name, x in body["fitted"].items():
        if not _ATTR.match(name) or _is_behaviour(cls, name):
            raise ValueError(f"attribute {name!r} cannot be a binarizer's fitted state")
        setattr(est, name, _decode(x, arrays))
    return est


def _is_behaviour(cls: type, name: str) -> bool:
    """True when ``name`` is a method, property or other descriptor of ``cls``: a state never
    shadows behaviour (plain class-level defaults may be overridden)."""
    static = inspect.getattr_static(cls, name, None)
    return callable(static) or hasattr(static, "__get__")


_DECODERS = {
    "$float": _decode_float,
    "$tuple": lambda body, arrays: tuple(_decode(x, arrays) for x in body),
    "$map": lambda body, arrays: {str(k): _decode(x, arrays) for k, x in body.items()},
    "$dict": lambda body, arrays: {_decode(k, arrays): _decode(x, arrays) for k, x in body},
    "$np": _decode_np,
    "$array": _decode_array,
    "$objects": _decode_objects,
    "$type": _decode_type,
    "$dtype": _decode_dtype,
    "$column": _decode_column,
    "$binarizer": _decode_binarizer,
}


def _binarizer_classes() -> dict[str, type]:
    """Every imported subclass of `Binarizer` by module and qualified name (the registry's
    plug-ins are imported first)."""
    BINARIZERS.names()
    out: dict[str, type] = {}
    todo = [Binarizer]
    while todo:
        cls = todo.pop()
        out[_class_name(cls)] = cls
        todo.extend(cls.__subclasses__())
    return out
