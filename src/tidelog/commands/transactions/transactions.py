"""Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH.

The engine does the queueing (every command but these is queued while a
MULTI is open) and runs the queue (:meth:`Engine.exec_transaction`); these
handlers only open, close and watch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import (
    DISCARD_WITHOUT_MULTI,
    EXEC_WITHOUT_MULTI,
    NESTED_MULTI,
    WATCH_INSIDE_MULTI,
    CommandError,
)
from ...resp.replies import OK
from ..key_specs import ks
from ..lookup import key_arguments
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


@command("multi", arity=1, flags="noscript loading stale fast allow_busy", group="transactions",
         since="1.2.0", complexity="O(1)", summary="Starts a transaction.")
def multi(ctx: Ctx, argv: list[bytes]) -> object:
    """MULTI"""
    if ctx.client.multi is not None:
        raise CommandError(NESTED_MULTI)
    ctx.client.multi = []
    ctx.client.multi_error = False
    return OK


@command("exec", arity=1, flags="noscript loading stale skip_slowlog", group="transactions",
         since="1.2.0", complexity="Depends on commands in the transaction",
         summary="Executes all commands in a transaction.")
def exec_(ctx: Ctx, argv: list[bytes]) -> object:
    """EXEC"""
    if ctx.client.multi is None:
        raise CommandError(EXEC_WITHOUT_MULTI)
    return ctx.engine.exec_transaction(ctx)


@command("discard", arity=1, flags="noscript loading stale fast allow_busy",
         group="transactions", since="2.0.0", complexity="O(N), when N is the number of queued commands",
         summary="Discards a transaction.")
def discard(ctx: Ctx, argv: list[bytes]) -> object:
    """DISCARD"""
    if ctx.client.multi is None:
        raise CommandError(DISCARD_WITHOUT_MULTI)
    ctx.client.multi = None
    ctx.client.multi_error = False
    ctx.engine.unwatch_all(ctx.client)
    return OK


@command("watch", arity=-2, flags="noscript loading stale fast allow_busy", keys=(1, -1, 1),
         group="transactions", since="2.2.0", complexity="O(1) for every key.",
         summary="Monitors changes to keys to determine the execution of a transaction.",
         key_specs=[ks("RO", 1, -1)])
def watch(ctx: Ctx, argv: list[bytes]) -> object:
    """WATCH key [key ...]"""
    if ctx.client.multi is not None:
        raise CommandError(WATCH_INSIDE_MULTI)
    for key in key_arguments(argv):
        ctx.engine.watch(ctx.client, key)
    return OK


@command("unwatch", arity=1, flags="noscript loading stale fast allow_busy",
         group="transactions", since="2.2.0", complexity="O(1)",
         summary="Forgets about watched keys of a transaction.")
def unwatch(ctx: Ctx, argv: list[bytes]) -> object:
    """UNWATCH"""
    ctx.engine.unwatch_all(ctx.client)
    return OK
