"""The pydantic models of an experiment config (`Experiment` and the models it nests).

The models check what can be checked from one config alone: unknown keys, wrong types, values
out of range, keys that go together. What needs the registries (names, parameter values the
estimators refuse, which learner takes which input) is checked in `treebench.config.checks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, field_validator,
                      model_validator)

from treebench.config.datasets import looks_like_file, predefined_split_available, unique_dataset_names
from treebench.config.expectations import Expectation, condition_values, written
from treebench.utils.sweeps import expand_values, is_range
from treebench.errors import did_you_mean
from treebench.utils.text import quote
from treebench import metrics

#: backends the executor can use: `fork` (workers forked from the warm driver), then joblib's (`treebench.execute.executor`)
BACKENDS = ("fork", "loky", "threading", "sequential", "dask", "ray", "slurm")


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
    #: what to do with missing feature values (`MISSING_POLICIES`; any other string is refused);
    #: a list is read as `missing_tokens`, its meaning for local files before the policy existed
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

    @field_validator("missing")
    @classmethod
    def _policy(cls, v: str | list[str] | None) -> str | list[str] | None:
        """A string is a policy; tokens read as missing are a list (or `missing_tokens`)."""
        if isinstance(v, str) and v not in MISSING_POLICIES:
            near = v.strip().lower().replace("_", "-").replace(" ", "-")
            hint = (f" (did you mean {quote(near)}?)" if near in MISSING_POLICIES
                    else did_you_mean(v, MISSING_POLICIES))
            tokens = "" if hint else (" (a file's tokens read as missing are a list, "
                                      "`missing_tokens: [...]`)")
            raise ValueError(f"not a missing-value policy{hint}; use one of "
                             f"{', '.join(MISSING_POLICIES)}{tokens}")
        return v

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

    #: the data paths as the config wrote them, where `relative_to_config` made them start at
    #: the config's folder (key -> written path): a cell's identity holds these, so the same
    #: config gives the same cells from whichever folder it is run
    _written: dict[str, str] = PrivateAttr(default_factory=dict)

    def identity_params(self) -> dict[str, Any]:
        """The loader's parameters as a cell's identity holds them: those of `loader`, with
        the data paths as the config wrote them (relative to its folder), not as they are
        opened from the current folder."""
        _, kw = self.loader()
        return {k: self._written.get(k, v) if k in ("path", "test_path") else v
                for k, v in kw.items()}

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
    """Short forms of a `datasets` entry (docs/datasets.md lists them):

    * ``iris`` or ``topk/car``: a registered (catalog) name;
    * ``data/x.csv``: a local file (a string that is no registered name and looks like a path);
    * ``{mine: data/x.csv}``: a local file named ``mine``;
    * ``{mine: {path: data/x.csv, label: y}}``: the long form, named ``mine``;
    * ``{data/x.csv: {label: y}}``: a local file with the long form's keys.
    """
    if isinstance(d, str):
        return {"path": d} if looks_like_file(d) else {"name": d}
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


class SplitSpec(_Strict):
    """How rows are split into train/test (see `treebench.data.splits`)."""

    kind: Literal["kfold", "holdout", "permutation", "train-val-test", "predefined", "full"] = "kfold"
    n_splits: Int = Field(5, ge=2)
    test_size: Float = Field(0.2, gt=0, lt=1)
    valid_size: Float = Field(0.1, gt=0, lt=1)
    train_size: Float = Field(0.8, gt=0, lt=1)
    seeds: list[Int] | None = Field(None, min_length=1)
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
        """Ranges listed; a seed written twice is kept once (its cells would be the same
        cells, and the run summary counted it twice)."""
        v = expand_values(v) if v is not None and not isinstance(v, list) else v
        if not isinstance(v, list):
            return v
        out, seen = [], set()
        for x in v:
            kind = "bool" if isinstance(x, bool) else (
                "number" if isinstance(x, int | float) else type(x).__name__)
            key = (kind, x) if _hashable(x) else None
            if key is None or key not in seen:
                out.append(x)
                seen.add(key)
        return out

    @model_validator(mode="after")
    def _kind_keys(self) -> SplitSpec:
        """Refuse a key given that ``kind`` does not read: it would change the cells'
        ``split_params`` and ids and nothing else. A key at its default value passes (it
        changes nothing, and a config validated again from its dump, as a sweep does, gives
        every key). A ``train-val-test`` split draws ``test_size`` of the rows, then
        ``valid_size / (1 - test_size)`` of the rest, which must be a fraction below 1."""
        takes = SPLIT_KEYS[self.kind]
        extra = [k for k in SPLIT_KEYS_ALL if k in self.model_fields_set and k not in takes
                 and getattr(self, k) != type(self).model_fields[k].default]
        if extra:
            where = [k for k in SPLIT_KEYS if extra[0] in SPLIT_KEYS[k]]
            raise ValueError(
                f"{' and '.join(f'`{k}`' for k in extra)} {'does' if len(extra) == 1 else 'do'} "
                f"not apply to `kind: {self.kind}`, which takes "
                f"{', '.join((*takes, 'seeds', 'test_files'))} (`{extra[0]}` goes with kind "
                f"{' or '.join([', '.join(where[:-1]), where[-1]] if len(where) > 1 else where)})")
        if self.kind == "train-val-test" and self.test_size + self.valid_size >= 1:
            raise ValueError(
                f"`test_size` ({self.test_size:g}) and `valid_size` ({self.valid_size:g}) add up "
                f"to {self.test_size + self.valid_size:g}, leaving no training rows; keep their "
                f"sum below 1")
        return self


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


#: the keys of `SplitSpec` each split kind reads besides ``kind``, ``seeds`` and ``test_files``
#: (`treebench.data.splits.make_split`; ``unstratifiable`` goes with the stratified kinds)
SPLIT_KEYS: dict[str, tuple[str, ...]] = {
    "kfold": ("n_splits", "stratify", "unstratifiable"),
    "holdout": ("test_size", "stratify", "unstratifiable"),
    "permutation": ("train_size",),
    "train-val-test": ("test_size", "valid_size", "stratify", "unstratifiable"),
    "predefined": (),
    "full": (),
}
SPLIT_KEYS_ALL = ("n_splits", "test_size", "valid_size", "train_size", "stratify",
                  "unstratifiable")


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
    """One step of in-cell tuning (`treebench.execute.tune`): choose ``param`` from ``grid`` by
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
    #: the problem to solve, one of `objectives.ASKABLE` (e.g. ``min-errors``): the entry gets
    #: the parameters that make its learner solve it (`treebench.algorithms.objectives.ask`)
    objective: str | None = None
    #: the learner's own inputs (e.g. raw features for CART beside binary ones for Top-k)
    binarization: list[BinarizationSpec] | None = None

    @field_validator("binarization", mode="before")
    @classmethod
    def _bin_list(cls, v: Any) -> Any:
        return _as_binarization_list(v)

    #: in-cell tuning: one step or a list of steps run in order (`treebench.execute.tune`)
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
    time: Float | None = Field(None, gt=0, allow_inf_nan=False,
                               description="wall-clock seconds for a cell's fit")
    memory: Float | None = Field(None, gt=0, allow_inf_nan=False, description="megabytes per cell")
    prepare: Float | None = Field(
        None, gt=0, allow_inf_nan=False, description="seconds to load, split and binarize a "
        "cell's data, counted apart from `time` (which is the fit's)")


class SlurmSpec(_Strict):
    """How ``backend: slurm`` submits its job arrays (`treebench.execute.slurm`); a value left
    out is derived from ``limits:`` and the cells."""

    #: the partition (``--partition``); default: the cluster's default partition
    partition: str | None = None
    #: the account charged (``--account``); default: the user's default account
    account: str | None = None
    #: a task's time request (SLURM's ``--time``: minutes, ``HH:MM:SS`` or ``D-HH:MM:SS``);
    #: default: its cells' time limits plus start-up
    time: str | None = None
    #: megabytes per task (``--mem``); default: ``limits.memory`` per CPU plus the worker's own
    memory: Float | None = Field(None, gt=0, allow_inf_nan=False)
    #: CPUs per task: the cells a task runs at once
    cpus_per_task: Int = Field(1, ge=1)
    #: cells per array task; default: as many as fit in a 4-hour request of their limits
    cells_per_task: Int | None = Field(None, ge=1)
    #: at most this many tasks of the array run at once (``--array=...%N``)
    max_running: Int | None = Field(None, ge=1)
    #: extra ``#SBATCH`` options, e.g. ``--constraint=skylake`` or ``--requeue``
    sbatch: list[str] = Field(default_factory=list)
    #: shell lines run before a task starts (``module load python``, ``source venv/bin/activate``)
    setup: list[str] = Field(default_factory=list)
    #: the Python interpreter on the nodes (default: the driver's)
    python: str | None = None


class ExecutionSpec(_Strict):
    n_jobs: Int = -1
    #: ``fork``: workers forked from the warm driver (no start-up); the others through joblib
    backend: Literal[BACKENDS] = "fork"
    #: an existing cluster: ``tcp://host:8786`` for dask, ``auto`` or
    #: ``ray://host:10001`` for ray; none: a local cluster (dask also reads DASK_SCHEDULER_ADDRESS)
    address: str | None = None
    #: the workers have the datasets in a data directory of their own; otherwise the driver
    #: ships each prepared dataset once per worker
    data_dir_on_workers: bool = False
    #: refuse a grid of more cells than this (`treebench.config.grid.MAX_CELLS` by default);
    #: ``--max-cells`` sets it
    max_cells: Int | None = Field(None, ge=1)
    #: ``backend: slurm``: partition, account, time, memory, CPUs and cells per task, ...
    slurm: SlurmSpec = SlurmSpec()

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


class ReportSpec(_Strict):
    """What the report draws beyond its defaults."""

    reference_solver: str | None = Field(None, description=(
        "The algorithm entry's label (its `label:`, else its name) that the report's solvers "
        "section compares every other solver of the same problem with, fit by fit. Default: "
        "the first solver of each problem."))
    min_reference_seconds: Float = Field(0.0, ge=0.0, allow_inf_nan=False, description=(
        "The shortest time, in seconds, a reference fit (the reference solver's, or the "
        "fastest other solver's) must take for its ratio to enter the solvers section's "
        "geometric means and largest ratios; shorter fits stay in the rows. Timer noise "
        "dominates a ratio of two millisecond fits: 0.05 is a common floor. Default 0."))
    rivals: list[str] | None = Field(None, min_length=1, description=(
        "The algorithm entries' labels the solvers section's fastest-rival table measures "
        "every solver against: on each fit, the fastest of these other than the solver "
        "itself (e.g. the peers, when an experiment runs several solvers of its own). "
        "Default: every solver of the problem."))
    clock: Literal["wall", "cpu"] = Field("wall", description=(
        "The fit times the solvers section compares: `wall` (`fit_seconds`, elapsed time) or "
        "`cpu` (`fit_cpu_seconds`, CPU time of the fitting process, which does not grow while "
        "the fit waits for a core on a loaded machine). Either way a fit is solved only when "
        "its wall time is within its time limit. Default `wall`."))
    figures: list[str] = Field(default_factory=lambda: ["*"], min_length=1, description=(
        "The figures the report draws, as shell-style patterns (`*`, `?`, `[...]`) on a "
        "figure's name: its file name without the dataset prefix and the extension, e.g. "
        "`test_accuracy_vs_k`, `pareto_*`, `critical_difference*`. A figure is drawn when "
        "one pattern matches its name. Default: every figure."))

    @field_validator("figures")
    @classmethod
    def _patterns(cls, v: list[str]) -> list[str]:
        for p in v:
            if not p.strip():
                raise ValueError("a figure pattern is an empty string; write `*` for every figure")
        return v


def _axis_kinds(v: Any) -> set[str]:
    """What the values of the sweep axis ``v`` are: ``number`` (not a boolean), ``bool`` or
    ``other``; an integer range ``"a..b"`` is numbers without being listed."""
    if is_range(v):
        return {"number"}
    if isinstance(v, list):
        return set().union(*(_axis_kinds(x) if is_range(x) else _value_kind(x) for x in v)) \
            if v else set()
    return set().union(*(_value_kind(x) for x in expand_values(v)))


def _value_kind(x: Any) -> set[str]:
    if isinstance(x, bool):
        return {"bool"}
    return {"number"} if isinstance(x, int | float) else {"other"}


def _number_params(data: dict[str, Any]) -> set[str]:
    """The ``param_*`` and ``bparam_*`` columns to which the validated config fields ``data``
    give numbers only (learner and binarizer parameters, tuning grids)."""
    kinds: dict[str, set[str]] = {}

    def add(prefix: str, name: str, values: set[str]) -> None:
        kinds.setdefault(prefix + name, set()).update(values)

    bins = list(data.get("binarization") or [])
    for ds in data.get("datasets") or []:
        bins += ds.binarization or []
    for a in data.get("algorithms") or []:
        bins += a.binarization or []
        for k, v in a.params.items():
            add("param_", k, _axis_kinds(v))
        for t in a.tune or []:
            add("param_", t.param, _axis_kinds(list(t.grid)))
    for b in bins:
        for k, v in b.params.items():
            add("bparam_", k, _axis_kinds(v))
    return {col for col, ks in kinds.items() if ks == {"number"}}


#: experiment and profile names become folder names (``results/<name>-<profile>``): letters,
#: digits, ``_ . -``, starting with a letter or digit (so never ``..`` or a path)
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"


def check_entry_labels(named: list[tuple[str, str]], labels: list[str]) -> None:
    """A ValueError naming the first ``(key, label)`` of ``named`` whose label is none of the
    algorithm entries' ``labels`` (the report's reference solver and rivals, in a config or
    on `treebench report`'s command line)."""
    for key, name in named:
        if name not in labels:
            raise ValueError(f"{key} names `{name}`, no algorithm entry's label"
                             f"{did_you_mean(name, labels)}; give one of "
                             f"{', '.join(labels) or '(none)'}")


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
    repeat: Int = Field(1, ge=1, le=1000, description=(
        "Fits per cell for timing: each cell's fit runs this many times, warm, one after "
        "another in the same process; `fit_seconds` is their median, `fit_seconds_repeats` "
        "lists them and `fit_seconds_spread` is their range. The first fit's tree is scored; "
        "a fit that stops at its time budget is not repeated; `limits.time` holds per fit."))
    execution: ExecutionSpec = ExecutionSpec()
    costs: CostsSpec = CostsSpec()
    report: ReportSpec = Field(ReportSpec(), description=(
        "Report options: `reference_solver`, `rivals` and `min_reference_seconds` "
        "(docs/results.md, the solvers section) and `figures`, the figures drawn "
        "(docs/results.md, Choosing the figures)."))
    # reproductions: checked claims, named partial overrides, the profile applied
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
        for m in v:
            metrics.get(m)  # ValueError naming the known metrics
        return v

    @field_validator("expect")
    @classmethod
    def _claims_bool(cls, v: list[Expectation], info: Any) -> list[Expectation]:
        """Refuse a claim comparing a parameter column with a boolean when the config gives
        that parameter numbers only: such a condition matches no row."""
        numeric = _number_params(info.data)
        for i, e in enumerate(v):
            wheres = [("where", e.where)] + (
                [("compare.where", e.compare.where)] if e.compare is not None else [])
            for key, col, cond in ((k, c, x) for k, w in wheres for c, x in w.items()):
                if col not in numeric:
                    continue
                flags = [x for x in condition_values(cond) if isinstance(x, bool)]
                if flags:
                    name = f" (`{e.name}`)" if e.name else ""
                    raise ValueError(
                        f"expect[{i}]{name}: {key} `{col}` compares {written(flags[0])} with "
                        f"{col.split('_', 1)[1]}, which this config gives numbers, not booleans "
                        f"(YAML reads true/false/yes/no/on/off as booleans)")
        return v

    @model_validator(mode="after")
    def _report_labels(self) -> Experiment:
        ref = self.report.reference_solver
        named = [("report.reference_solver", ref)] if ref is not None else []
        named += [("report.rivals", rival) for rival in self.report.rivals or []]
        check_entry_labels(named, [a.label or a.name for a in self.algorithms])
        return self

    def dataset_names(self) -> list[str]:
        """Unique display names of ``datasets``, in order (`unique_dataset_names`)."""
        return unique_dataset_names(list(self.datasets))

    def split_for(self, i: int) -> SplitSpec:
        """The split dataset ``i`` gets: its own ``split``; else its test file when it ships one
        (``split.test_files: merge`` turns that off); else the experiment's."""
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
