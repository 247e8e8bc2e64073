"""Checks of a config beyond its schema: names known to the registries, parameter values the
estimators accept, learners paired with inputs they take, regression vs classification, tuning,
the grid's size; and the wording of validation errors (`error_location`, `pydantic_message`)."""

from __future__ import annotations

import numbers
from typing import Any

from pydantic import ValidationError

from treebench.algorithms.objectives import ask
from treebench.config.datasets import dataset_task, unique_dataset_names
from treebench.config.grid import check_grid_size, count_cells
from treebench.config.schema import (
    AlgorithmSpec, BinarizationSpec, DatasetSpec, ExecutionSpec, Experiment, LimitsSpec, SplitSpec,
)
from treebench.errors import ConfigError
from treebench.utils.ranges import int_problem
from treebench.utils.sweeps import axis_integers, axis_length, expand_values, grid, grid_size
from treebench.utils.text import MAX_CHARS, clip, quote, quote_list, show
from treebench.errors import did_you_mean
from treebench.registry import accepts_binarization, ALGORITHMS, BINARIZERS, DATASETS


def validate_config(raw: dict[str, Any], source: str = "<config>") -> Experiment:
    """The `Experiment` of ``raw`` (a config as read from YAML), checked against the schema
    and then the registries. Raise `ConfigError` naming ``source`` and the key."""
    check_integers(raw, source)
    try:
        exp = Experiment.model_validate(raw)
    except ValidationError as exc:
        errors = exc.errors()
        # a misspelt key also makes the right one "missing": report the misspelling first
        err = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
        loc = error_location(err.get("loc", ()))
        msg = pydantic_message(err)
        if err.get("type") == "extra_forbidden":
            msg += _closest_key(err.get("loc", ()))
        raise ConfigError(f"{source}: key `{loc}`: {msg}.") from None
    unique_dataset_names(list(exp.datasets), source)
    exp = _ask_objectives(exp, source)
    _check_restrictions(exp, source)
    _check_empty_axes(exp, source)
    _check_grid(exp, source)
    _check_names(exp, source)
    return exp


def check_integers(raw: Any, source: str = "<config>") -> None:
    """Every integer of a config as read from YAML lies in the range of its key
    (`treebench.utils.ranges.int_range`: seeds 0..2**32-1, any other integer a signed 64-bit one),
    before the schema or a learner sees it; so do the integers a sweep axis string stands for
    (the ends of ``"a..b"``, the items of ``"1,2,4"``) in ``algorithms[*].params``,
    ``binarization[*].params`` and ``split.seeds``, counted without expanding them. Raise
    `ConfigError` naming the key and the range."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(raw, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            stack += [(v, (*path, k)) for k, v in node.items()]
            continue
        if isinstance(node, list):
            stack += [(v, (*path, i)) for i, v in enumerate(node)]
            continue
        names = [str(p) for p in path if not isinstance(p, int)]
        key = names[-1] if names else ""
        values = axis_integers(node) if isinstance(node, str) and _is_sweep_axis(names) else [node]
        for v in values:
            problem = int_problem(v, key)
            if problem:
                raise ConfigError(f"{source}: key `{error_location(path)}`: {problem}.")


def _is_sweep_axis(names: list[str]) -> bool:
    """Whether a string at the key path ``names`` is a sweep axis (`expand_values` reads it):
    a value of an algorithm's or a binarization's ``params``, or ``split.seeds``."""
    if names and names[-1] == "seeds":
        return True
    if "params" not in names[:-1]:
        return False
    owner = names[: names.index("params")]
    return bool(owner) and owner[-1] in ("algorithms", "binarization")


def _ask_objectives(exp: Experiment, source: str) -> Experiment:
    """Each entry with ``objective:`` gets the parameters that make its learner solve that
    problem (`objectives.ask`); a learner that cannot, or a parameter that contradicts the
    problem, is a `ConfigError` naming the key. Idempotent: a validated config validates to
    itself."""
    if not any(a.objective for a in exp.algorithms):
        return exp
    algorithms = []
    for i, a in enumerate(exp.algorithms):
        if a.objective:
            try:
                a = a.model_copy(update={"params": ask(a.name, a.objective, a.params)})
            except ValueError as exc:
                raise ConfigError(f"{source}: key `algorithms[{i}].objective`: {exc}.") from None
        algorithms.append(a)
    return exp.model_copy(update={"algorithms": algorithms})


def _check_grid(exp: Experiment, source: str) -> None:
    """Refuse a grid over the cell limit before anything walks it (`check_grid_size`;
    unknown names are left to `_check_names`)."""
    import warnings

    try:
        n = count_cells(exp)
    except Exception:  # noqa: BLE001 - e.g. an unknown algorithm, reported next by name
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the size warning is given once, when expanding
        check_grid_size(exp, source, n)


def _check_restrictions(exp: Experiment, source: str) -> None:
    """Every name in an algorithm entry's ``datasets:`` is one of the config's datasets."""
    names = exp.dataset_names()
    for i, a in enumerate(exp.algorithms):
        for j, d in enumerate(a.datasets or []):
            if d not in names:
                raise ConfigError(
                    f"{source}: key `algorithms[{i}].datasets[{j}]`: {quote(d)} is not one of the "
                    f"config's datasets{did_you_mean(d, names)}; use a name from "
                    f"{quote_list(names)}."
                )


def _closest_key(loc: tuple[Any, ...]) -> str:
    """`` (did you mean `datasets`?)`` for a misspelt key, from the keys of the model at that
    place of the config (top level, split, limits, execution, a dataset or algorithm entry)."""
    nested = {"split": SplitSpec, "limits": LimitsSpec, "execution": ExecutionSpec,
              "datasets": DatasetSpec, "algorithms": AlgorithmSpec, "binarization": BinarizationSpec}
    path = [p for p in loc if isinstance(p, str)]
    model: Any = Experiment if len(path) == 1 else nested.get(path[0]) if len(path) == 2 else None
    if model is None:
        return ""
    return did_you_mean(str(path[-1]), list(model.model_fields))


def error_location(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as the config key a user writes (``algorithms[0].params``),
    without pydantic's validator labels; ``(top level)`` for the document itself."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith(("function-", "literal[", "constrained-")):
            continue
        else:
            out += ("." if out else "") + clip(part)
    return out or "(top level)"


def pydantic_message(err: dict[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) in the words of config
    errors: what is wrong and, for a scalar, the value given."""
    t = err.get("type", "")
    if t == "extra_forbidden":
        return "unknown key; check its spelling against the documented config keys"
    if t == "missing":
        return "required key is missing"
    msg = str(err.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ")
    inp = err.get("input")
    if t not in ("model_type",) and not isinstance(inp, dict | list):
        msg += f" (got {show(inp)})"
    return msg


def _binarizations(exp: Experiment) -> list[tuple[str, BinarizationSpec]]:
    """Every binarization entry of the config with its key: the experiment's, the datasets'
    and the algorithm entries' own."""
    bins = [(f"binarization[{i}]", b) for i, b in enumerate(exp.binarization)]
    for j, ds in enumerate(exp.datasets):
        bins += [(f"datasets[{j}].binarization[{i}]", b) for i, b in enumerate(ds.binarization or [])]
    for j, a in enumerate(exp.algorithms):
        bins += [(f"algorithms[{j}].binarization[{i}]", b) for i, b in enumerate(a.binarization or [])]
    return bins


def _check_empty_axes(exp: Experiment, source: str) -> None:
    """No sweep axis of an algorithm's or a binarization's ``params`` is empty (``k: []``, a
    comma string without values): it would make no cells at all, silently."""
    entries = [(key, b.params) for key, b in _binarizations(exp)]
    entries += [(f"algorithms[{i}]", a.params) for i, a in enumerate(exp.algorithms)]
    for key, params in entries:
        for name, value in params.items():
            if axis_length(value) == 0:
                raise ConfigError(
                    f"{source}: key `{key}.params.{clip(name)}`: the sweep axis has no values, so "
                    "the entry would make no cells; give at least one value (a literal empty "
                    "list is written `{value: []}`)."
                )


def _check_names(exp: Experiment, source: str) -> None:
    """Unknown registry names and parameter values the estimators refuse."""
    for i, ds in enumerate(exp.datasets):
        if ds.path is None and ds.name not in DATASETS:
            _unknown(source, f"datasets[{i}].name", DATASETS, str(ds.name))
        if ds.path is None:
            DATASETS.get(ds.name).check_param_names(ds.params, f"{source}: key `datasets[{i}].params")
    for key, b in _binarizations(exp):
        if b.method not in BINARIZERS:
            _unknown(source, f"{key}.method", BINARIZERS, b.method)
        _check_binarizer(source, key, b)
    for i, a in enumerate(exp.algorithms):
        if a.name not in ALGORITHMS:
            _unknown(source, f"algorithms[{i}].name", ALGORITHMS, a.name)
        check_entry_params(source, f"algorithms[{i}]", ALGORITHMS.get(a.name), a.params)
        if a.tune:
            _check_tune(exp, source, i, a, ALGORITHMS.get(a.name))
    _check_input_kinds(exp, source)
    _check_tasks(exp, source)


def _check_tasks(exp: Experiment, source: str) -> None:
    """A regressor (declared input kind ``regression``) runs only on regression targets and a
    classifier only on class labels."""
    for j, ds in enumerate(exp.datasets):
        task = dataset_task(ds)
        for i, a in enumerate(exp.algorithms):
            regressor = "regression" in ALGORITHMS.get(a.name).inputs
            if regressor != (task == "regression"):
                what = "a regressor" if regressor else "a classifier"
                need = "a classification" if regressor else "a regression"
                raise ConfigError(
                    f"{source}: key `algorithms[{i}].name`: algorithm `{a.name}` is {what}, but dataset "
                    f"`{ds.display_name}` has {'a continuous' if task == 'regression' else 'a class'} target; "
                    f"use {need} algorithm for it (e.g. `{'cart' if regressor else 'cart-regressor'}`) or "
                    f"put the two tasks in separate configs."
                )


def _check_input_kinds(exp: Experiment, source: str) -> None:
    """Every algorithm accepts what at least one of each dataset's binarizations produces
    (the registry's pairing rule, `treebench.registry.accepts_binarization`)."""
    names = exp.dataset_names()
    for j, ds in enumerate(exp.datasets):
        for i, a in enumerate(exp.algorithms):
            if not a.runs_on(names[j]):
                continue
            methods = [b.method for b in exp.binarization_for(ds, a)]
            if not any(accepts_binarization(a.name, m) for m in methods):
                raise ConfigError(
                    f"{source}: key `algorithms[{i}].name`: algorithm `{a.name}` takes 0/1 "
                    f"features, but dataset `{ds.display_name}` gets only the binarization "
                    f"{', '.join(f'`{m}`' for m in methods)}, which passes numeric features; add "
                    "a binarization such as `quantile` (`binarization: {method: quantile}`)."
                )


def _check_binarizer(source: str, key: str, b: BinarizationSpec) -> None:
    """Build the binarizer for every grid point; its factory checks names and values."""
    from treebench.binarize import make_binarizer

    try:
        for point in grid(b.params):
            make_binarizer(b.method, point, [])
    except (ValueError, TypeError) as exc:  # ParameterError/InvalidParameterError: bad values
        text = clip(" ".join(str(exc).split()), 4 * MAX_CHARS)  # it may quote a long value
        raise ConfigError(f"{source}: key `{key}.params`: {text}") from None


def _unknown(source: str, key: str, reg: Any, name: str) -> None:
    try:
        reg.get(name)
    except ConfigError as exc:
        raise ConfigError(f"{source}: key `{key}`: {exc}") from None


def check_entry_params(source: str, key: str, entry: Any, params: dict[str, Any]) -> None:
    """Check the ``params`` (sweep axes allowed) of the registry ``entry`` given at config key
    ``key`` of ``source``: parameter names, then the values at each grid point the estimator's
    own validation sees (`check_learner_params`). Raise `ConfigError` naming the key; an
    exception other than a validation error (a bug in a constructor) propagates."""
    entry.check_param_names(params, f"{source}: key `{key}.params")
    if entry.missing:
        return  # reported when listing; running it records an error per cell
    try:
        points = _points_to_check(params)
    except ValueError as exc:
        raise ConfigError(f"{source}: key `{key}.params`: {exc}.") from None
    for point in points:
        try:
            check_learner_params(entry, point)
        except (ValueError, TypeError) as exc:  # InvalidParameterError, ParameterError
            # only the validation errors estimators raise; a bug in a constructor propagates
            text = clip(" ".join(str(exc).split()), 4 * MAX_CHARS)  # it may quote a long value
            raise ConfigError(f"{source}: key `{key}.params`: {text}") from None


#: above this many grid points, `check_entry_params` checks each axis value once instead of every point
CHECK_EVERY_POINT = 1_000


def _points_to_check(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every point of a small grid; for a large one each value of each axis once, the other
    axes at their first value (a parameter's constraints concern its own value; fitting checks
    the combinations)."""
    if grid_size(params) <= CHECK_EVERY_POINT:
        return grid(params)
    axes = {k: expand_values(v) for k, v in params.items()}
    if any(not vals for vals in axes.values()):
        return []
    first = {k: vals[0] for k, vals in axes.items()}
    return [{**first, k: v} for k, vals in axes.items() for v in vals]


def check_learner_params(entry: Any, point: dict[str, Any]) -> None:
    """Where config values meet the estimator's own validation: build the estimator with one
    grid point and run its ``_parameter_constraints``; a YAML boolean given to a parameter that
    takes no boolean is refused first (scikit-learn counts ``True`` as the integer 1, so
    ``max_depth: true`` would run as depth 1). Raises ValueError naming the parameter."""
    import numpy as np

    obj = entry.obj(**point)
    for name, value in point.items():
        if isinstance(value, bool | np.bool_) and not _takes_bool(obj, name):
            raise ValueError(f"`{name}` takes no boolean (got `{str(bool(value)).lower()}`); give a "
                             "number (in YAML, true/false/yes/no/on/off are booleans).")
    if hasattr(obj, "_parameter_constraints"):
        obj._validate_params()


def _takes_bool(obj: Any, name: str) -> bool:
    """Whether parameter ``name`` of ``obj`` accepts a boolean as such (its constraints list
    ``"boolean"`` or ``bool``, or it declares none and its default is not a number)."""
    constraints = getattr(obj, "_parameter_constraints", {}).get(name)
    if constraints is None:
        default = getattr(obj, name, None)
        return isinstance(default, bool) or not isinstance(default, numbers.Number)
    if constraints == "no_validation":
        return True
    return any(
        (isinstance(c, str) and c in ("boolean", "no_validation")) or c is bool or c is object
        or getattr(c, "type", None) is bool
        for c in constraints
    )


def _check_tune(exp: Experiment, source: str, i: int, a: AlgorithmSpec, entry: Any) -> None:
    """A tuned parameter exists, is not also a params axis, takes every grid value, and every
    dataset the entry runs on has validation rows (a ``train-val-test`` split)."""
    known = list(entry.parameters())
    for k, step in enumerate(a.tune or []):
        key = f"algorithms[{i}].tune[{k}]"
        if step.param not in known:
            raise ConfigError(
                f"{source}: key `{key}.param`: {entry.kind} `{entry.name}` has no parameter "
                f"`{step.param}`; its parameters are: {', '.join(known)}."
            )
        if step.param in a.params:
            raise ConfigError(
                f"{source}: key `{key}.param`: `{step.param}` is tuned, so it cannot also be "
                f"set in `algorithms[{i}].params`; remove one of the two."
            )
        try:
            check_entry_params(source, f"algorithms[{i}]", entry,
                          {**a.params, step.param: list(step.grid)})
        except ConfigError as exc:  # name the grid, not the params, as the culprit
            raise ConfigError(str(exc).replace(f"`algorithms[{i}].params`", f"`{key}.grid`",
                                               1)) from None
    names = exp.dataset_names()
    for j, ds in enumerate(exp.datasets):
        if not a.runs_on(names[j]):  # the entry's own `datasets:` leaves this one out
            continue
        kind = exp.split_for(j).kind
        if kind != "train-val-test":
            raise ConfigError(
                f"{source}: key `algorithms[{i}].tune`: tuning selects on validation rows, but "
                f"dataset `{ds.display_name}` uses the split `{kind}`; use "
                "`split: {kind: train-val-test}`."
            )
