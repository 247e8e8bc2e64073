"""Sweep values, grid expansion and cells.

A cell is one (dataset, split fold/seed, binarizer + params, algorithm + params, limits)
combination; its id is a hash of its canonical spec (execution knobs excluded), so the same
config always gives the same cells and a rerun can skip the finished ones.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from treebench.config import Experiment

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
    limits: dict[str, Any]
    random_state: int
    experiment_seed: int = 0
    costs: dict[str, Any] = field(default_factory=dict)  # `CostsSpec.cell_spec`; {} = unit


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
        **({"costs": c.costs} if c.costs else {}),  # unit costs leave ids unchanged
    }


def expand(exp: Experiment) -> list[Cell]:
    """All cells of an experiment, ordered so that consecutive cells share data and folds."""
    from treebench.data.splits import split_instances

    cells: list[Cell] = []
    seen: set[str] = set()
    limits = exp.limits.model_dump()
    names = exp.dataset_names()  # unique display names (a file's identity is its path)
    for i, ds in enumerate(exp.datasets):
        loader, lparams = ds.loader()
        sspec = exp.split_for(i)  # its own split, its test file, or the experiment's split
        split = sspec.model_dump()
        for key in ("seeds", "unstratifiable", "test_files"):  # not part of a cell's identity
            split.pop(key, None)
        seeds = list(sspec.seeds) if sspec.seeds else [exp.seed]
        for fold, seed in split_instances(sspec.kind, sspec.n_splits, seeds):
            rs = derive_seed(exp.seed, names[i], fold, seed)
            for b in ds.binarization or exp.binarization:
                for bp in grid(b.params):
                    for a in exp.algorithms:
                        for ap in grid(a.params):
                            c = Cell(
                                id="",
                                dataset=names[i],
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
                                costs=(ds.costs or exp.costs).cell_spec(exp.seed),
                            )
                            cid = hashlib.sha256(canonical_json(cell_spec(c)).encode()).hexdigest()[:16]
                            if cid in seen:
                                continue
                            seen.add(cid)
                            cells.append(_with_id(c, cid))
    return cells


def _with_id(c: Cell, cid: str) -> Cell:
    return replace(c, id=cid)
