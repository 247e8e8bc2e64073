"""The suite's network guard (tests/conftest.py): nothing beyond loopback and unix sockets,
and a test that caught the guard's error fails all the same."""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REFUSED = "tests must not reach the network"
#: TEST-NET-1 (RFC 5737): an address no network routes
NOWHERE = ("192.0.2.1", 80)


def test_a_connection_beyond_loopback_raises_the_guards_error(network_attempts):
    with pytest.raises(RuntimeError, match=REFUSED):
        socket.create_connection(NOWHERE, timeout=1)
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s, \
            pytest.raises(RuntimeError, match=REFUSED):
        s.connect_ex(("2001:db8::1", 443))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, \
            pytest.raises(RuntimeError, match=REFUSED):
        s.sendto(b"x", NOWHERE)
    assert network_attempts == ["socket.connect(('192.0.2.1', 80))",
                                "socket.connect_ex(('2001:db8::1', 443))",
                                "socket.sendto(('192.0.2.1', 80))"]


def test_downloads_fail_before_any_name_is_looked_up(network_attempts):
    from treebench.data.openml_source import download_openml

    with pytest.raises(RuntimeError, match=REFUSED):
        urllib.request.urlopen("https://www.openml.org/api/v1/json/data/49", timeout=5)
    with pytest.raises(RuntimeError, match=REFUSED):
        download_openml(49)
    assert network_attempts == ["the name lookup of 'www.openml.org'",
                                "the download of OpenML dataset 49"]


def test_loopback_and_unix_sockets_are_allowed(tmp_path, network_attempts):
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        for host in ("127.0.0.1", "localhost"):
            socket.create_connection((host, port), timeout=5).close()
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as server, socket.socket(socket.AF_UNIX) as client:
        server.bind(path)
        server.listen()
        client.connect(path)
    assert socket.getaddrinfo(socket.gethostname(), None)  # this machine's own name
    assert network_attempts == []


def test_a_test_that_caught_the_guards_error_still_fails(tmp_path):
    """The code under test may catch the error (a failed cell, a message about a failed
    download); the test errs at its end all the same, naming what it tried."""
    conftest = Path(__file__).with_name("conftest.py")
    (tmp_path / "conftest.py").write_text(conftest.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not this repository's settings
    (tmp_path / "test_swallow.py").write_text(
        "import socket\n\n\ndef test_swallowed():\n    try:\n"
        f"        socket.create_connection({NOWHERE!r}, timeout=1)\n"
        "    except Exception:\n        pass\n\n\ndef test_offline():\n    assert True\n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    # the test body returned: the test errs at its teardown (the other test is untouched)
    assert "2 passed, 1 error" in r.stdout and "ERROR at teardown of test_swallowed" in r.stdout
    assert "this test tried to reach the network: socket.connect(('192.0.2.1', 80))" in r.stdout
