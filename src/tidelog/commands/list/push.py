"""LPUSH, RPUSH, LPUSHX and RPUSHX.  Each propagates itself when it added
something, and marks the key ready for the clients blocked on it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_LIST
from ...types.list import List
from ..key_specs import ks
from ..table import command
from .common import listpack_fill, write_list

if TYPE_CHECKING:
    from ..contract import Ctx


def push_values(ctx: Ctx, argv: list[bytes], left: bool, only_existing: bool) -> int:
    key = argv[1]
    values = argv[2:]
    lst = write_list(ctx, key)
    if lst is None:
        if only_existing:
            return 0
        lst = List()
        ctx.db.set(key, lst)
    length = lst.push(values, left, listpack_fill(ctx))
    ctx.modified(key, len(values))
    ctx.ready(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_LIST, b"lpush" if left else b"rpush", key)
    return length


# -- pushes ------------------------------------------------------------------------------

@command("lpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="1.0.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Prepends one or more elements to a list. Creates the key if it doesn't exist.",
         key_specs=[ks("RW insert", 1)])
def lpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPUSH key element [element ...]"""
    return push_values(ctx, argv, True, False)


@command("rpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="1.0.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Appends one or more elements to a list. Creates the key if it doesn't exist.",
         key_specs=[ks("RW insert", 1)])
def rpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPUSH key element [element ...]"""
    return push_values(ctx, argv, False, False)


@command("lpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Prepends one or more elements to a list only when the list exists.",
         key_specs=[ks("RW insert", 1)])
def lpushx(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPUSHX key element [element ...]"""
    return push_values(ctx, argv, True, True)


@command("rpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Appends an element to a list only when the list exists.",
         key_specs=[ks("RW insert", 1)])
def rpushx(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPUSHX key element [element ...]"""
    return push_values(ctx, argv, False, True)
