"""The persistence commands: SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF.

They read their arguments here and ask the engine's ``persistence`` (the
:class:`~tidelog.commands.contract.Persistence` interface) for the work:
the durability layer's snapshots and AOF when one is attached, which the
server always does; a bare engine refuses them.  DEBUG RELOAD and DEBUG
LOADAOF are DEBUG's (:mod:`.debug`).
"""

from __future__ import annotations

from typing import Any

from ... import errors
from ...errors import CommandError
from ...resp.replies import OK
from ..args import ArgReader
from ..contract import Ctx
from ..key_specs import ND
from ..table import command


@command("save", arity=1, flags="admin noscript no_async_loading no_multi", group="server",
         since="1.0.0", complexity="O(N) where N is the total number of keys in all databases",
         summary="Synchronously save the dataset to disk")
def save(ctx: Ctx, argv: list[bytes]) -> Any:
    """SAVE

    O(N) in the data set."""
    ctx.engine.persistence.save()
    return OK


@command("bgsave", arity=-1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)", summary="Asynchronously save the dataset to disk")
def bgsave(ctx: Ctx, argv: list[bytes]) -> Any:
    """BGSAVE [SCHEDULE]

    O(1): the snapshot is written by a child process."""
    r = ArgReader(argv)
    schedule = False
    if r.more():
        if r.next_upper() != b"SCHEDULE":
            raise CommandError(errors.SYNTAX)
        schedule = True
    r.finish()
    return ctx.engine.persistence.bgsave(schedule, ctx.engine.in_transaction())


@command("lastsave", arity=1, flags="loading stale fast", group="server", since="1.0.0",
         complexity="O(1)", categories=("@admin", "@dangerous"),
         summary="Get the UNIX time stamp of the last successful save to disk",
         tips=(ND,))
def lastsave(ctx: Ctx, argv: list[bytes]) -> Any:
    """LASTSAVE

    O(1)."""
    return ctx.engine.persistence.last_save()


@command("bgrewriteaof", arity=1, flags="admin noscript no_async_loading", group="server",
         since="1.0.0", complexity="O(1)",
         summary="Asynchronously rewrites the append-only file to disk.")
def bgrewriteaof(ctx: Ctx, argv: list[bytes]) -> Any:
    """BGREWRITEAOF

    O(1): the new base is written by a child process."""
    return ctx.engine.persistence.rewrite_aof()
