"""The fork pool's hand-out of cells: a worker stays on the fold it binarized while that fold
has cells left, and starts a fold no other worker is on before joining one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from treebench.execute.pool import CellQueue


@settings(max_examples=300, deadline=None)
@given(keys=st.lists(st.integers(0, 6), min_size=1, max_size=40),
       n=st.integers(1, 4), order=st.lists(st.integers(0, 3), max_size=200))
def test_each_cell_once_workers_keep_their_fold_and_start_free_ones(keys, n, order):
    q = CellQueue(keys)
    assert len(q) == len(keys)
    last: list = [None] * n
    taken: list[int] = []
    left = list(range(len(keys)))
    turns = iter(order)
    while q:
        w = next(turns, len(taken)) % n
        busy = {last[v] for v in range(n) if v != w}
        i, key = q.take(last[w], busy)
        assert key == keys[i] and i in left
        mine = [j for j in left if keys[j] == last[w]]
        folds = sorted({keys[j] for j in left}, key=keys.index)  # by their first cell
        free = [k for k in folds if k not in busy]
        if mine:  # its own fold first, in the cells' order
            assert i == mine[0]
        else:  # else the first fold nobody else is on, else the first fold left
            want = free[0] if free else folds[0]
            assert i == min(j for j in left if keys[j] == want)
        left.remove(i)
        taken.append(i)
        last[w] = key
    assert sorted(taken) == list(range(len(keys))) and not left and len(q) == 0


def test_two_workers_binarize_each_fold_once_until_the_last():
    # five folds of four cells, in the grid's order (learner-major: folds interleaved)
    keys = [f for _ in range(4) for f in "abcde"]
    q = CellQueue(keys)
    last = [None, None]
    starts = []  # (worker, fold) each time a worker moves to another fold
    w = 0
    while q:
        i, key = q.take(last[w], {last[1 - w]})
        if key != last[w]:
            starts.append((w, key))
        last[w] = key
        w = 1 - w
    folds = [k for _, k in starts]
    # every fold started once, but the last one, which the idle worker joins
    assert sorted(set(folds)) == list("abcde") and len(folds) == 6
    assert folds[:5] == list("abcde")
