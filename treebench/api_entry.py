"""The command line's process: SIGTERM handled like Ctrl-C and the exit codes of a stopped
command (`treebench.execute.lifetime`), the environment variables checked and set
(`treebench.envvars`).

Every `treebench` command passes through here, `treebench --help` included, so this module
imports nothing else: the rest of the API is in `treebench.api_light` (what answers without
loading the config schema, the executors or the report) and `treebench.api`.
"""

from __future__ import annotations

from treebench import envvars
from treebench.execute.lifetime import (  # noqa: F401 - the entry point's API
    TERMINATED,
    exit_code_of,
    sigterm_as_interrupt,
    terminated,
)


def check_environment() -> None:
    """Raise `treebench.envvars.EnvironmentVariableError` (a `UserError`) for the first
    treebench variable whose value its reader would refuse; numba and OpenMP read theirs
    when imported, treebench its own when used."""
    envvars.check()


def go_offline() -> None:
    """Never touch the network again, in this process and in the workers it starts (sets
    TREEBENCH_OFFLINE, as ``--offline`` does)."""
    envvars.set_flag("TREEBENCH_OFFLINE")
