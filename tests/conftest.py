"""Shared pytest configuration.

``tests/`` is put on ``sys.path`` so that test modules in sub-folders can ``import naive``
(the slow reference solvers in ``tests/naive.py``) whatever pytest's import mode.

Under ``NUMBA_DISABLE_JIT=1`` (`make test-nojit`, the coverage pass over compiled code) kernels
run as plain Python, except numba intrinsics, which have no Python body: every intrinsic named
in `PYTHON_TWINS` found in a loaded ``treebench`` module is replaced by its twin from
``tests/naive.py`` (kernels then look it up as a module global when called). The pass is for
coverage: a test parametrized by ``seed`` runs its first `NOJIT_SEEDS` seeds there, with every
other parameter (depth, criterion, objective, ...) kept; the compiled suite runs every seed.

No test reaches the network: for the whole session, a connection (or a name lookup) to anything
but the loopback address and unix sockets raises `NetworkBlockedError`, and so does
treebench's OpenML download; a test during which one was attempted fails even when the code
under test caught the error. A test that needs real data reads it from ``TREEBENCH_DATA_DIR``
or skips with the reason. The guard covers the pytest process, not the processes tests start.
"""

import ipaddress
import pathlib
import signal
import socket
import sys

import pytest

_TESTS = str(pathlib.Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

# A suite started in the background by a non-interactive shell (`cmd &` without job control)
# inherits SIGINT *ignored*, and an ignored signal stays ignored across exec: the Ctrl-C tests'
# `treebench run` children would then never see their SIGINT and exit 0. Restore Python's
# default handling here, so children start with SIGINT at its default, as under a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


PYTHON_TWINS = ("popcount", "ctz")


def _python_intrinsics() -> None:
    from numba.core.extending import _Intrinsic

    import naive

    for name, mod in list(sys.modules.items()):
        if not name.startswith("treebench") or mod is None:
            continue
        for twin in PYTHON_TWINS:
            if isinstance(getattr(mod, twin, None), _Intrinsic):
                setattr(mod, twin, getattr(naive, twin))


#: the seeds a test parametrized by ``seed`` runs in the plain-Python pass: its first two (every
#: other parameter combination kept); the compiled suite runs them all
NOJIT_SEEDS = 2


def pytest_collection_modifyitems(config, items):
    from numba.core import config as numba_config

    if numba_config.DISABLE_JIT:
        _python_intrinsics()
        keep, drop = [], []
        for item in items:
            seed = getattr(getattr(item, "callspec", None), "params", {}).get("seed")
            later = isinstance(seed, int) and not isinstance(seed, bool) and seed >= NOJIT_SEEDS
            (drop if later else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep


# ------------------------------------------------------------------ no test reaches the network


class NetworkBlockedError(RuntimeError):
    """A test tried to reach the network (not an OSError: code retrying on network errors
    stops at once)."""


#: what the guard refused since the last test ended
BLOCKED: list[str] = []
_INET = (socket.AF_INET, socket.AF_INET6)


def is_local(host) -> bool:
    """Whether ``host`` (a name or an address) is this machine's loopback (or unspecified)
    address."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").split("%")[0].lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(name)
    except ValueError:
        return False
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _refuse(what: str):
    BLOCKED.append(what)
    raise NetworkBlockedError(
        f"tests must not reach the network: {what} was refused (tests/conftest.py allows "
        f"loopback and unix sockets only; a test that needs real data reads it from "
        f"TREEBENCH_DATA_DIR or skips)")


def _guarded_connect(real, name: str):
    def connect(sock, address, *args):
        # a datagram socket's connect sends nothing (dask asks one for the outgoing address)
        if (sock.family in _INET and sock.type != socket.SOCK_DGRAM
                and isinstance(address, tuple) and not is_local(address[0])):
            _refuse(f"socket.{name}({address[:2]!r})")
        return real(sock, address, *args)
    return connect


def _guarded_sendto(real):
    def sendto(sock, data, *rest):  # (data, address) or (data, flags, address)
        address = rest[-1]
        if sock.family in _INET and isinstance(address, tuple) and not is_local(address[0]):
            _refuse(f"socket.sendto({address[:2]!r})")
        return real(sock, data, *rest)
    return sendto


def _guarded_lookup(real):
    def getaddrinfo(host, *args, **kwargs):
        text = host.decode("ascii", "replace") if isinstance(host, bytes) else host
        if text and not is_local(text) and text != socket.gethostname():
            try:  # an address needs no lookup (connecting to it is checked on its own)
                ipaddress.ip_address(str(text).strip("[]").split("%")[0])
            except ValueError:
                _refuse(f"the name lookup of {text!r}")
        return real(host, *args, **kwargs)
    return getaddrinfo


def _refuse_openml(dataset_id, *args, **kwargs):
    _refuse(f"the download of OpenML dataset {dataset_id}")


@pytest.fixture(scope="session", autouse=True)
def _network_guard():
    """Refuse, for the whole session, every connection and name lookup beyond this machine's
    loopback, and treebench's OpenML downloads."""
    from treebench.data import openml_source

    guards = {(socket.socket, "connect"): _guarded_connect(socket.socket.connect, "connect"),
              (socket.socket, "connect_ex"): _guarded_connect(socket.socket.connect_ex,
                                                              "connect_ex"),
              (socket.socket, "sendto"): _guarded_sendto(socket.socket.sendto),
              (socket, "getaddrinfo"): _guarded_lookup(socket.getaddrinfo),
              (openml_source, "download_openml"): _refuse_openml}
    saved = {key: getattr(*key) for key in guards}
    for (owner, name), guard in guards.items():
        setattr(owner, name, guard)
    yield
    for (owner, name), real in saved.items():
        setattr(owner, name, real)


@pytest.fixture
def network_attempts():
    """What the guard refused during the test (the guard's own tests); cleared at the end, so
    the attempts the test made on purpose do not fail it."""
    yield BLOCKED
    BLOCKED.clear()


@pytest.fixture(autouse=True)
def _no_network_reached():
    """Fail the test if it attempted to reach the network, even when the code under test
    caught the guard's error (a failed cell, a message about a failed download)."""
    BLOCKED.clear()
    yield
    if BLOCKED:
        tried = "; ".join(dict.fromkeys(BLOCKED))
        BLOCKED.clear()
        pytest.fail(f"this test tried to reach the network: {tried}", pytrace=False)


@pytest.fixture
def write_config(tmp_path: pathlib.Path):
    """A function writing a config (a dict, as YAML, or text as it is) to ``tmp_path/name``
    (default ``exp.yaml``); returns the path."""
    import yaml

    def _write(cfg: dict | str, name: str = "exp.yaml") -> pathlib.Path:
        p = tmp_path / name
        p.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg), encoding="utf-8")
        return p

    return _write
