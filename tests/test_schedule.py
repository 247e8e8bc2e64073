"""The order tests are handed to pytest-xdist workers (`tests/_schedule.py`)."""

from __future__ import annotations

import random

from _schedule import DURATIONS, LONG, block_sizes, from_log, load_durations, worker_order


def test_block_sizes_are_pytest_xdists_cut():
    assert block_sizes(10, 3) == [3, 3, 4] and sum(block_sizes(6541, 3)) == 6541
    assert block_sizes(2, 3) == [0, 1, 1]


def test_each_block_starts_with_its_long_tests_and_the_rest_keep_their_order():
    rng = random.Random(0)
    ids = [f"t{i}" for i in range(200)]
    durations = {t: rng.choice([0.1, 3.0, 9.0, 30.0]) for t in ids if rng.random() < 0.2}
    for workers in (2, 3, 4):
        order = worker_order(ids, durations, workers)
        assert sorted(order) == list(range(200))
        start, loads = 0, []
        for size in block_sizes(200, workers):
            block = [ids[i] for i in order[start:start + size]]
            start += size
            is_long = [durations.get(t, 0.0) >= LONG for t in block]
            n_long = sum(is_long)
            assert is_long == [True] * n_long + [False] * (size - n_long)  # long ones first
            secs = [durations[t] for t in block[:n_long]]
            assert secs == sorted(secs, reverse=True)
            loads.append(sum(secs))
        # dealt longest first to the least loaded: no block ahead by more than the longest
        assert max(loads) - min(loads) <= max(durations.values())
        short = [i for i in order if durations.get(ids[i], 0.0) < LONG]
        assert short == sorted(short)  # collection order


def test_one_worker_or_no_durations_keep_the_collection_order():
    ids = [f"t{i}" for i in range(7)]
    assert worker_order(ids, {"t3": 10.0}, 1) == list(range(7))
    assert worker_order(ids, {}, 3) == list(range(7))


def test_the_durations_file_is_read_and_refreshed_from_a_durations_report():
    measured = load_durations(DURATIONS)
    assert measured and all(v >= LONG for v in measured.values())
    log = ("3.00s call     tests/a.py::test_x[1]\n0.50s setup    tests/a.py::test_x[1]\n"
           "1.00s call     tests/a.py::test_y\n")
    assert from_log(log) == {"tests/a.py::test_x[1]": 3.5}
