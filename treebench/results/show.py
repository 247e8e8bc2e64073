"""One cell's fitted tree as `treebench show` prints it: found by id (a unique prefix is
enough; by ``--where`` conditions, `treebench.results.find` gives the id), read from its cell
file, and written as readable rules, JSON or Graphviz dot (`treebench.tree.export`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from treebench.errors import UserError
from treebench.results.cellfile import CellFileError, cells_dir, read_cell
from treebench.results.find import cell_file
from treebench.results.traces import record_trace
from treebench.utils.text import fmt_seconds
from treebench.tree.arrays import TreeArrays
from treebench.tree.export import conditions_from_columns, export_dict, export_dot, export_text

#: the formats of `tree_text`
FORMATS = ("text", "json", "dot")


@dataclass(frozen=True)
class ShownCell:
    """A finished cell with its tree: the cell file, its results row, the tree, the feature
    names and conditions of its columns, the class labels, and its search's anytime trace
    (`treebench.results.traces`; None when its learner recorded none)."""

    path: Path
    row: dict[str, Any]
    tree: TreeArrays
    names: Any
    conditions: Any
    classes: Any
    trace: Any = None

    @property
    def cell_id(self) -> str:
        return self.path.stem


def check_request(cell_id: str | None, where: list[str] | None, format: str) -> None:
    """Raise `UserError` unless exactly one of ``cell_id`` and ``where`` names the cell and
    ``format`` is one of `FORMATS`."""
    if (cell_id is None) == (not where):
        raise UserError("show needs a cell id or --where conditions (one of the two), e.g. "
                        "`treebench show DIR --where dataset=iris max_depth=2 fold=0`.")
    if format not in FORMATS:
        raise UserError(f"--format must be text, json or dot (got {format!r}).")


def read_shown(results_dir: Path, cell_id: str) -> ShownCell:
    """The cell whose id is ``cell_id`` or starts with it (`treebench.results.find.cell_file`).
    Raise `UserError` when no cell or several match, the cell file cannot be used, or the cell
    has no tree (it timed out or failed, or its learner keeps no single tree)."""
    check_folder(results_dir)
    path = cell_file(results_dir, cell_id)
    try:
        rec = read_cell(path)[0]
    except CellFileError as exc:
        raise UserError(f"{path} cannot be used: {exc}; `treebench results check "
                        f"{results_dir} --repair` sets it aside and the next run reruns "
                        f"it.") from None
    row = rec.get("row", {})
    if rec.get("tree") is None:
        raise UserError(no_tree(path.stem, row))
    names, conds = conditions_from_columns(rec.get("columns"))
    return ShownCell(path, row, TreeArrays.from_dict(rec["tree"]), names, conds,
                     rec.get("classes"), record_trace(rec))


def check_folder(results_dir: Path) -> None:
    """Raise `UserError` when ``results_dir`` is not a results folder (none, a file, or a
    folder without ``cells/``)."""
    d = Path(results_dir)
    if not d.exists():
        what = "does not exist"
    elif not d.is_dir():
        what = "is not a folder"
    elif not cells_dir(d).is_dir():
        what = "holds no cells/ folder, so it is not a results folder"
    else:
        return
    raise UserError(f"{d} {what}; give a directory written by `treebench run`.")


def no_tree(cell_id: str, row: dict[str, Any]) -> str:
    """Why the cell ``cell_id`` (results row ``row``) has no tree to show: its learner keeps no
    single tree (an ensemble), or the cell did not finish (the time limit is named for a
    timeout, the error for a failure)."""
    status, label = row.get("status"), row.get("algorithm_label")
    if status == "ok":
        what = ("is an ensemble of trees" if row.get("problem") == "ensemble"
                else "keeps no single tree")
        return (f"cell {cell_id}: its learner {label} {what}, so there is no tree to show; "
                f"its scores are in results.csv.")
    if status == "timeout":
        return (f"cell {cell_id} timed out (time limit {_limit(row.get('time_limit'))}) before "
                f"{label} had a tree, so there is no tree to show.")
    error = f" ({row.get('error')})" if row.get("error") else ""
    return f"cell {cell_id} ended with status {status}{error}, so {label} has no tree to show."


def tree_text(cell: ShownCell, format: str = "text") -> str:
    """The cell's tree in ``format``: ``text`` (a header of ``#`` lines naming the cell, its
    learner, data and scores, then the rules), ``json`` or ``dot``."""
    check_request(cell.cell_id, None, format)
    tree, names, classes, conds = cell.tree, cell.names, cell.classes, cell.conditions
    if format == "json":
        return json.dumps(export_dict(tree, names, classes, conds), indent=2, default=str)
    if format == "dot":
        return export_dot(tree, names, classes, conds)
    return header(cell) + trace_text(cell.trace) + "\n" + export_text(tree, names, classes, conds)


def header(cell: ShownCell) -> str:
    """The ``#`` lines above a cell's rules: learner, data, scores, size and fit time, and a
    warning when the solver stopped at its time limit."""
    row, tree = cell.row, cell.tree
    text = (
        f"# cell {cell.cell_id}: {row.get('algorithm_label')} {row.get('algorithm_params')} "
        f"on {row.get('dataset')} (fold {row.get('fold')}, seed {row.get('seed')}); "
        f"train acc {_pct(row.get('train_accuracy'))}, test acc "
        f"{_pct(row.get('test_accuracy'))}, {tree.n_leaves} leaves, depth {tree.depth}; "
        f"fit {_secs(row.get('fit_seconds'))}"
    )
    status = row.get("status")
    if status == "timeout" or row.get("timed_out"):
        text += (
            f"\n# TIMED OUT (status {status}, time limit {_limit(row.get('time_limit'))}): "
            f"the solver stopped at its time limit; this is the best tree it had, not a "
            f"proven optimum"
        )
    return text


def trace_text(trace: Any) -> str:
    """The ``#`` lines of a cell's anytime trace: one per record (seconds since the fit's
    start, incumbent, lower bound), the first and last 10 of a longer trace; empty without
    one."""
    if trace is None or not len(trace):
        return ""
    rows = list(trace)
    shown_rows = rows if len(rows) <= 20 else rows[:10] + [None] + rows[-10:]
    lines = [f"\n# anytime trace ({len(rows)} records): seconds, incumbent, lower bound"]
    for r in shown_rows:
        lines.append("#   ..." if r is None else
                     f"#   {_secs(r[0])}  {float(r[1]):.6g}  {float(r[2]):.6g}")
    return "\n".join(lines)


def _pct(v: Any) -> str:
    return "n/a" if v is None else f"{100 * float(v):.2f} %"


def _secs(v: Any) -> str:
    """Every printed time in one format: 3 significant digits and ``s``."""
    return "n/a" if v is None else f"{fmt_seconds(v)} s"


def _limit(v: Any) -> str:
    return "none" if v is None else _secs(v)
