"""The experiment schema, its validation and the expansion of a config into cells.

A config is YAML. Everything is checked before anything runs: unknown keys, wrong types,
unknown algorithm/dataset/binarizer names (with a "did you mean"), parameter values the
estimator would refuse. Errors are `ConfigError`s that name the file and the key path.

Sweeps: inside ``algorithms[*].params`` and ``binarization.params`` a list value is a sweep axis
(cartesian product within one entry; several entries form a union). A string ``"a..b"`` is the
integer range a, a+1, …, b. A literal list parameter is written ``{value: [...]}``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

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
        if isinstance(v, str):
            return [{"method": v}]
        return [v] if isinstance(v, dict) else v

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


class AlgorithmSpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None


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

    @field_validator("datasets", mode="before")
    @classmethod
    def _ds_short(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"name": d} if isinstance(d, str) else d for d in v]
        return v

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        if isinstance(v, str):
            return [{"method": v}]
        return [v] if isinstance(v, dict) else v

    @field_validator("algorithms", mode="before")
    @classmethod
    def _alg_short(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"name": a} if isinstance(a, str) else a for a in v]
        return v

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


# ----------------------------------------------------------------------------- value sweeps
_RANGE = re.compile(r"^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$")


def expand_values(v: Any) -> list[Any]:
    """A sweep axis as a list: lists stay, ``"a..b"`` is an integer range, ``{value: x}`` is the
    literal ``x``, a comma string ``"1,2,all"`` is split (numbers parsed), anything else is a
    single value."""
    if isinstance(v, dict) and set(v) == {"value"}:
        return [v["value"]]
    if isinstance(v, list):
        out: list[Any] = []
        for item in v:
            out.extend(expand_values(item) if isinstance(item, str) and _RANGE.match(item) else [item])
        return out
    if isinstance(v, str):
        m = _RANGE.match(v)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if b < a:
                raise ValueError(f"range `{v}` is empty; write it as low..high")
            return list(range(a, b + 1))
        if "," in v:
            return [parse_scalar(p) for p in v.split(",") if p.strip()]
    return [v]


def parse_scalar(s: str) -> Any:
    """Parse a command-line value: int, float, true/false, none/null, else the string."""
    s = s.strip()
    low = s.lower()
    if low in ("none", "null"):
        return None
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def grid(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Cartesian product of the sweep axes in ``params`` (sorted keys, stable order)."""
    keys = sorted(params)
    axes = [expand_values(params[k]) for k in keys]
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*axes)]


# ----------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class Cell:
    """One unit of work. ``spec`` is canonical JSON-able data; ``id`` is its hash."""

    id: str
    dataset: str  # display name
    dataset_loader: str
    dataset_params: dict[str, Any]
    split: dict[str, Any]
    fold: int
    seed: int
    binarizer: str
    binarizer_params: dict[str, Any]
    algorithm: str
    algorithm_label: str
    algorithm_params: dict[str, Any]
    limits: dict[str, Any]
    random_state: int
    experiment_seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def spec(self) -> dict[str, Any]:
        return cell_spec(self)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def derive_seed(*parts: Any) -> int:
    """A 31-bit seed derived deterministically from its parts (never global seeding)."""
    h = hashlib.sha256(canonical_json(list(parts)).encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def cell_spec(c: Cell) -> dict[str, Any]:
    return {
        "dataset": {"loader": c.dataset_loader, "params": c.dataset_params},
        "split": c.split,
        "fold": c.fold,
        "seed": c.seed,
        "binarizer": {"method": c.binarizer, "params": c.binarizer_params},
        "algorithm": {"name": c.algorithm, "params": c.algorithm_params},
        "limits": c.limits,
        "random_state": c.random_state,
    }


def expand(exp: Experiment) -> list[Cell]:
    """All cells of an experiment, ordered so that consecutive cells share data and folds."""
    from treebench.data.splits import split_instances

    cells: list[Cell] = []
    seen: set[str] = set()
    limits = exp.limits.model_dump()
    for ds in exp.datasets:
        loader, lparams = ds.loader()
        sspec = ds.split or exp.split  # a dataset may carry its own split and binarization
        split = sspec.model_dump()
        split.pop("seeds", None)
        seeds = list(sspec.seeds) if sspec.seeds else [exp.seed]
        for fold, seed in split_instances(sspec.kind, sspec.n_splits, seeds):
            rs = derive_seed(exp.seed, ds.display_name, fold, seed)
            for b in ds.binarization or exp.binarization:
                for bp in grid(b.params):
                    for a in exp.algorithms:
                        for ap in grid(a.params):
                            c = Cell(
                                id="",
                                dataset=ds.display_name,
                                dataset_loader=loader,
                                dataset_params=lparams,
                                split=split,
                                fold=fold,
                                seed=seed,
                                binarizer=b.method,
                                binarizer_params=bp,
                                algorithm=a.name,
                                algorithm_label=a.label or a.name,
                                algorithm_params=ap,
                                limits=limits,
                                random_state=rs,
                                experiment_seed=exp.seed,
                            )
                            cid = hashlib.sha256(canonical_json(cell_spec(c)).encode()).hexdigest()[:16]
                            if cid in seen:
                                continue
                            seen.add(cid)
                            cells.append(_with_id(c, cid))
    return cells


def _with_id(c: Cell, cid: str) -> Cell:
    from dataclasses import replace

    return replace(c, id=cid)


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
    from treebench.errors import did_you_mean
    from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS

    for i, ds in enumerate(exp.datasets):
        if ds.name is not None and ds.name not in DATASETS:
            _unknown(source, f"datasets[{i}].name", DATASETS, ds.name)
        if ds.name is not None:
            entry = DATASETS.get(ds.name)
            known = entry.parameters()
            for p in ds.params:
                if p not in known:
                    raise ConfigError(
                        f"{source}: key `datasets[{i}].params.{p}`: dataset `{ds.name}` has no parameter "
                        f"`{p}`{did_you_mean(p, known)}; its parameters are: {', '.join(known) or 'none'}."
                    )
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
    from treebench.errors import did_you_mean

    known = entry.parameters()
    for p in params:
        if p not in known:
            raise ConfigError(
                f"{source}: key `{key}.params.{p}`: {entry.kind} `{entry.name}` has no parameter "
                f"`{p}`{did_you_mean(p, known)}; its parameters are: {', '.join(known) or 'none'}."
            )
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
