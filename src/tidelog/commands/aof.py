"""BGREWRITEAOF: rewrite the append-only file in the background.

The AOF itself is :mod:`tidelog.persistence.aof`; the server keeps the
running one as ``engine.aof`` (absent with ``appendonly no``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CommandError
from ..resp.replies import OK, SimpleString
from .table import command

if TYPE_CHECKING:
    from ..engine import Ctx

REWRITE_STARTED = SimpleString(b"Background append only file rewriting started")
REWRITE_SCHEDULED = SimpleString(b"Background append only file rewriting scheduled")
REWRITE_IN_PROGRESS = b"ERR Background append only file rewriting already in progress"
AOF_DISABLED = (b"ERR Tidelog rewrites the append only file only while it is enabled "
                b"(appendonly yes)")


def running_aof(ctx: Ctx) -> Any:
    return getattr(ctx.engine, "aof", None)


@command("bgrewriteaof", arity=1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Asynchronously rewrites the append-only file to disk.")
def bgrewriteaof(ctx: Ctx, argv: list[bytes]) -> object:
    """BGREWRITEAOF"""
    aof = running_aof(ctx)
    if aof is None:
        raise CommandError(AOF_DISABLED)
    if aof.rewriting:
        raise CommandError(REWRITE_IN_PROGRESS)
    if aof.other_child_active():  # a BGSAVE runs: the AOF's timer starts it afterwards
        aof.rewrite_scheduled = True
        return REWRITE_SCHEDULED
    try:
        aof.start_rewrite()
    except OSError as exc:
        raise CommandError(f"ERR Can't rewrite append only file in background: {exc}") from None
    return REWRITE_STARTED


_INFO_DISABLED = [
    "aof_enabled:0",
    "aof_rewrite_in_progress:0",
    "aof_rewrite_scheduled:0",
    "aof_last_rewrite_time_sec:-1",
    "aof_current_rewrite_time_sec:-1",
    "aof_last_bgrewrite_status:ok",
    "aof_rewrites:0",
    "aof_last_write_status:ok",
]


def aof_info_lines(ctx: Ctx) -> list[str]:
    """INFO persistence's aof_* lines."""
    aof = running_aof(ctx)
    return list(_INFO_DISABLED) if aof is None else aof.info_lines()


def debug_loadaof(ctx: Ctx) -> object:
    """DEBUG LOADAOF: flush the AOF, empty the dataset, load the AOF again."""
    from ..persistence import aof as persistence_aof

    aof = running_aof(ctx)
    try:
        if aof is not None:
            persistence_aof.reload(ctx.engine, aof)
        else:
            for db in ctx.engine.dbs:
                db.flush()
            persistence_aof.load(ctx.engine)
    except persistence_aof.AofLoadError as exc:
        raise CommandError("ERR " + str(exc).replace("\r", " ").replace("\n", " ")) from None
    return OK
