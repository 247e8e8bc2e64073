"""The order the suite's tests are handed to pytest-xdist workers: the long tests first, spread
over the workers by their measured durations.

``pytest -n W --dist worksteal`` cuts the collected tests into ``W`` contiguous blocks of about
equal count, one per worker, and an idle worker later takes the last half of the longest queue.
About 180 of the 6,500 tests (those waiting on clusters, killed runs, the site build, the
command line in a subprocess) take three quarters of the suite's time; in collection order
several of them ended the run on one worker while the others had stopped. Here each block
starts with its share of the long tests, dealt longest first to the block with the least
expected time, followed by a contiguous run of the other tests in collection order; what is
stolen at the end is then short tests.

``tests/durations.json`` holds the wall seconds of the tests that took 2.5 s or more in one
run; a test missing from it counts as short. To refresh it from a run with
``--durations=0``: ``python tests/_schedule.py LOG > tests/durations.json``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
DURATIONS = Path(__file__).with_name("durations.json")
#: a test at or above this many seconds is dealt out first
LONG = 2.5


def load_durations(path: Path = DURATIONS) -> dict[str, float]:
    """The measured seconds by test id; empty when the file is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def block_sizes(n: int, workers: int) -> list[int]:
    """How many of ``n`` tests each of ``workers`` gets first: pytest-xdist's cut (each idle
    worker in turn takes the pending count divided by the workers still to serve)."""
    sizes, left = [], n
    for i in range(workers):
        take = left // (workers - i)
        sizes.append(take)
        left -= take
    return sizes


def worker_order(ids: list[str], durations: dict[str, float], workers: int) -> list[int]:
    """The positions of ``ids`` (in collection order) in the order to hand out: ``workers``
    blocks of `block_sizes`, each its long tests (longest first), then short ones."""
    if workers < 2 or not ids:
        return list(range(len(ids)))
    sizes = block_sizes(len(ids), workers)
    long = sorted((i for i, t in enumerate(ids) if durations.get(t, 0.0) >= LONG),
                  key=lambda i: (-durations[ids[i]], i))
    blocks: list[list[int]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for i in long:  # longest first to the least loaded block that has room
        room = [w for w in range(workers) if len(blocks[w]) < sizes[w]]
        w = min(room, key=lambda b: (load[b], b))
        blocks[w].append(i)
        load[w] += durations[ids[i]]
    short = iter(i for i, t in enumerate(ids) if durations.get(t, 0.0) < LONG)
    for w in range(workers):
        blocks[w].extend(next(short) for _ in range(sizes[w] - len(blocks[w])))
    return [i for b in blocks for i in b]


def reorder(items: list[T], ids: list[str], durations: dict[str, float], workers: int) -> list[T]:
    """``items`` (with test ids ``ids``) in `worker_order`."""
    return [items[i] for i in worker_order(ids, durations, workers)]


def from_log(text: str) -> dict[str, float]:
    """Per test, the seconds of its setup, call and teardown in a ``--durations=0`` report,
    kept at `LONG` seconds or more."""
    total: dict[str, float] = {}
    for m in re.finditer(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(\S+)", text, re.M):
        total[m.group(2)] = total.get(m.group(2), 0.0) + float(m.group(1))
    return {k: round(v, 1) for k, v in sorted(total.items()) if v >= LONG}


if __name__ == "__main__":
    print(json.dumps(from_log(Path(sys.argv[1]).read_text(encoding="utf-8")), indent=0))
