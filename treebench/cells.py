"""Grid expansion and cells.

A cell is one (dataset, split fold/seed, binarizer + params, algorithm + params) combination;
its id is a hash of that canonical spec. Time and memory limits travel with the cell but are
execution settings, not identity: the same config gives the same cell ids under
any limits, so ``--retry timeout --time-limit 120`` reruns only the cells that timed out.

Each learner is paired only with the inputs it accepts (the registry's pairing rule,
`treebench.registry.accepts_binarization`): a learner that needs 0/1 features is never paired
with ``raw`` numeric features, and `expand_all` says why a pair was skipped. A learner left with
no input at all on some dataset is a config error, caught at validation by the same rule.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from treebench.config import Experiment

from treebench.sweeps import expand_values, grid, grid_size, parse_scalar  # noqa: F401 - re-exported

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
    limits: dict[str, Any]  # execution settings: not part of the id
    random_state: int
    experiment_seed: int = 0
    costs: dict[str, Any] = field(default_factory=dict)  # `CostsSpec.cell_spec`; {} = unit
    tune: list[dict[str, Any]] | None = None  # in-cell tuning plan (`treebench.tune`)


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def derive_seed(*parts: Any) -> int:
    """A 31-bit seed derived deterministically from its parts (never global seeding)."""
    h = hashlib.sha256(canonical_json(list(parts)).encode()).digest()
    return int.from_bytes(h[:4], "little") & 0x7FFFFFFF


def cell_spec(c: Cell) -> dict[str, Any]:
    out = {
        "dataset": {"loader": c.dataset_loader, "params": c.dataset_params},
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
    return out


def cell_id(c: Cell) -> str:
    return hashlib.sha256(canonical_json(cell_spec(c)).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- input pairing
@dataclass
class Skipped:
    """A (learner, binarization) pair that `expand` left out, and why."""

    dataset: str
    algorithm: str
    binarizer: str
    reason: str


@dataclass
class Expansion:
    cells: list[Cell]
    skipped: list[Skipped] = field(default_factory=list)


#: a grid of more cells than this gets a one-line warning before it is expanded
WARN_CELLS = 100_000
#: a grid of more cells than this is refused unless ``execution.max_cells`` (``--max-cells``)
#: raises the limit: expanding 10^6 cells takes about half a minute and a gigabyte
MAX_CELLS = 1_000_000


class GridSizeWarning(UserWarning):
    """A config whose grid has more than `WARN_CELLS` cells."""


def count_cells(exp: Experiment) -> int:
    """How many cells `expand_all` makes at most (before merging duplicate grid points),
    counted from the axes' lengths without expanding anything."""
    from treebench.data.splits import split_instances

    total = 0
    names = exp.dataset_names()
    for i, ds in enumerate(exp.datasets):
        sspec = exp.split_for(i)
        n_inst = len(split_instances(sspec.kind, sspec.n_splits, list(sspec.seeds or [exp.seed])))
        pairs = _pairs(exp, ds, names[i], {})
        total += n_inst * sum(grid_size(b.params) * grid_size(a.params) for b, a in pairs)
    return total


def check_grid_size(exp: Experiment, source: str = "<config>", n: int | None = None) -> int:
    """The grid's cell count ``n`` (default `count_cells`): a `GridSizeWarning` above
    `WARN_CELLS`, a `ConfigError` above the limit (``execution.max_cells``, default
    `MAX_CELLS`)."""
    import warnings

    from treebench.errors import ConfigError

    n = count_cells(exp) if n is None else n
    limit = exp.execution.max_cells or MAX_CELLS
    if n > limit:
        raise ConfigError(
            f"{source}: the grid has {n:,} cells, more than the limit of {limit:,}; narrow the "
            f"sweep axes or, if you mean it, raise the limit with `--max-cells {n}` (or "
            f"`execution.max_cells: {n}`)."
        )
    if n > WARN_CELLS:
        warnings.warn(f"the grid has {n:,} cells (more than {WARN_CELLS:,}); expanding it takes "
                      f"about {max(1, round(n * 3e-5))} s before anything runs.", GridSizeWarning,
                      stacklevel=2)
    return n


def _pairs(exp: Experiment, ds: Any, name: str,
           skipped: dict[tuple[str, str, str], Skipped]) -> list[tuple[Any, Any]]:
    """The (binarization, algorithm entry) pairs that make cells on dataset ``name``; the pairs
    left out because the learner does not accept that input go into ``skipped``."""
    from treebench.registry import accepts_binarization

    pairs: list[tuple[Any, Any]] = []
    for a in exp.algorithms:
        if not a.runs_on(name):  # `datasets:` on the entry names other datasets
            continue
        for b in exp.binarization_for(ds, a):
            if not accepts_binarization(a.name, b.method):
                key = (name, a.label or a.name, b.method)
                skipped.setdefault(key, Skipped(*key, reason=(
                    f"{a.name} needs 0/1 features and `{b.method}` passes numeric "
                    f"features through")))
                continue
            pairs.append((b, a))
    return pairs


def expand(exp: Experiment) -> list[Cell]:
    """All cells of an experiment, ordered so that consecutive cells share data and folds."""
    return expand_all(exp).cells


def expand_all(exp: Experiment) -> Expansion:
    """All cells, and the (learner, binarization) pairs left out because the learner does not
    accept that input (e.g. Top-k on ``raw`` features). The grid's size is checked first
    (`check_grid_size`); a grid point listed twice makes one cell."""
    check_grid_size(exp)
    cells: list[Cell] = []
    skipped: dict[tuple[str, str, str], Skipped] = {}
    seen: set[str] = set()
    names = exp.dataset_names()  # unique display names (a file's identity is its path)
    for i, ds in enumerate(exp.datasets):
        pairs = _pairs(exp, ds, names[i], skipped)
        for c in _dataset_cells(exp, i, names[i], pairs):
            cid = cell_id(c)
            if cid not in seen:
                seen.add(cid)
                cells.append(replace(c, id=cid))
    return Expansion(cells, list(skipped.values()))


def _dataset_cells(exp: Experiment, i: int, name: str, pairs: list[tuple[Any, Any]]) -> Iterator[Cell]:
    """The cells (without ids) of dataset ``i`` for its (binarization, algorithm) ``pairs``:
    fold by fold, binarizations in first-use order, so that cells sharing a binarized fold are
    adjacent."""
    from treebench.data.splits import split_instances

    ds = exp.datasets[i]
    loader, lparams = ds.loader()
    sspec = exp.split_for(i)  # its own split, its test file, or the experiment's split
    split = sspec.model_dump()
    for key in ("seeds", "unstratifiable", "test_files"):  # not part of a cell's identity
        split.pop(key, None)
    seeds = list(sspec.seeds) if sspec.seeds else [exp.seed]
    order: list[Any] = []
    for b, _ in pairs:
        if all(b != o for o in order):
            order.append(b)
    common = {"dataset": name, "dataset_loader": loader, "dataset_params": lparams, "split": split,
              "limits": exp.limits.model_dump(), "experiment_seed": exp.seed,
              "costs": (ds.costs or exp.costs).cell_spec(exp.seed)}
    grids = {id(x): grid(x.params) for pair in pairs for x in pair}  # each grid listed once
    tunes = {id(a): [t.model_dump() for t in a.tune] if a.tune else None for _, a in pairs}
    for fold, seed in split_instances(sspec.kind, sspec.n_splits, seeds):
        rs = derive_seed(exp.seed, name, fold, seed)
        for b in order:
            for bp in grids[id(b)]:
                if ds.binarizer_missing and "missing" not in bp:  # the dataset's policy
                    bp = {**bp, "missing": ds.binarizer_missing}
                for a in (a for bb, a in pairs if bb == b):
                    for ap in grids[id(a)]:
                        yield Cell(id="", fold=fold, seed=seed, binarizer=b.method, binarizer_params=bp,
                                   algorithm=a.name, algorithm_label=a.label or a.name,
                                   algorithm_params=ap, random_state=rs, tune=tunes[id(a)], **common)
