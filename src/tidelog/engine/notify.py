"""Keyspace notifications (notify-keyspace-events) and the engine's own
reactions to keys that expire (propagated as DEL / HDEL).
"""

from __future__ import annotations

from ..config import (
    NOTIFY_EXPIRED,
    NOTIFY_GENERIC,
    NOTIFY_HASH,
    NOTIFY_KEYEVENT,
    NOTIFY_KEYSPACE,
    NOTIFY_NEW,
    NOTIFY_SUBKEY_ANY,
    NOTIFY_SUBKEYEVENT,
    NOTIFY_SUBKEYSPACE,
    NOTIFY_SUBKEYSPACEEVENT,
    NOTIFY_SUBKEYSPACEITEM,
)
from ..glob import glob_match
from ..keyspace import Database
from ..resp.replies import Push
from .base import EngineCore


def _channel_match(pattern: bytes, channel: bytes) -> bool:
    """Pub/Sub's pattern match: Redis's glob, which matches an empty name
    only with an empty pattern (KEYS and SCAN special-case ``*`` before
    calling it; Pub/Sub does not)."""
    return glob_match(pattern, channel) if channel else not pattern


# -- keyspace notifications ----------------------------------------------------
def set_notify(self: EngineCore, flags: int) -> None:
    """Take the notify-keyspace-events classes in force.  Nothing is
    published unless K, E or a subkey channel (S, T, I, V) says where to:
    the flags are then 0, so ``Ctx.notify`` costs one test."""
    where = NOTIFY_KEYSPACE | NOTIFY_KEYEVENT | NOTIFY_SUBKEY_ANY
    self.notify_flags = flags if flags & where else 0
    on_new = self._key_new if self.notify_flags & NOTIFY_NEW else None
    for db in self.dbs:
        db.on_new = on_new


def notify_keyspace(self: EngineCore, cls: int, event: bytes, key: bytes, db_index: int,
                    subkeys: list[bytes] | None = None) -> None:
    """Publish one keyspace event (its class is on): to the key's
    ``__keyspace@<db>__`` channel (K), then to the event's
    ``__keyevent@<db>__`` channel (E), as Redis does; with the subkeys
    (hash fields) it touched, also to the subkey channels S, T, I, V."""
    flags = self.notify_flags
    if not flags & cls:
        return
    tables = self.pubsub.tables
    if not tables[0] and not tables[1]:  # no channel or pattern has a subscriber
        return
    if flags & NOTIFY_KEYSPACE:
        self._publish(b"__keyspace@%d__:%s" % (db_index, key), event)
    if flags & NOTIFY_KEYEVENT:
        self._publish(b"__keyevent@%d__:%s" % (db_index, event), key)
    if subkeys and flags & NOTIFY_SUBKEY_ANY:
        self._notify_subkeys(flags, event, key, db_index, subkeys)


def _notify_subkeys(self: EngineCore, flags: int, event: bytes, key: bytes, db_index: int,
                    subkeys: list[bytes]) -> None:
    """Redis 8.8's subkey notifications: subkeys travel length-prefixed
    (``<len>:<subkey>``, comma-separated) so any bytes are safe.  An
    event with ``|`` skips the channels that use ``|`` as separator, a
    key with a newline the per-subkey channel.  O(subkeys)."""
    listed = b",".join(b"%d:%s" % (len(sub), sub) for sub in subkeys)
    plain_event = b"|" not in event
    if flags & NOTIFY_SUBKEYSPACE and plain_event:
        self._publish(b"__subkeyspace@%d__:%s" % (db_index, key), event + b"|" + listed)
    if flags & NOTIFY_SUBKEYEVENT:
        self._publish(b"__subkeyevent@%d__:%s" % (db_index, event),
                      b"%d:%s|%s" % (len(key), key, listed))
    if flags & NOTIFY_SUBKEYSPACEITEM and b"\n" not in key:
        for sub in subkeys:
            self._publish(b"__subkeyspaceitem@%d__:%s\n%s" % (db_index, key, sub), event)
    if flags & NOTIFY_SUBKEYSPACEEVENT and plain_event:
        self._publish(b"__subkeyspaceevent@%d__:%s|%s" % (db_index, event, key), listed)


def _publish(self: EngineCore, channel: bytes, message: bytes) -> None:
    direct, by_pattern = self.pubsub.receivers(channel)
    if direct:
        push = Push([b"message", channel, message])
        for client in direct:
            client.send(push)
    for pattern, client in by_pattern:
        client.send(Push([b"pmessage", pattern, channel, message]))


def _key_new(self: EngineCore, db: Database, key: bytes) -> None:
    self.notify_keyspace(NOTIFY_NEW, b"new", key, db.index)


def _key_expired(self: EngineCore, db: Database, key: bytes) -> None:
    self.stats["expired_keys"] += 1
    if self.tracking.table.prefixes:  # BCAST: an expiry is no client's change (NOLOOP)
        self.tracking.table.modified(key, None)
    self.signal_ready(db.index, key)
    self.emit([(db.index, [b"DEL", key])])
    if self.notify_flags & NOTIFY_EXPIRED:
        self.notify_keyspace(NOTIFY_EXPIRED, b"expired", key, db.index)


def _fields_expired(self: EngineCore, db: Database, key: bytes, fields: list[bytes]) -> None:
    """Hash fields expired (lazily or actively): propagated as one
    ``HDEL key field`` each, as Redis does."""
    self.stats["expired_subkeys"] += len(fields)
    self.emit([(db.index, [b"HDEL", key, field]) for field in fields])
    if self.notify_flags:
        # Redis 7.4: one hexpired per batch, and del when the hash went.
        self.notify_keyspace(NOTIFY_HASH, b"hexpired", key, db.index, fields)
        if key not in db.data:
            self.notify_keyspace(NOTIFY_GENERIC, b"del", key, db.index)
