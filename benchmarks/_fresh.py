"""One fit in a fresh process, shared by the solver benchmarks (`topk_vs_peers`, `gosdt_vs_ref`,
`dpdt_exhaustive`, `search_memory`).

The child runs ``target(*args, conn)``: it loads data and warms up, sends ``"ready"`` (the time
limit starts then: loading and compiling are not timed), fits, and sends one result dict. The
parent enforces the time limit plus a grace period, optionally a memory cap (resident memory
polled with psutil), and reports how the child ended.
"""

from __future__ import annotations

import multiprocessing as mp
import time


def vm_hwm_mb() -> float:
    """Peak resident memory of this process (VmHWM; unlike ru_maxrss it is not inherited from
    the parent across fork/exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_fresh(target, args, limit: float, grace: float = 30.0, startup: float = 900.0,
              mem_gb: float | None = None):
    """Run ``target(*args, conn)`` in a spawned process. Returns ``(status, result, peak_mb)``:
    status "ok" (a result arrived), "timeout" (killed ``grace`` seconds after the limit, or
    ``startup`` seconds before "ready"), "memout" (killed above ``mem_gb``) or
    ``crash(EXITCODE)``; result is the child's dict or None; peak_mb the largest resident
    memory seen by polling (0 without ``mem_gb``: then only the child's own VmHWM counts)."""
    proc = None
    if mem_gb is not None:
        import psutil
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=target, args=(*args, child))
    p.start()
    child.close()
    if mem_gb is not None:
        proc = psutil.Process(p.pid)
    t0 = time.perf_counter()
    status, peak, res, ready = "ok", 0.0, None, False
    while True:
        if parent.poll(0.1):
            try:
                msg = parent.recv()
            except EOFError:
                break
            if msg == "ready":  # the time limit starts now (loading/compiling excluded)
                ready, t0 = True, time.perf_counter()
                continue
            res = msg
            break
        if not p.is_alive():
            break
        if proc is not None:
            try:
                rss = proc.memory_info().rss / 2**30
            except psutil.NoSuchProcess:
                break
            peak = max(peak, rss)
            if rss > mem_gb:
                status = "memout"
                p.kill()
                break
        if time.perf_counter() - t0 > (limit + grace if ready else startup):
            status = "timeout"
            p.kill()
            break
    p.join()
    if res is None and status == "ok":
        status = f"crash({p.exitcode})"
    return status, res, peak * 1024
