"""The headless browser of the browser tests (reports and the documentation site)."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    """The path of a Chromium-family browser; skip the test with the way to install one."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium on this machine (Debian: apt-get install chromium)")


class Session:
    """One headless Chromium that renders many pages, driven through the DevTools protocol
    over a pipe (``--remote-debugging-pipe``: commands on the browser's fd 3, replies and
    events on its fd 4, each message JSON ended by a NUL byte). A launch per page cost about
    1.2 CPU s; a page in a running browser a small part of that."""

    def __init__(self, profile: Path, timeout: float = 120.0):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()

        def fds() -> None:  # in the child: its fd 3 and fd 4 are the pipes' browser ends
            hi_r, hi_w = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-pipe",
               "about:blank"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     preexec_fn=fds, close_fds=False)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        self.out = os.fdopen(to_browser_w, "wb", buffering=0)
        self.inp = os.fdopen(from_browser_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.timeout = timeout
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        self.call("Page.enable", session=True)

    def _read(self) -> dict:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.inp], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("Chromium did not answer in time")
            chunk = self.inp.read(1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium exited: {self.proc.stderr.read()[-1500:]!r}")
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method: str, session: bool = False, wait_event: str | None = None,
             **params) -> dict:
        """Send ``method`` and return its result; with ``wait_event``, also wait for that
        event of the page (it may come before the reply)."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.out.write(json.dumps(msg).encode() + b"\0")
        result, seen = None, wait_event is None
        while result is None or not seen:
            m = self._read()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                result = m.get("result", {})
            elif m.get("method") == wait_event and m.get("sessionId") == self.session:
                seen = True
        return result

    def dom(self, page: Path) -> str:
        """The DOM of ``page`` once it has loaded (its scripts run)."""
        self.call("Page.navigate", session=True, wait_event="Page.loadEventFired",
                  url=page.resolve().as_uri())
        r = self.call("Runtime.evaluate", session=True, returnByValue=True,
                      expression="document.documentElement.outerHTML")
        return r["result"]["value"]

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.inp.close()
        self.proc.stderr.close()
