"""Server commands: DBSIZE, FLUSHDB, FLUSHALL, TIME and SHUTDOWN."""

from __future__ import annotations

import logging

from ...errors import (
    NO_SHUTDOWN_IN_PROGRESS,
    SHUTDOWN_FAILED,
    SYNTAX,
    CommandError,
)
from ...keyspace import Database
from ...rdb.staging import abort_argv, drop
from ...resp.replies import OK, RawReply
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ALL_SHARDS, ND
from ..table import command

log = logging.getLogger("tidelog")


# =====================================================================================
# DBSIZE, FLUSHDB, FLUSHALL, TIME
# =====================================================================================
@command("dbsize", arity=1, flags="readonly fast", group="server", since="1.0.0",
         complexity="O(1)", summary="Return the number of keys in the selected database",
         categories=("@keyspace",),
         tips=(ALL_SHARDS, "response_policy:agg_sum"))
def dbsize(ctx: Ctx, argv: list[bytes]) -> object:
    """DBSIZE"""
    return len(ctx.db)


def _flush_mode(argv: list[bytes]) -> None:
    """FLUSHDB's and FLUSHALL's optional ASYNC or SYNC (both flush at once)."""
    r = ArgReader(argv)
    if r.more() and r.next_upper() not in (b"ASYNC", b"SYNC"):
        raise CommandError(SYNTAX)
    r.finish()


def _drop_staged(ctx: Ctx, db: Database) -> None:
    """A flush drops the database's TIDELOG.STAGE copies too: each drop
    propagated as an ABORT (in its database, before the flush)."""
    if db.staged:
        ctx.engine.emit([(db.index, abort_argv(token)) for token in drop(db.staged)])


@command("flushdb", arity=-1, flags="write", group="server", since="1.0.0",
         complexity="O(N) where N is the number of keys in the selected database",
         summary="Remove all keys from the current database",
         categories=("@keyspace", "@dangerous"),
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def flushdb(ctx: Ctx, argv: list[bytes]) -> object:
    """FLUSHDB [ASYNC | SYNC]"""
    _flush_mode(argv)
    # Clients blocked on its keys are retried: a blocked XREADGROUP fails
    # now that its key is gone (Redis 7.2+).
    ctx.engine.signal_all_waited(ctx.db.index)
    _drop_staged(ctx, ctx.db)
    ctx.changed(ctx.db.flush())
    ctx.engine.tracking.flushed()  # one null to every tracking client
    ctx.effect(list(argv))  # always, even when nothing was there (as Redis)
    return OK


@command("flushall", arity=-1, flags="write", group="server", since="1.0.0",
         complexity="O(N) where N is the total number of keys in all databases",
         summary="Remove all keys from all databases", categories=("@keyspace", "@dangerous"),
         tips=(ALL_SHARDS, "response_policy:all_succeeded"))
def flushall(ctx: Ctx, argv: list[bytes]) -> object:
    """FLUSHALL [ASYNC | SYNC]"""
    _flush_mode(argv)
    for db in ctx.engine.dbs:
        ctx.engine.signal_all_waited(db.index)
        _drop_staged(ctx, db)
        ctx.changed(db.flush())
    ctx.engine.tracking.flushed()
    ctx.effect(list(argv))
    return OK


@command("time", arity=1, flags="loading stale fast", group="server", since="2.6.0",
         complexity="O(1)", summary="Return the current server time",
         tips=(ND,))
def time_(ctx: Ctx, argv: list[bytes]) -> object:
    """TIME"""
    seconds, micros = divmod(ctx.engine.clock.now_us(), 1_000_000)
    return [str(seconds).encode(), str(micros).encode()]



# =====================================================================================
# SHUTDOWN
# =====================================================================================
@command("shutdown", arity=-1, flags="admin noscript loading stale no_multi allow_busy",
         group="server", since="1.0.0",
         complexity="O(N) when saving, where N is the total number of keys in all databases "
                    "when saving data, otherwise O(1)",
         summary="Synchronously save the dataset to disk and then shut down the server")
def shutdown(ctx: Ctx, argv: list[bytes]) -> object:
    """SHUTDOWN [NOSAVE | SAVE] [NOW] [FORCE] [ABORT]"""
    flags = set()
    r = ArgReader(argv)
    while r.more():
        upper = r.next_upper()
        if upper not in (b"NOSAVE", b"SAVE", b"NOW", b"FORCE", b"ABORT"):
            raise CommandError(SYNTAX)
        flags.add(upper)
    r.finish()
    if (b"ABORT" in flags and len(flags) > 1) or {b"NOSAVE", b"SAVE"} <= flags:
        raise CommandError(SYNTAX)
    if b"ABORT" in flags:
        raise CommandError(NO_SHUTDOWN_IN_PROGRESS)  # shutting down never waits here
    hook = ctx.engine.shutdown_hook
    if hook is None:
        raise CommandError(SHUTDOWN_FAILED)
    log.warning("User requested shutdown...")
    save = True if b"SAVE" in flags else False if b"NOSAVE" in flags else None
    if not ctx.engine.persistence.shutdown_save(save) and b"FORCE" not in flags:
        raise CommandError(SHUTDOWN_FAILED)
    hook()
    # Redis exits without answering: the client sees the connection close.
    ctx.client.close_after_reply = True
    return RawReply(b"")
