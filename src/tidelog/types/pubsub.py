"""Pub/Sub subscriptions: who listens to which channel, pattern or shard channel.

Pure data: a subscriber is any hashable object (the engine uses its
``ClientState``), and nothing here sends anything.  :meth:`PubSub.publish`
answers who receives a message; the caller delivers it.

Three namespaces, as in Redis: plain channels (SUBSCRIBE), patterns
(PSUBSCRIBE, Redis glob patterns matched against plain channels only) and
shard channels (SSUBSCRIBE; on a single server they behave like plain
channels, but in their own namespace: SPUBLISH reaches only shard
subscribers, PUBLISH never does).

State, each side kept in subscription order (dicts used as ordered sets):

* ``channels`` / ``patterns`` / ``shard_channels``: name -> {subscriber};
  a name leaves its dict when its last subscriber goes;
* per subscriber a :class:`Subscriptions` record with the same three sets
  the other way round, or none at all when it has no subscription.

Costs: subscribing or unsubscribing one name O(1); dropping a subscriber
O(its subscriptions); ``publish`` O(N + M * P) for N subscribers of the
channel and M patterns of length at most P (every pattern is matched);
counts O(1).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

__all__ = ["CHANNEL", "PATTERN", "SHARD", "PubSub", "Subscriptions"]

# The three namespaces (indexes into the per-kind tables).
CHANNEL, PATTERN, SHARD = 0, 1, 2


class Subscriptions:
    """One subscriber's channels, patterns and shard channels, in the order
    it subscribed to them."""

    __slots__ = ("kinds",)

    def __init__(self) -> None:
        self.kinds: tuple[dict[bytes, None], dict[bytes, None], dict[bytes, None]] = ({}, {}, {})

    @property
    def channels(self) -> dict[bytes, None]:
        return self.kinds[CHANNEL]

    @property
    def patterns(self) -> dict[bytes, None]:
        return self.kinds[PATTERN]

    @property
    def shard_channels(self) -> dict[bytes, None]:
        return self.kinds[SHARD]

    def count(self) -> int:
        """What SUBSCRIBE and PSUBSCRIBE confirmations count: channels plus patterns."""
        return len(self.kinds[CHANNEL]) + len(self.kinds[PATTERN])

    def total(self) -> int:
        return len(self.kinds[CHANNEL]) + len(self.kinds[PATTERN]) + len(self.kinds[SHARD])


class PubSub:
    """The subscription registry of one server.

    ``match(pattern, channel)`` is the glob matcher patterns use (Redis's
    ``stringmatchlen``), given by the owner so this module needs nothing
    of the command layer.
    """

    def __init__(self, match: Callable[[bytes, bytes], bool]) -> None:
        self.match = match
        # name -> subscribers, per namespace (CHANNEL, PATTERN, SHARD).
        self.tables: tuple[dict[bytes, dict[Any, None]], ...] = ({}, {}, {})
        self.by_subscriber: dict[Any, Subscriptions] = {}

    @property
    def channels(self) -> dict[bytes, dict[Any, None]]:
        return self.tables[CHANNEL]

    @property
    def patterns(self) -> dict[bytes, dict[Any, None]]:
        return self.tables[PATTERN]

    @property
    def shard_channels(self) -> dict[bytes, dict[Any, None]]:
        return self.tables[SHARD]

    # -- subscribing ------------------------------------------------------------------
    def of(self, subscriber: Hashable) -> Subscriptions | None:
        """The subscriber's subscriptions, or None when it has none.  O(1)."""
        return self.by_subscriber.get(subscriber)

    def subscribe(self, subscriber: Hashable, kind: int, name: bytes) -> Subscriptions:
        """Add one subscription (nothing when it exists); the subscriber's
        record after it.  O(1)."""
        subs = self.by_subscriber.get(subscriber)
        if subs is None:
            subs = self.by_subscriber[subscriber] = Subscriptions()
        mine = subs.kinds[kind]
        if name not in mine:
            mine[name] = None
            self.tables[kind].setdefault(name, {})[subscriber] = None
        return subs

    def unsubscribe(self, subscriber: Hashable, kind: int, name: bytes) -> Subscriptions | None:
        """Remove one subscription (nothing when there is none); the
        subscriber's record after it, None once it has no subscription
        left.  O(1)."""
        subs = self.by_subscriber.get(subscriber)
        if subs is None:
            return None
        mine = subs.kinds[kind]
        if name in mine:
            del mine[name]
            table = self.tables[kind]
            others = table[name]
            del others[subscriber]
            if not others:
                del table[name]
            if not subs.total():
                del self.by_subscriber[subscriber]
                return None
        return subs

    def names(self, subscriber: Hashable, kind: int) -> list[bytes]:
        """The subscriber's names of one kind, in subscription order."""
        subs = self.by_subscriber.get(subscriber)
        return [] if subs is None else list(subs.kinds[kind])

    def drop(self, subscriber: Hashable) -> None:
        """Forget every subscription of a subscriber (RESET, a closed
        connection).  O(its subscriptions)."""
        subs = self.by_subscriber.pop(subscriber, None)
        if subs is None:
            return
        for kind, mine in enumerate(subs.kinds):
            table = self.tables[kind]
            for name in mine:
                others = table[name]
                del others[subscriber]
                if not others:
                    del table[name]

    # -- publishing -------------------------------------------------------------------
    def receivers(self, channel: bytes) -> tuple[list[Any], list[tuple[bytes, Any]]]:
        """Who receives a PUBLISH to ``channel``: its subscribers (in the
        order they subscribed) and (pattern, subscriber) for each pattern
        subscription matching it (patterns in the order first subscribed).
        O(N + M * P), see the module's text."""
        direct = self.tables[CHANNEL].get(channel)
        by_pattern: list[tuple[bytes, Any]] = []
        match = self.match
        for pattern, subscribers in self.tables[PATTERN].items():
            if match(pattern, channel):
                by_pattern.extend((pattern, s) for s in subscribers)
        return (list(direct) if direct else []), by_pattern

    def shard_receivers(self, channel: bytes) -> list[Any]:
        """The subscribers of a shard channel (SPUBLISH).  O(N)."""
        subscribers = self.tables[SHARD].get(channel)
        return list(subscribers) if subscribers else []

    # -- introspection ----------------------------------------------------------------
    def active(self, kind: int, pattern: bytes | None) -> list[bytes]:
        """PUBSUB CHANNELS / SHARDCHANNELS: the names with a subscriber,
        those matching ``pattern`` when given.  O(names)."""
        names: Iterable[bytes] = self.tables[kind]
        if pattern is None:
            return list(names)
        match = self.match
        return [name for name in names if match(pattern, name)]

    def numsub(self, kind: int, name: bytes) -> int:
        subscribers = self.tables[kind].get(name)
        return len(subscribers) if subscribers else 0

    def numpat(self) -> int:
        """PUBSUB NUMPAT: patterns with at least one subscriber (as Redis 7.0
        counts them: distinct patterns, not subscriptions)."""
        return len(self.tables[PATTERN])
