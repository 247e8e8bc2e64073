"""The cluster backends' configuration and bookkeeping, without starting a cluster."""

from __future__ import annotations

import pytest

from treebench import api
from treebench.errors import UserError

from runs import tiny_config


def test_execution_address_needs_a_cluster_backend(write_config):
    ok = tiny_config(execution={"backend": "dask", "address": "tcp://127.0.0.1:8786"})
    exp = api.resolve_experiment(write_config(ok))
    assert exp.execution.address == "tcp://127.0.0.1:8786"
    assert exp.execution.data_dir_on_workers is False
    bad = tiny_config(execution={"backend": "loky", "address": "tcp://127.0.0.1:8786"})
    with pytest.raises(UserError, match="address is for backend dask or ray"):
        api.resolve_experiment(write_config(bad, "bad.yaml"))
    blank = tiny_config(execution={"backend": "ray", "address": "  "})
    with pytest.raises(UserError, match="address must be"):
        api.resolve_experiment(write_config(blank, "blank.yaml"))


def test_address_flag_with_a_local_backend_is_one_sentence(write_config, tmp_path):
    with pytest.raises(UserError, match="--address is for --backend dask or ray"):
        api.run_experiment(write_config(tiny_config()),
                           api.RunOptions(out=tmp_path / "o", address="tcp://127.0.0.1:1",
                           progress=False, report=False))


def test_dask_scheduler_address_is_honoured(monkeypatch):
    from treebench.execute.cluster import resolve_address

    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:9999")
    assert resolve_address("dask", None) == "tcp://127.0.0.1:9999"
    assert resolve_address("dask", "tcp://h:1") == "tcp://h:1"  # the explicit one wins
    assert resolve_address("ray", None) is None
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS")
    assert resolve_address("dask", None) is None  # a local cluster


def test_a_shipped_dataset_is_installed_and_counted_once(monkeypatch):
    from treebench.execute import cluster_worker, fold

    monkeypatch.setattr(cluster_worker, "RECEIVED", cluster_worker.Counter())
    monkeypatch.setattr(cluster_worker, "_HELD", cluster_worker.OrderedDict())
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())
    ds = object()
    for _ in range(3):  # one task per cell, the same shipped object each time
        cluster_worker.install_dataset(("k", ds))
    assert fold._DATASETS["k"] is ds
    assert cluster_worker.received_counts() == {"k": 1}
    fold._DATASETS.pop("k")  # evicted by the worker cache: put back, not received again
    cluster_worker.install_dataset(("k", ds))
    assert fold._DATASETS["k"] is ds and cluster_worker.received_counts() == {"k": 1}
    cluster_worker.install_dataset(None)  # data_dir_on_workers: nothing shipped
    assert cluster_worker.received_counts() == {"k": 1}


def _closed_port() -> int:
    """A loopback port where nothing listens (bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("backend, address, match", [
    ("dask", "tcp://127.0.0.1:{port}", "cannot reach the dask cluster at tcp://127.0.0.1"),
    ("dask", "127.0.0.1:{port}", "cannot reach the dask cluster"),
    ("dask", "tcp://127.0.0.1", "is not a dask cluster address; give tcp://host:8786"),
    ("dask", "ray://127.0.0.1:{port}", "is not a dask cluster address"),
    ("ray", "ray://127.0.0.1:{port}", "cannot reach the ray cluster at ray://127.0.0.1"),
    ("ray", "127.0.0.1:{port}", "cannot reach the ray cluster"),
    ("ray", "nonsense", "is not a ray cluster address; give auto, host:6379 or ray://host:10001"),
    ("ray", "tcp://127.0.0.1:{port}", "is not a ray cluster address"),
])
def test_a_bad_or_silent_address_is_one_sentence(backend, address, match):
    from treebench.execute.cluster import check_address

    with pytest.raises(UserError, match=match) as info:
        check_address(backend, address.format(port=_closed_port()))
    text = str(info.value)
    assert text.count(". ") == 0 and text.endswith(".") and "\n" not in text


def test_ray_auto_is_left_to_ray():
    from treebench.execute.cluster import check_address

    check_address("ray", "auto")  # no probe: ray itself answers at once when nothing runs


@pytest.mark.parametrize("backend, address", [
    ("dask", "tcp://127.0.0.1:{port}"), ("ray", "ray://127.0.0.1:{port}"), ("ray", "nonsense"),
])
def test_cli_unreachable_cluster_exits_2_and_keeps_finished_cells(backend, address, write_config,
                                                                  tmp_path):
    """A sweep with finished cells on disk, rerun against a cluster that is not there: exit 2,
    one sentence, no traceback, and the finished cells untouched."""
    if backend == "dask":
        pytest.importorskip("distributed")
    else:
        pytest.importorskip("ray")
    from typer.testing import CliRunner

    from treebench.cli import app

    cfg = write_config(tiny_config())
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["run", str(cfg), "-o", str(out), "--no-report", "-q"])
    assert r.exit_code == 0, r.output
    files = sorted((out / "cells").glob("*.json"))
    assert len(files) == 6
    files[0].unlink()  # one cell left to run
    kept = {p.name: p.read_bytes() for p in files[1:]}
    r = CliRunner().invoke(app, ["run", str(cfg), "-o", str(out), "--no-report", "-q",
                                 "--backend", backend, "--address",
                                 address.format(port=_closed_port())])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and ("cannot reach" in r.output or "is not a" in r.output)
    assert {p.name: p.read_bytes() for p in sorted((out / "cells").glob("*.json"))} == kept


def test_cluster_run_describes_the_workers_and_threads_used():
    from treebench.execute.cluster import ClusterRun

    run = ClusterRun(backend="dask", where="tcp://127.0.0.1:8786", workers=3, threads=6)
    run.note(("h", 10, 1), ["iris"])
    run.note(("h", 10, 2), [])
    run.note(("h", 10, 1), [])
    run.note(("h", 11, 1), ["iris"])
    # what ran cells, not what the scheduler had: 2 of the 3 workers, 3 threads
    assert run.describe() == "2 dask workers (3 threads) at tcp://127.0.0.1:8786"
    assert run.received == {("h", 10, "iris"): 1, ("h", 11, "iris"): 1}
    one = ClusterRun(backend="dask", where="a local dask cluster")
    one.note(("h", 10, 1), [])
    assert one.describe() == "1 dask worker (1 thread) at a local dask cluster"
    ray = ClusterRun(backend="ray", where="ray://head:10001")
    ray.note(("a", 1, 1), [])
    ray.note(("b", 2, 1), [])
    assert ray.describe() == "2 ray worker processes on 2 hosts at ray://head:10001"


def test_cli_summary_names_the_cluster(monkeypatch, capsys, tmp_path):
    from treebench import cli
    from treebench.api import RunSummary
    from treebench.execute.cluster import ClusterRun

    s = RunSummary(experiment="e", out=tmp_path, n_cells=4, n_ran=4, n_jobs=-1)
    s.cluster = ClusterRun(backend="dask", where="tcp://10.0.0.1:8786")
    s.cluster.note(("h", 1, 1), [])
    s.cluster.note(("h", 1, 2), [])
    cli._print_summary(s)
    assert "ran 4 now on 1 dask worker (2 threads) at tcp://10.0.0.1:8786." in capsys.readouterr().out
    s.cluster = None
    s.n_jobs = 2
    cli._print_summary(s)
    assert "ran 4 now on 2 worker(s)." in capsys.readouterr().out


def test_a_ray_shipment_is_fetched_once_per_worker_process(monkeypatch):
    """The ray path: the task gets a reference (`InStore`), the worker process fetches the
    dataset on its first cell only and keeps it; a new shipment (a new sweep) is fetched again."""
    import sys
    import types

    from treebench.execute import cluster_worker, fold

    store = {"ref1": object(), "ref2": object()}
    fetched: list[str] = []
    fake = types.ModuleType("ray")
    fake.get = lambda ref: fetched.append(ref) or store[ref]
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr(cluster_worker, "RECEIVED", cluster_worker.Counter())
    monkeypatch.setattr(cluster_worker, "_HELD", cluster_worker.OrderedDict())
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())
    got = [cluster_worker.install_dataset(("k", cluster_worker.InStore("ref1"))) for _ in range(4)]
    assert got == [["k"], [], [], []] and fetched == ["ref1"]
    assert fold._DATASETS["k"] is store["ref1"]
    assert cluster_worker.install_dataset(("k", cluster_worker.InStore("ref2"))) == ["k"]
    assert fetched == ["ref1", "ref2"] and fold._DATASETS["k"] is store["ref2"]
    assert cluster_worker.received_counts() == {"k": 2}


def test_a_worker_its_nanny_restarted_counts_once():
    """A dask worker's task reports its nanny's address: the new process a nanny starts after
    its worker died is the same worker (it was counted as another worker, with more threads
    than the cluster had)."""
    from treebench.execute.cluster import ClusterRun

    run = ClusterRun(backend="dask", where="tcp://s:8786", workers=2, threads=3)
    run.note(("h", 10, 1, "tcp://h:7001"), ["iris"])
    run.note(("h", 10, 2, "tcp://h:7001"), [])
    run.note(("h", 11, 5, "tcp://h:7001"), ["iris"])  # restarted: new pid, new threads
    run.note(("h", 12, 1, "tcp://h:7002"), ["iris"])
    run.note(("h", 13, 1, None), [])  # a worker without nanny: its process is the worker
    assert (run.n_workers_used, run.n_threads_used, run.n_restarts) == (3, 4, 1)
    assert run.describe() == "3 dask workers (4 threads, 1 restart) at tcp://s:8786"
    got = run.to_manifest()
    assert (got["workers_used"], got["threads_used"], got["worker_restarts"]) == (3, 4, 1)
    assert run.received[("h", 11, "iris")] == 1


def test_dask_shipments_inbox_and_a_cell_that_carries_its_data(monkeypatch):
    """A task names its shipment; a worker that did not receive the broadcast answers that it
    needs the data instead of running the cell; a task carrying the data installs it for the
    worker's next cells; each shipment counted once per worker."""
    from treebench.execute import cluster_worker, fold
    from treebench.execute.cluster_worker import NotShipped, Shipment

    monkeypatch.setattr(cluster_worker, "RECEIVED", cluster_worker.Counter())
    monkeypatch.setattr(cluster_worker, "_HELD", cluster_worker.OrderedDict())
    monkeypatch.setattr(cluster_worker, "_INBOX", cluster_worker.OrderedDict())
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())
    ds = object()
    with pytest.raises(NotShipped):
        cluster_worker.install_dataset(("k", Shipment(("s1", "k"))))
    got = cluster_worker.cluster_cell(None, None, {}, ("k", Shipment(("s1", "k"))))
    assert got["need"] == "k" and got["worker"] is None  # no dask worker in this process
    assert cluster_worker.install_dataset(("k", Shipment(("s1", "k"), ds))) == ["k"]
    assert fold._DATASETS["k"] is ds
    assert cluster_worker.install_dataset(("k", Shipment(("s1", "k")))) == []
    assert cluster_worker.install_dataset(("k", Shipment(("s1", "k"), ds))) == []
    other = object()  # the broadcast of a new sweep
    cluster_worker.receive_datasets([(("s2", "k"), other)])
    assert cluster_worker.install_dataset(("k", Shipment(("s2", "k")))) == ["k"]
    assert fold._DATASETS["k"] is other
    assert cluster_worker.received_counts() == {"k": 2}


def test_the_inbox_keeps_the_newest_sweep_and_a_few_older_datasets(monkeypatch):
    from treebench.execute import cluster_worker

    monkeypatch.setattr(cluster_worker, "RECEIVED", cluster_worker.Counter())
    monkeypatch.setattr(cluster_worker, "_INBOX", cluster_worker.OrderedDict())
    size = cluster_worker.HELD_SIZE
    cluster_worker.receive_datasets([(("old", f"d{i}"), i) for i in range(size + 5)])
    assert len(cluster_worker._INBOX) == size + 5  # the newest sweep's: all kept
    cluster_worker.receive_datasets([(("new", f"d{i}"), i) for i in range(size + 3)])
    kept = list(cluster_worker._INBOX)
    assert [t for t in kept if t[0] == "new"] == [("new", f"d{i}") for i in range(size + 3)]
    assert [t for t in kept if t[0] == "old"] == [("old", f"d{i}") for i in range(5, size + 5)]
