"""How treebench's processes stop: SIGTERM handled like Ctrl-C, workers that die with the
driver.

* **SIGTERM** (what batch schedulers and ``kill`` send) raises `Terminated` in the driver's
  main thread. It is a `KeyboardInterrupt`, so it takes Ctrl-C's path everywhere: workers are
  stopped, finished cells are kept, the tables are rebuilt from them, and the command exits
  with 143 (128 + 15) instead of Ctrl-C's 130. A second SIGTERM ends the process at once.
* **Never inside a fork hook.** ``os.fork`` runs hooks (``os.register_at_fork``: logging
  takes its lock before the fork and releases it after); an exception raised in one is printed
  as "Exception ignored in ..." and lost, and the hook is left half done (logging's lock still
  held). So, while the handler is installed, a thread that forks blocks SIGTERM around the
  hooks, and a handler that runs inside one all the same (a SIGTERM received just before the
  fork, or by another thread) sends the signal back to its thread, where it waits out the
  fork: `Terminated` is raised in the code that called ``os.fork``, right after it returns.
* **Workers die with the driver.** Processes forked without exec ask the kernel to kill them
  when the process that forked them dies (``PR_SET_PDEATHSIG``) and check that it has not
  died already; processes started by exec (loky's workers) get `watch_parent`, a thread that
  waits on the driver's pidfd and ends the worker within a fraction of a second of the
  driver's death, however it died (SIGKILL included).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import logging  # noqa: F401 - its fork hooks must be registered before `_watch_forks`'s
import os
import signal
import threading
from collections.abc import Iterator

_PR_SET_PDEATHSIG = 1
INTERRUPTED = 130  # 128 + SIGINT
TERMINATED = 143  # 128 + SIGTERM


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM: stop as for Ctrl-C, exit with `TERMINATED`."""

    exit_code = TERMINATED


def exit_code_of(exc: BaseException) -> int:
    """The exit code of a command stopped by ``exc``: `TERMINATED` for `Terminated`, and for
    any KeyboardInterrupt once SIGTERM was received (code that caught the `Terminated` may
    raise a plain KeyboardInterrupt on its way out), else `INTERRUPTED`."""
    return TERMINATED if isinstance(exc, Terminated) or terminated() else INTERRUPTED


_RECEIVED: list[int] = []  # the SIGTERMs handled by `sigterm_as_interrupt`


def terminated() -> bool:
    """Whether this process received SIGTERM under `sigterm_as_interrupt` (typer turns any
    KeyboardInterrupt into exit 130; the entry point makes that 143 when this is true)."""
    return bool(_RECEIVED)


def stop_if_terminated() -> None:
    """Raise `Terminated` if this process received SIGTERM. The loops that run cells call it
    at their safe points (before a cell starts, after a cell's record is taken, when a fit's
    wait wakes up): the handler's exception can be lost when it lands in a finalizer or a
    lock release ("Exception ignored in ..."), and the run must stop all the same."""
    if _RECEIVED:
        raise Terminated()


_FORKING: set[int] = set()  # the threads running os.fork's hooks


def _fork_begins() -> None:
    _FORKING.add(threading.get_ident())


def _fork_ends() -> None:
    _FORKING.discard(threading.get_ident())


_FORK_HOOKS = (_fork_begins.__code__, _fork_ends.__code__)
_WATCHING = {"hooks": False, "blocking": False}  # what `_watch_forks` registered


def _watch_forks() -> None:
    """Register the fork hooks, once per process. Before-hooks run in the reverse order of
    their registration and after-hooks in order, so those registered here enclose every hook
    registered earlier (logging's, imported with this module, among them): first SIGTERM is
    blocked in the forking thread, then `_fork_begins` marks it; after the fork `_fork_ends`
    unmarks it, then SIGTERM is unblocked. Blocking and unblocking are calls into the C library
    with no Python code around them: Python runs signal handlers only between its own
    instructions, so the handler of a SIGTERM waiting for the unblocking runs once ``os.fork``
    has returned. Where the C library is not at hand, SIGTERM is not blocked and a SIGTERM
    met in a hook is only recorded (`stop_if_terminated` raises it at the next safe point)."""
    if _WATCHING["hooks"]:
        return
    _WATCHING["hooks"] = True
    os.register_at_fork(before=_fork_begins, after_in_parent=_fork_ends, after_in_child=_fork_ends)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        sigterm = ctypes.create_string_buffer(1024)  # a sigset_t (128 bytes with glibc)
        libc.sigemptyset(sigterm)
        libc.sigaddset(sigterm, signal.SIGTERM)
        block, unblock = (functools.partial(libc.pthread_sigmask, how, sigterm, None)
                          for how in (signal.SIG_BLOCK, signal.SIG_UNBLOCK))
    except (OSError, AttributeError):  # pragma: no cover - no C library with these functions
        return
    os.register_at_fork(before=block, after_in_parent=unblock, after_in_child=unblock)
    _WATCHING["blocking"] = True


def _on_sigterm(signum, frame) -> None:
    if threading.get_ident() in _FORKING or (frame is not None and frame.f_code in _FORK_HOOKS):
        if _WATCHING["blocking"]:  # blocked in this thread until the hooks are done
            signal.pthread_kill(threading.get_ident(), signum)
        else:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            _RECEIVED.append(signum)
        return
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
    _RECEIVED.append(signum)
    raise Terminated()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises `Terminated` in the main thread (elsewhere: no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _watch_forks()
    old = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)


@contextlib.contextmanager
def keep_sigterm_handler() -> Iterator[None]:
    """Put `sigterm_as_interrupt`'s handler back if the block replaced it (``ray.init`` sets
    its own, which exits at once without the tables)."""
    old = signal.getsignal(signal.SIGTERM) \
        if threading.current_thread() is threading.main_thread() else None
    try:
        yield
    finally:
        if old is _on_sigterm and signal.getsignal(signal.SIGTERM) is not old:
            signal.signal(signal.SIGTERM, old)


def die_with_parent(parent: int | None = None) -> None:
    """In a child forked without exec: be killed when the forking thread's process dies, and
    leave at once if ``parent`` (the expected parent pid) died before this call."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def forked_worker_init(parent: int) -> None:
    """Initializer of the report's forked drawing workers: Ctrl-C and SIGTERM are the
    driver's to handle (it stops the workers), and the worker dies with the driver."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent)


def watch_parent(parent: int) -> None:
    """Initializer of exec'd workers (loky): a daemon thread ends this process (exit 1) as
    soon as process ``parent`` is gone. Uses a pidfd where the kernel has them (Linux >= 5.3),
    else polls the parent pid twice a second."""
    try:
        fd = os.pidfd_open(parent)
    except (AttributeError, OSError):
        fd = None
        if os.getppid() != parent:
            os._exit(1)

    def watch() -> None:
        import select
        import time

        if fd is not None:
            select.select([fd], [], [])
        else:
            while os.getppid() == parent:
                time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="treebench-watch-parent", daemon=True).start()
