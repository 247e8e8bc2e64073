"""treebench: an experiment runner for decision-tree learning research.

Importing the package is cheap; heavy modules (numpy, pandas, scikit-learn, numba) load only
when a command needs them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
