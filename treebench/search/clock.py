"""The deadline clock of anytime searches: ``clock[0]`` holds an absolute
``time.perf_counter()`` deadline (<= 0: none); `check_time` looks at the time every 256th call
and raises ``S_TIMED_OUT``.

Where ``time.perf_counter`` is ``clock_gettime(CLOCK_MONOTONIC)`` (Linux), compiled code calls
that C function itself (`monotonic_seconds`: the same clock, so Python's deadlines compare with
it). Elsewhere it reads ``time.perf_counter()`` through numba's object mode, whose first use
costs about 40 ms and 2 MB of memory per process."""

from __future__ import annotations

import sys
import time

from llvmlite import ir
from numba import njit, objmode, types
from numba.core import cgutils, config
from numba.extending import intrinsic

from treebench.search.state import S_TICK, S_TIMED_OUT

#: Linux's CLOCK_MONOTONIC, the clock of ``time.perf_counter`` there
CLOCK_MONOTONIC = 1
#: whether compiled code reads the clock directly (see the module's docstring; not without
#: compilation, ``NUMBA_DISABLE_JIT=1``, where an intrinsic has no Python body)
NATIVE_CLOCK = (sys.platform.startswith("linux") and not config.DISABLE_JIT
                and time.get_clock_info("perf_counter").implementation
                == "clock_gettime(CLOCK_MONOTONIC)")


@intrinsic
def monotonic_seconds(typingctx):
    """``clock_gettime(CLOCK_MONOTONIC)`` in seconds (a ``struct timespec`` of two 64-bit
    fields on 64-bit Linux), from compiled code."""
    sig = types.float64()

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        spec = ir.LiteralStructType([i64, i64])
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), spec.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        ts = cgutils.alloca_once(builder, spec)
        builder.call(fn, [ir.Constant(ir.IntType(32), CLOCK_MONOTONIC), ts])
        sec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ts, 0, 1))
        dbl = ir.DoubleType()
        return builder.fadd(builder.sitofp(sec, dbl),
                            builder.fmul(builder.sitofp(nsec, dbl), ir.Constant(dbl, 1e-9)))

    return sig, codegen


if NATIVE_CLOCK:
    @njit(cache=True)
    def now_seconds():
        """time.perf_counter() from compiled code (the same C clock, read directly)."""
        return monotonic_seconds()
else:
    @njit(cache=True)
    def now_seconds():
        """time.perf_counter() from compiled code (object mode; call sparingly)."""
        with objmode(now="float64"):
            now = time.perf_counter()
        return now


@njit(cache=True)
def check_time(stats, clock):
    """Count a tick; every 256 ticks compare the time with the deadline."""
    stats[S_TICK] += 1
    if clock[0] > 0.0 and (stats[S_TICK] & 255) == 0:
        now = now_seconds()
        if now > clock[0]:
            stats[S_TIMED_OUT] = 1


@njit(cache=True)
def timed_out(stats):
    return stats[S_TIMED_OUT] != 0
