"""Blocking: clients parked on keys, and served when the keys are ready.

A handler that must wait returns a :class:`~tidelog.commands.contract.Wait`;
the client becomes a :class:`Waiter` on each of its keys, FIFO per key.
Commands never wake anybody: they mark keys ready, and after the command (or
the whole EXEC) :func:`serve_ready` serves the waiters of each ready key in
the order they blocked.  Timeouts, CLIENT UNBLOCK and INFO's counts too.
"""

from __future__ import annotations

from collections import deque
from typing import Any, cast

from ..commands.contract import ClientState, Ctx, Reply, Wait
from ..keyslot import key_slot
from .admission import _NETWORK_KINDS, FROM_RETRY
from .base import EngineCore
from .call import CALL_SERVED
from .entry import Entry, Waiter
from .outcomes import BLOCKED
from .slots import count_slot_call


# -- blocking -------------------------------------------------------------------
def _block(self: EngineCore, ctx: Ctx, wait: Wait) -> Reply:
    if not ctx.may_block:
        return wait.reply_at_timeout()
    # A command that may block was resolved by this engine: its spec is an Entry.
    request = Waiter(ctx.client, ctx.db.index, wait, ctx.argv, cast(Entry, ctx.spec))
    ctx.client.blocked = request
    for key in dict.fromkeys(wait.keys):
        self.waiters.setdefault((ctx.db.index, key), deque()).append(request)
    if wait.timeout_ms > 0 and self.schedule is not None:
        request.deadline = self.clock.monotonic() + wait.timeout_ms / 1000
        request.timer = self.schedule(wait.timeout_ms / 1000,
                                      lambda: self.timeout_blocked(request))
    return BLOCKED


def _unblock(self: EngineCore, request: Waiter) -> None:
    request.client.blocked = None
    if request.timer is not None:
        request.timer.cancel()
    for key in dict.fromkeys(request.wait.keys):
        queue = self.waiters.get((request.db, key))
        if queue is not None:
            try:
                queue.remove(request)
            except ValueError:
                pass
            if not queue:
                del self.waiters[(request.db, key)]


def timeout_blocked(self: EngineCore, request: Waiter) -> None:
    """The scheduler says a blocked request's time is up.

    Event-loop timers may fire a little early (their clock is read once
    per loop turn); a timeout is never answered before its deadline."""
    if request.client.blocked is request:
        remaining = request.deadline - self.clock.monotonic()
        if remaining > 0 and self.schedule is not None:
            request.timer = self.schedule(remaining, lambda: self.timeout_blocked(request))
            return
        request.timer = None
        self._unblock(request)
        request.client.send(request.wait.reply_at_timeout())


def unblock_client(self: EngineCore, client: ClientState, reply: Reply = None) -> bool:
    """CLIENT UNBLOCK: answer a blocked client now, with ``reply`` or (None)
    what its command answers when its time is up.  False if not blocked."""
    request = client.blocked
    if request is None:
        return False
    self._unblock(request)
    client.send(request.wait.reply_at_timeout() if reply is None else reply)
    return True


def signal_ready(self: EngineCore, db_index: int, key: bytes) -> None:
    if (db_index, key) in self.waiters:
        self._ready[(db_index, key)] = None


def signal_all_waited(self: EngineCore, db_index: int | None = None) -> None:
    """Make every key some client waits on ready (in one database, or
    all): their values changed wholesale (FLUSHDB, DEBUG RELOAD)."""
    for waited_db, key in list(self.waiters):
        if db_index is None or waited_db == db_index:
            self._ready[(waited_db, key)] = None


def wake_later(self: EngineCore, delay_s: float, db_index: int, keys: list[bytes]) -> Any:
    """Serve the clients blocked on ``keys`` after ``delay_s`` seconds, as
    if the keys had been made ready then.  Returns the timer (with
    ``cancel()``), or None when the engine has no scheduler."""
    if self.schedule is None:
        return None

    def wake() -> None:
        for key in keys:
            self.signal_ready(db_index, key)
        if not self._executing:
            self.serve_ready()

    return self.schedule(delay_s, wake)


def serve_ready(self: EngineCore) -> None:
    """Serve clients blocked on ready keys, FIFO per key, until none is
    ready (serving one client may make other keys ready).  Each blocked
    command runs again through admission (FROM_RETRY: a user whose rules
    changed meanwhile is refused, and logged, as Redis 7.2+ does) and
    :func:`~tidelog.engine.call.call` (CALL_SERVED)."""
    while self._ready:
        ready, self._ready = self._ready, {}
        for db_key in ready:
            queue = self.waiters.get(db_key)
            if not queue:
                continue
            for request in list(queue):
                if request.client.blocked is not request:
                    continue
                client = request.client
                refusal = self.admit(client, request.entry, request.argv, FROM_RETRY)
                if refusal is not None:
                    self._unblock(request)
                    client.send(refusal)
                    continue
                request.ready_key = db_key[1]
                reply = self.call(client, request.entry, request.argv, CALL_SERVED, request)
                if reply is not None:
                    if self.slot_stats.enabled and self.slot_router is not None and \
                            client.kind in _NETWORK_KINDS:
                        # CLUSTER SLOT-STATS: a blocked command's bytes count when served
                        count_slot_call(self.slot_stats, key_slot(db_key[1]), request.argv,
                                        reply, client.protocol)
                    client.send(reply)


def blocking_keys(self: EngineCore) -> tuple[int, int]:
    """INFO's total_blocking_keys and total_blocking_keys_on_nokey: the
    keys blocked clients wait on, and those of them an XREADGROUP waits
    on (the key's deletion answers it, as Redis's unblock_on_nokey).
    O(waiters)."""
    on_nokey = sum(1 for queue in self.waiters.values()
                   if any(w.entry.name == "xreadgroup" for w in queue))
    return len(self.waiters), on_nokey


def blocked_with_timeout(self: EngineCore) -> int:
    """Blocked clients whose wait has a timeout (INFO's timeout table)."""
    return sum(1 for c in self.clients.values()
               if c.blocked is not None and c.blocked.wait.timeout_ms > 0)
