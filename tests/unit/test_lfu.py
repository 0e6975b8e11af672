"""The LFU counter arithmetic (lfu.py) against a plain model of redis.io's
description, with fixed random sources: the logarithmic increment's
probability, the decay by ``lfu-decay-time`` minutes (and the 16-bit minute
clock's wrap), and the LRU clock reading of the same 24 bits."""

from __future__ import annotations

import random

import pytest

from tidelog import lfu
from tidelog.lfu import Lfu

MINUTE = 60_000


class CounterModel:
    """One key's counter, straight from the description: decay one step per
    ``decay`` minutes since the last access, then increment with probability
    1 / ((counter - 5) * factor + 1), at most to 255."""

    def __init__(self, now_ms: int, factor: int, decay: int, rand) -> None:
        self.count = 5
        self.minute = now_ms // MINUTE % 65536
        self.factor, self.decay, self.rand = factor, decay, rand

    def elapsed(self, now_ms: int) -> int:
        minute = now_ms // MINUTE % 65536
        return minute - self.minute if minute >= self.minute else 65535 - self.minute + minute

    def read(self, now_ms: int) -> int:
        if not self.decay:
            return self.count
        return max(0, self.count - self.elapsed(now_ms) // self.decay)

    def access(self, now_ms: int) -> None:
        self.count = self.read(now_ms)
        if self.count < 255 and self.rand() < 1 / (max(0, self.count - 5) * self.factor + 1):
            self.count += 1
        self.minute = now_ms // MINUTE % 65536


@pytest.mark.parametrize("factor", [0, 1, 10, 100])
@pytest.mark.parametrize("decay", [0, 1, 3])
def test_the_counter_follows_the_model(factor: int, decay: int) -> None:
    walk = random.Random(factor * 10 + decay)
    # Start a few minutes before the 16-bit minute clock wraps.
    now = (65536 * 7 - 20) * MINUTE + 123
    counting = Lfu(factor, decay, random.Random(99).random)
    model = CounterModel(now, factor, decay, random.Random(99).random)
    word = lfu.new_word(now)
    for _ in range(3000):
        # Mostly bursts within a minute, sometimes a pause of minutes.
        now += walk.choice([0, 10, 500, 30_000, 2 * MINUTE, 7 * MINUTE])
        assert counting.counter(word, now) == model.read(now)
        word = counting.accessed(word, now)
        model.access(now)
        assert word & 0xFF == model.count
        assert word >> 8 == now // MINUTE % 65536


@pytest.mark.parametrize("factor", [0, 1, 10])
def test_the_increment_probability(factor: int) -> None:
    for count in range(256):
        chance = 1.0 if count <= 5 else 1 / ((count - 5) * factor + 1)
        below = lfu.log_incr(count, factor, lambda c=chance: c * 0.999999)
        at = lfu.log_incr(count, factor, lambda c=chance: c)
        assert below == min(count + 1, 255)
        assert at == (255 if count == 255 else count)  # r < p, strictly


def test_saturated_counters_draw_nothing() -> None:
    def refuse() -> float:
        raise AssertionError("no draw at 255")
    assert lfu.log_incr(255, 10, refuse) == 255


def test_the_increment_rate_over_many_accesses() -> None:
    rand = random.Random(5).random
    # At 6 with factor 10 one access in 11 increments; 7 needs 21.
    for count, expected in ((6, 1 / 11), (7, 1 / 21), (15, 1 / 101)):
        hits = sum(lfu.log_incr(count, 10, rand) > count for _ in range(200_000))
        assert abs(hits / 200_000 - expected) < expected * 0.05
    # From 5, reaching 10 takes 1 + 11 + 21 + 31 + 41 = 105 accesses on average.
    rand = random.Random(11).random
    trials = []
    for _ in range(2000):
        count, steps = 5, 0
        while count < 10:
            count = lfu.log_incr(count, 10, rand)
            steps += 1
        trials.append(steps)
    assert 95 < sum(trials) / len(trials) < 115


def test_decay() -> None:
    start = 1_000_000 * MINUTE
    word = lfu.word_of(20, start)
    assert lfu.counter(word, start + 59_999, 1) == 20
    assert lfu.counter(word, start + 3 * MINUTE, 1) == 17
    assert lfu.counter(word, start + 9 * MINUTE, 2) == 16      # four whole periods
    assert lfu.counter(word, start + 500 * MINUTE, 1) == 0     # never below 0
    assert lfu.counter(word, start + 500 * MINUTE, 0) == 20    # 0: no decay
    # The minute clock wraps at 2^16; Redis counts the wrap as 65535.
    late = lfu.word_of(20, 65530 * MINUTE)
    assert lfu.counter(late, 65536 * MINUTE + 3 * MINUTE, 1) == 20 - 8
    # Reading does not store: the word is unchanged, so is its counter.
    assert lfu.counter(word, start + 3 * MINUTE, 1) == 17


def test_the_same_bits_as_an_lru_clock() -> None:
    now = 1_700_000_123_456
    clock = (now // 1000) % 2**24
    assert lfu.lru_clock(now) == clock
    assert lfu.clock_idle_ms(clock - 10, now) == 10_000
    assert lfu.clock_idle_ms(clock, now + 500) == 0            # whole seconds
    # A field ahead of the clock is read as stamped before the clock wrapped.
    wrapped = 5 * 1000  # the clock reads 5
    assert lfu.clock_idle_ms(2**24 - 3, wrapped) == (5 + 2**24 - 1 - (2**24 - 3)) * 1000
    # An LRU clock read as an LFU word: its low byte is the counter, its high
    # 16 bits the decrement time.
    field = lfu.lru_clock(now)
    assert lfu.counter(field, now, 0) == field & 0xFF
