"""A bounded top-K of weighted items: Space-Saving (Metwally, Agrawal and El
Abbadi, "Efficient Computation of Frequent and Top-k Elements in Data
Streams", 2005), with weights.

HOTKEYS keeps one per metric (CPU microseconds, network bytes per key).
Redis uses a probabilistic structure (Cuckoo Heavy Keeper); this one is
deterministic and simpler, with the same use: at most ``capacity`` items
are counted, whatever the number of distinct items in the stream.

How it counts: an item already counted gets its weight added.  A new item
takes a free place with its weight; when none is free, it takes the place
of the item with the smallest count ``m``, and starts at ``m + weight``
(the evicted item's count is inherited, an overestimate).  What follows,
for a stream whose weights add up to ``total`` (all proved in the paper,
and checked against a plain dict by tests/unit/test_hotkeys.py):

* no count is below the item's true weight, and none is more than
  ``total / capacity`` above it;
* every item whose true weight is above ``total / capacity`` is counted;
* while the stream has at most ``capacity`` distinct items, the counts are
  exact.

Representation: ``counts`` (item -> count) and a min-heap of
``(count, item)`` pairs, exactly one per counted item, whose count is at
most the item's (counts only grow; the pair is not touched when its item
is counted again).  The smallest count is found by popping pairs: a pair
behind its item's count is pushed back with the current count, and the
first pair that is current holds the smallest count (every other pair is
at most its item's count and at least this one).  A pair pushed back stands
for increments already paid for, so the work is amortised over them.

Cost: :meth:`add` O(1) for a counted item, O(log capacity) amortised for a
new one; :meth:`top` O(capacity log capacity); memory O(capacity).
"""

from __future__ import annotations

from heapq import heappop, heappush, heapreplace


class TopK:
    """At most ``capacity`` weighted items, the heaviest kept (Space-Saving)."""

    __slots__ = ("capacity", "counts", "heap", "total")

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.counts: dict[bytes, int] = {}
        self.heap: list[tuple[int, bytes]] = []
        self.total = 0  # the sum of every weight added

    def add(self, item: bytes, weight: int) -> None:
        """Count ``weight`` more for ``item``; a weight of 0 or less is
        ignored (it says nothing of hotness).  O(1) for a counted item,
        O(log capacity) amortised for a new one."""
        if weight <= 0:
            return
        self.total += weight
        counts = self.counts
        count = counts.get(item)
        if count is not None:
            counts[item] = count + weight
            return
        heap = self.heap
        if len(counts) < self.capacity:
            count = weight
        else:  # full: the smallest count's item gives its place up
            while True:
                smallest, victim = heap[0]
                current = counts[victim]
                if current == smallest:
                    break
                heapreplace(heap, (current, victim))
            heappop(heap)
            del counts[victim]
            count = smallest + weight
        counts[item] = count
        heappush(heap, (count, item))

    def top(self, k: int) -> list[tuple[bytes, int]]:
        """The ``k`` heaviest ``(item, count)``, heaviest first (ties by
        item).  O(capacity log capacity)."""
        return sorted(self.counts.items(), key=lambda pair: (-pair[1], pair[0]))[:k]

    def __len__(self) -> int:
        return len(self.counts)
