"""The search cache's compact keys (`treebench.search.cache`): the row-set fingerprint against
its naive twin, and lookups that must tell row sets apart by the fingerprint alone."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import njit

from tests.naive import naive_row_key
from treebench.search.cache import (
    EXACT,
    P61,
    cache_feature,
    cache_find,
    cache_put,
    cache_value,
    entries_for_mb,
    entry_bytes,
    key_powers,
    mulmod61,
    new_cache,
    row_key,
)
from treebench.search.state import S_CAP_HIT, S_ENTRIES

pytestmark = pytest.mark.kernels  # also run under NUMBA_DISABLE_JIT=1 (make test-nojit)


def _random_sets(rng, q, W, zero_share=0.3):
    sets = rng.integers(0, 2**63, size=(q, W), dtype=np.uint64) * np.uint64(2)
    sets += rng.integers(0, 2, size=(q, W), dtype=np.uint64)
    sets[rng.random((q, W)) < zero_share] = 0
    return sets


def test_mulmod61_equals_integer_arithmetic():
    rng = np.random.default_rng(3)
    edges = [0, 1, 2**29, 2**32 - 1, 2**32, 2**60, P61 - 1]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [(int(a), int(b)) for a, b in rng.integers(0, P61, size=(500, 2))]
    for a, b in pairs:
        assert int(mulmod61(np.uint64(a), np.uint64(b))) == a * b % P61, (a, b)


@pytest.mark.parametrize("W", [1, 2, 5, 17])
def test_row_key_equals_naive_twin(W):
    rng = np.random.default_rng(W)
    rpow = key_powers(W)
    for rows in _random_sets(rng, 60, W):
        assert int(row_key(rows, rpow)) == naive_row_key(rows)


def test_row_key_separates_single_rows_and_pairs():
    """Every set of one or two rows out of 192 has its own fingerprint (both halves of every
    word are read, with different weights)."""
    W = 3
    rpow = key_powers(W)
    keys = set()
    n = 64 * W
    for i in range(n):
        for j in range(i, n):
            rows = np.zeros(W, dtype=np.uint64)
            rows[i // 64] |= np.uint64(1) << np.uint64(i % 64)
            rows[j // 64] |= np.uint64(1) << np.uint64(j % 64)
            keys.add(int(row_key(rows, rpow)))
    assert len(keys) == n * (n + 1) // 2


@njit
def _store_then_find(sets, hs, hv, queries, qh, max_entries):
    """Store ``sets[i]`` at depth ``hs[i]`` with value i, all under the same first hash ``hv``
    (one bucket: only depth and fingerprint tell them apart); return, per query, the value and
    the feature found (-1 when absent), and the stats."""
    stats = np.zeros(8, dtype=np.int64)
    cache = new_cache(sets.shape[1], max_entries, stats)
    for i in range(sets.shape[0]):
        cache_put(cache, sets[i], hs[i], hv, float(i), i, EXACT)
    out = np.full(queries.shape[0], -1.0)
    feat = np.full(queries.shape[0], -1, dtype=np.int64)
    for q in range(queries.shape[0]):
        e = cache_find(cache, queries[q], qh[q], hv)
        if e >= 0:
            out[q] = cache_value(cache, e)
            feat[q] = cache_feature(cache, e)
    return out, feat, stats


def test_lookups_in_one_bucket_are_told_apart_by_the_fingerprint():
    rng = np.random.default_rng(11)
    W = 4
    # every set shares one bucket, so a lookup scans it: 3,000 sets compiled, 400 as plain
    # Python (make test-nojit), where the quadratic scan would take minutes
    sets = _random_sets(rng, 400 if numba.config.DISABLE_JIT else 3000, W)
    sets = np.unique(sets, axis=0)
    hs = rng.integers(1, 4, size=sets.shape[0])
    hv = np.uint64(12345)
    unseen = _random_sets(np.random.default_rng(99), 200, W)
    queries = np.concatenate([sets, sets, unseen])
    qh = np.concatenate([hs, hs % 3 + 1, np.ones(200, dtype=np.int64)])
    found, feat, stats = _store_then_find(sets, hs, hv, queries, qh, 1 << 20)
    m = sets.shape[0]
    np.testing.assert_array_equal(feat, found.astype(np.int64))
    assert stats[S_ENTRIES] == m
    np.testing.assert_array_equal(found[:m], np.arange(m))  # stored sets, right depth
    assert np.all(found[m:2 * m] == -1)  # same sets at another depth budget
    assert np.all(found[2 * m:] == -1)  # sets never stored


def test_a_full_cache_refuses_and_stays_exact():
    rng = np.random.default_rng(5)
    sets = np.unique(_random_sets(rng, 100, 3), axis=0)
    hs = np.ones(sets.shape[0], dtype=np.int64)
    found, _, stats = _store_then_find(sets, hs, np.uint64(7), sets, hs, 40)
    assert stats[S_ENTRIES] == 40
    assert stats[S_CAP_HIT] == sets.shape[0] - 40
    np.testing.assert_array_equal(found[:40], np.arange(40))
    assert np.all(found[40:] == -1)


def test_entry_size_does_not_grow_with_the_row_count():
    assert entry_bytes(1) == entry_bytes(10_000) == 88
    assert entries_for_mb(1.0, 118) == 2**20 // 88
