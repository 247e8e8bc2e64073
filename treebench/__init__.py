"""treebench: an experiment runner for decision-tree learning research.

Importing the package is cheap; heavy modules (numpy, pandas, scikit-learn, numba) load only
when a command needs them. Every registered estimator of treebench can be imported from here,
as scikit-learn users expect (``from treebench import TopKClassifier, CARTClassifier``): the
names resolve lazily through the algorithm registry, on first use.
"""

from __future__ import annotations

from typing import Any

from treebench.registry import ALGORITHMS

__version__ = "0.1.0"


def _estimators() -> dict[str, Any]:
    """Class name → class of every registered treebench estimator (test-only ones excluded)."""
    out: dict[str, Any] = {}
    for entry in ALGORITHMS:
        obj = entry.obj
        if "test" in entry.tags or not isinstance(obj, type):
            continue
        if not getattr(obj, "__module__", "").startswith("treebench."):
            continue  # scikit-learn's own classes registered as baselines stay scikit-learn's
        out[obj.__name__] = obj
    return out


def __getattr__(name: str) -> Any:
    # only class names: `from treebench import api` asks for `api` here first, and must not
    # load the registry (and scikit-learn, numba) on its way to the submodule
    if not name[:1].isupper():
        raise AttributeError(f"module 'treebench' has no attribute {name!r}")
    found = _estimators().get(name)
    if found is None:
        raise AttributeError(f"module 'treebench' has no attribute {name!r}")
    return found


def __dir__() -> list[str]:
    return sorted(["__version__", *_estimators()])


__all__ = ["__version__"]
