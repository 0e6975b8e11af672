"""The persistence commands, registered from this side of the layers:
SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF, and DEBUG RELOAD / LOADAOF.

They act on the engine's :class:`~tidelog.persistence.durability.Durability`
(:func:`~tidelog.persistence.durability.attach`): its snapshots
(:mod:`.snapshot`, the file format in :mod:`.rdb`) and its AOF (:mod:`.aof`).
The other commands reach persistence only through the engine's declared
``persistence`` (INFO persistence, CONFIG SET appendonly, SHUTDOWN).
"""

from __future__ import annotations

import logging

from .. import errors
from ..commands.args import ArgReader
from ..commands.contract import Ctx, Reply
from ..commands.server.debug import debug_subcommand
from ..commands.table import command
from ..errors import CommandError
from ..resp.replies import OK, SimpleString
from . import aof_loader, rdb
from .durability import attach

log = logging.getLogger("tidelog")

REWRITE_STARTED = SimpleString(b"Background append only file rewriting started")
REWRITE_SCHEDULED = SimpleString(b"Background append only file rewriting scheduled")
BGSAVE_STARTED = SimpleString(b"Background saving started")
BGSAVE_SCHEDULED = SimpleString(b"Background saving scheduled")


@command("save", arity=1, flags="admin noscript no_async_loading no_multi", group="server",
         since="1.0.0", complexity="O(N) where N is the total number of keys in all databases",
         summary="Synchronously save the dataset to disk")
def save(ctx: Ctx, argv: list[bytes]) -> Reply:
    """SAVE"""
    snap = attach(ctx.engine).snapshots
    if snap.in_progress:
        raise CommandError(errors.BGSAVE_IN_PROGRESS)
    if not snap.save():
        raise CommandError(errors.SAVE_FAILED)
    return OK


@command("bgsave", arity=-1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)", summary="Asynchronously save the dataset to disk")
def bgsave(ctx: Ctx, argv: list[bytes]) -> Reply:
    """BGSAVE [SCHEDULE]"""
    r = ArgReader(argv)
    schedule = False
    if r.more():
        if r.next_upper() != b"SCHEDULE":
            raise CommandError(errors.SYNTAX)
        schedule = True
    r.finish()
    snap = attach(ctx.engine).snapshots
    if snap.in_progress:
        raise CommandError(errors.BGSAVE_IN_PROGRESS)
    in_exec = ctx.engine.in_transaction()
    if snap.other_child_active() or in_exec:
        # Inside EXEC, or while the AOF rewrite child runs: the cron forks later.
        if not (schedule or in_exec):
            raise CommandError(errors.BGSAVE_CHILD_ACTIVE)
        snap.scheduled = True
        return BGSAVE_SCHEDULED
    if not snap.bgsave():
        raise CommandError(errors.SAVE_FAILED)
    return BGSAVE_STARTED


@command("lastsave", arity=1, flags="loading stale fast", group="server", since="1.0.0",
         complexity="O(1)", categories=("@admin", "@dangerous"),
         summary="Get the UNIX time stamp of the last successful save to disk")
def lastsave(ctx: Ctx, argv: list[bytes]) -> Reply:
    """LASTSAVE"""
    return attach(ctx.engine).snapshots.last_save


@command("bgrewriteaof", arity=1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Asynchronously rewrites the append-only file to disk.")
def bgrewriteaof(ctx: Ctx, argv: list[bytes]) -> Reply:
    """BGREWRITEAOF"""
    try:
        writer = attach(ctx.engine).rewriter()  # appendonly no: a new base alone
    except OSError as exc:
        raise errors.rewrite_failed(str(exc)) from None
    if writer.rewriting:
        raise CommandError(errors.REWRITE_IN_PROGRESS)
    if writer.other_child_active():  # a BGSAVE runs: the AOF's timer starts it afterwards
        writer.rewrite_scheduled = True
        return REWRITE_SCHEDULED
    try:
        writer.start_rewrite()
    except OSError as exc:
        raise errors.rewrite_failed(str(exc)) from None
    return REWRITE_STARTED


@debug_subcommand("reload")
def debug_reload(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE]: save the snapshot, empty every
    database, load it back.  NOSAVE: no save; NOFLUSH: nothing is emptied, and
    a key or function library already there fails the load, unless MERGE (the
    snapshot's then replaces it).  O(N)."""
    r = ArgReader(argv, 2)
    options = set()
    while r.more():
        options.add(r.next_upper())
    r.finish()
    if options - {b"NOSAVE", b"MERGE", b"NOFLUSH"}:
        raise CommandError(errors.DEBUG_RELOAD_OPTIONS)
    snap = attach(ctx.engine).snapshots
    if b"NOSAVE" not in options and not snap.save():
        raise CommandError(errors.DEBUG_RELOAD_SAVE_FAILED)
    try:
        rdb.load_file(ctx.engine, flush=b"NOFLUSH" not in options, merge=b"MERGE" in options)
    except (OSError, rdb.RdbError) as exc:
        log.warning("DEBUG RELOAD: %s", exc)
        raise CommandError(errors.DEBUG_RELOAD_LOAD_FAILED) from None
    ctx.engine.signal_all_waited()  # blocked readers see the new values
    log.info("DB reloaded by DEBUG RELOAD")
    return OK


@debug_subcommand("loadaof", arity=2)
def debug_loadaof(ctx: Ctx, argv: list[bytes]) -> Reply:
    """DEBUG LOADAOF: flush the AOF, empty the dataset, load the AOF again."""
    writer = attach(ctx.engine).aof
    try:
        if writer is not None:
            aof_loader.reload(ctx.engine, writer)
        else:
            for db in ctx.engine.dbs:
                db.flush()
            ctx.engine.tracking.flushed()
            aof_loader.load(ctx.engine)
    except aof_loader.AofLoadError as exc:
        raise errors.aof_load_failed(str(exc)) from None
    return OK
