"""Cluster mode in the engine: the router attached (the slot check of
:mod:`.admission` asks it), clients blocked on keys of a slot no longer
served redirected, the keys of a slot deleted, a call counted for CLUSTER
SLOT-STATS."""

from __future__ import annotations

from ..commands.contract import ClientState, Reply
from ..config import NOTIFY_GENERIC
from ..keyspace import SlotKeyIndex
from ..resp import encode_all, encode_into
from ..resp.replies import Replies
from ..slotstats import SlotStats, request_bytes
from .base import EngineCore
from .slot_router import SlotRouter


def set_slot_router(self: EngineCore, router: SlotRouter | None) -> None:
    """Cluster mode on (a router) or off (None).  While on, a command with
    keys found in the fast dispatch takes the router's slot check there
    (:meth:`Engine.execute`); and the databases keep their keys by slot too
    (``Database.use_slot_index``).  O(keys held) the first time."""
    self.slot_router = router
    if router is not None:
        for db in self.dbs:
            db.use_slot_index()
    self._forget_dispatch()


def set_slot_stats(self: EngineCore, enabled: bool) -> None:
    """``cluster-slot-stats-enabled``: CLUSTER SLOT-STATS counts on the
    checked path, so while it counts, commands with keys leave the fast
    dispatch (``dispatch._resolve``); the cache is emptied either way.
    O(1), then each name resolved again once."""
    self.slot_stats.enabled = enabled
    self._forget_dispatch()


def redirect_blocked(self: EngineCore) -> int:
    """Cluster mode: end the wait of every client blocked on keys whose slot
    this node no longer serves, with -MOVED or -CLUSTERDOWN (Redis's
    clusterRedirectBlockedClientIfNeeded, on its clients cron).  Returns how
    many were redirected.  O(blocked clients x their keys)."""
    router = self.slot_router
    if router is None:
        return 0
    seen: dict[int, ClientState] = {}
    for queue in self.waiters.values():
        for waiter in queue:
            seen[waiter.client.id] = waiter.client
    redirected = 0
    for client in seen.values():
        waiter = client.blocked
        if waiter is None or not waiter.entry.keyed:
            continue  # WAIT, WAITAOF: parked on a name of their own, no key (as Redis)
        refusal = router.blocked_refusal(client, waiter.wait.keys, self.dbs[waiter.db],
                                         waiter.entry.is_write)
        if refusal is not None:
            self.unblock_client(client, self._error(refusal))
            redirected += 1
    return redirected


def delete_slot_keys(self: EngineCore, slot: int) -> int:
    """Delete every key of ``slot`` (database 0, the only one in cluster
    mode), each as Redis's delKeysInSlot does: propagated as DEL (UNLINK
    with lazyfree-lazy-server-del), signalled to WATCH and tracking, a
    ``del`` keyspace event.  Returns how many (a key found past its
    deadline is expired instead, not counted).  O(keys in the slot); 0
    outside cluster mode."""
    db = self.dbs[0]
    index = db.key_index
    if not isinstance(index, SlotKeyIndex):
        return 0
    keys = index.keys_in_slot(slot, index.count_in_slot(slot))
    verb = b"UNLINK" if self.config["lazyfree-lazy-server-del"] else b"DEL"
    deleted = 0
    for key in keys:
        if not db.delete(key):  # past its deadline: expired (and propagated) instead
            continue
        deleted += 1
        self.dirty += 1
        self.emit([(0, [verb, key])])
        self.notify_keyspace(NOTIFY_GENERIC, b"del", key, 0)
    return deleted


def count_slot_call(stats: SlotStats, slot: int, argv: list[bytes] | None, reply: Reply,
                    protocol: int) -> None:
    """CLUSTER SLOT-STATS: a call's bytes charged to ``slot``: its request's
    (``argv`` as a RESP multibulk; None: not counted) and its reply's as
    ``protocol`` encodes it.  O(argc), plus the reply's size for one that is
    not a bulk string or an integer (encoded once more to be measured)."""
    if argv is not None:
        stats.net_in[slot] += request_bytes(argv)
    kind = reply.__class__
    if kind is bytes:  # $<n>\r\n<bytes>\r\n
        n = len(reply)
        stats.net_out[slot] += n + len(str(n)) + 5
    elif kind is int:  # :<n>\r\n
        stats.net_out[slot] += len(str(reply)) + 3
    else:
        out = bytearray()
        if kind is Replies:
            encode_all(out, reply.items, protocol)
        else:
            encode_into(out, reply, protocol)
        stats.net_out[slot] += len(out)


def shard_message_bytes(channel: bytes, message: bytes) -> int:
    """The size of the ``smessage`` push SPUBLISH sends each subscriber (the
    same in RESP2 and RESP3). O(1)."""
    return sum(len(str(len(part))) + len(part) + 5
               for part in (b"smessage", channel, message)) + 4
