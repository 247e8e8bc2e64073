"""SIGTERM received while ``os.fork`` runs its hooks (`treebench.execute.lifetime`): never an
exception inside a hook ("Exception ignored in ..."), always `Terminated` once the fork
returned."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading

import pytest

from treebench.execute import lifetime


class _LockSendingSigterm:
    """Logging's module lock, which sends this process SIGTERM when logging's after-fork hook
    releases it in the parent: the signal lands inside that hook, as when a scheduler stops
    a run while its workers are being forked."""

    def __init__(self, parent: int, sender=None):
        self.lock = threading.RLock()
        self.parent = parent
        self.sender = sender
        self.armed = False

    def __bool__(self) -> bool:
        return True

    def acquire(self, *args, **kwargs):
        return self.lock.acquire(*args, **kwargs)

    def release(self) -> None:
        self.lock.release()
        if self.armed and os.getpid() == self.parent:
            self.armed = False
            if self.sender is None:
                os.kill(os.getpid(), signal.SIGTERM)
            else:  # another thread receives it; the main thread runs the handler
                self.sender()

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _fork_with_sigterm_in_hook(monkeypatch, sender=None) -> list:
    """Fork once with SIGTERM sent from inside logging's after-fork hook; return the
    exceptions Python printed as ignored, after checking that `Terminated` was raised."""
    ignored: list = []
    monkeypatch.setattr(sys, "unraisablehook", ignored.append)
    lock = _LockSendingSigterm(os.getpid(), sender)
    monkeypatch.setattr(logging, "_lock", lock)
    monkeypatch.setattr(lifetime, "_RECEIVED", [])
    read, write = os.pipe()
    try:
        with lifetime.sigterm_as_interrupt():
            lock.armed = True
            with pytest.raises(lifetime.Terminated):
                try:
                    if os.fork() == 0:  # the child: tell its pid and leave
                        os.write(write, str(os.getpid()).encode())
                        os._exit(0)
                    lifetime.stop_if_terminated()  # the signal was lost: not raised by then
                finally:
                    os.waitpid(int(os.read(read, 32)), 0)
    finally:
        os.close(read)
        os.close(write)
    assert lifetime.terminated()
    assert not lock.armed, "the hook did not run"
    return ignored


def test_sigterm_in_loggings_fork_hook_raises_after_the_fork_not_inside_it(monkeypatch):
    ignored = _fork_with_sigterm_in_hook(monkeypatch)
    assert not ignored, [str(u.exc_value.__class__) + " in " + repr(u.object) for u in ignored]


def test_sigterm_received_by_another_thread_during_the_fork_hooks(monkeypatch):
    """Blocking SIGTERM in the forking thread does not stop another thread from receiving it;
    the main thread's handler then runs inside a hook all the same."""
    got = threading.Event()

    def through_a_thread() -> None:
        def receive() -> None:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            os.kill(os.getpid(), signal.SIGTERM)  # delivered to a thread that does not block it
            got.set()
        t = threading.Thread(target=receive)
        t.start()
        t.join()

    ignored = _fork_with_sigterm_in_hook(monkeypatch, through_a_thread)
    assert got.is_set()
    assert not ignored, [str(u.exc_value.__class__) + " in " + repr(u.object) for u in ignored]
