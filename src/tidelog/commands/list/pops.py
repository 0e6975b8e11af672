"""LPOP, RPOP, LMPOP and the blocking BLPOP, BRPOP and BLMPOP.

Propagation, as Redis does it: the blocking pops go out in their
non-blocking forms (BLPOP -> ``LPOP key``, BRPOP -> ``RPOP key``, BLMPOP and
LMPOP -> ``LPOP|RPOP key n`` with n the number popped), both when they pop
at once and when a blocked client is served."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_LIST
from ...errors import SYNTAX, CommandError
from ...resp.replies import NULL_ARRAY
from ..args import ArgReader
from ..key_specs import ks
from ..table import command
from .common import (
    block_on_list,
    emptied,
    listpack_fill,
    parse_position,
    parse_positive,
    parse_timeout,
    pop_first,
    write_list,
)

if TYPE_CHECKING:
    from ..contract import Ctx


# -- pops --------------------------------------------------------------------------------

def _pop(ctx: Ctx, argv: list[bytes], left: bool) -> Any:
    if len(argv) > 3:
        raise errors.wrong_arity(b"lpop" if left else b"rpop")
    key = argv[1]
    count = None
    if len(argv) == 3:
        count = parse_positive(argv[2], errors.POSITIVE_OUT_OF_RANGE)
    lst = write_list(ctx, key)
    if lst is None:
        return NULL_ARRAY if count is not None else None
    if count == 0:
        return []
    fill = listpack_fill(ctx)
    if count is None:
        reply: Any = lst.pop(left, fill)
        ctx.modified(key)
    else:
        reply = lst.pop_many(count, left, fill)
        ctx.modified(key, len(reply))
    ctx.notify(NOTIFY_LIST, b"lpop" if left else b"rpop", key)
    emptied(ctx, key, lst)
    ctx.propagate_argv()
    return reply


@command("lpop", arity=-2, flags="write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements returned",
         summary="Returns the first elements in a list after removing it. Deletes the list "
                 "if the last element was popped.",
         key_specs=[ks("RW access delete", 1)])
def lpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPOP key [count]"""
    return _pop(ctx, argv, True)


@command("rpop", arity=-2, flags="write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements returned",
         summary="Returns and removes the last elements of a list. Deletes the list if the "
                 "last element was popped.",
         key_specs=[ks("RW access delete", 1)])
def rpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPOP key [count]"""
    return _pop(ctx, argv, False)


def _parse_mpop(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """``numkeys key [key ...] LEFT|RIGHT [COUNT count]``: keys, left, count."""
    numkeys = parse_positive(argv[numkeys_at], errors.NUMKEYS_NOT_POSITIVE, 1)
    where_at = numkeys_at + numkeys + 1
    if where_at >= len(argv):
        raise CommandError(SYNTAX)
    left = parse_position(argv[where_at])
    count = -1
    r = ArgReader(argv, where_at + 1)
    while r.more():
        opt = r.next_upper()
        if count == -1 and opt == b"COUNT" and r.more():
            count = parse_positive(r.next_bytes(), errors.MPOP_COUNT_POSITIVE, 1)
        else:
            raise CommandError(SYNTAX)
    return argv[numkeys_at + 1:where_at], left, max(count, 1)


@command("lmpop", arity=-4, flags="write movablekeys", keys=(0, 0, 0), group="list",
         since="7.0.0",
         complexity="O(N+M) where N is the number of provided keys and M is the number of "
                    "elements returned.",
         summary="Returns multiple elements from a list after removing them. Deletes the list "
                 "if the last element was popped.",
         key_specs=[ks("RW access delete", 1, keynum=(0, 1, 1))])
def lmpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMPOP numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = _parse_mpop(argv, 1)
    reply = pop_first(ctx, keys, left, count)
    return NULL_ARRAY if reply is None else reply


# -- blocking pops ------------------------------------------------------------------------

def _blocking_pop(ctx: Ctx, argv: list[bytes], left: bool) -> Any:
    keys = argv[1:-1]
    timeout = parse_timeout(argv[-1], ctx.now_ms())

    def pop(c: Ctx) -> Any:
        return pop_first(c, keys, left, None)

    reply = pop(ctx)
    if reply is not None:
        return reply
    return block_on_list(list(keys), timeout, pop, NULL_ARRAY)


@command("blpop", arity=-3, flags="write noscript blocking", keys=(1, -2, 1), group="list",
         since="2.0.0", complexity="O(N) where N is the number of provided keys.",
         summary="Removes and returns the first element in a list. Blocks until an element "
                 "is available otherwise. Deletes the list if the last element was popped.",
         key_specs=[ks("RW access delete", 1, -2)])
def blpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLPOP key [key ...] timeout"""
    return _blocking_pop(ctx, argv, True)


@command("brpop", arity=-3, flags="write noscript blocking", keys=(1, -2, 1), group="list",
         since="2.0.0", complexity="O(N) where N is the number of provided keys.",
         summary="Removes and returns the last element in a list. Blocks until an element is "
                 "available otherwise. Deletes the list if the last element was popped.",
         key_specs=[ks("RW access delete", 1, -2)])
def brpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BRPOP key [key ...] timeout"""
    return _blocking_pop(ctx, argv, False)


@command("blmpop", arity=-5, flags="write blocking movablekeys", keys=(0, 0, 0), group="list",
         since="7.0.0",
         complexity="O(N+M) where N is the number of provided keys and M is the number of "
                    "elements returned.",
         summary="Pops the first element from one of multiple lists. Blocks until an element "
                 "is available otherwise. Deletes the list if the last element was popped.",
         key_specs=[ks("RW access delete", 2, keynum=(0, 1, 1))])
def blmpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMPOP timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = _parse_mpop(argv, 2)
    timeout = parse_timeout(argv[1], ctx.now_ms())

    def pop(c: Ctx) -> Any:
        return pop_first(c, keys, left, count)

    reply = pop(ctx)
    if reply is not None:
        return reply
    return block_on_list(list(keys), timeout, pop, NULL_ARRAY)
