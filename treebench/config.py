"""The experiment schema, its validation and the expansion of a config into cells.

A config is YAML. Everything is checked before anything runs: unknown keys, wrong types,
unknown algorithm/dataset/binarizer names (with a "did you mean"), parameter values the
estimator would refuse. Errors are `ConfigError`s that name the file and the key path.

Sweeps: inside ``algorithms[*].params`` and ``binarization.params`` a list value is a sweep axis
(cartesian product within one entry; several entries form a union). A string ``"a..b"`` is the
integer range a, a+1, …, b. A literal list parameter is written ``{value: [...]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from treebench.cells import expand_values, grid
from treebench.errors import ConfigError

METRICS = (
    "accuracy",
    "balanced_accuracy",
    "roc_auc",
    "n_leaves",
    "n_nodes",
    "depth",
    "expected_tests",
    "fit_seconds",
)
BACKENDS = ("loky", "threading", "sequential", "dask", "ray")


def _as_binarization_list(v: Any) -> Any:
    """``binarization`` may be a method name, one mapping, or a list of mappings."""
    if isinstance(v, str):
        return [{"method": v}]
    return [v] if isinstance(v, dict) else v


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetSpec(_Strict):
    """A catalog name (``name``, with loader ``params``) or a local file (``path``...)."""

    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    path: str | None = None
    format: str | None = None
    label: str | int | None = None
    categorical: list[str] | None = None
    delimiter: str | None = None
    header: bool | None = None
    alias: str | None = None
    split: SplitSpec | None = None
    binarization: list[BinarizationSpec] | None = None

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        return _as_binarization_list(v)

    @model_validator(mode="after")
    def _one_of(self) -> DatasetSpec:
        if (self.name is None) == (self.path is None):
            raise ValueError("give either `name` (a catalog dataset) or `path` (a local file)")
        if self.path is not None and self.params:
            raise ValueError("`params` goes with `name`; a local file takes path/format/label/...")
        return self

    @property
    def display_name(self) -> str:
        if self.alias:
            return self.alias
        if self.name is not None:
            if self.params:
                inner = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
                return f"{self.name}({inner})"
            return self.name
        return Path(self.path or "").name

    def loader(self) -> tuple[str, dict[str, Any]]:
        """Registry name and keyword parameters of the loader."""
        if self.name is not None:
            return self.name, dict(self.params)
        kw = {
            k: getattr(self, k)
            for k in ("path", "format", "label", "categorical", "delimiter", "header")
            if getattr(self, k) is not None
        }
        return "file", kw


class SplitSpec(_Strict):
    """How rows are split into train/test (see `treebench.data.splits`)."""

    kind: Literal["kfold", "holdout", "permutation", "train-val-test", "predefined", "full"] = "kfold"
    n_splits: int = Field(5, ge=2)
    test_size: float = Field(0.2, gt=0, lt=1)
    valid_size: float = Field(0.1, gt=0, lt=1)
    train_size: float = Field(0.8, gt=0, lt=1)
    seeds: list[int] | None = None
    stratify: bool = True

    @field_validator("seeds", mode="before")
    @classmethod
    def _expand(cls, v: Any) -> Any:
        return expand_values(v) if v is not None and not isinstance(v, list) else v


class BinarizationSpec(_Strict):
    method: str = "raw"
    params: dict[str, Any] = Field(default_factory=dict)


class TuneStepSpec(_Strict):
    """One step of in-cell tuning (`treebench.tune`): choose ``param`` from ``grid`` by
    ``metric`` on the validation rows of a ``train-val-test`` split with ``rule``."""

    param: str
    grid: list[Any] = Field(min_length=1)
    metric: Literal["val_auc", "val_accuracy"] = "val_auc"
    rule: Literal["scan_down_tol", "argmax"] = "argmax"
    tol: float = Field(0.0, ge=0)


class AlgorithmSpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None
    #: in-cell tuning: one step or a list of steps run in order (`treebench.tune`)
    tune: list[TuneStepSpec] | None = None

    @field_validator("tune", mode="before")
    @classmethod
    def _tune_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v


class LimitsSpec(_Strict):
    time: float | None = Field(None, gt=0, description="wall-clock seconds per cell")
    memory: float | None = Field(None, gt=0, description="megabytes per cell")


class ExecutionSpec(_Strict):
    n_jobs: int = -1
    backend: Literal["loky", "threading", "sequential", "dask", "ray"] = "loky"

    @field_validator("n_jobs")
    @classmethod
    def _nonzero(cls, v: int) -> int:
        if v == 0:
            raise ValueError("n_jobs must be a positive count or -1 (all cores)")
        return v


class Experiment(_Strict):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    description: str = ""
    seed: int = 0
    datasets: list[DatasetSpec] = Field(min_length=1)
    split: SplitSpec = SplitSpec()
    binarization: list[BinarizationSpec] = Field(default_factory=lambda: [BinarizationSpec()])
    algorithms: list[AlgorithmSpec] = Field(min_length=1)
    metrics: list[str] = Field(default_factory=lambda: ["accuracy", "n_leaves", "fit_seconds"])
    limits: LimitsSpec = LimitsSpec()
    execution: ExecutionSpec = ExecutionSpec()

    @field_validator("datasets", "algorithms", mode="before")
    @classmethod
    def _names_short(cls, v: Any) -> Any:
        """A bare name in `datasets` or `algorithms` stands for ``{name: ...}``."""
        if isinstance(v, list):
            return [{"name": d} if isinstance(d, str) else d for d in v]
        return v

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        return _as_binarization_list(v)

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, v: list[str]) -> list[str]:
        from treebench.errors import did_you_mean

        for m in v:
            if m not in METRICS:
                raise ValueError(f"unknown metric `{m}`{did_you_mean(m, METRICS)}; known: {', '.join(METRICS)}")
        return v

    @property
    def seeds(self) -> list[int]:
        return list(self.split.seeds) if self.split.seeds else [self.seed]


DatasetSpec.model_rebuild()


# ----------------------------------------------------------------------------- loading
def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> Experiment:
    """Read, override and validate a YAML config. Raises `ConfigError` naming file and key."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such config file; give the path to a YAML experiment config.")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"{p}: invalid YAML{where}: {problem}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text file; a config is UTF-8 YAML.") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{p}: the top level must be a mapping with keys like name, datasets, algorithms.")
    raw.setdefault("name", p.stem)
    for key, value in (overrides or {}).items():
        _set_path(raw, key, value)
    return validate_config(raw, source=str(p))


def _set_path(raw: dict[str, Any], dotted: str, value: Any) -> None:
    node: Any = raw
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def validate_config(raw: dict[str, Any], source: str = "<config>") -> Experiment:
    try:
        exp = Experiment.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = _loc(err.get("loc", ()))
        msg = _pyd_message(err)
        raise ConfigError(f"{source}: key `{loc}`: {msg}.") from None
    _check_names(exp, source)
    return exp


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith(("function-", "literal[", "constrained-")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _pyd_message(err: dict[str, Any]) -> str:
    t = err.get("type", "")
    if t == "extra_forbidden":
        return "unknown key; check its spelling against the documented config keys"
    if t == "missing":
        return "required key is missing"
    msg = str(err.get("msg", "invalid value"))
    msg = msg.removeprefix("Value error, ")
    inp = err.get("input")
    if t not in ("model_type",) and not isinstance(inp, dict | list):
        msg += f" (got {inp!r})"
    return msg


def _check_names(exp: Experiment, source: str) -> None:
    """Unknown registry names and parameter values the estimators refuse."""
    from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS

    for i, ds in enumerate(exp.datasets):
        if ds.name is not None and ds.name not in DATASETS:
            _unknown(source, f"datasets[{i}].name", DATASETS, ds.name)
        if ds.name is not None:
            DATASETS.get(ds.name).check_param_names(ds.params, f"{source}: key `datasets[{i}].params")
    bins = [(f"binarization[{i}]", b) for i, b in enumerate(exp.binarization)]
    for j, ds in enumerate(exp.datasets):
        bins += [(f"datasets[{j}].binarization[{i}]", b) for i, b in enumerate(ds.binarization or [])]
    for key, b in bins:
        if b.method not in BINARIZERS:
            _unknown(source, f"{key}.method", BINARIZERS, b.method)
        _check_binarizer(source, key, b)
    for i, a in enumerate(exp.algorithms):
        if a.name not in ALGORITHMS:
            _unknown(source, f"algorithms[{i}].name", ALGORITHMS, a.name)
        _check_params(source, f"algorithms[{i}]", ALGORITHMS.get(a.name), a.params)
        if a.tune:
            _check_tune(exp, source, i, a, ALGORITHMS.get(a.name))


def _check_binarizer(source: str, key: str, b: BinarizationSpec) -> None:
    """Build the binarizer for every grid point; its factory checks names and values."""
    from treebench.binarize import make_binarizer

    try:
        for point in grid(b.params):
            make_binarizer(b.method, point, [])
    except Exception as exc:  # ParameterError, ValueError, TypeError from a constructor
        text = str(exc).replace("\n", " ")
        raise ConfigError(f"{source}: key `{key}.params`: {text}") from None


def _unknown(source: str, key: str, reg: Any, name: str) -> None:
    try:
        reg.get(name)
    except ConfigError as exc:
        raise ConfigError(f"{source}: key `{key}`: {exc}") from None


def _check_params(source: str, key: str, entry: Any, params: dict[str, Any]) -> None:
    entry.check_param_names(params, f"{source}: key `{key}.params")
    if entry.missing:
        return  # reported when listing; running it records an error per cell
    try:
        points = grid(params)
    except ValueError as exc:
        raise ConfigError(f"{source}: key `{key}.params`: {exc}.") from None
    for point in points:
        try:
            obj = entry.obj(**point)
            if hasattr(obj, "_parameter_constraints"):
                obj._validate_params()
        except Exception as exc:  # InvalidParameterError, ParameterError, TypeError...
            text = str(exc).replace("\n", " ")
            raise ConfigError(f"{source}: key `{key}.params`: {text}") from None


def _check_tune(exp: Experiment, source: str, i: int, a: AlgorithmSpec, entry: Any) -> None:
    """A tuned parameter exists, is not also a params axis, takes every grid value, and every
    dataset has validation rows (a ``train-val-test`` split)."""
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
            _check_params(source, f"algorithms[{i}]", entry,
                          {**a.params, step.param: list(step.grid)})
        except ConfigError as exc:  # name the grid, not the params, as the culprit
            raise ConfigError(str(exc).replace(f"`algorithms[{i}].params`", f"`{key}.grid`",
                                               1)) from None
    for j, ds in enumerate(exp.datasets):
        kind = (ds.split or exp.split).kind
        if kind != "train-val-test":
            raise ConfigError(
                f"{source}: key `algorithms[{i}].tune`: tuning selects on validation rows, but "
                f"dataset `{ds.display_name}` uses the split `{kind}`; use "
                "`split: {kind: train-val-test}`."
            )

