"""LMOVE, RPOPLPUSH, LMOVEM and the blocking BLMOVE, BRPOPLPUSH and BLMOVEM.

Propagation, as Redis does it: BLMOVE -> ``LMOVE src dst wherefrom
whereto`` (the words as given), BRPOPLPUSH -> ``RPOPLPUSH src dst``, BLMOVEM
-> ``LMOVEM src dst wherefrom whereto EXACTLY n OBO|BULK`` with n the
number moved, both when they move at once and when a blocked client is
served; the others go out as they came, and only when they moved something."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_LIST
from ...errors import SYNTAX, CommandError
from ...resp.replies import NULL_ARRAY
from ...types.list import List
from ..key_specs import ks
from ..table import command
from .common import (
    block_on_list,
    emptied,
    listpack_fill,
    move_one,
    parse_position,
    parse_positive,
    parse_timeout,
    write_list,
)

if TYPE_CHECKING:
    from ..contract import Ctx


# -- moves -------------------------------------------------------------------------------

@command("lmove", arity=5, flags="write denyoom", keys=(1, 2, 1), group="list", since="6.2.0",
         complexity="O(1)",
         summary="Returns an element after popping it from one list and pushing it to "
                 "another. Deletes the list if the last element was moved.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def lmove(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT>"""
    left_from, left_to = parse_position(argv[3]), parse_position(argv[4])
    value = move_one(ctx, argv[1], argv[2], left_from, left_to)
    if value is not None:
        ctx.propagate_argv()
    return value


@command("rpoplpush", arity=3, flags="write denyoom", keys=(1, 2, 1), group="list",
         since="1.2.0", complexity="O(1)",
         summary="Returns the last element of a list after removing and pushing it to "
                 "another list. Deletes the list if the last element was popped.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def rpoplpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPOPLPUSH source destination"""
    value = move_one(ctx, argv[1], argv[2], False, True)
    if value is not None:
        ctx.propagate_argv()
    return value


def _blocking_move(ctx: Ctx, effect: list[bytes], left_from: bool, left_to: bool,
                   timeout: int) -> Any:
    """BLMOVE and BRPOPLPUSH: move at once, or wait on the source.  Inside
    MULTI the answer is a null bulk string; a timeout answers a null array
    (RESP2 ``*-1``), as Redis's timed-out list commands all do."""
    src, dst = effect[1], effect[2]

    def move(c: Ctx) -> Any:
        value = move_one(c, src, dst, left_from, left_to)
        if value is not None:
            c.effect(effect)
        return value

    value = move(ctx)
    if value is not None or not ctx.may_block:
        return value
    return block_on_list([src], timeout, move, NULL_ARRAY)


@command("blmove", arity=6, flags="write denyoom noscript blocking", keys=(1, 2, 1), group="list",
         since="6.2.0", complexity="O(1)",
         summary="Pops an element from a list, pushes it to another list and returns it. "
                 "Blocks until an element is available otherwise. Deletes the list if the "
                 "last element was moved.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def blmove(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout"""
    left_from, left_to = parse_position(argv[3]), parse_position(argv[4])
    timeout = parse_timeout(argv[5], ctx.now_ms())
    # Propagated as LMOVE with the position words as given (Redis rewrites the argv).
    return _blocking_move(ctx, [b"LMOVE", *argv[1:5]], left_from, left_to, timeout)


@command("brpoplpush", arity=4, flags="write denyoom noscript blocking", keys=(1, 2, 1), group="list",
         since="2.2.0", complexity="O(1)",
         summary="Pops an element from a list, pushes it to another list and returns it. "
                 "Block until an element is available otherwise. Deletes the list if the last "
                 "element was popped.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def brpoplpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """BRPOPLPUSH source destination timeout"""
    timeout = parse_timeout(argv[3], ctx.now_ms())
    return _blocking_move(ctx, [b"RPOPLPUSH", argv[1], argv[2]], False, True, timeout)


_SELECTORS = {b"COUNT": False, b"EXACTLY": True}
_ORDERINGS = {b"OBO": False, b"BULK": True}


def _how_many(argv: list[bytes], at: int) -> tuple[int, bool, bool]:
    """LMOVEM's optional ``<COUNT count | EXACTLY exactly> <OBO | BULK>``
    block starting at ``argv[at]``: (count, exact, bulk).  Absent: one
    element.  The block is all three words or a syntax error; a count that
    is not an integer of at least 1 answers LMPOP's count error."""
    rest = len(argv) - at
    if rest == 0:
        return 1, False, True
    if rest != 3:
        raise CommandError(SYNTAX)
    exact = _SELECTORS.get(argv[at].upper())
    if exact is None:
        raise CommandError(SYNTAX)
    count = parse_positive(argv[at + 1], errors.MPOP_COUNT_POSITIVE, 1)
    bulk = _ORDERINGS.get(argv[at + 2].upper())
    if bulk is None:
        raise CommandError(SYNTAX)
    return count, exact, bulk


def _move_many(ctx: Ctx, src: bytes, dst: bytes, left_from: bool, left_to: bool,
               count: int, exact: bool, bulk: bool) -> list[bytes] | None:
    """LMOVEM's work: the moved elements as they now sit in ``dst`` (head to
    tail), or None when nothing moved (``src`` missing, or holding fewer than
    ``count`` with ``exact``).  OBO pushes each element as it is popped (a
    block pushed at the head comes out reversed); BULK keeps the elements'
    order in the source.  WRONGTYPE when either key holds another type, and
    then nothing moved.  Declares no propagation.  O(count)."""
    source = write_list(ctx, src)
    if source is None:
        return None
    target = write_list(ctx, dst)
    if exact and len(source.items) < count:
        return None
    fill = listpack_fill(ctx)
    popped = source.pop_many(count, left_from, fill)
    if bulk:
        block = popped if left_from else popped[::-1]
        pushed = block[::-1] if left_to else block
    else:
        pushed = popped
        block = popped[::-1] if left_to else popped
    if target is None:
        target = List()
        ctx.db.set(dst, target)
    target.push(pushed, left_to, fill)
    moved = len(popped)
    ctx.modified(dst, moved)
    ctx.ready(dst)
    ctx.notify(NOTIFY_LIST, b"lpush" if left_to else b"rpush", dst)
    ctx.modified(src, moved)
    ctx.notify(NOTIFY_LIST, b"lpop" if left_from else b"rpop", src)
    emptied(ctx, src, source)
    return block


@command("lmovem", arity=-5, flags="write denyoom", keys=(1, 2, 1), group="list",
         since="8.10.0", complexity="O(N) where N is the number of elements moved.",
         summary="Moves up to (or exactly) a number of elements from one list to another "
                 "and returns them. Deletes the source list if it becomes empty.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def lmovem(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMOVEM source destination <LEFT | RIGHT> <LEFT | RIGHT> [<COUNT count | EXACTLY exactly> <OBO | BULK>]

    O(N), N the number of elements moved.  Replies the moved elements in
    destination order, or a null array when nothing moved; propagated as it
    came, when it moved something."""
    left_from, left_to = parse_position(argv[3]), parse_position(argv[4])
    count, exact, bulk = _how_many(argv, 5)
    moved = _move_many(ctx, argv[1], argv[2], left_from, left_to, count, exact, bulk)
    if moved is None:
        return NULL_ARRAY
    ctx.propagate_argv()
    return moved


@command("blmovem", arity=-6, flags="write denyoom blocking", keys=(1, 2, 1), group="list",
         since="8.10.0", complexity="O(N) where N is the number of elements moved.",
         summary="Moves up to (or exactly) a number of elements from one list to another "
                 "and returns them. Blocks until the elements are available otherwise. "
                 "Deletes the source list if it becomes empty.",
         key_specs=[ks("RW access delete", 1), ks("RW insert", 2)])
def blmovem(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMOVEM source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout [<COUNT count | EXACTLY exactly> <OBO | BULK>]

    O(N), N the number of elements moved.  Moves at once when the source
    holds enough (any element for COUNT, ``exactly`` of them for EXACTLY),
    else blocks on the source: a push that leaves it short keeps the client
    blocked.  A timeout, or too few inside MULTI, answers a null array.
    Propagated as ``LMOVEM ... EXACTLY <moved> <OBO | BULK>``."""  # noqa: E501 (the syntax line, whole)
    src, dst = argv[1], argv[2]
    left_from, left_to = parse_position(argv[3]), parse_position(argv[4])
    timeout = parse_timeout(argv[5], ctx.now_ms())
    count, exact, bulk = _how_many(argv, 6)
    head = [b"LMOVEM", *argv[1:5], b"EXACTLY"]
    order = b"BULK" if bulk else b"OBO"

    def move(c: Ctx) -> Any:
        moved = _move_many(c, src, dst, left_from, left_to, count, exact, bulk)
        if moved is not None:
            c.effect([*head, b"%d" % len(moved), order])
        return moved

    moved = move(ctx)
    if moved is not None:
        return moved
    if not ctx.may_block:
        return NULL_ARRAY
    return block_on_list([src], timeout, move, NULL_ARRAY)
