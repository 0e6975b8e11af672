"""Client-side caching: which clients may hold which keys (Redis's tracking table).

Pure data: a client is its id (an ``int``), and nothing here sends anything.
The engine's side (who is told what, in which protocol, when) is
:mod:`tidelog.commands.session.tracking`.

Two tables, as in Redis:

* ``keys``: key -> the ids of the clients that read it while tracking in
  the default mode (a dict used as an ordered set).  Keys are global, not
  per database, as in Redis.  A key leaves the table when it is modified
  (:meth:`TrackingTable.invalidate` hands its ids out once) or when the
  whole table is dropped (FLUSHALL, FLUSHDB: :meth:`TrackingTable.flush`).
  Ids are never removed when a client turns tracking off or goes away: the
  entry is dropped lazily at the next modification, as Redis does, so a
  client with many keys costs nothing to close.
* ``prefixes``: prefix -> :class:`Prefix` for the clients in BCAST mode:
  the clients registered for the prefix, and the keys matching it that were
  modified since the last broadcast, each with the id of the client that
  modified it last (None: no client, an expiry) so that NOLOOP can leave a
  client's own changes out.

``items`` counts (key, id) pairs (INFO's ``tracking_total_items``).

Costs: remembering k keys O(k); invalidating a key O(its ids + P) for P
prefixes in BCAST use (every prefix is compared with the key); a broadcast
O(M log M) for the M keys modified; registering a prefix O(1).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Prefix", "TrackingTable", "overlapping"]


class Prefix:
    """One BCAST prefix: its clients (ids, in the order they registered) and
    the keys modified since the last broadcast (key -> last modifier)."""

    __slots__ = ("clients", "keys")

    def __init__(self) -> None:
        self.clients: dict[int, None] = {}
        self.keys: dict[bytes, int | None] = {}


def overlapping(a: bytes, b: bytes) -> bool:
    """Two prefixes overlap when one starts the other (both would match one key)."""
    return a.startswith(b) or b.startswith(a)


class TrackingTable:
    """The keys clients may cache, and the BCAST prefixes; all O(1) unless stated."""

    __slots__ = ("keys", "items", "prefixes")

    def __init__(self) -> None:
        self.keys: dict[bytes, dict[int, None]] = {}
        self.items = 0
        self.prefixes: dict[bytes, Prefix] = {}

    # -- the default mode -------------------------------------------------------------
    def remember(self, client_id: int, keys: Iterable[bytes]) -> None:
        """The client read these keys: tell it when one changes.  O(k)."""
        table = self.keys
        for key in keys:
            ids = table.get(key)
            if ids is None:
                ids = table[key] = {}
            if client_id not in ids:
                ids[client_id] = None
                self.items += 1

    def invalidate(self, key: bytes) -> dict[int, None] | None:
        """The key changed: its client ids (in the order they read it), which
        leave the table with the key; None when nobody tracks it."""
        ids = self.keys.pop(key, None)
        if ids is not None:
            self.items -= len(ids)
        return ids

    def flush(self) -> None:
        """Every key is gone (FLUSHALL, FLUSHDB): forget them all.  The BCAST
        prefixes and their pending keys stay."""
        self.keys = {}
        self.items = 0

    def oldest(self) -> bytes | None:
        """The key remembered longest ago (what a full table gives up first)."""
        return next(iter(self.keys), None)

    # -- BCAST ------------------------------------------------------------------------
    def add_prefix(self, client_id: int, prefix: bytes) -> bool:
        """Register a client for a prefix; False when it already was."""
        state = self.prefixes.get(prefix)
        if state is None:
            state = self.prefixes[prefix] = Prefix()
        if client_id in state.clients:
            return False
        state.clients[client_id] = None
        return True

    def remove_prefix(self, client_id: int, prefix: bytes) -> None:
        """Unregister a client from a prefix; the prefix goes with its last
        client (and its pending keys with it, as in Redis)."""
        state = self.prefixes.get(prefix)
        if state is None:
            return
        state.clients.pop(client_id, None)
        if not state.clients:
            del self.prefixes[prefix]

    def modified(self, key: bytes, modifier: int | None) -> bool:
        """Note a modified key under every prefix it starts with; True when
        at least one matched (a broadcast is then due).  O(P)."""
        matched = False
        for prefix, state in self.prefixes.items():
            if key.startswith(prefix):
                state.keys[key] = modifier
                matched = True
        return matched

    def drain(self) -> list[tuple[bytes, list[tuple[bytes, int | None]], list[int]]]:
        """The broadcast due now, and the pending keys forgotten: for each
        prefix with modified keys (prefixes in byte order), its keys in byte
        order with their last modifier, and its client ids.  O(M log M)."""
        due = []
        for prefix in sorted(self.prefixes):
            state = self.prefixes[prefix]
            if state.keys:
                keys = sorted(state.keys.items())
                state.keys = {}
                due.append((prefix, keys, list(state.clients)))
        return due

    def pending(self) -> bool:
        """Whether some prefix has modified keys not yet broadcast.  O(P)."""
        return any(state.keys for state in self.prefixes.values())
