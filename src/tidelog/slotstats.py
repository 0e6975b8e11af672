"""Per-slot usage counters of cluster mode (CLUSTER SLOT-STATS).

With ``cluster-slot-stats-enabled yes`` the engine charges each client
command whose keys hash to one slot to that slot: the time the call took
(``cpu-usec``), the bytes of the request as it came on the wire
(``network-bytes-in``, also for a command the cluster refused) and the bytes
of its reply, of the messages SPUBLISH sent to subscribers and of what it
added to the replication stream, once per replica (``network-bytes-out``).  The counters are arrays of 16384
64-bit integers; CONFIG RESETSTAT zeroes them, and a slot's go to zero when
the slot changes owner (the cluster's slot map calls :meth:`SlotStats.reset_slot`).
With the option off nothing is counted (the engine tests ``enabled`` once a
command) and only ``key-count`` is reported.

This module is a leaf: the engine counts, the cluster resets, the command
reads.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence

from .keyslot import SLOTS

# The metrics in the order replies give them; the last three only while the
# option is on.
KEY_COUNT = b"key-count"
CPU_USEC = b"cpu-usec"
NETWORK_BYTES_IN = b"network-bytes-in"
NETWORK_BYTES_OUT = b"network-bytes-out"
ALWAYS = (KEY_COUNT,)
WHEN_ENABLED = (KEY_COUNT, CPU_USEC, NETWORK_BYTES_IN, NETWORK_BYTES_OUT)


def request_bytes(argv: Sequence[bytes]) -> int:
    """The size of ``argv`` as a RESP multibulk request
    (``*<argc>\\r\\n`` then ``$<len>\\r\\n<arg>\\r\\n`` per argument).
    O(argc)."""
    size = len(str(len(argv))) + 3 + 6 * len(argv)  # (a one-digit length each)
    for arg in argv:
        n = len(arg)
        size += n if n < 10 else n + len(str(n)) - 1
    return size


class SlotStats:
    """The counters of the 16384 slots (the engine holds one)."""

    __slots__ = ("enabled", "cpu_ns", "net_in", "net_out")

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self.cpu_ns = array("q", bytes(8 * SLOTS))
        self.net_in = array("q", bytes(8 * SLOTS))
        self.net_out = array("q", bytes(8 * SLOTS))

    def reset(self) -> None:
        """Every slot's counters to zero (CONFIG RESETSTAT). O(16384)."""
        zero = bytes(8 * SLOTS)
        self.cpu_ns = array("q", zero)
        self.net_in = array("q", zero)
        self.net_out = array("q", zero)

    def reset_slot(self, slot: int) -> None:
        """One slot's counters to zero (it changed owner). O(1)."""
        self.cpu_ns[slot] = self.net_in[slot] = self.net_out[slot] = 0

    def metrics(self) -> tuple[bytes, ...]:
        """The metrics a reply gives now, in order."""
        return WHEN_ENABLED if self.enabled else ALWAYS

    def value(self, metric: bytes, slot: int, key_count: Callable[[int], int]) -> int:
        """One metric of one slot (``key_count``: the keys a slot holds)."""
        if metric == KEY_COUNT:
            return key_count(slot)
        if metric == CPU_USEC:
            return self.cpu_ns[slot] // 1000
        if metric == NETWORK_BYTES_IN:
            return self.net_in[slot]
        return self.net_out[slot]

    def row(self, slot: int, key_count: Callable[[int], int]) -> list[tuple[bytes, int]]:
        """The (metric, value) pairs of one slot, in reply order."""
        return [(metric, self.value(metric, slot, key_count)) for metric in self.metrics()]


def order_slots(slots: Sequence[int], values: Sequence[int], limit: int,
                descending: bool) -> list[int]:
    """ORDERBY: up to ``limit`` of ``slots`` (ascending) ordered by their
    ``values`` (parallel to ``slots``), ascending or descending, ties in
    ascending slot order.  O(N log N)."""
    if descending:
        order = sorted(range(len(slots)), key=lambda i: (-values[i], slots[i]))
    else:
        order = sorted(range(len(slots)), key=lambda i: (values[i], slots[i]))
    return [slots[i] for i in order[:limit]]
