"""Transactions: MULTI queues, EXEC runs the queue atomically, WATCH makes
it fail when a watched key changed; -BUSY while a script runs.
"""

from __future__ import annotations

from .. import errors
from ..commands.contract import ClientState, Ctx, Reply
from ..errors import CommandError
from ..resp import encode
from ..resp.replies import NULL_ARRAY, ErrorReply, RawReply, Replies
from .admission import FROM_EXEC
from .base import EngineCore
from .call import CALL_EXEC


def busy_reply(self: EngineCore, client: ClientState, name: bytes) -> ErrorReply:
    """What a command gets while a script runs past busy-reply-threshold:
    -BUSY; an open MULTI then fails, and EXEC discards it as EXECABORT
    (Redis refuses it like any other command)."""
    if client.multi is not None:
        client.multi_error = True
    if name == b"exec":
        client.multi = None
        client.multi_error = False
        self.unwatch_all(client)
        return self._error(errors.exec_aborted(self._busy_text()))
    return self._error(self._busy_text())


def _busy_text(self: EngineCore) -> bytes:
    """-BUSY names the KILL that stops what runs: FUNCTION KILL for a function."""
    job = self.scripts.busy
    return errors.BUSY_FUNCTION if job is not None and job.script.function else errors.BUSY


# -- transactions ---------------------------------------------------------------
def exec_transaction(self: EngineCore, ctx: Ctx) -> Reply:
    """Run a client's queued commands; called by the EXEC handler."""
    client = ctx.client
    queued = client.multi or []
    failed = client.multi_error
    dirty = client.dirty_cas or self._watched_key_expired(client)
    client.multi, client.multi_error = None, False
    self.unwatch_all(client)
    if failed:
        raise CommandError(errors.EXECABORT)
    if dirty:
        return NULL_ARRAY
    replies = []
    began = self.begin_unit()
    # What the client is sent meanwhile (a message it publishes to
    # itself) goes inside EXEC's array, before the reply of the command
    # that sent it, as Redis writes it.
    inbox: list[Reply] = []
    send, client.send = client.send, inbox.append
    try:
        for argv in queued:
            entry = self._resolve(argv)
            refusal = self.admit(client, entry, argv, FROM_EXEC)
            if refusal is not None:
                replies.append(refusal)
                continue
            reply = self.call(client, entry, argv, CALL_EXEC)
            if inbox or reply.__class__ is Replies:
                # Several replies for one command (SUBSCRIBE a b, or a
                # message and PUBLISH's count): Redis writes them all
                # inside EXEC's array, whose length counts commands; so
                # does this, pre-encoded.
                inbox += reply.items if reply.__class__ is Replies else [reply]
                reply = RawReply(b"".join(encode(r, client.protocol) for r in inbox))
                inbox.clear()
            replies.append(reply)
    finally:
        client.send = send
        effects = self.end_unit(began)
    ctx.no_propagation()  # the queued commands' effects go out below, as one unit
    if effects:
        self.emit_unit(effects, client)
    return replies


def watch(self: EngineCore, client: ClientState, key: bytes) -> None:
    if (client.db, key) not in client.watched:
        client.watched.add((client.db, key))
        self.dbs[client.db].watch(key, client)


def _watched_key_expired(self: EngineCore, client: ClientState) -> bool:
    """A key watched while alive has expired since (not yet removed): EXEC
    fails, as in Redis.  O(watched keys)."""
    stale = client.watched_expired
    return any((index, key) not in stale and self.dbs[index].is_expired(key)
               for index, key in client.watched)


def unwatch_all(self: EngineCore, client: ClientState) -> None:
    for db_index, key in client.watched:
        self.dbs[db_index].unwatch(key, client)
    client.watched.clear()
    client.watched_expired.clear()
    client.dirty_cas = False


def in_transaction(self: EngineCore) -> bool:
    """Whether an EXEC is running its queued commands now."""
    return self._executing
