"""The runner tests' helpers, from tests/runs.py (``write_config`` is in tests/conftest.py)."""

from __future__ import annotations

from runs import net_frame, result_rows, tiny_config  # noqa: F401 - used as .conftest
