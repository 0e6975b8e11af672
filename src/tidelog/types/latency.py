"""What the operator's commands keep about time spent: slowlog entries,
LATENCY events, and the per-command latency histogram.

Pure data, no clock of its own: the engine measures each command once
(:mod:`tidelog.callstats` around the handler, also INFO commandstats'
figure) and hands the duration here.

The histogram is deliberately cheap: one list of counters per command,
bucket ``ns.bit_length()`` (counted by ``CallStats.stop``, in C when compiled):
bucket ``b`` holds calls of ``2**(b-1)`` to ``2**b - 1`` ns.  Reports merge
the buckets up to 1023 ns into one "step", and step ``i`` is then bucket
``i + 10``: the steps at which Redis's LATENCY HISTOGRAM reports (its
HdrHistogram is iterated by powers of two from 1024 ns), so the histogram
reply has Redis's shape and labels.  INFO latencystats' percentiles are the upper ends of
those buckets: exact to within a factor of two, which is what a log2
histogram can say.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..callstats import HIST_BUCKETS as HIST_BUCKETS  # the histogram's length

# Buckets merged into the first reported step (durations under 1024 ns).
_FIRST_STEP = 10

# Redis trims slowlog arguments: at most 32 per entry, 128 bytes each.
SLOWLOG_MAX_ARGC = 32
SLOWLOG_MAX_STRING = 128

# LATENCY keeps the last 160 samples per event (one per second at most).
LATENCY_SAMPLES = 160


def bucket_of(ns: int) -> int:
    """The histogram bucket of a duration in nanoseconds."""
    return ns.bit_length()


def step_of(bucket: int) -> int:
    """The reported step of a bucket (step ``i`` ends at ``1024 << i`` ns)."""
    return max(0, bucket - _FIRST_STEP)


def step_top_ns(step: int) -> int:
    """The highest duration (ns) a step stands for, as HdrHistogram with
    two significant digits names the value ``1024 << step`` (its highest
    equivalent value)."""
    value = 1024 << step
    return value + value // 128 - 1


def step_label_us(step: int) -> int:
    """LATENCY HISTOGRAM's label for a step, in whole microseconds."""
    return step_top_ns(step) // 1000


def cumulative(hist: list[int]) -> list[tuple[int, int]]:
    """LATENCY HISTOGRAM's ``histogram_usec``: (label, calls so far) for
    each step that holds calls."""
    out: list[tuple[int, int]] = []
    total = 0
    for bucket, count in enumerate(hist):
        if count:
            total += count
            label = step_label_us(step_of(bucket))
            if out and out[-1][0] == label:
                out[-1] = (label, total)
            else:
                out.append((label, total))
    return out


def percentile_us(hist: list[int], percentile: float) -> float:
    """The duration (µs) at or under which ``percentile`` % of the calls
    ran: the upper end of the bucket where that share is reached."""
    total = sum(hist)
    if not total:
        return 0.0
    wanted = max(1, -(-total * percentile // 100))  # ceil, at least one call
    seen = 0
    for bucket, count in enumerate(hist):
        seen += count
        if seen >= wanted:
            return step_top_ns(step_of(bucket)) / 1000
    return step_top_ns(step_of(len(hist) - 1)) / 1000


def slowlog_args(argv: list[bytes]) -> list[bytes]:
    """A command's arguments as the slowlog keeps them: at most 32 (the
    last one then says how many more there were) of at most 128 bytes
    each (with how many more bytes there were)."""
    argc = len(argv)
    kept = argv if argc <= SLOWLOG_MAX_ARGC else argv[:SLOWLOG_MAX_ARGC - 1]
    out = [a if len(a) <= SLOWLOG_MAX_STRING else
           a[:SLOWLOG_MAX_STRING] + b"... (%d more bytes)" % (len(a) - SLOWLOG_MAX_STRING)
           for a in kept]
    if argc > SLOWLOG_MAX_ARGC:
        out.append(b"... (%d more arguments)" % (argc - SLOWLOG_MAX_ARGC + 1))
    return out


@dataclass(slots=True)
class SlowlogEntry:
    id: int
    time: int        # unix seconds
    micros: int      # how long the command ran
    argv: list[bytes]
    addr: bytes
    name: bytes


@dataclass
class LatencyEvent:
    """One LATENCY event class: its last samples (unix second, ms), at most
    one per second (the worst), and its all-time worst."""

    samples: list[tuple[int, int]] = field(default_factory=list)
    max: int = 0

    def add(self, now: int, ms: int) -> None:
        samples = self.samples
        if samples and samples[-1][0] == now:
            if ms > samples[-1][1]:
                samples[-1] = (now, ms)
        else:
            samples.append((now, ms))
            if len(samples) > LATENCY_SAMPLES:
                del samples[0]
        if ms > self.max:
            self.max = ms
