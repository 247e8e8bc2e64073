"""Fixtures for runner tests: small configs written to a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml


@pytest.fixture
def write_config(tmp_path: Path):
    def _write(cfg: dict | str, name: str = "exp.yaml") -> Path:
        p = tmp_path / name
        p.write_text(cfg if isinstance(cfg, str) else yaml.safe_dump(cfg), encoding="utf-8")
        return p

    return _write


def tiny_config(**over) -> dict:
    cfg = {
        "name": "tiny",
        "seed": 0,
        "datasets": ["iris"],
        "split": {"kind": "kfold", "n_splits": 3},
        "binarization": {"method": "raw"},
        "algorithms": [{"name": "cart", "params": {"max_depth": [1, 2]}}],
        "execution": {"n_jobs": 1, "backend": "sequential"},
    }
    cfg.update(over)
    return cfg
