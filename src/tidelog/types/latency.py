"""What the operator's commands keep about time spent: slowlog entries,
LATENCY events, and the per-command latency histogram.

Pure data, no clock of its own: the engine measures each command once
(``perf_counter_ns`` around the handler, also INFO commandstats' figure)
and hands the duration here.

The histogram is deliberately cheap: one list of counters per command,
bucket ``((ns - 1) >> 10).bit_length()`` -- bucket 0 holds calls up to
1024 ns, bucket ``i`` those in ``(1024 * 2**(i-1), 1024 * 2**i]``.  These are
the steps at which Redis's LATENCY HISTOGRAM reports (its HdrHistogram is
iterated by powers of two from 1024 ns), so the histogram reply has Redis's
shape and labels.  INFO latencystats' percentiles are the upper ends of
those buckets: exact to within a factor of two, which is what a log2
histogram can say.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Buckets: bit lengths of (ns - 1) >> 10 for any duration below 2**63 ns.
HIST_BUCKETS = 64

# Redis trims slowlog arguments: at most 32 per entry, 128 bytes each.
SLOWLOG_MAX_ARGC = 32
SLOWLOG_MAX_STRING = 128

# LATENCY keeps the last 160 samples per event (one per second at most).
LATENCY_SAMPLES = 160


def bucket_of(ns: int) -> int:
    """The histogram bucket of a duration in nanoseconds."""
    return ((ns - 1) >> 10).bit_length()


def bucket_top_ns(index: int) -> int:
    """The highest duration (ns) a bucket stands for, as HdrHistogram with
    two significant digits names the step ``1024 << index`` (its highest
    equivalent value)."""
    value = 1024 << index
    return value + value // 128 - 1


def bucket_label_us(index: int) -> int:
    """LATENCY HISTOGRAM's label for a bucket, in whole microseconds."""
    return bucket_top_ns(index) // 1000


def cumulative(hist: list[int]) -> list[tuple[int, int]]:
    """LATENCY HISTOGRAM's ``histogram_usec``: (label, calls so far) for
    each bucket that holds calls."""
    out, total = [], 0
    for index, count in enumerate(hist):
        if count:
            total += count
            out.append((bucket_label_us(index), total))
    return out


def percentile_us(hist: list[int], percentile: float) -> float:
    """The duration (µs) at or under which ``percentile`` % of the calls
    ran: the upper end of the bucket where that share is reached."""
    total = sum(hist)
    if not total:
        return 0.0
    wanted = max(1, -(-total * percentile // 100))  # ceil, at least one call
    seen = 0
    for index, count in enumerate(hist):
        seen += count
        if seen >= wanted:
            return bucket_top_ns(index) / 1000
    return bucket_top_ns(len(hist) - 1) / 1000


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
