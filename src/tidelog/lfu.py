"""Redis's LFU counter, and the per-key field it shares with the LRU clock.

Redis keeps 24 bits per value for its eviction policies (the object's
``lru`` field).  Under an LFU policy they hold a logarithmic access counter
(a Morris counter) and the time it was last decayed::

    +--------------------------------------------+---------------+
    | last decrement time: Unix minutes mod 2^16 | counter 0-255 |
    +--------------------------------------------+---------------+
                  16 bits                            8 bits

Under every other policy they hold the LRU clock: Unix seconds mod 2^24
when the key was last used (under LRM: last written).  Switching the policy
at run time converts nothing; Redis reads the same bits the new way, so a
key last used under LRU answers ``OBJECT FREQ`` with its clock's low byte,
decayed by the "minutes" between the clock's high 16 bits and now, and a
key last used under LFU answers ``OBJECT IDLETIME`` as if its counter word
were a clock (both are what :func:`counter` and :func:`clock_idle_ms` give
for the other kind of value).  The keyspace keeps LRU times in Unix ms and
LFU words as they are (:mod:`tidelog.keyspace`).

The counter, as redis.io's "Key eviction" page describes it: a new key
starts at ``LFU_INIT_VAL`` (5).  Each access first decays it by one per
``lfu-decay-time`` minutes since the last decrement time (not below 0; a
decay time of 0 never decays), then increments it with probability
``1 / ((counter - 5) * lfu-log-factor + 1)`` (always at 5 or below; never
past 255), and stamps the decrement time with the current minute.
``OBJECT FREQ`` and eviction read the decayed counter without storing it.
Every function here is O(1).
"""

from __future__ import annotations

import random as _random
from collections.abc import Callable

LFU_INIT_VAL = 5          # a new key's counter
COUNTER_MAX = 255
LRU_CLOCK_MAX = (1 << 24) - 1   # the LRU clock wraps after 2^24 s (194 days)
_MINUTES_MASK = (1 << 16) - 1


def lru_clock(ms: int) -> int:
    """The LRU clock at Unix time ``ms``: seconds mod 2^24."""
    return (ms // 1000) & LRU_CLOCK_MAX


def minutes(ms: int) -> int:
    """The decrement-time clock at Unix time ``ms``: minutes mod 2^16."""
    return (ms // 60_000) & _MINUTES_MASK


def clock_idle_ms(field: int, now_ms: int) -> int:
    """How long ago a 24-bit field read as an LRU clock was stamped, in
    whole seconds (as ms), assuming the clock wrapped at most once."""
    clock = lru_clock(now_ms)
    if clock >= field:
        return (clock - field) * 1000
    return (clock + LRU_CLOCK_MAX - field) * 1000


def minutes_since(stamp: int, now_ms: int) -> int:
    """Minutes from a 16-bit decrement time to now, assuming the clock
    wrapped at most once (Redis counts the wrap as 65535, one short)."""
    now = minutes(now_ms)
    return now - stamp if now >= stamp else _MINUTES_MASK - stamp + now


def counter(word: int, now_ms: int, decay_time: int) -> int:
    """The counter of an LFU word decayed to now: minus one per
    ``decay_time`` minutes since its decrement time, down to 0."""
    count = word & 0xFF
    if decay_time:
        count = max(0, count - minutes_since(word >> 8, now_ms) // decay_time)
    return count


def log_incr(count: int, log_factor: int, rand: Callable[[], float]) -> int:
    """The counter after one access: +1 with probability
    ``1 / ((count - LFU_INIT_VAL) * log_factor + 1)``; ``rand()`` (uniform
    in [0, 1)) is drawn once, and only below the maximum."""
    if count == COUNTER_MAX:
        return count
    base = max(0, count - LFU_INIT_VAL)
    return count + 1 if rand() < 1.0 / (base * log_factor + 1) else count


def new_word(now_ms: int) -> int:
    """A new key's word: the counter at ``LFU_INIT_VAL``, decayed now."""
    return minutes(now_ms) << 8 | LFU_INIT_VAL


def word_of(count: int, now_ms: int) -> int:
    """The word holding ``count`` (0-255), decayed now (RESTORE ... FREQ)."""
    return minutes(now_ms) << 8 | count


class Lfu:
    """What a lookup needs to count an access: ``lfu-log-factor``,
    ``lfu-decay-time`` (minutes) and the random source (``random.random``;
    tests pass a seeded one)."""

    __slots__ = ("log_factor", "decay_time", "random")

    def __init__(self, log_factor: int = 10, decay_time: int = 1,
                 rand: Callable[[], float] = _random.random) -> None:
        self.log_factor = log_factor
        self.decay_time = decay_time
        self.random = rand

    def accessed(self, word: int, now_ms: int) -> int:
        """The word after one access: decayed, incremented by chance,
        stamped with the current minute."""
        count = log_incr(counter(word, now_ms, self.decay_time), self.log_factor, self.random)
        return minutes(now_ms) << 8 | count

    def counter(self, word: int, now_ms: int) -> int:
        """The decayed counter (what OBJECT FREQ shows)."""
        return counter(word, now_ms, self.decay_time)
