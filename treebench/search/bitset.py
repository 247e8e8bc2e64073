"""Row sets as bitsets: a set of training rows is ``W = ceil(n / 64)`` uint64 words, bit
``i % 64`` of word ``i // 64`` standing for row ``i``."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """LLVM ctpop on a uint64 (one machine instruction on current CPUs)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return sig, codegen


@intrinsic
def ctz(typingctx, x):
    """Count trailing zeros of a non-zero uint64."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(1)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.cttz.i64")
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return sig, codegen


def pack_columns(X01: np.ndarray) -> np.ndarray:
    """(n, d) 0/1 matrix -> uint64 (W, d) bitsets; bit ``i % 64`` of word ``i // 64`` is row i."""
    n, d = X01.shape
    W = max(1, (n + 63) // 64)
    bits = np.zeros((W * 64, d), dtype=np.uint8)
    bits[:n] = X01 != 0
    # little-endian bit order inside each byte, bytes little-endian inside the word
    packed = np.packbits(bits.reshape(W, 64, d), axis=1, bitorder="little")  # (W, 8, d)
    return np.ascontiguousarray(packed.transpose(0, 2, 1)).view(np.uint64).reshape(W, d)


def pack_rows(mask: np.ndarray) -> np.ndarray:
    """Boolean (n,) -> uint64 (W,) bitset."""
    return pack_columns(mask.reshape(-1, 1).astype(np.uint8))[:, 0].copy()


def pack_classes(y_index: np.ndarray, n_classes: int) -> np.ndarray:
    """Class indices (n,) -> uint64 (n_classes, W): the rows of each class as a bitset."""
    return np.ascontiguousarray(
        np.stack([pack_rows(y_index == c) for c in range(n_classes)]).reshape(n_classes, -1)
    )


def warmup_problem(n: int = 40, d: int = 5, n_classes: int = 3):
    """The tiny random problem the optimal searches compile their kernels on (`warmup`):
    X (n, d) 0/1 float, y class indices, their packed columns and classes, and weights
    (unit and random), from one fixed seed."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, size=(n, d)).astype(np.float64)
    y = rng.integers(0, n_classes, size=n).astype(np.int64)
    weights = (np.ones(n), rng.random(n) + 0.5)
    return X, y, pack_columns(X), pack_classes(y, n_classes), weights


@njit(cache=True)
def row_hash(rows, h):
    """64-bit hash of (depth budget ``h``, row set)."""
    x = np.uint64(h + 1) * np.uint64(0x9E3779B97F4A7C15)
    for w in range(rows.shape[0]):
        x = (x ^ rows[w]) * np.uint64(0x100000001B3)
        x ^= x >> np.uint64(29)
    return x


@njit(cache=True)
def split_rows(rows, F, j, r0, r1):
    """``r0`` = rows with x_j = 0, ``r1`` = rows with x_j = 1."""
    for w in range(rows.shape[0]):
        fw = F[w, j]
        r1[w] = rows[w] & fw
        r0[w] = rows[w] & ~fw


@njit(cache=True)
def count_minus(a, b):
    """|a minus b|: rows of ``a`` that are not in ``b``."""
    s = 0
    for w in range(a.shape[0]):
        s += popcount(a[w] & ~b[w])
    return s


@njit(cache=True)
def count_rows(rows):
    s = 0
    for w in range(rows.shape[0]):
        s += popcount(rows[w])
    return s
