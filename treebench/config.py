"""The experiment schema and its validation (expansion into cells: `treebench.cells.expand`).

A config is YAML. Everything is checked before anything runs: unknown keys, wrong types,
unknown algorithm/dataset/binarizer names (with a "did you mean"), parameter values the
estimator would refuse. Errors are `ConfigError`s that name the file and the key path.

Sweeps: inside ``algorithms[*].params`` and ``binarization.params`` a list value is a sweep axis
(cartesian product within one entry; several entries form a union). A string ``"a..b"`` is the
integer range a, a+1, …, b. A literal list parameter is written ``{value: [...]}``.
"""

from __future__ import annotations

import numbers
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator, model_validator,
)

from treebench import safe_yaml
from treebench.sweeps import expand_values, grid
from treebench.text import MAX_CHARS, clip, quote, quote_list, show
from treebench.errors import ConfigError
from treebench.expectations import Expectation

#: backends the executor can use: `fork` (workers forked from the warm driver), then joblib's (`treebench.execute.executor`)
BACKENDS = ("fork", "loky", "threading", "sequential", "dask", "ray")


def _no_bool(what: str) -> BeforeValidator:
    """Refuse a YAML boolean where a number is expected: ``true`` is not the integer 1."""

    def check(v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError(f"expected {what}, not a boolean (YAML reads true/false/yes/no/on/off "
                             "as booleans)")
        return v

    return BeforeValidator(check)


#: config numbers: pydantic would read ``true`` as 1 and ``false`` as 0
Int = Annotated[int, _no_bool("an integer")]
Float = Annotated[float, _no_bool("a number")]
#: a column given by name or by position
Column = Annotated[str | int, _no_bool("a column name or index")]


def _as_binarization_list(v: Any) -> Any:
    """``binarization`` may be a method name, one mapping, or a list of mappings."""
    if isinstance(v, str):
        return [{"method": v}]
    return [v] if isinstance(v, dict) else v


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


FILE_KEYS = (
    "path", "test_path", "format", "label", "header", "delimiter", "missing_tokens", "categorical",
    "drop_columns", "label_map", "bad_values", "unseen_test_labels",
)
#: a dataset's missing-value policy (`DatasetSpec.missing`, docs/missing-values.md)
MISSING_POLICIES = ("error", "indicator", "impute", "drop-rows")


class DatasetSpec(_Strict):
    """A catalog name (``name``, with loader ``params``) or a local file (``path``...).

    For a file, ``name`` is the dataset's display name (default: the file name, made longer
    with its folders when two files share it) and the other keys are the options of the
    ``file`` loader (`treebench.data.files.file`); ``alias`` renames any dataset.
    """

    name: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    path: str | None = None
    test_path: str | None = None
    format: str | None = None
    label: Column | None = None
    header: bool | Literal["none", "auto", "first-row"] | None = None
    delimiter: str | None = None
    #: what to do with missing feature values (`MISSING_POLICIES`); a list (or any other word)
    #: is read as `missing_tokens`, its meaning for local files before the policy existed
    missing: str | list[str] | None = None
    missing_tokens: str | list[str] | None = None
    categorical: Literal["auto", "all", "none"] | list[Column] | None = None
    drop_columns: list[Column] | None = None
    label_map: dict[str, Any] | None = None
    bad_values: Literal["error", "missing"] | None = None
    unseen_test_labels: Literal["error", "allow"] | None = None
    alias: str | None = None
    split: SplitSpec | None = None
    binarization: list[BinarizationSpec] | None = None
    costs: CostsSpec | None = None

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        return _as_binarization_list(v)

    @field_validator("categorical", "drop_columns", mode="before")
    @classmethod
    def _one_column(cls, v: Any, info: Any) -> Any:
        """A single column may be written without a list: ``categorical: colour``."""
        if isinstance(v, int) and not isinstance(v, bool):
            return [v]
        if isinstance(v, str) and (info.field_name == "drop_columns" or v not in ("auto", "all", "none")):
            return [v]
        return v

    @field_validator("label_map", mode="before")
    @classmethod
    def _label_keys(cls, v: Any) -> Any:
        """Label values are compared as text: a YAML key ``1`` maps the label 1."""
        return {str(k): val for k, val in v.items()} if isinstance(v, dict) else v

    @model_validator(mode="after")
    def _one_of(self) -> DatasetSpec:
        if self.name is None and self.path is None:
            raise ValueError("give either `name` (a catalog dataset) or `path` (a local file)")
        if self.path is not None and self.params:
            raise ValueError("`params` goes with a catalog `name`; a local file takes path/label/header/... directly")
        if self.path is None:
            extra = [k for k in FILE_KEYS if getattr(self, k) is not None]
            if self.missing is not None and self.missing_policy is None:
                extra.append("missing")
            if extra:
                raise ValueError(
                    f"`{extra[0]}` is an option of a local file (`path`); a catalog dataset takes `params`"
                    + (f" (`missing` takes one of {', '.join(MISSING_POLICIES)})" if extra[0] == "missing" else "")
                )
        if self.missing is not None and self.missing_policy is None and self.missing_tokens is not None:
            raise ValueError(
                f"`missing` takes one of {', '.join(MISSING_POLICIES)}; the tokens read as missing go in "
                "`missing_tokens`"
            )
        return self

    @property
    def missing_policy(self) -> str | None:
        """The missing-value policy (`MISSING_POLICIES`), None for the default."""
        return self.missing if isinstance(self.missing, str) and self.missing in MISSING_POLICIES else None

    @property
    def binarizer_missing(self) -> str | None:
        """The policy this dataset gives its binarizations (``drop-rows`` leaves none behind)."""
        return self.missing_policy if self.missing_policy in ("error", "indicator", "impute") else None

    @property
    def is_file(self) -> bool:
        return self.path is not None or self.name == "file"

    @property
    def display_name(self) -> str:
        """The name this entry asks for (before making names unique across the experiment)."""
        if self.alias:
            return self.alias
        if self.path is not None:
            return self.name or Path(self.path).name
        if self.name == "file" and self.params.get("path"):
            return str(self.params.get("name") or Path(str(self.params["path"])).name)
        if self.name is not None:
            if self.params:
                inner = ",".join(f"{k}={v}" for k, v in sorted(self.params.items()))
                return f"{self.name}({inner})"
            return self.name
        return "?"  # pragma: no cover - excluded by _one_of

    def file_path(self) -> str | None:
        """The data file of a file dataset (``path``, or ``params.path`` of ``name: file``)."""
        if self.path is not None:
            return self.path
        if self.name == "file" and self.params.get("path"):
            return str(self.params["path"])
        return None

    def loader(self) -> tuple[str, dict[str, Any]]:
        """Registry name and keyword parameters of the loader."""
        if self.path is None:
            name, kw = str(self.name), dict(self.params)
        else:
            name, kw = "file", {k: getattr(self, k) for k in FILE_KEYS if getattr(self, k) is not None}
            tokens = kw.pop("missing_tokens", None)
            if tokens is None and self.missing is not None and self.missing_policy is None:
                tokens = self.missing  # the older spelling of the tokens
            if tokens is not None:
                kw["missing"] = tokens
        if self.missing_policy == "drop-rows":  # rows go before the split: the loader's job
            kw["missing_policy"] = "drop-rows"
        return name, kw


def _dataset_short_form(d: Any) -> Any:
    """Short forms of a `datasets` entry (see the README):

    * ``iris`` or ``topk/car``: a registered (catalog) name;
    * ``data/x.csv``: a local file (a string that is no registered name and looks like a path);
    * ``{mine: data/x.csv}``: a local file named ``mine``;
    * ``{mine: {path: data/x.csv, label: y}}``: the long form, named ``mine``;
    * ``{data/x.csv: {label: y}}``: a local file with the long form's keys.
    """
    if isinstance(d, str):
        return {"path": d} if _looks_like_file(d) else {"name": d}
    if isinstance(d, dict) and len(d) == 1:
        (key, value), = d.items()
        if key not in DatasetSpec.model_fields:
            if isinstance(value, str):
                return {"path": value, "name": str(key)}
            if isinstance(value, dict):
                if "path" in value:
                    return {"name": str(key), **value}
                return {"path": str(key), **value}
    return d


def _looks_like_file(text: str) -> bool:
    from treebench.registry import DATASETS

    if text in DATASETS:
        return False
    from treebench.data.parsers import guess_format

    low = text.lower().removesuffix(".gz")
    known = (".csv", ".tsv", ".arff", ".data", ".txt", ".parquet", ".pq", ".dat", ".dl85")
    return low.endswith(known) or Path(text).expanduser().is_file() or guess_format(text) != "csv"


def unique_dataset_names(datasets: list[DatasetSpec], source: str = "<config>") -> list[str]:
    """Display names, one per entry, unique across files (issue 8 A7).

    A dataset's identity is its resolved file path; its display name is the short one it asks
    for. Two different files with the same file name are shown with as many of their folders as
    it takes to tell them apart (``a/x.csv``, ``b/x.csv``); the same file listed twice with
    different options gets ``#2``, ``#3``. A name given explicitly (``name``/``alias``) that two
    entries share is a config error.
    """
    names = [d.display_name for d in datasets]
    explicit = [d.alias is not None or (d.path is not None and d.name is not None) for d in datasets]
    seen_explicit: dict[str, int] = {}
    for i, (n, e) in enumerate(zip(names, explicit, strict=True)):
        if e:
            if n in seen_explicit:
                raise ConfigError(
                    f"{source}: key `datasets[{i}]`: the name `{n}` is already used by datasets[{seen_explicit[n]}]; "
                    f"give each dataset its own `name`."
                )
            seen_explicit[n] = i
    files = {i: Path(d.file_path() or "") for i, d in enumerate(datasets) if d.is_file and not explicit[i]}
    for _ in range(64):  # each round lengthens the clashing file names by one folder
        groups: dict[str, list[int]] = {}
        for i, n in enumerate(names):
            groups.setdefault(n, []).append(i)
        clash = [idx for idx in groups.values() if len(idx) > 1 and any(i in files for i in idx)]
        if not clash:
            return names
        for idx in clash:
            same_file = len({files[i].expanduser().resolve() for i in idx if i in files}) <= 1
            grown = False
            if not same_file:
                for i in idx:
                    parts = files[i].parts if i in files else ()
                    k = len(Path(names[i]).parts)
                    if i in files and k < len(parts):
                        names[i] = str(Path(*parts[-(k + 1):]))
                        grown = True
            if not grown:  # one file listed twice, or names no folder can separate: number them
                for rank, i in enumerate([i for i in idx if i in files][1:], start=2):
                    names[i] = f"{names[i]}#{rank}"
    return names  # pragma: no cover - 64 folders deep


def predefined_split_available(ds: DatasetSpec) -> bool:
    """True when the dataset ships its own test rows (a catalog ``split: files|prefix`` entry or
    a local file with ``test_path``), known without loading it."""
    if ds.path is not None:
        return ds.test_path is not None
    if ds.name == "file":
        return bool(ds.params.get("test_path"))
    from treebench.registry import DATASETS

    if ds.name not in DATASETS:
        return False
    cname = DATASETS.get(str(ds.name)).extra.get("catalog")
    if not cname:  # no catalog entry: the catalog need not load
        return False
    from treebench.data.catalog import load_catalog

    entry = load_catalog().get(cname)
    return bool(entry is not None and entry.spec.get("split") in ("files", "prefix"))


class SplitSpec(_Strict):
    """How rows are split into train/test (see `treebench.data.splits`)."""

    kind: Literal["kfold", "holdout", "permutation", "train-val-test", "predefined", "full"] = "kfold"
    n_splits: Int = Field(5, ge=2)
    test_size: Float = Field(0.2, gt=0, lt=1)
    valid_size: Float = Field(0.1, gt=0, lt=1)
    train_size: Float = Field(0.8, gt=0, lt=1)
    seeds: list[Int] | None = None
    stratify: bool = True
    unstratifiable: Literal["warn", "error"] = Field(
        "warn",
        description="a class too small for a stratified split: `warn` (split unstratified, say so in the row "
        "and the run summary) or `error` (refuse the dataset before anything runs)",
    )
    test_files: Literal["use", "merge"] = Field(
        "use",
        description="datasets that ship a test file: `use` it (predefined split) unless the dataset entry sets "
        "its own `split`, or `merge` it with the training rows and split like the others",
    )

    @field_validator("seeds", mode="before")
    @classmethod
    def _expand(cls, v: Any) -> Any:
        return expand_values(v) if v is not None and not isinstance(v, list) else v


class CostsSpec(_Strict):
    """Per-test costs (NGI, Ma et al. 2023, §3: ``c(d)``), charged by the ``expected_cost``
    metric and passed to learners as ``FitContext.feature_costs`` (one cost per binary column).

    ``unit``: every test costs 1 (``expected_cost`` = ``expected_tests``). ``given``: a cost
    per original feature, from ``values`` (feature name → cost; ``default`` for the others) or,
    without ``values``, from the dataset's own ``feature_costs``; every binary column of a
    feature costs what the feature costs. ``random``: an integer cost drawn uniformly from
    ``low..high`` (the paper's {1, ..., 10}) for every binary column, from ``seed`` (default:
    the experiment's seed), the same for every fold.
    """

    kind: Literal["unit", "given", "random"] = "unit"
    values: dict[str, Float] | None = None
    default: Float | None = Field(None, ge=0)
    seed: Int | None = None
    low: Int = Field(1, ge=0)
    high: Int = Field(10, ge=0)

    @model_validator(mode="before")
    @classmethod
    def _short(cls, v: Any) -> Any:
        return {"kind": v} if isinstance(v, str) else v

    @model_validator(mode="after")
    def _consistent(self) -> CostsSpec:
        if self.kind != "given" and (self.values is not None or self.default is not None):
            raise ValueError("`values` and `default` go with `kind: given`")
        if self.kind != "random" and self.seed is not None:
            raise ValueError("`seed` goes with `kind: random`")
        if self.low > self.high:
            raise ValueError(f"`low` ({self.low}) must not exceed `high` ({self.high})")
        for name, c in (self.values or {}).items():
            if not (c >= 0 and c < float("inf")):
                raise ValueError(f"the cost of feature {quote(name)} must be finite and >= 0 (got {c})")
        return self

    def cell_spec(self, experiment_seed: int) -> dict[str, Any]:
        """What a cell records (empty for unit costs, so their cell ids do not change)."""
        if self.kind == "unit":
            return {}
        out = self.model_dump(exclude_none=True)
        if self.kind == "random":
            out.setdefault("seed", experiment_seed)
        else:
            out.pop("low", None)
            out.pop("high", None)
        return out


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
    tol: Float = Field(0.0, ge=0)


class AlgorithmSpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = None
    #: the learner's own inputs (e.g. raw features for CART beside binary ones for Top-k)
    binarization: list[BinarizationSpec] | None = None

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        return _as_binarization_list(v)

    #: in-cell tuning: one step or a list of steps run in order (`treebench.tune`)
    tune: list[TuneStepSpec] | None = None

    #: run this entry only on these datasets (display names as in the run summary, e.g.
    #: ``gosdt/compas``); ``None`` = every dataset. Per-dataset settings (λ, a reference model)
    #: become one entry per dataset in one config.
    datasets: list[str] | None = Field(None, min_length=1)

    @field_validator("datasets", mode="before")
    @classmethod
    def _datasets_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    def runs_on(self, dataset: str) -> bool:
        """Whether this entry makes cells for the dataset with this display name."""
        return self.datasets is None or dataset in self.datasets

    @field_validator("tune", mode="before")
    @classmethod
    def _tune_list(cls, v: Any) -> Any:
        return [v] if isinstance(v, dict) else v


class LimitsSpec(_Strict):
    time: Float | None = Field(None, gt=0, description="wall-clock seconds for a cell's fit")
    memory: Float | None = Field(None, gt=0, description="megabytes per cell")
    prepare: Float | None = Field(
        None, gt=0, description="seconds to load, split and binarize a cell's data, counted "
        "apart from `time` (which is the fit's)")


class ExecutionSpec(_Strict):
    n_jobs: Int = -1
    #: ``fork``: workers forked from the warm driver (no start-up); the others through joblib
    backend: Literal[BACKENDS] = "fork"
    #: an existing cluster (issue 15): ``tcp://host:8786`` for dask, ``auto`` or
    #: ``ray://host:10001`` for ray; none: a local cluster (dask also reads DASK_SCHEDULER_ADDRESS)
    address: str | None = None
    #: the workers have the datasets in a data directory of their own; otherwise the driver
    #: ships each prepared dataset once per worker
    data_dir_on_workers: bool = False
    #: refuse a grid of more cells than this (`treebench.cells.MAX_CELLS` by default);
    #: ``--max-cells`` sets it
    max_cells: Int | None = Field(None, ge=1)

    @field_validator("address")
    @classmethod
    def _address(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("address must be a scheduler address such as tcp://host:8786, "
                             "auto or ray://host:10001")
        return v.strip() if v is not None else v

    @model_validator(mode="after")
    def _address_backend(self):
        if self.address is not None and self.backend not in ("dask", "ray"):
            raise ValueError(f"address is for backend dask or ray (got backend {self.backend!r})")
        return self

    @field_validator("n_jobs")
    @classmethod
    def _nonzero(cls, v: int) -> int:
        if v == 0:
            raise ValueError("n_jobs must be a positive count or -1 (all cores)")
        return v


#: experiment and profile names become folder names (``results/<name>-<profile>``): letters,
#: digits, ``_ . -``, starting with a letter or digit (so never ``..`` or a path)
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"


class Experiment(_Strict):
    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""
    seed: Int = 0
    datasets: list[DatasetSpec] = Field(min_length=1)
    split: SplitSpec = SplitSpec()
    binarization: list[BinarizationSpec] = Field(default_factory=lambda: [BinarizationSpec()])
    algorithms: list[AlgorithmSpec] = Field(min_length=1)
    metrics: list[str] = Field(default_factory=lambda: ["accuracy", "n_leaves", "fit_seconds"])
    limits: LimitsSpec = LimitsSpec()
    execution: ExecutionSpec = ExecutionSpec()
    costs: CostsSpec = CostsSpec()
    # reproductions (issue 10): checked claims, named partial overrides, the profile applied
    expect: list[Expectation] = Field(default_factory=list)
    profiles: dict[str, dict[str, Any]] = Field(default_factory=dict)
    profile: str | None = Field(None, pattern=NAME_PATTERN)

    @field_validator("datasets", mode="before")
    @classmethod
    def _datasets_short(cls, v: Any) -> Any:
        """Short forms of dataset entries (`_dataset_short_form`)."""
        if isinstance(v, list):
            return [_dataset_short_form(d) for d in v]
        return v

    @field_validator("algorithms", mode="before")
    @classmethod
    def _names_short(cls, v: Any) -> Any:
        """A bare name in `algorithms` stands for ``{name: ...}``."""
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
        from treebench import metrics

        for m in v:
            metrics.get(m)  # ValueError naming the known metrics
        return v

    def dataset_names(self) -> list[str]:
        """Unique display names of ``datasets``, in order (`unique_dataset_names`)."""
        return unique_dataset_names(list(self.datasets))

    def split_for(self, i: int) -> SplitSpec:
        """The split dataset ``i`` gets: its own ``split``; else its test file when it ships one
        (issue 8 A17; ``split.test_files: merge`` turns that off); else the experiment's."""
        ds = self.datasets[i]
        if ds.split is not None:
            return ds.split
        if self.split.test_files == "use" and self.split.kind != "predefined" and predefined_split_available(ds):
            return SplitSpec(kind="predefined", seeds=self.split.seeds)
        return self.split

    def binarization_for(self, ds: DatasetSpec, alg: AlgorithmSpec) -> list[BinarizationSpec]:
        """The binarizations an algorithm entry gets on dataset ``ds``: its own
        ``binarization`` wins, then the dataset's, then the experiment's."""
        return alg.binarization or ds.binarization or self.binarization

    def split_summary(self) -> dict[str, str]:
        """Display name → the split that dataset gets, in words (for the run summary)."""
        out = {}
        for i, name in enumerate(self.dataset_names()):
            sp = self.split_for(i)
            nseeds = len(sp.seeds) if sp.seeds else 1
            if sp.kind == "predefined":
                text = "predefined (its own test file)"
            elif sp.kind == "kfold":
                text = f"kfold ({sp.n_splits} folds{'' if sp.stratify else ', unstratified'} x {nseeds} seed{'s' if nseeds > 1 else ''})"
            elif sp.kind == "holdout":
                text = f"holdout (test {sp.test_size:g} x {nseeds} seed{'s' if nseeds > 1 else ''})"
            elif sp.kind == "permutation":
                text = f"permutation (train {sp.train_size:g} x {nseeds} seed{'s' if nseeds > 1 else ''})"
            elif sp.kind == "train-val-test":
                text = f"train-val-test (test {sp.test_size:g}, validation {sp.valid_size:g} x {nseeds} seed{'s' if nseeds > 1 else ''})"
            else:
                text = sp.kind
            out[name] = text
        return out


DatasetSpec.model_rebuild()
AlgorithmSpec.model_rebuild()


# ----------------------------------------------------------------------------- loading
def load_config(
    path: str | Path, overrides: dict[str, Any] | None = None, profile: str | None = None
) -> Experiment:
    """Read, override and validate a YAML config. Raises `ConfigError` naming file and key.

    ``profile`` applies the named entry of ``profiles:`` first (see `apply_profile`); then the
    ``overrides`` (dotted keys, from the command line) win over both. Every profile of the file
    is validated, so a broken profile fails even when another one is run."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such config file; give the path to a YAML experiment config.")
    try:
        raw = safe_yaml.load(p.read_text(encoding="utf-8"))
    except safe_yaml.YAMLLimitError as exc:
        raise ConfigError(f"{p}: {exc}") from None
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
    if "profile" in raw:
        raise ConfigError(f"{p}: key `profile`: set by `--profile NAME`, not in the file; "
                          "define profiles under `profiles:`.")
    _check_profiles(raw, str(p))
    if profile is not None:
        raw = apply_profile(raw, profile, str(p))
    for key, value in (overrides or {}).items():
        _set_path(raw, key, value)
    return validate_config(raw, source=str(p))


# ----------------------------------------------------------------------------- profiles
def apply_profile(raw: dict[str, Any], name: str, source: str = "<config>") -> dict[str, Any]:
    """``raw`` with the profile ``name`` merged over it: mappings merge key by key, any other
    value (a list, a number) replaces the config's; a dotted key (``limits.time``) sets one
    nested value. A profile's ``expect`` replaces the config's expectations. The result records
    ``profile: name``. Raise `ConfigError` for an unknown profile."""
    import copy

    profiles = raw.get("profiles") or {}
    if name not in profiles:
        from treebench.errors import did_you_mean

        known = quote_list(sorted(map(str, profiles)), max_values=10) or "none"
        raise ConfigError(f"{source}: no profile {quote(name)}{did_you_mean(name, list(profiles))}; "
                          f"the config defines: {known}.")
    out = copy.deepcopy({k: v for k, v in raw.items()})
    try:
        _merge(out, copy.deepcopy(profiles[name] or {}))
    except ConfigError as exc:
        raise ConfigError(f"{source}: profile {quote(name)}: {exc}") from None
    out["profile"] = name
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> None:
    for key, value in over.items():
        if "." in key:
            _set_dotted(base, key, value)
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def _set_dotted(raw: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.0.c``: a number indexes a list (``algorithms.0.params.k``)."""
    node: Any = raw
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"key `{dotted}`: `{part}` is no index of a list of "
                                  f"{len(node)} item(s).")
            if last:
                node[int(part)] = value
            else:
                node = node[int(part)]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                node = node.setdefault(part, {})
        else:
            raise ConfigError(f"key `{dotted}`: `{parts[i - 1]}` holds a value, not a mapping.")


def _check_profiles(raw: dict[str, Any], source: str) -> None:
    """Each profile must be a mapping of config keys (never `name`, `profiles`, `profile`) and
    give a valid config once applied; errors name ``profiles.<name>``."""
    profiles = raw.get("profiles")
    if profiles is None:
        return
    if not isinstance(profiles, dict):
        raise ConfigError(f"{source}: key `profiles`: a mapping of profile names to partial "
                          "configs, e.g. `profiles: {ci: {limits: {time: 30}}}`.")
    for pname, body in profiles.items():
        if not isinstance(pname, str) or not re.match(NAME_PATTERN, pname):
            raise ConfigError(f"{source}: key `profiles`: the profile name {quote(pname)} is not a "
                              "safe folder name; use letters, digits, `_`, `.` and `-`, starting "
                              "with a letter or digit (e.g. `ci`).")
        if not isinstance(body, dict):
            raise ConfigError(f"{source}: key `profiles.{pname}`: a mapping of config keys to "
                              f"override (got {type(body).__name__}).")
        for key in body:
            if str(key).split(".")[0] in ("name", "profiles", "profile"):
                raise ConfigError(f"{source}: key `profiles.{pname}.{key}`: a profile cannot "
                                  "change the experiment's name or define profiles.")
        validate_config(apply_profile(raw, pname, source), source=f"{source}: profile `{pname}`")


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
        errors = exc.errors()
        # a misspelt key also makes the right one "missing": report the misspelling first
        err = next((e for e in errors if e.get("type") == "extra_forbidden"), errors[0])
        loc = _loc(err.get("loc", ()))
        msg = _pyd_message(err)
        if err.get("type") == "extra_forbidden":
            msg += _closest_key(err.get("loc", ()))
        raise ConfigError(f"{source}: key `{loc}`: {msg}.") from None
    unique_dataset_names(list(exp.datasets), source)
    _check_restrictions(exp, source)
    _check_grid(exp, source)
    _check_names(exp, source)
    return exp


def _check_grid(exp: Experiment, source: str) -> None:
    """Refuse a grid over the cell limit before anything walks it (`cells.check_grid_size`;
    unknown names are left to `_check_names`)."""
    import warnings

    from treebench.cells import check_grid_size, count_cells

    try:
        n = count_cells(exp)
    except Exception:  # noqa: BLE001 - e.g. an unknown algorithm, reported next by name
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the size warning is given once, when expanding
        check_grid_size(exp, source, n)


def _check_restrictions(exp: Experiment, source: str) -> None:
    """Every name in an algorithm entry's ``datasets:`` is one of the config's datasets."""
    from treebench.errors import did_you_mean

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
    from treebench.errors import did_you_mean

    nested = {"split": SplitSpec, "limits": LimitsSpec, "execution": ExecutionSpec,
              "datasets": DatasetSpec, "algorithms": AlgorithmSpec, "binarization": BinarizationSpec}
    path = [p for p in loc if isinstance(p, str)]
    model: Any = Experiment if len(path) == 1 else nested.get(path[0]) if len(path) == 2 else None
    if model is None:
        return ""
    return did_you_mean(str(path[-1]), list(model.model_fields))


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and part.startswith(("function-", "literal[", "constrained-")):
            continue
        else:
            out += ("." if out else "") + clip(part)
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
        msg += f" (got {show(inp)})"
    return msg


def _check_names(exp: Experiment, source: str) -> None:
    """Unknown registry names and parameter values the estimators refuse."""
    from treebench.registry import ALGORITHMS, BINARIZERS, DATASETS

    for i, ds in enumerate(exp.datasets):
        if ds.path is None and ds.name not in DATASETS:
            _unknown(source, f"datasets[{i}].name", DATASETS, str(ds.name))
        if ds.path is None:
            DATASETS.get(ds.name).check_param_names(ds.params, f"{source}: key `datasets[{i}].params")
    bins = [(f"binarization[{i}]", b) for i, b in enumerate(exp.binarization)]
    for j, ds in enumerate(exp.datasets):
        bins += [(f"datasets[{j}].binarization[{i}]", b) for i, b in enumerate(ds.binarization or [])]
    for j, a in enumerate(exp.algorithms):
        bins += [(f"algorithms[{j}].binarization[{i}]", b) for i, b in enumerate(a.binarization or [])]
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
    _check_input_kinds(exp, source)
    _check_tasks(exp, source)


def dataset_task(ds: DatasetSpec) -> str:
    """``"regression"`` or ``"classification"``: the target kind a dataset declares without
    being loaded (a registered loader tagged ``regression``, a catalog entry's ``task:``);
    local files are classification data."""
    from treebench.registry import DATASETS

    if ds.path is not None or ds.name not in DATASETS:
        return "classification"
    entry = DATASETS.get(ds.name)
    if "regression" in entry.tags:
        return "regression"
    if "catalog" in entry.extra:
        from treebench.data.catalog import get_entry

        return get_entry(entry.extra["catalog"]).task
    return "classification"


def _check_tasks(exp: Experiment, source: str) -> None:
    """A regressor (declared input kind ``regression``) runs only on regression targets and a
    classifier only on class labels."""
    from treebench.registry import ALGORITHMS

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
    from treebench.registry import accepts_binarization

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


def _check_params(source: str, key: str, entry: Any, params: dict[str, Any]) -> None:
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


#: above this many grid points, `_check_params` checks each axis value once instead of every point
CHECK_EVERY_POINT = 1_000


def _points_to_check(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every point of a small grid; for a large one each value of each axis once, the other
    axes at their first value (a parameter's constraints concern its own value; fitting checks
    the combinations)."""
    from treebench.cells import grid_size

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
            _check_params(source, f"algorithms[{i}]", entry,
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

