"""The prepared-matrix cache (`treebench.execute.prepared`): a large dataset's binarized rows
written once and memory-mapped; a predefined split's rows are views of the file, other splits
are gathered; the cell rows are those of the in-memory path; a stale or damaged file (its
checksum included) is never read, but rebuilt with a note; a fitted binarizer is kept as data
and a crafted file in its place never runs."""

from __future__ import annotations

import json
import mmap
import re
import tracemalloc

import numpy as np
import pandas as pd
import pytest

from treebench import api
from treebench.data.cachefile import CacheWarning, forget_all, header
from treebench.tree.columns import BinaryColumn
from treebench.execute import fitted, fold, prepared

from runs import net_frame, result_rows, tiny_config


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private cache root, fresh in-process caches, and every dataset counted as large."""
    root = tmp_path / "cache"
    monkeypatch.setenv("TREEBENCH_CACHE_DIR", str(root))
    monkeypatch.delenv("TREEBENCH_PREPARED_CACHE_GB", raising=False)
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())
    monkeypatch.setattr(fold, "CHUNKED_ABOVE", 0)
    monkeypatch.setattr(fold, "CHUNK_ROWS", 17)  # several blocks, a short last one
    return root / "prepared"


def _net(tmp_path, n=300, seed=3, test_rows=120):
    """A CSV with values float32 cannot hold (integers above 2**24, two-decimal rates), a text
    column, and a second file as the predefined test split."""
    rng = np.random.default_rng(seed)
    train, test = tmp_path / "net-train.csv", tmp_path / "net-test.csv"
    net_frame(rng, n).to_csv(train, index=False)
    net_frame(rng, test_rows).to_csv(test, index=False)
    return {"path": str(train), "test_path": str(test), "label": "label", "categorical": ["proto"], "name": "net"}


def _cell(ds, algorithm="cart", binarizer="raw", split=None, params=None):
    from treebench.config.cells import expand
    from treebench.config import validate_config

    exp = validate_config({"name": "p", "seed": 0, "datasets": [ds], "split": split or {"kind": "predefined"},
                           "binarization": [{"method": binarizer, "params": params or {}}],
                           "algorithms": [{"name": algorithm, "params": {"max_depth": 2}}]})
    return expand(exp)[0]


# ------------------------------------------------------------------ same rows as in memory


@pytest.mark.parametrize("split", [{"kind": "predefined"},
                                   {"kind": "permutation", "seeds": [1], "test_files": "merge"},
                                   {"kind": "kfold", "n_splits": 2, "test_files": "merge"}])
def test_cached_matrices_give_the_rows_of_the_in_memory_path(write_config, tmp_path, monkeypatch, cache, split):
    cfg = tiny_config(
        datasets=[_net(tmp_path)],
        split=split,
        binarization=[{"method": "raw"}, {"method": "quantile", "params": {"max_splits": 3}}],
        algorithms=[{"name": "cart", "params": {"max_depth": 4}},
                    {"name": "dpdt", "params": {"max_depth": 2}},
                    {"name": "greedy", "params": {"max_depth": 2}},
                    {"name": "topk", "params": {"k": 2, "max_depth": 2}}])
    path = write_config(cfg)
    built = api.run_experiment(path,
                               api.RunOptions(out=tmp_path / "built", progress=False, report=False))
    files = sorted(cache.glob(f"*{prepared.SUFFIX}"))
    # raw in float32 (CART) and float64 (DPDT), quantile in uint8; permutation and k-fold
    # folds whose quantile thresholds differ have their own files
    assert len(files) >= 3
    stamps = {p: p.stat().st_mtime_ns for p in files}
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    hit = api.run_experiment(path, api.RunOptions(out=tmp_path / "hit", progress=False, report=False))
    assert sorted(cache.glob(f"*{prepared.SUFFIX}")) == files  # read, not written again
    assert all(p.stat().st_size > 0 for p in stamps)
    with monkeypatch.context() as m:  # the cache off: the chunked in-memory path of before
        m.setenv("TREEBENCH_PREPARED_CACHE_GB", "0")
        m.setattr(fold, "_PREPARED", type(fold._PREPARED)())
        old = api.run_experiment(path,
                                 api.RunOptions(out=tmp_path / "old", progress=False, report=False))
    a, b, c = result_rows(built.out), result_rows(hit.out), result_rows(old.out)
    assert (a["status"] == "ok").all(), a.loc[a["status"] != "ok", ["cell_id", "error"]]
    assert set(a["algorithm_label"]) == {"cart", "dpdt", "greedy", "topk"}
    assert set(a["split"]) == {split["kind"]}, set(a["split"])
    pd.testing.assert_frame_equal(a, c)
    pd.testing.assert_frame_equal(b, c)


# ------------------------------------------------------------------ views, not copies


def test_predefined_split_is_a_read_only_view_that_scikit_learn_does_not_copy(tmp_path, cache):
    from sklearn.tree import DecisionTreeClassifier
    from sklearn.utils.validation import check_array

    prep = fold.prepare(_cell(_net(tmp_path, n=20000, test_rows=500)))
    for M in (prep.X_train, prep.X_test):
        assert M.dtype == np.float32 and not M.flags.writeable and M.flags.c_contiguous
        mm, _ = prepared._mapping(M)
        assert isinstance(mm, mmap.mmap)  # a view of the mapped file
    assert prepared._mapping(prep.X_train)[0] is prepared._mapping(prep.X_test)[0]
    assert prep.X_train.shape[0] == 20000 and prep.X_test.shape[0] == 500
    tracemalloc.start()
    try:
        Z = check_array(prep.X_train, dtype=np.float32)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.shares_memory(Z, prep.X_train)
    assert peak < prep.X_train.nbytes / 4
    DecisionTreeClassifier(max_depth=3, random_state=0).fit(prep.X_train, prep.y_train).predict(prep.X_test)


def test_other_splits_are_gathered_in_the_splits_order(tmp_path, cache):
    ds = _net(tmp_path, n=400, test_rows=100)
    split = {"kind": "permutation", "seeds": [3], "test_files": "merge"}
    got = fold.prepare(_cell(ds, split=split))
    assert sorted(cache.glob("*.tbm"))
    assert got.X_train.flags.writeable and prepared._mapping(got.X_train)[0] is None  # its own memory
    assert prepared._mapping(got.X_test)[0] is not None  # spilled: an unlinked mapped file
    with pytest.MonkeyPatch.context() as m:
        m.setenv("TREEBENCH_PREPARED_CACHE_GB", "0")
        m.setattr(fold, "_PREPARED", type(fold._PREPARED)())
        want = fold.prepare(_cell(ds, split=split))
    for a, b in ((got.X_train, want.X_train), (got.X_test, want.X_test)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got.y_train, want.y_train)


def test_gather_rows_equals_fancy_indexing_and_releases_the_source(tmp_path):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5000, 7)).astype(np.float32)
    shape, key = A.shape, "k"
    path = tmp_path / f"a{prepared.SUFFIX}"
    assert prepared.write_matrix(path, key, shape, A.dtype, iter([A[:1234], A[1234:]]))
    M = prepared.open_matrix(path, key, shape, A.dtype)
    assert M is not None and not M.flags.writeable
    np.testing.assert_array_equal(M, A)
    for rows in (rng.permutation(5000)[:3100], np.sort(rng.choice(5000, 700, replace=False)),
                 np.array([4999, 0, 0, 17]), np.array([], dtype=np.int64), np.arange(5000)):
        got = prepared.gather_rows(M, rows)
        assert got.flags.c_contiguous and got.flags.writeable and got.shape == (len(rows), 7)
        np.testing.assert_array_equal(got, A[rows])
        np.testing.assert_array_equal(prepared.gather_rows(M[100:], rows[rows < 4900]), A[100:][rows[rows < 4900]])
        np.testing.assert_array_equal(prepared.gather_rows(A, rows), A[rows])  # plain memory
    np.testing.assert_array_equal(M, A)  # dropped pages are read back from the file
    mm, off = prepared._mapping(M[10:])
    assert mm is prepared._mapping(M)[0] and off == prepared._mapping(M)[1] + 10 * 7 * 4


# ------------------------------------------------------------------ stale or damaged files


def _only_file(cache):
    files = sorted(cache.glob(f"*{prepared.SUFFIX}"))
    assert len(files) == 1, files
    return files[0]


def _fresh(monkeypatch):
    monkeypatch.setattr(fold, "_PREPARED", type(fold._PREPARED)())
    monkeypatch.setattr(fold, "_DATASETS", type(fold._DATASETS)())


def _damaged(data: bytes, damage: str, stem: str) -> bytes:
    """``data`` (a whole cache file) damaged as ``damage`` says."""
    if damage == "truncate":
        return data[:-7]
    if damage == "grow":
        return data + b"\0" * 8
    if damage == "header":
        return b"garbage!" + data[8:]
    if damage == "key":  # a valid file of another key under this name
        return data.replace(stem.split("-")[-1].encode(), b"0" * 24, 1)
    if damage == "empty":
        return b""
    if damage == "flip":  # same size, the middle bytes inverted
        mid = bytes(b ^ 0xFF for b in data[len(data) // 3 : len(data) // 2])
        return data[: len(data) // 3] + mid + data[len(data) // 2 :]
    if damage == "garbage":  # same size, random bytes
        return np.random.default_rng(0).integers(0, 256, len(data), dtype=np.uint8).tobytes()
    if damage == "old-version":  # the previous format: the same header without a checksum
        meta = json.dumps({"key": stem.split("-")[-1], "shape": json.loads(_meta(data))["shape"],
                           "dtype": json.loads(_meta(data))["dtype"]}).encode()
        head = b"TBPREP1\n" + len(meta).to_bytes(8, "little") + meta
        return head + b"\0" * (-len(head) % prepared.ALIGN) + data[-_nbytes(data):]
    raise AssertionError(damage)


def _meta(data: bytes) -> bytes:
    n = int.from_bytes(data[8:16], "little")
    return data[16 : 16 + n]


def _nbytes(data: bytes) -> int:
    meta = json.loads(_meta(data))
    return int(np.prod(meta["shape"])) * np.dtype(meta["dtype"]).itemsize


@pytest.mark.parametrize("damage", ["truncate", "grow", "header", "key", "empty", "flip", "garbage", "old-version"])
def test_a_damaged_file_is_rebuilt_never_read(tmp_path, monkeypatch, cache, damage):
    ds = _net(tmp_path)
    first = fold.prepare(_cell(ds))
    want = np.array(first.X_train), np.array(first.X_test)
    f = _only_file(cache)
    size = f.stat().st_size
    del first
    _fresh(monkeypatch)
    data = f.read_bytes()
    f.unlink()  # a new inode: the old mapping (if any) is never touched
    f.write_bytes(_damaged(data, damage, f.stem))
    with pytest.warns(CacheWarning, match=f"cache file {re.escape(str(f))} was damaged"):
        again = fold.prepare(_cell(ds))
    np.testing.assert_array_equal(again.X_train, want[0])
    np.testing.assert_array_equal(again.X_test, want[1])
    assert _only_file(cache) == f and f.stat().st_size == size  # rebuilt in place
    forget_all()
    assert prepared.open_matrix(f, f.stem.split("-")[-1], (len(want[0]) + len(want[1]), want[0].shape[1]),
                                np.float32) is not None


def test_the_checksum_is_computed_once_per_process_and_file_and_a_later_change_is_caught(tmp_path, monkeypatch):
    import time

    from treebench.data import cachefile

    A = np.arange(600, dtype=np.float64).reshape(100, 6)
    path = tmp_path / f"m{prepared.SUFFIX}"
    assert prepared.write_matrix(path, "k", A.shape, A.dtype, iter([A]))
    calls = []
    real = cachefile.hash_range
    monkeypatch.setattr(cachefile, "hash_range", lambda *a: calls.append(1) or real(*a))
    forget_all()  # as a new process: the writer's own record forgotten
    for _ in range(3):
        np.testing.assert_array_equal(prepared.open_matrix(path, "k", A.shape, A.dtype), A)
    assert len(calls) == 1
    # bytes changed in place by another program, same size: caught at the next open
    time.sleep(0.05)  # a later change time than the write's (coarse file-system clocks)
    with open(path, "r+b") as fh:
        fh.seek(prepared.ALIGN + 8)
        fh.write(np.float64(-1.0).tobytes())
    with pytest.warns(CacheWarning, match="checksum mismatch"):
        assert prepared.open_matrix(path, "k", A.shape, A.dtype) is None
    assert not path.exists()


def test_a_changed_source_file_gets_a_new_matrix(tmp_path, monkeypatch, cache):
    ds = _net(tmp_path)
    first = fold.prepare(_cell(ds))
    old_file = _only_file(cache)
    before = np.array(first.X_train)
    del first
    _fresh(monkeypatch)
    df = pd.read_csv(ds["path"])
    df.loc[0, "count"] = 123.0
    df.to_csv(ds["path"], index=False)
    again = fold.prepare(_cell(ds))
    assert again.X_train[0, 5] == 123.0 and before[0, 5] != 123.0
    np.testing.assert_array_equal(again.X_train[1:], before[1:])
    files = sorted(cache.glob(f"*{prepared.SUFFIX}"))
    assert len(files) == 2 and old_file in files  # another key; the old file is left to the cap


def test_the_cap_evicts_least_recently_used_files_and_a_matrix_over_it_is_not_cached(tmp_path, monkeypatch, cache):
    import os

    A = np.ones((100, 10), dtype=np.float64)  # 8000 bytes + a 4096-byte header
    cache.mkdir(parents=True)
    paths = [cache / f"m{i}{prepared.SUFFIX}" for i in range(3)]
    for i, p in enumerate(paths):
        assert prepared.write_matrix(p, f"k{i}", A.shape, A.dtype, iter([A]))
        os.utime(p, ns=(10**18 + i, 10**18 + i))
    prepared.open_matrix(paths[0], "k0", A.shape, A.dtype)  # used: now the most recent
    monkeypatch.setenv("TREEBENCH_PREPARED_CACHE_GB", str(2.5 * 12096 / 2**30))
    new = cache / f"new{prepared.SUFFIX}"
    assert prepared.write_matrix(new, "n", A.shape, A.dtype, iter([A]))
    assert sorted(p.name for p in cache.iterdir()) == sorted([new.name, paths[0].name])
    # a matrix larger than the cap is not written: the cell is prepared in memory
    monkeypatch.setenv("TREEBENCH_PREPARED_CACHE_GB", str(1000 / 2**30))
    assert not prepared.write_matrix(cache / f"big{prepared.SUFFIX}", "b", A.shape, A.dtype, iter([A]))
    prep = fold.prepare(_cell(_net(tmp_path)))
    assert prepared._mapping(prep.X_train)[0] is None and prep.X_train.dtype == np.float32


def test_an_unwritable_cache_warns_and_prepares_in_memory(tmp_path, monkeypatch, cache):
    cache.parent.mkdir(parents=True)
    cache.write_text("not a directory")
    with pytest.warns(RuntimeWarning, match="could not cache the prepared matrix"):
        prep = fold.prepare(_cell(_net(tmp_path)))
    assert prep.X_train.shape == (300, 6) and prepared._mapping(prep.X_train)[0] is None


def test_anonymous_and_small_data_do_not_use_the_cache(tmp_path, monkeypatch, cache):
    prep = fold.prepare(_cell("iris", split={"kind": "holdout"}))  # an in-memory dataset: no identity
    assert prepared._mapping(prep.X_train)[0] is None
    monkeypatch.setattr(fold, "CHUNKED_ABOVE", 1 << 22)
    prep = fold.prepare(_cell(_net(tmp_path)))  # small: the in-memory path
    assert prepared._mapping(prep.X_train)[0] is None
    assert not cache.exists() or not list(cache.iterdir())


def test_concurrent_builders_build_once(tmp_path, monkeypatch, cache):
    """Two processes that need the same missing matrix: one builds it, the other maps the file
    the first wrote (waiting on the build lock when they overlap)."""
    import multiprocessing as mp

    ds = _net(tmp_path, n=3000)
    cell = _cell(ds)
    built = mp.get_context("fork").Queue()

    def run():
        calls = []
        real = prepared.write_matrix
        monkeypatch.setattr(prepared, "write_matrix", lambda *a, **k: calls.append(1) or real(*a, **k))
        prep = fold.prepare(cell)
        built.put((len(calls), float(np.asarray(prep.X_train, dtype=np.float64).sum())))

    procs = [mp.get_context("fork").Process(target=run) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    got = [built.get(timeout=5) for _ in procs]
    assert sorted(n for n, _ in got) == [0, 1]
    assert got[0][1] == got[1][1]
    assert len(list(cache.glob(f"*{prepared.SUFFIX}"))) == 1


def test_a_fitted_binarizer_is_reused_by_later_cells_and_a_damaged_one_refitted(tmp_path, monkeypatch, cache):
    from treebench.binarize.compose import ColumnBinarizer

    ds = _net(tmp_path, n=400, test_rows=100)
    split = {"kind": "permutation", "seeds": [5], "test_files": "merge"}
    first = fold.prepare(_cell(ds, binarizer="quantile", split=split, params={"max_splits": 3}))
    want = [np.array(m) for m in (first.X_train, first.X_test)], first.columns
    fits = sorted(cache.glob(f"*{prepared.FIT_SUFFIX}"))
    assert len(fits) == 1
    _fresh(monkeypatch)

    def no_fit(self, *a, **k):
        raise AssertionError("fitted again")

    with monkeypatch.context() as m:
        m.setattr(ColumnBinarizer, "fit", no_fit)
        again = fold.prepare(_cell(ds, binarizer="quantile", split=split, params={"max_splits": 3}))
    np.testing.assert_array_equal(again.X_train, want[0][0])
    np.testing.assert_array_equal(again.X_test, want[0][1])
    assert again.columns == want[1]
    # other training rows (another seed) are another fit
    _fresh(monkeypatch)
    other = dict(split, seeds=[6])
    fold.prepare(_cell(ds, binarizer="quantile", split=other, params={"max_splits": 3}))
    assert len(list(cache.glob(f"*{prepared.FIT_SUFFIX}"))) == 2
    # a truncated file is fitted again, with the same result
    fits[0].write_bytes(fits[0].read_bytes()[:-5])
    _fresh(monkeypatch)
    with pytest.warns(CacheWarning, match="truncated"):
        third = fold.prepare(_cell(ds, binarizer="quantile", split=split, params={"max_splits": 3}))
    np.testing.assert_array_equal(third.X_train, want[0][0])
    assert third.columns == want[1]


def test_a_data_error_while_building_leaves_no_file_and_reaches_the_cell(tmp_path, monkeypatch, cache):
    """`none` needs 0/1 values: the test file's 2 is the same error as in memory, and no
    temporary or partial file is left."""
    from treebench.errors import DataError

    train, test = tmp_path / "b-train.csv", tmp_path / "b-test.csv"
    pd.DataFrame({"a": [0, 1, 0, 1] * 5, "b": [1, 1, 0, 0] * 5, "y": [0, 1, 1, 0] * 5}).to_csv(train, index=False)
    pd.DataFrame({"a": [0, 2], "b": [1, 0], "y": [0, 1]}).to_csv(test, index=False)
    ds = {"path": str(train), "test_path": str(test), "label": "y", "name": "bin"}
    with pytest.raises(DataError, match="0/1"):
        fold.prepare(_cell(ds, binarizer="none"))
    assert not [p for p in cache.iterdir() if not p.name.endswith((".lock", prepared.FIT_SUFFIX))]
    monkeypatch.setenv("TREEBENCH_PREPARED_CACHE_GB", "0")
    _fresh(monkeypatch)
    with pytest.raises(DataError, match="0/1"):
        fold.prepare(_cell(ds, binarizer="none"))


class _Marker:
    """Unpickling this creates the file ``path``: it stands for any code a pickle can run."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _framed_fit(key: str, payload: bytes) -> bytes:
    """A fitted-binarizer file around ``payload`` with a correct header and checksum."""
    import hashlib

    digest = hashlib.sha256(payload).hexdigest()
    return header(fitted.FIT_MAGIC, {"key": key, "length": len(payload), "sha256": digest}) + payload


def _npz(**arrays) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "pickle", "pickle-in-npz", "foreign-class"])
def test_a_damaged_or_crafted_fitted_binarizer_is_fitted_again_never_unpickled(tmp_path, monkeypatch, cache, damage):
    import pickle

    ds = _net(tmp_path, n=400, test_rows=100)
    cell = _cell(ds, binarizer="quantile", split={"kind": "permutation", "seeds": [5], "test_files": "merge"},
                 params={"max_splits": 3})
    first = fold.prepare(cell)
    want = np.array(first.X_train), np.array(first.X_test), first.columns
    (f,) = cache.glob(f"*{prepared.FIT_SUFFIX}")
    key, data = f.stem.split("-")[-1], f.read_bytes()
    marker = tmp_path / "pwned"
    if damage == "flip":
        f.write_bytes(data[: len(data) // 2] + bytes(b ^ 0xFF for b in data[len(data) // 2 : len(data) // 2 + 64])
                      + data[len(data) // 2 + 64 :])
    elif damage == "truncate":
        f.write_bytes(data[:-5])
    elif damage == "garbage":
        f.write_bytes(np.random.default_rng(1).integers(0, 256, len(data), dtype=np.uint8).tobytes())
    elif damage == "pickle":  # the former format of these files, holding a crafted object
        f.write_bytes(pickle.dumps({"key": key, "binarizer": _Marker(marker)}))
    elif damage == "pickle-in-npz":  # a correct header and checksum around a pickled array
        f.write_bytes(_framed_fit(key, _npz(state=np.array([_Marker(marker)], dtype=object))))
    else:  # a correct file naming a class that is not a binarizer
        state = json.dumps({"$binarizer": {"class": "subprocess.Popen", "params": {}, "fitted": {}}}).encode()
        f.write_bytes(_framed_fit(key, _npz(state=np.frombuffer(state, dtype=np.uint8))))
    _fresh(monkeypatch)
    with pytest.warns(CacheWarning, match=f"cache file {re.escape(str(f))} was damaged"):
        again = fold.prepare(cell)
    assert not marker.exists()
    np.testing.assert_array_equal(again.X_train, want[0])
    np.testing.assert_array_equal(again.X_test, want[1])
    assert again.columns == want[2]
    with open(f, "rb") as fh:  # fitted again and stored again, as data
        assert fitted.read_fitted(fh, key).columns_ == [BinaryColumn.from_dict(c) for c in want[2]]


def test_the_matrix_key_depends_on_imputed_fill_values():
    """Two folds whose columns agree but whose training medians differ fill missing values
    differently: their matrices must not share a cache entry."""
    import pandas as pd

    from treebench.binarize import make_binarizer
    from treebench.execute.prepared import matrix_key

    X = pd.DataFrame({"a": [1.0, 2.0, None, 4.0, 5.0, 6.0]})
    b1 = make_binarizer("raw", {"missing": "impute"}).fit(X.iloc[[0, 1, 2, 3]])
    b2 = make_binarizer("raw", {"missing": "impute"}).fit(X.iloc[[2, 3, 4, 5]])
    assert b1.fill_values_ != b2.fill_values_
    assert matrix_key("d", b1, "float64", 6) != matrix_key("d", b2, "float64", 6)
