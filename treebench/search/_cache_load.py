"""Loading treebench's compiled kernels from numba's disk cache without importing a compiler.

Before numba loads a function from its disk cache (``@njit(cache=True)``), it "refreshes" its
compilation context: it imports and registers every implementation it has (NumPy's linear
algebra, polynomials and random generators, typed containers, jitclasses, datetimes, ...), as
a compilation would need. Loading machine code needs almost none of it: only numba's runtime
(the reference-counted memory that arrays live in) and the hash secret of the process (for
code that hashes). In a fresh process the refresh costs about 11 MB of peak memory, a tenth of
the whole numba footprint of an optimal search (``docs/search-speed.md``, "Where the memory
goes").

`install` makes numba load the kernels of treebench's own modules by that short path; every
other function loads as numba loads it. The first real compilation in a process still refreshes
the context (numba's compiler does so before it starts), so a kernel missing from the cache
compiles as before. When numba's internals are not the ones this was written against (the
methods named in `_REQUIRED`), `install` changes nothing and loading is numba's usual path.
"""

from __future__ import annotations

from typing import Any

#: The private parts of ``numba.core.caching.Cache`` the short path relies on.
_REQUIRED = ("load_overload", "_load_overload", "_guard_against_spurious_io_errors")
#: Marks the method `install` puts in place, so that installing twice wraps nothing twice.
_MARK = "_treebench_short_load"


def _is_treebench_kernel(cache: Any) -> bool:
    """Whether a numba cache object belongs to a function of a treebench module."""
    module = getattr(getattr(cache, "_py_func", None), "__module__", None) or ""
    return module == "treebench" or module.startswith("treebench.")


def short_loader(usual, rtsys):
    """The cache-loading method: the short path for treebench's kernels, ``usual`` (numba's
    method) for every other function."""

    def load_overload(self, sig, target_context):
        if not _is_treebench_kernel(self):
            return usual(self, sig, target_context)
        rtsys.initialize(target_context)  # what the refresh does that loading needs
        import numba.cpython.hashing  # noqa: F401  (registers the hash secret's symbols)

        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    setattr(load_overload, _MARK, True)
    return load_overload


def install(cache_class: Any = None, rtsys: Any = None) -> bool:
    """Put the short path in place on numba's ``Cache`` (or on ``cache_class``); returns
    whether it is in place. Idempotent."""
    try:
        if cache_class is None:
            from numba.core.caching import Cache as cache_class
        if rtsys is None:
            from numba.core.runtime import rtsys
    except ImportError:
        return False
    if not all(callable(getattr(cache_class, name, None)) for name in _REQUIRED):
        return False
    if not callable(getattr(rtsys, "initialize", None)):
        return False
    usual = cache_class.load_overload
    if not getattr(usual, _MARK, False):
        cache_class.load_overload = short_loader(usual, rtsys)
    return True
