"""The experiment config: its schema, reading it, and checking it (expansion into cells:
`treebench.config.cells.expand`).

A config is YAML. Everything is checked before anything runs: unknown keys, wrong types,
unknown algorithm/dataset/binarizer names (with a "did you mean"), parameter values the
estimator would refuse. Errors are `ConfigError`s that name the file and the key path.

Sweeps: inside ``algorithms[*].params`` and ``binarization.params`` a list value is a sweep axis
(cartesian product within one entry; several entries form a union). A string ``"a..b"`` is the
integer range a, a+1, …, b. A literal list parameter is written ``{value: [...]}``.

The package's parts:

* `treebench.config.schema`: the pydantic models (`Experiment` and the models it nests);
* `treebench.config.datasets`: what dataset entries stand for without loading data;
* `treebench.config.loading`: reading the YAML, applying profiles and overrides (`set_dotted_key`);
* `treebench.config.checks`: registry and cross-field checks (`validate_config`);
* `treebench.config.grid`: the grid without expanding it: the (binarization, learner) pairs that
  make cells and the number of cells, checked against the limit.

Everything public is importable from ``treebench.config`` itself.
"""

from treebench.config.checks import (
    CHECK_EVERY_POINT,
    check_entry_params,
    check_learner_params,
    error_location,
    pydantic_message,
    validate_config,
)
from treebench.config.datasets import (
    dataset_task,
    looks_like_file,
    predefined_split_available,
    unique_dataset_names,
)
from treebench.config.loading import apply_profile, load_config, set_dotted_key
from treebench.config.schema import (
    BACKENDS,
    FILE_KEYS,
    MISSING_POLICIES,
    NAME_PATTERN,
    AlgorithmSpec,
    BinarizationSpec,
    Column,
    CostsSpec,
    DatasetSpec,
    ExecutionSpec,
    Experiment,
    Float,
    Int,
    LimitsSpec,
    SlurmSpec,
    SplitSpec,
    TuneStepSpec,
)

__all__ = [
    "BACKENDS", "CHECK_EVERY_POINT", "FILE_KEYS", "MISSING_POLICIES", "NAME_PATTERN",
    "AlgorithmSpec", "BinarizationSpec", "Column", "CostsSpec", "DatasetSpec", "ExecutionSpec",
    "Experiment", "Float", "Int", "LimitsSpec", "SlurmSpec", "SplitSpec", "TuneStepSpec",
    "apply_profile", "check_entry_params", "check_learner_params", "dataset_task",
    "error_location", "load_config", "looks_like_file", "predefined_split_available",
    "pydantic_message", "set_dotted_key", "unique_dataset_names", "validate_config",
]
