"""A command's call statistics (``tidelog.callstats``), on both twins of the kernel."""

from __future__ import annotations

import pytest

from tests.support import twins
from tidelog import callstats  # noqa: F401 (bound per twin below)
from tidelog.callstats import HIST_BUCKETS, CallStats, now_ns

_NAMES = ["CallStats", "HIST_BUCKETS", "now_ns"]
_twin = twins.bind(globals(), "tidelog.callstats", _NAMES, alias="callstats")


def test_new_statistics_are_zero():
    stats = CallStats()
    assert (stats.calls, stats.ns, stats.failed, stats.rejected) == (0, 0, 0, 0)
    assert stats.hist == [0] * HIST_BUCKETS


def test_the_clock_is_monotonic_nanoseconds():
    first = now_ns()
    second = now_ns()
    assert isinstance(first, int) and 0 <= first <= second


@pytest.mark.parametrize("ago", [0, 1, 1000, 5_000_000, 3 * 10**9])
def test_stop_counts_the_call_its_time_and_its_bucket(ago):
    stats = CallStats()
    elapsed = stats.stop(now_ns() - ago)
    assert elapsed >= ago
    assert (stats.calls, stats.ns) == (1, elapsed)
    assert stats.hist[elapsed.bit_length()] == 1 and sum(stats.hist) == 1
    again = stats.stop(now_ns())
    assert (stats.calls, stats.ns) == (2, elapsed + again)
    assert sum(stats.hist) == 2


def test_the_counters_are_plain_attributes():
    # The engine adds to them (failed, rejected, a run's calls) and CONFIG
    # RESETSTAT sets them back to zero.
    stats = CallStats()
    stats.stop(now_ns())
    stats.failed += 2
    stats.rejected += 3
    stats.calls += 10
    assert (stats.calls, stats.failed, stats.rejected) == (11, 2, 3)
    stats.calls = stats.ns = stats.failed = stats.rejected = 0
    stats.hist = [0] * HIST_BUCKETS
    assert (stats.calls, stats.ns, sum(stats.hist)) == (0, 0, 0)


def test_a_subclass_adds_its_own_slots():
    class Entry(CallStats):  # the engine's Entry has this shape
        __slots__ = ("name",)

        def __init__(self, name: bytes) -> None:
            CallStats.__init__(self)
            self.name = name

    entry = Entry(b"ping")
    entry.stop(now_ns())
    assert (entry.name, entry.calls) == (b"ping", 1)
    with pytest.raises(AttributeError):
        entry.other = 1
