"""The per-command latency histogram, LATENCY events and slowlog trimming."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tidelog.types.latency import (
    HIST_BUCKETS,
    LATENCY_SAMPLES,
    LatencyEvent,
    bucket_of,
    cumulative,
    percentile_us,
    slowlog_args,
    step_label_us,
    step_of,
    step_top_ns,
)


def test_bucket_labels_are_redis_steps():
    # LATENCY HISTOGRAM labels of redis-server 7.0 (HdrHistogram, 2 digits)
    assert [step_label_us(i) for i in range(8)] == [1, 2, 4, 8, 16, 33, 66, 132]


@settings(max_examples=300)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_bucket_holds_the_duration(ns):
    bucket = bucket_of(ns)
    assert bucket < HIST_BUCKETS
    assert ns < 2**bucket and (bucket == 0 or ns >= 2**(bucket - 1))
    step = step_of(bucket)
    assert step_top_ns(step) >= ns  # the step's label never understates
    assert step == 0 or ns >= 1024 << (step - 1)


def _hist(durations):
    hist = [0] * HIST_BUCKETS
    for ns in durations:
        hist[bucket_of(ns)] += 1
    return hist


def test_cumulative_and_percentiles():
    hist = _hist([500] * 90 + [3000] * 9 + [40_000])
    assert cumulative(hist) == [(1, 90), (4, 99), (66, 100)]
    assert percentile_us(hist, 50) == 1.031
    assert percentile_us(hist, 99) == 4.127
    assert percentile_us(hist, 99.9) == 66.047
    assert percentile_us(hist, 100) == 66.047
    assert percentile_us(hist, 0) == 1.031
    assert percentile_us([0] * HIST_BUCKETS, 50) == 0.0


@settings(max_examples=100)
@given(st.lists(st.integers(min_value=1, max_value=10**9), min_size=1, max_size=50),
       st.floats(min_value=0, max_value=100))
def test_percentile_bounds_the_share(durations, p):
    """At least p% of the calls took no longer than the answer, which is
    within a factor of two of the true percentile."""
    answer_ns = percentile_us(_hist(durations), p) * 1000
    assert sum(1 for d in durations if d <= answer_ns + 1) >= len(durations) * p / 100
    ordered = sorted(durations)
    true = ordered[max(0, -(-len(ordered) * int(p * 1000) // 100_000) - 1)]
    assert answer_ns <= max(1031, 2.02 * true) + 1


def test_latency_event_keeps_the_worst_per_second():
    event = LatencyEvent()
    event.add(100, 5)
    event.add(100, 9)
    event.add(100, 7)
    event.add(101, 3)
    assert event.samples == [(100, 9), (101, 3)] and event.max == 9
    for t in range(200, 200 + LATENCY_SAMPLES + 5):
        event.add(t, 1)
    assert len(event.samples) == LATENCY_SAMPLES and event.max == 9


def test_slowlog_trimming():
    assert slowlog_args([b"a"] * 32) == [b"a"] * 32
    trimmed = slowlog_args([b"a"] * 40)
    assert len(trimmed) == 32 and trimmed[-1] == b"... (9 more arguments)"
    assert slowlog_args([b"x" * 128]) == [b"x" * 128]
    assert slowlog_args([b"x" * 130]) == [b"x" * 128 + b"... (2 more bytes)"]


def test_memory_doctor_rules():
    from tidelog.commands.server.memory import memory_doctor_text

    mb = 1024 * 1024
    figures = {"startup": 30 * mb, "total": 33 * mb, "peak": 33 * mb}
    assert memory_doctor_text(figures).startswith("Hi Sam, this instance is empty")
    figures.update(total=60 * mb, peak=61 * mb)
    assert memory_doctor_text(figures) == ("Hi Sam, I can't find any memory issue in your "
                                           "instance. I can only account for what occurs on "
                                           "this base.\n")
    figures.update(peak=100 * mb)
    assert memory_doctor_text(figures).startswith("Sam, I detected a few issues")
