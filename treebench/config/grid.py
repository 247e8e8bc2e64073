"""The grid a config defines, without expanding it: which (binarization, learner) pairs make
cells on a dataset (the registry's pairing rule, `treebench.registry.accepts_binarization`; the
pairs left out are `Skipped`), and how many cells the grid holds (`count_cells`), checked
against the limit before anything walks it (`check_grid_size`). `treebench.config.cells` expands the
grid into cells with the same pairs.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from treebench.data.splits import split_instances
from treebench.errors import ConfigError, GridSizeWarning  # noqa: F401 - GridSizeWarning: raised here
from treebench.registry import accepts_binarization
from treebench.utils.sweeps import grid_size

if TYPE_CHECKING:
    from treebench.config.schema import Experiment


@dataclass
class Skipped:
    """A (learner, binarization) pair that makes no cells (the learner does not take that
    input), and why."""

    dataset: str
    algorithm: str
    binarizer: str
    reason: str


#: a grid of more cells than this gets a one-line warning before it is expanded
WARN_CELLS = 100_000
#: a grid of more cells than this is refused unless ``execution.max_cells`` (``--max-cells``)
#: raises the limit: expanding 10^6 cells takes about half a minute and a gigabyte
MAX_CELLS = 1_000_000


def count_cells(exp: Experiment) -> int:
    """How many cells `treebench.config.cells.expand_all` makes at most (before merging duplicate
    grid points), counted from the axes' lengths without expanding anything."""
    total = 0
    names = exp.dataset_names()
    for i, ds in enumerate(exp.datasets):
        sspec = exp.split_for(i)
        n_inst = len(split_instances(sspec.kind, sspec.n_splits, list(sspec.seeds or [exp.seed])))
        entry_pairs = pairs(exp, ds, names[i], {})
        total += n_inst * sum(grid_size(b.params) * grid_size(a.params) for b, a in entry_pairs)
    return total


def check_grid_size(exp: Experiment, source: str = "<config>", n: int | None = None) -> int:
    """The grid's cell count ``n`` (default `count_cells`): a `GridSizeWarning` above
    `WARN_CELLS`, a `ConfigError` above the limit (``execution.max_cells``, default
    `MAX_CELLS`)."""
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


def pairs(exp: Experiment, ds: Any, name: str,
          skipped: dict[tuple[str, str, str], Skipped]) -> list[tuple[Any, Any]]:
    """The (binarization, algorithm entry) pairs that make cells on dataset ``name``; the pairs
    left out because the learner does not accept that input go into ``skipped``."""
    out: list[tuple[Any, Any]] = []
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
            out.append((b, a))
    return out
