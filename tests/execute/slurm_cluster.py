"""A real SLURM for the tests: ``munged``, ``slurmctld`` and ``slurmd`` on loopback, configured
in a temporary directory (`treebench.execute.slurm_local.LocalSlurm`), stopped by pid at the
end. Tests that use it are skipped, with the reason, where SLURM is not installed or the
tests do not run as root (slurmd starts jobs as their user)."""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from treebench.execute.slurm_local import LocalSlurm, missing_programs


def skip_reason() -> str | None:
    """Why the SLURM tests cannot run here, or None."""
    missing = missing_programs()
    if missing:
        return (f"SLURM is not installed ({', '.join(missing)} missing; "
                f"`apt-get install slurm-wlm munge`)")
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs"
    return None


@pytest.fixture(scope="session")
def slurm_session(tmp_path_factory, request) -> Iterator[LocalSlurm]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    # one SLURM on this machine at a time: test processes run side by side (pytest -n 2), and
    # two local clusters on one host share munge and the node's name; the second waits here
    lock = open(Path(tempfile.gettempdir()) / "treebench-slurm-tests.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    request.addfinalizer(lock.close)  # closing the file releases the lock, after the cluster
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm"), cpus=2, kill_wait=2)
    cluster.start()
    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(cluster.conf)
    try:
        yield cluster
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
        cluster.stop()


@pytest.fixture
def slurm(slurm_session: LocalSlurm) -> Iterator[LocalSlurm]:
    """The session's SLURM, idle; every job a test leaves is cancelled after it."""
    yield slurm_session
    slurm_session.run("scancel", "-u", "root", check=False)
    if slurm_session.node_state().startswith(("down", "drain")):
        slurm_session.run("scontrol", "update", f"nodename={slurm_session.node}",
                          "state=resume", check=False)
    end = time.monotonic() + 60
    while time.monotonic() < end:
        if not slurm_session.run("squeue", "-h", check=False).strip() \
                and slurm_session.node_state() == "idle":
            break
        time.sleep(0.5)
