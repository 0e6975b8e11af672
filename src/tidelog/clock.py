"""Time, injected: nothing below the server layer calls ``time`` directly.

``Clock.now_ms()`` is wall-clock Unix time in milliseconds (stream IDs, idle
times, expiry deadlines).  ``Clock.monotonic()`` is seconds from an arbitrary
origin (timeouts).  Tests use :class:`FakeClock` to move time by hand.

The server reads the wall clock once per batch of commands it runs from one
read of a socket (:meth:`Clock.begin_turn` ... :meth:`Clock.end_turn`): the
commands of that batch see one ``now_ms()``, as Redis's commands see the
time cached when they started.
"""

from __future__ import annotations

import math
import time


def next_beat(now: float, period: float) -> float:
    """The next multiple of ``period`` at least a tenth of a period after
    ``now`` (event-loop seconds; a timer that fired a little early does not
    run again at once).

    The server's periodic timers (the cron, the snapshot and AOF checks,
    the cluster bus's) each wake at the next beat of their period rather
    than ``period`` after their last run: timers that share a beat fire in
    one turn of the loop, so an idle server wakes ``hz`` times a second,
    not once per timer.  O(1)."""
    return (math.floor(now / period + 0.1) + 1) * period


class Clock:
    """The real clock."""

    def __init__(self) -> None:
        self._turn_ms = -1  # >= 0 between begin_turn() and end_turn()

    def begin_turn(self) -> None:
        """Hold ``now_ms()`` at this moment until :meth:`end_turn`."""
        self._turn_ms = time.time_ns() // 1_000_000

    def end_turn(self) -> None:
        self._turn_ms = -1

    def now_ms(self) -> int:
        held = self._turn_ms
        return held if held >= 0 else time.time_ns() // 1_000_000

    def now_us(self) -> int:
        return time.time_ns() // 1_000

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock(Clock):
    """A clock that only moves when told to."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        super().__init__()
        self._us = start_ms * 1000

    def now_ms(self) -> int:
        return self._us // 1000

    def now_us(self) -> int:
        return self._us

    def monotonic(self) -> float:
        return self._us / 1_000_000

    def advance(self, ms: float) -> None:
        self._us += int(ms * 1000)

    def set_ms(self, ms: int) -> None:
        self._us = ms * 1000
