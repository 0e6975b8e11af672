"""A command's call statistics, and the stopwatch that times each call.

Redis times every command it runs (INFO commandstats' ``usec``, INFO
latencystats and LATENCY HISTOGRAM, SLOWLOG); so does the engine, around
each handler::

    started = now_ns()
    ...                        # the handler
    elapsed = stats.stop(started)

``stop`` counts the call, adds its duration to the total and to the
latency histogram (bucket ``elapsed.bit_length()``: bucket ``b`` holds
calls of ``2**(b-1)`` to ``2**b - 1`` ns; :mod:`tidelog.types.latency`
reports them), and returns the duration for the slowlog's check.

A typed kernel (:mod:`tidelog.kernels`): compiled, the clock is read with
``clock_gettime`` and the counters are C integers, so timing a call costs
two calls from Python instead of two clock reads, a big-integer sum and a
histogram update written in Python (about 1,200 of a PING's 12,300
instructions in-process).  Both twins read the monotonic clock
(``time.perf_counter_ns`` is ``CLOCK_MONOTONIC`` on Linux); only
differences of its readings are used.
"""

from __future__ import annotations

from time import perf_counter_ns

try:
    import cython
except ImportError:  # the pure twin, without Cython installed
    from tidelog.kernels import PURE_CYTHON as cython

# Buckets: the bit lengths of durations below 2**64 ns.
HIST_BUCKETS = 65


@cython.cfunc
@cython.inline
def _clock() -> cython.longlong:
    """The monotonic clock in ns (compiled twin only)."""
    ts = cython.declare(timespec)  # type: ignore[name-defined]  # cimported by callstats.pxd, as the two names below
    clock_gettime(CLOCK_MONOTONIC, cython.address(ts))  # type: ignore[name-defined]
    return ts.tv_sec * 1000000000 + ts.tv_nsec


def now_ns() -> int:
    """The monotonic clock, in nanoseconds: a call's start for :meth:`CallStats.stop`."""
    if cython.compiled:
        return _clock()
    return perf_counter_ns()


class CallStats:
    """One command's counters: calls, their total time in ns, the calls that
    answered an error (failed) or were refused before running (rejected),
    and the latency histogram (a list of HIST_BUCKETS counts).  Plain
    attributes for everything but the per-call update, :meth:`stop`.
    (Compiled, a C type whose counters are C integers: callstats.pxd.)"""

    __slots__ = ("calls", "ns", "failed", "rejected", "hist")

    def __init__(self) -> None:
        self.calls = 0
        self.ns = 0
        self.failed = 0
        self.rejected = 0
        self.hist = [0] * HIST_BUCKETS

    @cython.locals(elapsed=cython.longlong, bucket=cython.int, rest=cython.ulonglong)
    def stop(self, started: cython.longlong) -> int:
        """A call that began at ``now_ns() == started`` ended now: count it,
        add its duration to the total and to the histogram; return it (ns).
        Cost: O(1)."""
        if cython.compiled:
            elapsed = _clock() - started
            bucket = 0
            rest = elapsed
            while rest:  # the bit length of elapsed
                bucket += 1
                rest >>= 1
        else:
            elapsed = perf_counter_ns() - started
            bucket = elapsed.bit_length()
        self.calls += 1
        self.ns += elapsed
        hist: list = self.hist
        hist[bucket] += 1
        return elapsed
