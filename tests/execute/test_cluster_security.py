"""What treebench opens to the network when it runs on dask or ray: a local dask cluster
listens on the loopback interface only (its dashboard included), so does every process of a
local ray (GCS, raylet, workers, the driver's own server), and a ``tls://`` scheduler gets
the client's certificates from dask's own settings, or one sentence saying what is missing.

Tests marked ``cluster`` start real dask or ray processes on 127.0.0.1 and stop each by its
pid."""

from __future__ import annotations

import ipaddress
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import yaml

pytest.importorskip("distributed")

from runs import driver_process, tiny_config, wait_for_cells  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TLS_ENV = ("DASK_DISTRIBUTED__COMM__TLS__CA_FILE", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT",
           "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    env.update(extra)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _run(tmp: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    (tmp / "exp.yaml").write_text(yaml.safe_dump(tiny_config()), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "treebench.cli", "run", "exp.yaml", "-o", "out",
                           "-q", "--no-report", "--backend", "dask", *args], cwd=tmp,
                          env=env or _env(), capture_output=True, text=True, timeout=180)


def _listening(procs: list[psutil.Process]) -> list[tuple[int, str, int]]:
    found = []
    for p in procs:
        try:
            conns = (getattr(p, "net_connections", None) or p.connections)(kind="inet")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found += [(p.pid, c.laddr.ip, c.laddr.port) for c in conns
                  if c.status == psutil.CONN_LISTEN]
    return found


@pytest.mark.cluster
def test_a_local_dask_cluster_and_its_dashboard_listen_on_loopback_only():
    """Before: the dashboard of the local cluster listened on every interface (":0")."""
    from treebench.execute.cluster import _dask_client

    client, own = _dask_client(None, 1)
    try:
        assert own
        me = psutil.Process()
        socks = _listening([me, *me.children(recursive=True)])
        dash = client.cluster.scheduler.http_server.port
        assert dash in {port for _, _, port in socks}, socks
        assert socks and all(ipaddress.ip_address(ip).is_loopback for _, ip, _ in socks), socks
    finally:
        client.close()
        client.cluster.close()


def _loopback(ip: str) -> bool:
    """127.0.0.0/8 or ::1, also as an IPv4-mapped IPv6 address (a dual-stack socket)."""
    addr = ipaddress.ip_address(ip)
    mapped = getattr(addr, "ipv4_mapped", None)
    return (mapped or addr).is_loopback


def test_the_loopback_check_knows_mapped_and_wildcard_addresses():
    assert _loopback("127.0.0.1") and _loopback("::ffff:127.0.0.1") and _loopback("::1")
    assert not any(map(_loopback, ("0.0.0.0", "::", "192.0.2.2", "::ffff:192.0.2.2")))


@pytest.mark.cluster
def test_a_local_ray_listens_on_loopback_only(tmp_path):
    """``--backend ray`` without an address, through the CLI: while its cells run, every
    socket the driver's process tree listens on (the driver, ray's GCS server, raylet, runtime
    environment agent and worker processes) is on the loopback interface. Before: the GCS,
    raylet, workers and driver listened on every interface (``::``) and the runtime
    environment agent on the machine's address."""
    pytest.importorskip("ray")
    cfg = tiny_config(split={"kind": "holdout", "seeds": [0, 1, 2]},
                      algorithms=[{"name": "test-sleep", "params": {"seconds": 3}}])
    (tmp_path / "exp.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    env = _env(RAY_AUTH_MODE="disabled", RAY_USAGE_STATS_ENABLED="0")
    cmd = [sys.executable, "-m", "treebench.cli", "run", "exp.yaml", "-o", "out", "-q",
           "--no-report", "--backend", "ray"]
    with driver_process(cmd, cwd=tmp_path, env=env) as drv:
        wait_for_cells(drv, tmp_path / "out" / "cells", 1, 150)
        root = psutil.Process(drv.pid)
        tree = [root, *root.children(recursive=True)]
        socks = _listening(tree)
        names = {p.pid: p.name() for p in tree if p.is_running()}
        _, err = drv.communicate(timeout=150)
    assert drv.returncode == 0, err
    listeners = {names.get(pid, "?") for pid, _, _ in socks}
    assert {"gcs_server", "raylet"} <= listeners and drv.pid in {p for p, _, _ in socks}, socks
    wide = [(names.get(pid), ip, port) for pid, ip, port in socks if not _loopback(ip)]
    assert not wide, wide


def test_a_tls_address_without_certificates_is_one_sentence(tmp_path):
    """Before: a TypeError traceback from dask's TLS layer (exit 1) after a 20-40 s wait."""
    r = _run(tmp_path, "--address", "tls://127.0.0.1:1")
    assert r.returncode == 2, r.stderr
    assert "is a TLS address but the client has no certificates" in r.stderr
    assert "DASK_DISTRIBUTED__COMM__TLS__CA_FILE" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "cells").exists()


def test_a_missing_tls_file_is_named(tmp_path):
    (tmp_path / "cert.pem").write_text("x", encoding="utf-8")
    env = _env(DASK_DISTRIBUTED__COMM__TLS__CA_FILE=str(tmp_path / "nope" / "ca.pem"),
               DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT=str(tmp_path / "cert.pem"))
    r = _run(tmp_path, "--address", "tls://127.0.0.1:1", env=env)
    assert r.returncode == 2, r.stderr
    assert f"the TLS CA file {tmp_path / 'nope' / 'ca.pem'} (set by " \
           f"DASK_DISTRIBUTED__COMM__TLS__CA_FILE) does not exist" in r.stderr, r.stderr


def _certificates(d: Path) -> dict[str, Path]:
    """A throw-away CA and one certificate it signed (for the scheduler, workers and client)."""
    def ssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    ssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
        "-days", "1", "-subj", "/CN=treebench-test-ca")
    ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "node.key", "-out", "node.csr",
        "-subj", "/CN=127.0.0.1")
    ssl("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "node.pem", "-days", "1")
    return {"ca": d / "ca.pem", "cert": d / "node.pem", "key": d / "node.key"}


@pytest.mark.cluster
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_tls_cluster_runs_with_certificates_from_dask_settings(tmp_path):
    """A scheduler and a worker that speak TLS only: the run gets the client certificates from
    the DASK_DISTRIBUTED__COMM__TLS__... variables and every cell runs there."""
    c = _certificates(tmp_path)
    tls = ["--tls-ca-file", str(c["ca"]), "--tls-cert", str(c["cert"]), "--tls-key", str(c["key"])]
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
         "0", "--protocol", "tls", "--no-dashboard", "--scheduler-file", str(sched_file), *tls],
        cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://")
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
             "--no-nanny", "--no-dashboard", "--host", "127.0.0.1", *tls],
            cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        env = _env(**dict(zip(TLS_ENV, (str(c["ca"]), str(c["cert"]), str(c["key"])),
                              strict=True)))
        r = _run(tmp_path, "--address", address, env=env)
        assert r.returncode == 0, r.stderr
        assert f"ran 6 now on 1 dask worker (1 thread) at {address}" in r.stdout, r.stdout
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=30)
