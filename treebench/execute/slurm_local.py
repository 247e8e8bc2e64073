"""A throw-away SLURM on this machine: ``munged``, ``slurmctld`` and ``slurmd`` on loopback.

For trying the ``slurm`` backend without a cluster, for its tests and for its throughput
benchmark. Needs Debian's ``slurm-wlm`` and ``munge`` packages and root (slurmd starts jobs as
the submitting user). Everything lives in one directory: the configuration
(``slurm.conf``, ``cgroup.conf``), a fresh munge key, the daemons' state, spool, logs and pid
files; the daemons are stopped by their process ids. Client commands (``sbatch``, ``squeue``,
``scontrol``) find this SLURM through ``SLURM_CONF``, which `LocalSlurm.env` sets.

The node is ``localhost`` (``NodeAddr=127.0.0.1``) with the machine's CPUs, process tracking by
``/proc`` (``proctrack/linuxproc``), no task plug-in and no cgroups, no accounting database
(``sacct`` does not work: the backend reads job states with ``scontrol``, and finished jobs
stay known for ``MinJobAge`` seconds).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

#: the programs a local SLURM needs
PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel")
#: seconds to wait for the node to be idle after the daemons start
START_SECONDS = 60.0


def missing_programs() -> list[str]:
    """The programs of `PROGRAMS` that are not on PATH (or in /usr/sbin)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return [p for p in PROGRAMS if shutil.which(p, path=path) is None]


def _free_ports(n: int) -> list[int]:
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _program(name: str) -> str:
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    found = shutil.which(name, path=path)
    if found is None:
        raise FileNotFoundError(name)
    return found


class LocalSlurm:
    """One SLURM cluster on loopback in ``root`` (a new temporary directory by default).

    ``cpus`` CPUs on the node, ``max_array_size`` the cluster's ``MaxArraySize``,
    ``min_job_age`` seconds a finished job stays known to ``scontrol``, ``kill_wait`` seconds
    between a task's SIGTERM and its SIGKILL, ``cred_expire`` the job credentials' lifetime,
    which is also how long a requeued task waits before it may start again (SLURM's default:
    120 s). Use as a context
    manager, or `start` and `stop`."""

    def __init__(self, root: str | Path | None = None, *, cpus: int | None = None,
                 max_array_size: int = 1001, min_job_age: int = 3600, kill_wait: int = 5,
                 cred_expire: int = 15):
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="slurm-"))
        self.cpus = cpus or os.cpu_count() or 1
        self.max_array_size = max_array_size
        self.min_job_age = min_job_age
        self.kill_wait = kill_wait
        self.cred_expire = cred_expire  # also the delay before a requeued job may start again
        self.node = "localhost"
        self.procs: dict[str, int] = {}
        self.conf = self.root / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket.2"

    @property
    def env(self) -> dict[str, str]:
        """Environment variables that point SLURM's client commands at this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    def write_config(self) -> None:
        r = self.root
        for sub in ("state", "spool", "log", "munge"):
            (r / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(r / "munge", 0o700)
        key = r / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            os.chmod(key, 0o400)
        ctld_port, slurmd_port = _free_ports(2)
        user = _user()
        mem = _memory_mb()
        self.conf.write_text(f"""\
ClusterName=treebench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser={user}
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={self.munge_socket},cred_expire={self.cred_expire}
CredType=cred/munge
StateSaveLocation={r / 'state'}
SlurmdSpoolDir={r / 'spool'}
SlurmctldPidFile={r / 'slurmctld.pid'}
SlurmdPidFile={r / 'slurmd.pid'}
SlurmctldLogFile={r / 'log' / 'slurmctld.log'}
SlurmdLogFile={r / 'log' / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=1
MinJobAge={self.min_job_age}
KillWait={self.kill_wait}
MaxArraySize={self.max_array_size}
SchedulerParameters=sched_interval=2
SlurmctldParameters=enable_configless
SlurmdTimeout=30
InactiveLimit=0
NodeName={self.node} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={mem} State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")
        (r / "cgroup.conf").write_text("CgroupPlugin=autodetect\nIgnoreSystemd=yes\n")

    def start(self) -> LocalSlurm:
        """Write the configuration, start the three daemons and wait until the node is idle."""
        self.write_config()
        r = self.root
        self._spawn("munged", [_program("munged"), "-F", "--force",
                               f"--socket={self.munge_socket}",
                               f"--key-file={r / 'munge' / 'munge.key'}",
                               f"--pid-file={r / 'munge' / 'munged.pid'}",
                               f"--log-file={r / 'log' / 'munged.log'}",
                               f"--seed-file={r / 'munge' / 'munged.seed'}"])
        _wait_for(lambda: self.munge_socket.exists(), 10, "munged's socket")
        self._spawn("slurmctld", [_program("slurmctld"), "-D", "-i", "-f", str(self.conf)])
        self._spawn("slurmd", [_program("slurmd"), "-D", "-N", self.node, "-f", str(self.conf)])
        try:
            _wait_for(lambda: self.node_state() == "idle", START_SECONDS, "the node to be idle")
        except TimeoutError:
            self.stop()
            raise
        return self

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.root / "log" / f"{name}.out", "ab")  # noqa: SIM115 - the child owns it
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **self.env}, start_new_session=True)
        log.close()
        self.procs[name] = proc.pid
        self._popen = getattr(self, "_popen", {})
        self._popen[name] = proc

    def run(self, *argv: str, check: bool = True) -> str:
        """Run a SLURM client command against this cluster; its standard output."""
        out = subprocess.run([_program(argv[0]), *argv[1:]], capture_output=True, text=True,
                             env={**os.environ, **self.env}, timeout=60)
        if check and out.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {out.stderr.strip()}")
        return out.stdout

    def node_state(self) -> str:
        """The node's state as ``sinfo`` prints it (``idle``, ``alloc``, ``down*``, ...)."""
        try:
            return self.run("sinfo", "-h", "-N", "-o", "%t", check=False).strip()
        except (OSError, subprocess.TimeoutExpired):
            return ""

    def stop(self) -> None:
        """Stop the daemons (by process id): slurmd, slurmctld, munged; leave the directory."""
        for name in ("slurmd", "slurmctld", "munged"):
            proc = getattr(self, "_popen", {}).get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.procs.clear()

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def _memory_mb() -> int:
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):  # pragma: no cover - not Linux
        return 1024
    return max(1024, int(pages / 2**20 * 0.9))


def _wait_for(ok, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if ok():
            return
        time.sleep(0.25)
    raise TimeoutError(f"gave up waiting {seconds:g} s for {what}")
