"""Executing cells: warm joblib workers, a forked child per cell, limits, resume; the cells each
config defined (`experiments`), in-cell tuning (`tune`) and the plan cache (`plan_cache`)."""
