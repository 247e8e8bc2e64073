"""Every estimator prints its rules in the terms of the features it was fitted on: through a
treebench binarizer in a Pipeline, columns print as the conditions they stand for."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline

from treebench.binarize import make_binarizer
from treebench.tree.export import conditions_from_names


def _frame():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.integers(18, 80, 300).astype(float),
                      "score": rng.normal(50, 10, 300)})
    y = ((X["age"] > 40) ^ (X["score"] > 55)).astype(int)
    return X, y


@pytest.mark.parametrize("name", ["TopKClassifier", "GOSDTClassifier", "DPDTClassifier",
                                  "NGIECARTClassifier", "CARTClassifier"])
def test_rules_through_a_pipeline_name_the_original_features(name):
    import treebench

    X, y = _frame()
    est = getattr(treebench, name)()
    if "max_depth" in est.get_params():
        est.set_params(max_depth=2)
    pipe = make_pipeline(make_binarizer("quantile", {"max_splits": 4}), est)
    pipe.set_output(transform="pandas").fit(X, y)
    text = pipe[-1].export_text()
    assert "age" in text or "score" in text
    assert "<= 0.5" not in text and " > 0.5" not in text  # never `age >= 31 <= 0.5`
    for line in text.splitlines():
        if "if " in line:
            assert any(op in line for op in (" >= ", " < ")), line
    assert str(pipe[-1]).endswith(text) and "<pre>" in pipe[-1]._repr_html_()
    assert json.dumps(pipe[-1].to_dict()) and pipe[-1].export_graphviz().startswith("digraph")


def test_names_that_are_conditions_become_branch_texts():
    feats, conds = conditions_from_names(["age >= 31.5", "color == red", "smoker = 1",
                                          "score < 7", "score is missing", "plain"])
    assert feats == ["age", "color", "smoker", "score", "score", "plain"]
    assert conds[0] == ("age < 31.5", "age >= 31.5")
    assert conds[1] == ("color != red", "color == red")
    assert conds[2] == ("smoker = 0", "smoker = 1")
    assert conds[3] == ("score >= 7 or score is missing", "score < 7")
    assert conds[4] == ("score is not missing", "score is missing")
    assert conds[5] == ("plain = 0", "plain = 1")
    assert conditions_from_names(["plain"], binary=False)[1] == [None]
