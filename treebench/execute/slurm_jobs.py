"""SLURM's commands as the ``slurm`` backend uses them: submit a job array (``sbatch``), read
its tasks' states (``squeue``), a finished task's end (``scontrol show job``), the cluster's
array limits (``scontrol show config``) and cancel (``scancel``).

No accounting database is needed (``sacct`` is not used): a task that ended stays known to
``scontrol`` for the cluster's ``MinJobAge`` (300 s by default); after that its end is
described as unknown. Every failure of a command is one sentence (`UserError`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from treebench.errors import UserError

#: seconds a SLURM command may take before it counts as failed
COMMAND_SECONDS = 60.0
#: the states of a task that is still to run or running (squeue's long names)
LIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING",
               "SUSPENDED", "REQUEUE_FED", "REQUEUE_HOLD", "SIGNALING", "STAGE_OUT"}


def command(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run a SLURM client command; `UserError` when it is missing, hangs or (``check``) fails."""
    path = shutil.which(argv[0])
    if path is None:
        raise UserError(f"--backend slurm needs SLURM's `{argv[0]}` on PATH (run treebench on a "
                        f"login node of the cluster, or load SLURM's module first).")
    try:
        out = subprocess.run([path, *argv[1:]], capture_output=True, text=True,
                             timeout=COMMAND_SECONDS)
    except subprocess.TimeoutExpired:
        raise UserError(f"`{' '.join(argv[:2])}` did not answer within {COMMAND_SECONDS:g} s; "
                        f"is slurmctld up (`scontrol ping`)?") from None
    if check and out.returncode != 0:
        first = (out.stderr.strip() or out.stdout.strip() or f"exit {out.returncode}")
        raise UserError(f"`{' '.join(argv[:2])}` failed: {first.splitlines()[0]}")
    return out


@dataclass(frozen=True)
class ClusterLimits:
    """The cluster's limits on job arrays: indices below ``max_array_size`` and at most
    ``max_job_count`` jobs in the controller at once (array tasks count once started)."""

    max_array_size: int = 1001
    max_job_count: int = 10000


def cluster_limits() -> ClusterLimits:
    """``MaxArraySize`` and ``MaxJobCount`` of the cluster (``scontrol show config``)."""
    text = command("scontrol", "show", "config").stdout
    found = dict(re.findall(r"^(MaxArraySize|MaxJobCount)\s*=\s*(\d+)", text, re.M))
    return ClusterLimits(int(found.get("MaxArraySize", 1001)),
                         int(found.get("MaxJobCount", 10000)))


def submit(script: str) -> str:
    """Submit the batch ``script`` (a path); the job id."""
    out = command("sbatch", "--parsable", script).stdout.strip()
    job = out.split(";")[0]  # "123" or "123;cluster"
    if not job.isdigit():
        raise UserError(f"sbatch answered {out!r}, not a job id.")
    return job


def task_states(jobs: list[str]) -> dict[tuple[str, int], tuple[str, str]]:
    """(job, task index) -> (state, reason) of every task of ``jobs`` that squeue still lists
    (pending tasks expanded); ended tasks are absent."""
    if not jobs:
        return {}
    out = command("squeue", "-h", "-r", "-o", "%i|%T|%r", "-u", _user(), check=False)
    if out.returncode != 0:
        raise UserError(f"`squeue` failed: {(out.stderr.strip() or 'no answer').splitlines()[0]}")
    wanted = set(jobs)
    states: dict[tuple[str, int], tuple[str, str]] = {}
    for line in out.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 3:
            continue
        jid, state, reason = parts
        job, _, task = jid.partition("_")
        if job in wanted and task.isdigit():
            states[(job, int(task))] = (state, reason)
    return states


def task_end(job: str, task: int) -> str:
    """How task ``task`` of array ``job`` ended, as the scheduler says it: ``NODE_FAIL``,
    ``OUT_OF_MEMORY``, ``CANCELLED``, ... with its reason and exit code; a sentence saying the
    scheduler no longer knows it when it forgot it (``MinJobAge``)."""
    out = command("scontrol", "show", "job", "-o", f"{job}_{task}", check=False)
    fields = dict(re.findall(r"(\w+)=(\S+)", out.stdout)) if out.returncode == 0 else {}
    state = fields.get("JobState")
    if not state:
        return f"the scheduler no longer knows job {job}_{task}"
    extra = [f"reason {fields['Reason']}"] if fields.get("Reason", "None") != "None" else []
    if fields.get("ExitCode"):
        extra.append(f"exit code {fields['ExitCode']}")
    return f"{state}" + (f" ({', '.join(extra)})" if extra else "")


def cancel(jobs: list[str]) -> None:
    """Cancel ``jobs`` (best effort)."""
    if jobs:
        command("scancel", *jobs, check=False)


def _user() -> str:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:  # pragma: no cover - a user without a passwd entry
        return str(os.getuid())
