"""Two datasets with near-identical names: the catalog's `breast-cancer` (Ljubljana) and the
embedded `breast_cancer` (Wisconsin). Each says which it is and points at the other, and the
catalog's one has an unambiguous alias."""

from __future__ import annotations

from treebench.data.catalog import get_entry
from treebench.registry import DATASETS


def test_breast_cancer_names_tell_the_two_datasets_apart():
    entry = get_entry("breast-cancer-ljubljana")
    assert entry.name == "breast-cancer"
    assert "breast_cancer" in entry.spec["title"] and "Wisconsin" in entry.spec["title"]
    assert "breast_cancer" in entry.spec["notes"]
    assert "breast-cancer" in (DATASETS.get("breast_cancer").description or "")
