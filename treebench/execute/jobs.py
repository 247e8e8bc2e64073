"""How many workers an ``n_jobs`` setting means; shared by the local executor and the cluster
runner, so that neither imports the other."""

from __future__ import annotations

import os

from treebench.errors import UserError


def effective_n_jobs(n_jobs: int) -> int:
    """The number of workers ``n_jobs`` means, as in joblib: positive counts as given, -1 all
    cores, -2 all but one, and so on (at least 1). 0 is refused earlier, at validation."""
    if n_jobs > 0:
        return n_jobs
    return max((os.cpu_count() or 1) + 1 + n_jobs, 1)


def check_n_jobs(n_jobs: int) -> None:
    if n_jobs == 0:
        raise UserError(
            "--n-jobs 0 runs nothing; give a positive number of workers, or -1 for all cores "
            "(-2 for all but one, as in joblib)."
        )
