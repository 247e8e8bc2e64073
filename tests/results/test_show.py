"""Finding one cell of a results folder and writing its tree (`treebench.results.find`,
`treebench.results.show`), as `treebench show` and `treebench cells` use them."""

from __future__ import annotations

import json
import shutil

import pytest

from treebench.errors import UserError
from treebench.results import find
from treebench.results import show as shown
from treebench.results.cellfile import cells_dir

from runs import run_folder

CONFIG = {
    "name": "tiny", "seed": 0, "datasets": ["iris"],
    "split": {"kind": "kfold", "n_splits": 3}, "binarization": {"method": "raw"},
    "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
    "execution": {"n_jobs": 1, "backend": "sequential"},
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return run_folder(tmp_path_factory.mktemp("show"), CONFIG)


def _ids(folder):
    return sorted(p.stem for p in cells_dir(folder).glob("*.json"))


def test_a_unique_prefix_finds_the_cell_file(folder):
    cid = _ids(folder)[0]
    assert find.cell_file(folder, cid).stem == cid
    assert find.cell_file(folder, cid[:12]).stem == cid


def test_a_prefix_of_several_ids_is_refused_with_the_count(folder, tmp_path):
    copy = tmp_path / "r"
    shutil.copytree(folder, copy)
    cid = _ids(copy)[0]
    shutil.copy(cells_dir(copy) / f"{cid}.json", cells_dir(copy) / f"{cid}0.json")
    with pytest.raises(UserError, match=f"prefix `{cid}` matches 2 cells; give more characters"):
        find.cell_file(copy, cid)
    assert find.cell_file(copy, f"{cid}0").name == f"{cid}0.json"


@pytest.mark.parametrize("text", ["", "../x", "a*", "[ab]", "x y"])
def test_glob_and_path_characters_are_no_id(folder, text):
    with pytest.raises(UserError, match="is not an id"):
        find.cell_file(folder, text)


def test_an_unknown_id_names_the_column_that_lists_them(folder):
    with pytest.raises(UserError, match="no cell with id `ffffffff`.*cell_id column"):
        find.cell_file(folder, "ffffffff")


def test_conditions_find_one_cell_or_list_those_that_match(folder):
    rows, notes = find.matching_cells(folder, ["max_depth=2", "fold=0"])
    assert notes == [] and len(rows) == 1
    assert find.one_cell_id(rows, folder, ["max_depth=2 fold=0"]) in _ids(folder)
    rows, _ = find.matching_cells(folder, ["max_depth=2"])
    with pytest.raises(UserError, match="3 cells match max_depth=2, show takes one"):
        find.one_cell_id(rows, folder, ["max_depth=2"])
    rows, _ = find.matching_cells(folder, ["max_depth=7"])
    with pytest.raises(UserError, match="no cell matches max_depth=7"):
        find.one_cell_id(rows, folder, ["max_depth=7"])


def test_a_folder_without_results_is_refused(tmp_path):
    with pytest.raises(UserError, match="no results here"):
        find.matching_cells(tmp_path, None)


def test_the_tree_is_written_in_each_format(folder):
    rows, _ = find.matching_cells(folder, ["max_depth=2 fold=0"])
    cell = shown.read_shown(folder, str(rows["cell_id"].iloc[0]))
    text = shown.tree_text(cell, "text")
    assert text.startswith(f"# cell {cell.cell_id}: cart") and "depth 2" in text
    assert "if " in text
    assert json.loads(shown.tree_text(cell, "json"))
    assert shown.tree_text(cell, "dot").startswith("digraph")
    with pytest.raises(UserError, match="--format must be text, json or dot"):
        shown.tree_text(cell, "svg")


def test_the_request_names_the_cell_one_way(folder):
    with pytest.raises(UserError, match="cell id or --where"):
        shown.check_request(None, None, "text")
    with pytest.raises(UserError, match="cell id or --where"):
        shown.check_request("abc", ["fold=0"], "text")
    shown.check_request("abc", None, "json")
