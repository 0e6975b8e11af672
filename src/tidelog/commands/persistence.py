"""Snapshot commands: SAVE, BGSAVE, LASTSAVE; and the RDB parts of DEBUG
RELOAD, SHUTDOWN and INFO persistence (called from ``commands/server.py``).

The work is done by :mod:`tidelog.persistence.snapshot` (when and how) and
:mod:`tidelog.persistence.rdb` (the file format).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from ..errors import SYNTAX, CommandError
from ..persistence import rdb
from ..persistence.snapshot import snapshotter
from ..resp.replies import OK, SimpleString
from .table import command

if TYPE_CHECKING:
    from ..engine import Ctx

log = logging.getLogger("tidelog")

BGSAVE_IN_PROGRESS = b"ERR Background save already in progress"


@command("save", arity=1, flags="admin noscript no_async_loading no_multi", group="server",
         since="1.0.0", complexity="O(N) where N is the total number of keys in all databases",
         summary="Synchronously save the dataset to disk")
def save(ctx: Ctx, argv: list[bytes]) -> object:
    """SAVE"""
    snap = snapshotter(ctx.engine)
    if snap.in_progress:
        raise CommandError(BGSAVE_IN_PROGRESS)
    if not snap.save():
        raise CommandError(b"ERR")
    return OK


@command("bgsave", arity=-1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)", summary="Asynchronously save the dataset to disk")
def bgsave(ctx: Ctx, argv: list[bytes]) -> object:
    """BGSAVE [SCHEDULE]"""
    schedule = False
    if len(argv) > 1:
        if len(argv) == 2 and argv[1].lower() == b"schedule":
            schedule = True
        else:
            raise CommandError(SYNTAX)
    snap = snapshotter(ctx.engine)
    if snap.in_progress:
        raise CommandError(BGSAVE_IN_PROGRESS)
    if snap.other_child_active() or ctx.engine._executing:
        # Inside EXEC, or while the AOF rewrite child runs: the cron forks later.
        if not (schedule or ctx.engine._executing):
            raise CommandError(b"ERR Another child process is active (AOF?): can't BGSAVE "
                               b"right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE "
                               b"whenever possible.")
        snap.scheduled = True
        return SimpleString(b"Background saving scheduled")
    if not snap.bgsave():
        raise CommandError(b"ERR")
    return SimpleString(b"Background saving started")


@command("lastsave", arity=1, flags="loading stale fast", group="server", since="1.0.0",
         complexity="O(1)", categories=("@admin", "@dangerous"),
         summary="Get the UNIX time stamp of the last successful save to disk")
def lastsave(ctx: Ctx, argv: list[bytes]) -> object:
    """LASTSAVE"""
    return snapshotter(ctx.engine).last_save


def debug_reload(ctx: Ctx, argv: list[bytes]) -> object:
    """DEBUG RELOAD [NOSAVE]: save the snapshot, empty every database, load it back."""
    options = {arg.upper() for arg in argv[2:]}
    if options - {b"NOSAVE", b"MERGE", b"NOFLUSH"}:
        raise CommandError(b"ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE "
                           b"options.")
    if options & {b"MERGE", b"NOFLUSH"}:
        raise CommandError(b"ERR DEBUG RELOAD MERGE and NOFLUSH are not supported by Tidelog")
    snap = snapshotter(ctx.engine)
    if b"NOSAVE" not in options and not snap.save():
        raise CommandError(b"ERR Error trying to save the DB")
    try:
        rdb.load_file(ctx.engine)
    except (OSError, rdb.RdbError) as exc:
        log.warning("DEBUG RELOAD: %s", exc)
        raise CommandError(b"ERR Error trying to load the RDB dump") from None
    for db_index, key in list(ctx.engine.waiters):  # blocked readers see the new values
        ctx.engine.signal_ready(db_index, key)
    log.info("DB reloaded by DEBUG RELOAD")
    return OK


def shutdown_save(ctx: Ctx, flags: set[bytes]) -> bool:
    """SHUTDOWN's saving: SAVE always, NOSAVE never, else when save points exist.
    False when the save failed and FORCE was not given."""
    save = True if b"SAVE" in flags else False if b"NOSAVE" in flags else None
    ok = snapshotter(ctx.engine).shutdown_save(save)
    return ok or b"FORCE" in flags


def rdb_info_lines(ctx: Ctx) -> list[str]:
    """The rdb_* lines of INFO persistence."""
    snap = snapshotter(ctx.engine)
    running = snap.in_progress
    current = int(time.monotonic() - snap.child_started) if running else -1
    return [
        f"rdb_changes_since_last_save:{ctx.engine.dirty}",
        f"rdb_bgsave_in_progress:{int(running)}",
        f"rdb_last_save_time:{snap.last_save}",
        f"rdb_last_bgsave_status:{'ok' if snap.last_bgsave_ok else 'err'}",
        f"rdb_last_bgsave_time_sec:{snap.last_bgsave_seconds}",
        f"rdb_current_bgsave_time_sec:{current}",
        f"rdb_saves:{snap.saves}",
    ]
