"""Grid expansion: a config's cells (the `Cell` record and its id live in `treebench.results.cell`).

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

from dataclasses import dataclass, field, replace
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from treebench.errors import ConfigError
from treebench.results.cell import Cell, cell_id, derive_seed
from treebench.utils.text import quote
from treebench.config.grid import Skipped, check_grid_size
from treebench.config.grid import pairs as config_pairs
from treebench.data.fingerprint import FileHashes, fingerprint
from treebench.data.locate import data_dirs_from_env
from treebench.data.splits import split_instances
from treebench.utils.sweeps import expand_values, grid, parse_scalar  # noqa: F401 - re-exported

if TYPE_CHECKING:
    from treebench.config import Experiment


# ----------------------------------------------------------------------------- expansion
@dataclass
class Expansion:
    cells: list[Cell]
    skipped: list[Skipped] = field(default_factory=list)
    #: dataset display name → the fingerprint of its data (`treebench.data.fingerprint`)
    data: dict[str, str] = field(default_factory=dict)
    #: the files those fingerprints were computed from (path → stat key)
    data_files: dict[str, list[int]] = field(default_factory=dict)


def expand(exp: Experiment, data_dirs: list[str] | None = None) -> list[Cell]:
    """All cells of an experiment, ordered so that consecutive cells share data and folds."""
    return expand_all(exp, data_dirs).cells


#: a k-fold split of more folds than this has its dataset's rows counted before its cells are
#: made (a count above the rows is refused then, not after minutes of expansion)
MANY_FOLDS = 1000


def _check_many_folds(exp: Experiment, i: int, name: str, loader: str, params: dict[str, Any],
                      dirs: list[Any]) -> None:
    """Refuse a k-fold split of dataset ``i`` with more folds than it has rows before its
    cells are expanded, when the folds are many (`MANY_FOLDS`: ``n_splits: 1000000`` on iris
    took 41 s and 750 MB to expand before the data checks refused it)."""
    sspec = exp.split_for(i)
    if sspec.kind != "kfold" or int(sspec.n_splits or 0) <= MANY_FOLDS:
        return
    from treebench.data.base import load_dataset  # scikit-learn's datasets: only when needed
    from treebench.data.checks import check_folds

    check_folds(load_dataset(loader, dict(params), data_dirs=dirs), name, sspec.model_dump())


def expand_all(exp: Experiment, data_dirs: list[str] | None = None) -> Expansion:
    """All cells, and the (learner, binarization) pairs left out because the learner does not
    accept that input (e.g. Top-k on ``raw`` features). The grid's size is checked first
    (`check_grid_size`); a grid point listed twice makes one cell. Each dataset's data is
    fingerprinted (its files hashed, or their hashes taken from the user cache) and the
    fingerprint is part of its cells' ids; ``data_dirs`` are searched for catalog files whose
    entry records no checksum."""
    check_grid_size(exp)
    cells: list[Cell] = []
    skipped: dict[tuple[str, str, str], Skipped] = {}
    seen: dict[str, str] = {}  # cell id -> the label of the entry that defined it first
    names = exp.dataset_names()  # unique display names (a file's identity is its path)
    hashes = FileHashes()
    dirs = data_dirs_from_env(list(data_dirs or []))
    out = Expansion(cells)
    try:
        for i, ds in enumerate(exp.datasets):
            pairs = config_pairs(exp, ds, names[i], skipped)
            loader, lparams = ds.loader()
            _check_many_folds(exp, i, names[i], loader, lparams, dirs)
            fp = fingerprint(loader, lparams, data_dirs=dirs, hashes=hashes, dataset=names[i])
            out.data[names[i]] = fp.value
            out.data_files.update(fp.files)
            for c in _dataset_cells(exp, i, names[i], pairs, fp.value):
                cid = cell_id(c)
                if cid not in seen:
                    seen[cid] = c.algorithm_label
                    cells.append(replace(c, id=cid))
                elif seen[cid] != c.algorithm_label:
                    raise _same_cell(seen[cid], c)
    finally:
        hashes.save()
    out.skipped = list(skipped.values())
    return out


def _same_cell(first: str, c: Cell) -> ConfigError:
    """Two algorithm entries of other labels that define one cell: the label is no part of what
    a cell runs, so the second entry's rows would be the first's, its name nowhere."""
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(c.algorithm_params.items())) or "defaults"
    return ConfigError(
        f"algorithm entries {quote(first)} and {quote(c.algorithm_label)} define the same cell "
        f"({c.algorithm} with {params} on {c.dataset}); a label names an entry's cells but "
        f"does not make new ones: keep one entry, or give them different parameters.")


def cell_limits(exp: Experiment) -> dict[str, Any]:
    """The execution settings every cell of ``exp`` carries (not part of its id): its limits,
    and ``repeat`` when the config asks for more than one fit per cell."""
    limits = exp.limits.model_dump()
    if exp.repeat > 1:
        limits["repeat"] = exp.repeat
    return limits


def _dataset_cells(exp: Experiment, i: int, name: str, pairs: list[tuple[Any, Any]],
                   data: str = "") -> Iterator[Cell]:
    """The cells (without ids) of dataset ``i`` for its (binarization, algorithm) ``pairs``:
    fold by fold, binarizations in first-use order, so that cells sharing a binarized fold are
    adjacent."""
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
    ident = ds.identity_params()
    common = {"dataset": name, "dataset_loader": loader, "dataset_params": lparams,
              "identity_params": None if ident == lparams else ident, "split": split,
              "limits": cell_limits(exp), "experiment_seed": exp.seed,
              "costs": (ds.costs or exp.costs).cell_spec(exp.seed), "data": data}
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
