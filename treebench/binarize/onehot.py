"""`onehot`: one column per category value (Top-k §5: ℓ values give ℓ binary features)."""

from __future__ import annotations

from treebench.binarize._common import TableBinarizer, check_int, sorted_categories
from treebench.tree.columns import BinaryColumn
from treebench.registry import BINARIZERS
from treebench.errors import ParameterError


@BINARIZERS.register("onehot", tags=("categorical",))
class OneHot(TableBinarizer):
    """One column ``feature == value`` per value seen in training, in sorted value order.

    Columns follow the input feature order, then the natural order of the values (numbers
    numerically, text alphabetically). Missing values and values unseen at fit time map to all
    zeros. ``max_categories`` (optional) turns a feature with more distinct values into an error.
    """

    name = "onehot"

    def __init__(self, max_categories: int | None = None):
        self.max_categories = max_categories

    def _check_params(self):
        check_int(self.name, "max_categories", self.max_categories, 1, allow_none=True)

    def _fit_columns(self, X, y, w):
        out = []
        for f in X.columns:
            s = X[f]
            values = sorted_categories(s.dropna().unique().tolist())
            if self.max_categories is not None and len(values) > self.max_categories:
                raise ParameterError(
                    f"binarizer `onehot`: feature `{f}` has {len(values)} distinct values, more than "
                    f"max_categories={self.max_categories}; raise the cap or treat it as numeric."
                )
            out.append([BinaryColumn(str(f), "==", v) for v in values])
        return out
