"""Algorithms that misbehave on purpose, to test the executor's limits (tagged ``test``).

They are hidden from ``treebench algorithms`` unless ``--all`` is given.
"""

from __future__ import annotations

import os
import signal
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from treebench.algorithms.base import TreeClassifierBase
from treebench.registry import ALGORITHMS
from treebench.tree.arrays import TreeArrays


class _LeafBase(TreeClassifierBase):
    def _leaf(self, y_index, sample_weight):
        counts = np.bincount(y_index, weights=sample_weight, minlength=len(self.classes_))
        return TreeArrays.leaf(counts)


@ALGORITHMS.register("test-sleep", tags=("test",))
class SleepClassifier(_LeafBase):
    """Sleeps ``seconds`` then returns a majority leaf (timeout tests)."""

    _parameter_constraints = {"seconds": [Interval(Real, 0, None, closed="left")]}

    def __init__(self, seconds=1.0):
        self.seconds = seconds

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        time.sleep(self.seconds)
        return self._leaf(y_index, sample_weight), {}


@ALGORITHMS.register("test-alloc", tags=("test",))
class AllocClassifier(_LeafBase):
    """Allocates and touches ``megabytes`` of memory, then returns a majority leaf (memory tests)."""

    _parameter_constraints = {"megabytes": [Interval(Integral, 0, None, closed="left")]}

    def __init__(self, megabytes=100):
        self.megabytes = megabytes

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        chunks = []
        for _ in range(self.megabytes // 16):
            chunks.append(np.ones(16 * 2**20, dtype=np.uint8))
            time.sleep(0.002)
        return self._leaf(y_index, sample_weight), {"operations": len(chunks)}


@ALGORITHMS.register("test-abort", tags=("test",))
class AbortClassifier(_LeafBase):
    """Kills its own process with SIGABRT, like a crashing native solver."""

    _parameter_constraints = {}

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        os.kill(os.getpid(), signal.SIGABRT)
        time.sleep(5)  # pragma: no cover - the signal ends the process first
        return self._leaf(y_index, sample_weight), {}


@ALGORITHMS.register("test-raise", tags=("test",))
class RaiseClassifier(_LeafBase):
    """Raises ``RuntimeError(message)`` in fit."""

    _parameter_constraints = {"message": [str]}

    def __init__(self, message="boom"):
        self.message = message

    def _fit_tree(self, X, y_index, ctx):
        sample_weight = ctx.sample_weight
        raise RuntimeError(self.message)


@ALGORITHMS.register("test-kill-worker", tags=("test",))
class KillWorkerClassifier(_LeafBase):
    """SIGKILLs the process that supervises the cell (its worker), like a node lost mid-cell;
    for cluster tests, where the engine retries the cell on a fresh worker a bounded
    number of times and then records it ``crashed``. Never run it with a local backend: there
    the supervising process may be the driver."""

    _parameter_constraints = {}

    def _fit_tree(self, X, y_index, ctx):
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(5)  # pragma: no cover - the worker's death ends this process too
        return self._leaf(y_index, ctx.sample_weight), {}
