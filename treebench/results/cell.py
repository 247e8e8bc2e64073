"""One cell: the unit of work and the key of its result.

A cell is one (dataset, split fold/seed, binarizer + params, algorithm + params) combination
with the limits it runs under; its id (`cell_id`) is a hash of its canonical spec
(`cell_spec`), which leaves the limits out and holds the fingerprint of the data the cell reads
(`treebench.data.fingerprint`), so the same config on changed data defines other cells.
`treebench.config.cells` expands a config into cells, `treebench.execute` runs them and
`treebench.results` files each result under its cell's id.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Cell:
    """One unit of work; ``id`` is the hash of its canonical spec (`cell_spec`)."""

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
    limits: dict[str, Any]  # execution settings: not part of the id
    random_state: int
    experiment_seed: int = 0
    costs: dict[str, Any] = field(default_factory=dict)  # `CostsSpec.cell_spec`; {} = unit
    tune: list[dict[str, Any]] | None = None  # in-cell tuning plan (`treebench.execute.tune`)
    data: str = ""  # the data's fingerprint (`treebench.data.fingerprint`): part of the id
    #: ``dataset_params`` as the id holds them (data paths as the config wrote them, see
    #: `DatasetSpec.identity_params`); None: ``dataset_params`` themselves
    identity_params: dict[str, Any] | None = None


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def derive_seed(*parts: Any) -> int:
    """A 31-bit seed derived deterministically from its parts (never global seeding)."""
    h = hashlib.sha256(canonical_json(list(parts)).encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def cell_spec(c: Cell) -> dict[str, Any]:
    out = {
        "dataset": {"loader": c.dataset_loader,
                    "params": c.dataset_params if c.identity_params is None else c.identity_params},
        "split": c.split,
        "fold": c.fold,
        "seed": c.seed,
        "binarizer": {"method": c.binarizer, "params": c.binarizer_params},
        "algorithm": {"name": c.algorithm, "params": c.algorithm_params},
        "random_state": c.random_state,
        **({"costs": c.costs} if c.costs else {}),  # unit costs leave ids unchanged
    }
    if c.tune:  # only tuned cells record a plan, so other cells keep their ids
        out["tune"] = c.tune
    if c.data:  # what the cell reads: changed data makes other cells
        out["data"] = c.data
    return out


def cell_id(c: Cell) -> str:
    return hashlib.sha256(canonical_json(cell_spec(c)).encode()).hexdigest()[:16]
