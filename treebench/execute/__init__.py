"""Executing cells: warm joblib workers, a forked child per cell, limits, resume."""
