"""A cell's limits and the process-level means of enforcing them, in one place.

* ``limits.time`` seconds count from the start of the fit (after the learner's warm-up and the
  data preparation) and cover the fit and its scoring. Learners with a deadline stop by
  themselves; a process still running at `hard_limit` (the limit plus a grace period of 10 %,
  at least 2 s) is killed and the cell is a ``timeout`` row.
* ``limits.memory`` megabytes on top of the fitting process's resident set when the fit
  starts (imports and loaded data are not charged to the cell). The fitting process lowers its
  own soft ``RLIMIT_AS`` to its address space plus the limit (allocations beyond it raise
  ``MemoryError``: an ``oom`` row), and whoever watches it reads its resident set every
  `POLL_SECONDS` and kills it when the cell goes over.
* ``limits.prepare`` seconds bound the data preparation; a cell over it is a ``timeout`` whose
  error says so, and its fit does not run.

The rest are the Linux process helpers both runners (`treebench.execute.pool`,
`treebench.execute.supervise`) share: resident-set readings, killing, dying with the parent,
and the reading of a process's exit status as a row's status.
"""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from treebench.execute.lifetime import terminated

#: seconds between two readings of a fitting process's resident set
POLL_SECONDS = 0.02


def hard_limit(time_limit: Any) -> float | None:
    """Seconds after the fit starts at which a cell is killed: the limit plus a grace period
    (10 %, at least 2 s) for learners that check their own deadline."""
    return None if not time_limit else float(time_limit) + max(2.0, 0.1 * float(time_limit))


@dataclass(frozen=True)
class Limits:
    """A cell's ``limits``: ``time`` and ``prepare`` in seconds, ``memory`` in megabytes;
    None (or 0) where the cell sets none."""

    time: float | None = None
    memory: float | None = None
    prepare: float | None = None
    repeat: int = 1  # fits of the cell (`repeat:` of the config), each with ``time``

    @classmethod
    def of(cls, limits: dict[str, Any] | None) -> Limits:
        limits = limits or {}
        return cls(time=limits.get("time"), memory=limits.get("memory"),
                   prepare=limits.get("prepare"), repeat=int(limits.get("repeat") or 1))

    @property
    def hard(self) -> float | None:
        """`hard_limit` of ``time``, once per fit of the cell (``repeat``)."""
        hard = hard_limit(self.time)
        return None if hard is None else hard * max(self.repeat, 1)

    def prepare_verdict(self, seconds: float) -> str | None:
        """The error of a cell whose preparation took ``seconds``, None within the budget."""
        if not self.prepare or seconds <= float(self.prepare):
            return None
        return (f"data preparation took {seconds:.3g} s, over its budget limits.prepare = "
                f"{float(self.prepare):g} s (the fit did not run)")

    def wait_seconds(self, elapsed: float) -> float | None:
        """How long a watcher may wait, ``elapsed`` seconds into the fit, before it must look
        again (None: no limit to watch)."""
        timeout = POLL_SECONDS if self.memory else None
        hard = self.hard
        if hard is not None:
            left = max(hard - elapsed, 0.0)
            timeout = left if timeout is None else min(timeout, left)
        return timeout

    def verdict(self, elapsed: float, pid: int, base_kb: int) -> tuple[str, str] | None:
        """``(status, error)`` when the process ``pid``, ``elapsed`` seconds into its fit, is
        over the time limit or ``memory`` megabytes above ``base_kb`` (its resident set when
        the fit started); None while within them."""
        hard = self.hard
        if hard is not None and elapsed >= hard:
            return ("timeout", f"killed after {hard:.3g} s, over the fit's time limit "
                    f"(limits.time plus a grace period)")
        if self.memory:
            rss = vm_kb(pid, "VmRSS:")
            if rss and rss - base_kb > float(self.memory) * 1024:
                return ("oom", f"killed above the {float(self.memory):g} MB memory limit")
        return None

    @contextmanager
    def address_space(self) -> Iterator[None]:
        """Within the block, this process's soft ``RLIMIT_AS`` is its current address space
        plus ``memory`` megabytes (unless already lower); restored after."""
        if not self.memory:
            yield
            return
        old = resource.getrlimit(resource.RLIMIT_AS)
        cap = int(vm_kb(os.getpid(), "VmSize:") * 1024 + float(self.memory) * 2**20)
        if old[0] == resource.RLIM_INFINITY or cap < old[0]:
            resource.setrlimit(resource.RLIMIT_AS, (cap, old[1]))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_AS, old)


def vm_kb(pid: int, key: str) -> int:
    """The ``key`` line (``VmRSS:``, ``VmHWM:``, ``VmSize:``) of ``/proc/<pid>/status`` in
    kB; 0 when it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(key.encode()):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def reset_peak() -> bool:
    """Reset this process's resident-set high-water mark (``VmHWM``) to its current resident
    set; False where the system does not allow it."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # resets VmHWM to the current resident set (Linux >= 4.0)
        return True
    except OSError:  # pragma: no cover - not Linux, or not allowed
        return False


def kill_pid(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def interrupted(status: int) -> bool:
    """Whether a process's exit ``status`` is a death by Ctrl-C (SIGINT), or by the SIGTERM
    this process received too (a signal to the whole process group): an interrupted cell,
    not a crashed one."""
    if not os.WIFSIGNALED(status):
        return False
    sig = os.WTERMSIG(status)
    return sig == signal.SIGINT or (sig == signal.SIGTERM and terminated())


def exit_verdict(status: int) -> tuple[str, str]:
    """``(status, error)`` of a cell whose process exited with ``status`` and no result: exit
    code 3 is a ``MemoryError`` (``oom``), anything else a ``crashed`` row."""
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 3:
        return "oom", "MemoryError in the cell process"
    return "crashed", describe_exit(status)


def describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        hint = " (possibly the system's out-of-memory killer)" if sig == signal.SIGKILL else ""
        return f"the cell process died from signal {name}{hint}"
    return f"the cell process exited with code {os.WEXITSTATUS(status)} and no result"
