"""The lock of a results folder: one treebench process writes a folder at a time.

``with results_lock(out): ...`` takes an exclusive ``flock`` on ``<out>/.lock`` for the block;
`treebench run`, `treebench sweep` and `treebench report` take it (the same process may take
it again inside, e.g. a run writing its report). The kernel releases it when the process ends,
however it ends.

Three things keep a folder from being locked for good:

* **No child holds it.** The lock's descriptor is opened close-on-exec (children that exec,
  such as loky or dask workers, never get it) and closed in every child forked without exec
  (``os.register_at_fork``): the report's figure workers, the cell pool's workers and the
  per-cell children never hold it, so none of them can keep it after the driver is killed.
* **The owner is on file.** The lock file records who holds it: process id, start time
  (``/proc/<pid>/stat`` field 22, so a reused process id is not taken for the owner), boot id,
  host and command. It is emptied when the lock is released normally, so a record found on
  taking the lock means the previous owner was killed.
* **Stale locks are taken over.** When the lock is held and its recorded owner is no longer
  running, the processes still holding it started after that owner on this machine: its
  leftover children (e.g. a process that forked without running Python's fork hooks). They
  are stopped (SIGKILL) and the lock taken, with one line on stderr saying so. A live owner,
  an unknown one (no record) or holders that cannot be the owner's children make the run
  stop with one sentence naming the processes.

On taking the lock, temporary files that a killed writer left (``.<name>.<pid>.tmp`` in the
folder, ``cells/``, ``report/``, ``report/figures/`` and ``report/tables/``) are removed when
no live process has that id. A sub-folder that is a symbolic link is left alone: nothing
outside the results folder is removed.

The lock file is opened without following a link (``O_NOFOLLOW``). A ``.lock`` that is no
lock file of the folder (a symbolic link, say ``.lock -> ~/.bashrc`` in an unpacked archive, a
FIFO, a device, or a file with other hard links) is replaced by a new empty lock file, with one
line on stderr; what it pointed to is never opened, written or emptied. Whoever takes the lock
checks, once it holds it, that the file it locked is still the folder's ``.lock`` (another
process may have replaced it meanwhile), and opens it again when not.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import signal
import socket
import stat
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from treebench.utils.atomic import kind_of, temp_path
from treebench.errors import UserError

LOCK_NAME = ".lock"
#: sub-folders (besides the folder itself) where writers leave ``.<name>.<pid>.tmp`` files
TEMP_DIRS = ("", "cells", "report", "report/figures", "report/tables")
_TEMP = re.compile(r"^\..+\.(\d+)\.tmp$")
#: seconds to wait for stopped leftover holders to let go of the lock
TAKEOVER_SECONDS = 5.0
#: times a lock file replaced under a taker is opened again before giving up
REOPEN_TRIES = 20

#: locks this process holds: resolved folder -> [descriptor, depth]
_HELD: dict[str, list[int]] = {}


def _close_in_child() -> None:
    """After a fork without exec: the child must not keep the parent's locks alive."""
    for fd, _ in _HELD.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_in_child)


# ----------------------------------------------------------------------------- processes
def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (``/proc/<pid>/stat``
    field 22), or None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ": fields 3, 4, ...
    try:
        if fields[0] == "Z":  # a zombie has ended: it holds nothing any more
            return None
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
    except OSError:
        return None


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (a zombie does not count)."""
    if process_start(pid) is not None:
        return True
    if Path("/proc/self/stat").exists():
        return False
    try:  # no /proc: ask the kernel
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class Owner:
    """Who holds a results folder's lock (the lock file's content)."""

    pid: int
    start: int | None
    boot: str | None
    host: str
    command: str

    @classmethod
    def me(cls) -> Owner:
        prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
        argv = ["treebench" if prog in ("cli.py", "__main__.py") else prog, *sys.argv[1:]]
        return cls(os.getpid(), process_start(os.getpid()), boot_id(), socket.gethostname(),
                   " ".join(argv)[:300])

    def here(self) -> bool:
        return self.host == socket.gethostname() and self.boot == boot_id()

    def alive(self) -> bool:
        """Still running: on this machine, the same process id with the same start time."""
        if self.host != socket.gethostname():
            return True  # cannot tell: assume it runs
        if self.boot != boot_id():
            return False
        return process_start(self.pid) == self.start if self.start is not None \
            else pid_alive(self.pid)

    def describe(self) -> str:
        where = "" if self.host == socket.gethostname() else f" on {self.host}"
        return f"pid {self.pid}{where}" + (f", `{self.command}`" if self.command else "")


def _read_owner(fd: int) -> Owner | None:
    try:
        raw = os.pread(fd, 4096, 0)
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
        return Owner(int(data["pid"]), data.get("start"), data.get("boot"),
                     str(data.get("host", "")), str(data.get("command", "")))
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _write_owner(fd: int, owner: Owner | None) -> None:
    data = b"" if owner is None else (json.dumps(asdict(owner)) + "\n").encode("utf-8")
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        if data:
            os.pwrite(fd, data, 0)


def holders(path: Path) -> list[int]:
    """Processes other than this one with ``path`` open (those this user may inspect)."""
    try:
        st = path.lstat()  # a link is no lock file: nobody holds it
    except OSError:
        return []
    if not stat.S_ISREG(st.st_mode):
        return []
    want = (st.st_dev, st.st_ino)
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        pid = int(proc.name)
        if pid == os.getpid():
            continue
        try:
            fds = list((proc / "fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                if not os.readlink(fd).endswith(LOCK_NAME):
                    continue
                s = fd.stat()
            except OSError:
                continue
            if (s.st_dev, s.st_ino) == want:
                found.append(pid)
                break
    return found


# ----------------------------------------------------------------------------- the lock
def _say(text: str) -> None:
    print(f"treebench: {text}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def results_lock(out: str | Path, *, hint: str = "wait for it or give another --out.",
                 optional: bool = False, say: Callable[[str], None] = _say) -> Iterator[None]:
    """Hold the lock of the results folder ``out`` for the block (see the module's text).

    Raise `UserError` (one sentence ending with ``hint``) when a live treebench process holds
    it. ``optional``: a folder where the lock file cannot be created (read-only) is used
    without the lock, as a report of someone else's results does. ``say`` receives the one
    line telling that a stale lock was taken over or a killed run's files were removed."""
    out = Path(out)
    key = str(out.resolve())
    if key in _HELD:  # this process holds it already (a run writing its report)
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    replaced: list[str] = []
    for _ in range(REOPEN_TRIES):
        fd = _open(out, optional, replaced)
        if fd is None:
            for line in replaced:
                say(line)
            yield
            return
        try:
            stopped = _acquire(fd, out, hint)
            if _is_current(fd, out / LOCK_NAME):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # replaced since it was opened: the lock of an old file is no lock
    else:
        raise UserError(f"{out}: its lock file {LOCK_NAME} keeps being replaced by another "
                        f"process; {hint}")
    try:
        previous = _read_owner(fd)
        _write_owner(fd, Owner.me())
        _HELD[key] = [fd, 1]
    except BaseException:
        os.close(fd)
        raise
    try:
        for line in replaced:
            say(line)
        removed = remove_stale_temp_files(out)
        note = _takeover_note(out, previous, stopped, removed)
        if note:
            say(note)
        yield
    finally:
        _HELD.pop(key, None)
        _write_owner(fd, None)  # released normally: no record, no stale-lock note next time
        os.close(fd)


def _open(out: Path, optional: bool, replaced: list[str]) -> int | None:
    """A descriptor of the lock file of ``out``, a regular file of the folder with no other
    name; whatever else is under its name is replaced (a line in ``replaced`` says so)."""
    path = out / LOCK_NAME
    try:
        if not optional:
            out.mkdir(parents=True, exist_ok=True)
        for _ in range(REOPEN_TRIES):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                st = None
            if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
                _replace(path, st, replaced)  # a link, FIFO or device is never opened
                continue
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a link appeared since the lstat
                    continue
                raise
            fst = os.fstat(fd)
            if stat.S_ISREG(fst.st_mode) and fst.st_nlink <= 1:
                return fd
            try:  # another name of this file may lie outside the folder: not ours to write
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return fd  # a running treebench holds it: ask it (`_acquire`)
            try:
                _replace(path, fst, replaced)
            finally:
                os.close(fd)
        raise OSError(errno.EAGAIN, "it keeps being replaced by another process")
    except OSError as exc:
        if optional:
            return None
        reason = (exc.strerror or type(exc).__name__).lower()
        raise UserError(f"{out}: cannot create the lock file {LOCK_NAME} ({reason}); give a "
                        f"writable directory with --out.") from None


def _replace(path: Path, st: os.stat_result, replaced: list[str]) -> None:
    """Put a new empty lock file under ``path`` in place of the link, special file or
    hard-linked file ``st`` there; what it pointed to is left untouched."""
    if stat.S_ISLNK(st.st_mode):
        try:
            what = f"a symbolic link to {os.readlink(path)}"
        except OSError:
            what = "a symbolic link"
    elif stat.S_ISREG(st.st_mode):
        what = f"a file with {st.st_nlink} names (hard links)"
    else:
        what = kind_of(st.st_mode)
    tmp = temp_path(path)
    tmp.unlink(missing_ok=True)
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644))
    try:
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    untouched = " (its target is left untouched)" if stat.S_ISLNK(st.st_mode) else ""
    replaced.append(f"{path} was {what}, not a lock file; replaced it by a new lock "
                    f"file{untouched}.")


def _is_current(fd: int, path: Path) -> bool:
    """Whether the file open as ``fd`` is still the one named ``path``."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)


def _acquire(fd: int, out: Path, hint: str) -> list[int]:
    """Take the lock, stopping the leftover holders of a dead owner; returns their pids."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return []
    except BlockingIOError:
        pass
    owner = _read_owner(fd)
    held_by = holders(out / LOCK_NAME)
    if owner is not None and owner.alive():
        raise UserError(f"{out}: another treebench run ({owner.describe()}) is writing to this "
                        f"results directory; {hint}")
    strays = _strays(owner, held_by)
    if not strays or len(strays) < len(held_by):
        raise UserError(_busy(out, held_by, hint))
    for pid in strays:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + TAKEOVER_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return strays
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise UserError(_busy(out, held_by, hint)) from None
            time.sleep(0.02)


def _busy(out: Path, held_by: list[int], hint: str) -> str:
    if not held_by:
        return f"{out}: another treebench run is writing to this results directory; {hint}"
    pids = " ".join(map(str, held_by))
    return (f"{out}: another treebench run is writing to this results directory (pid {pids} "
            f"holds its lock; if no treebench run is going on, stop it with `kill {pids}`); "
            f"{hint}")


def _strays(owner: Owner | None, held_by: list[int]) -> list[int]:
    """The holders that are leftovers of the dead ``owner``: processes on this machine started
    no earlier than it (its children keep running when it is killed)."""
    if owner is None or owner.start is None or not owner.here():
        return []
    out = []
    for pid in held_by:
        start = process_start(pid)
        if start is not None and start >= owner.start:
            out.append(pid)
    return out


def _takeover_note(out: Path, previous: Owner | None, stopped: list[int], removed: int
                   ) -> str | None:
    if previous is None and not stopped and not removed:
        return None
    what = []
    if stopped:
        what.append(f"stopped {len(stopped)} leftover process(es) of it that still held the "
                    f"lock (pid {' '.join(map(str, stopped))})")
    if removed:
        what.append(f"removed {removed} temporary file(s) it left")
    if previous is not None and previous.pid != os.getpid():
        head = (f"{out}: took over from a treebench process that ended without releasing "
                f"this folder ({previous.describe()}, killed?)")
    else:
        head = f"{out}: a killed treebench process left this folder unfinished"
    return head + (": " + " and ".join(what) if what else "") + "."


def remove_stale_temp_files(out: str | Path) -> int:
    """Remove the ``.<name>.<pid>.tmp`` files of writers that no longer run (this process's
    own id counts as not running: it has written nothing here yet). Returns how many."""
    n = 0
    me = os.getpid()
    for sub in TEMP_DIRS:
        d = Path(out) / sub
        if not _inside(Path(out), sub):
            continue
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            m = _TEMP.match(name)
            if m is None:
                continue
            pid = int(m.group(1))
            if pid != me and pid_alive(pid):
                continue
            try:
                (d / name).unlink()
                n += 1
            except OSError:
                pass
    return n


def _inside(out: Path, sub: str) -> bool:
    """Whether the sub-folder ``sub`` of ``out`` is a folder of ``out`` (no part of its path
    below ``out`` is a symbolic link)."""
    d = out
    for part in Path(sub).parts:
        d = d / part
        try:
            if not stat.S_ISDIR(os.lstat(d).st_mode):
                return False
        except OSError:
            return False
    return True
