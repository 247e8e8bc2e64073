"""The cluster backends' configuration and bookkeeping, without starting a cluster (issue 15)."""

from __future__ import annotations

import pytest

from treebench import api
from treebench.errors import UserError

from .conftest import tiny_config


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
        api.run_experiment(write_config(tiny_config()), out=tmp_path / "o", address="tcp://127.0.0.1:1",
                           progress=False, report=False)


def test_dask_scheduler_address_is_honoured(monkeypatch):
    from treebench.execute.cluster import resolve_address

    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", "tcp://127.0.0.1:9999")
    assert resolve_address("dask", None) == "tcp://127.0.0.1:9999"
    assert resolve_address("dask", "tcp://h:1") == "tcp://h:1"  # the explicit one wins
    assert resolve_address("ray", None) is None
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS")
    assert resolve_address("dask", None) is None  # a local cluster


def test_a_shipped_dataset_is_installed_and_counted_once(monkeypatch):
    from treebench.execute import cluster, worker

    monkeypatch.setattr(cluster, "RECEIVED", cluster.Counter())
    monkeypatch.setattr(worker, "_DATASETS", worker.OrderedDict())
    ds = object()
    for _ in range(3):  # one task per cell, the same shipped object each time
        cluster.install_dataset(("k", ds))
    assert worker._DATASETS["k"] is ds
    assert cluster.received_counts() == {"k": 1}
    worker._DATASETS.pop("k")  # evicted by the worker cache: put back, not received again
    cluster.install_dataset(("k", ds))
    assert worker._DATASETS["k"] is ds and cluster.received_counts() == {"k": 1}
    cluster.install_dataset(None)  # data_dir_on_workers: nothing shipped
    assert cluster.received_counts() == {"k": 1}
