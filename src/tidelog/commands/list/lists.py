"""Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX,
LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP, LMOVEM and the
blocking BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BLMOVEM.

The value is a :class:`~tidelog.types.list.List`; a list that becomes empty
is deleted, as in Redis.

Blocking pops use the engine's waiters (the ones XREAD uses): a pop that
finds nothing returns a :class:`~tidelog.commands.contract.Wait` on its
keys; pushes mark a key ready (``ctx.ready``) and the engine serves the
clients blocked on it, in the order they blocked, after the pushing command
(or EXEC) finished -- so LPUSH's reply counts the elements before a waiter
took one.  Serving follows Redis 7.2+, which runs the blocked command again:
a client is served when a key it waits on holds a list, and the command
then pops from the *first* of its keys that has elements (a wrong-type key
before it answers WRONGTYPE); a key deleted or given another type leaves
the client blocked.  Inside MULTI (and a script) a blocking pop never
blocks: it answers its timeout reply at once.

Propagation, as Redis does it: the blocking pops go out in their
non-blocking forms (BLPOP -> ``LPOP key``, BRPOP -> ``RPOP key``, BLMPOP and
LMPOP -> ``LPOP|RPOP key n`` with n the number popped, BLMOVE -> ``LMOVE
src dst wherefrom whereto`` (the words as given), BRPOPLPUSH -> ``RPOPLPUSH src dst``,
BLMOVEM -> ``LMOVEM src dst wherefrom whereto EXACTLY n OBO|BULK`` with n the
number moved), both
when they pop at once and when a blocked client is served; the other
commands go out as they came, and only when they changed something.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_GENERIC, NOTIFY_LIST
from ...errors import SYNTAX, WRONGTYPE, CommandError
from ...resp.replies import NULL_ARRAY, OK
from ...types.list import List
from ..args import INT64_MIN, ArgReader, parse_int
from ..contract import Wait
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

_LEFT, _RIGHT = b"LEFT", b"RIGHT"

# -- helpers ---------------------------------------------------------------------------


def _fill(ctx: Ctx) -> int:
    return ctx.config["list-max-listpack-size"]


def _read_list(ctx: Ctx, key: bytes) -> List | None:
    """The list at key for a read command (counted in keyspace hits/misses)."""
    value = lookup_read(ctx, key)
    if value is None or type(value) is List:
        return value
    raise CommandError(WRONGTYPE)


def _write_list(ctx: Ctx, key: bytes) -> List | None:
    return ctx.db.get_typed(key, List)


def _emptied(ctx: Ctx, key: bytes, lst: List) -> None:
    """A list that lost elements: the key goes when it is empty."""
    if not lst.items:
        ctx.db.delete(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


def _position(arg: bytes) -> bool:
    """LEFT (True) or RIGHT (False), any case; else a syntax error."""
    word = arg.upper()
    if word == _LEFT:
        return True
    if word == _RIGHT:
        return False
    raise CommandError(SYNTAX)


def _positive(arg: bytes, message: bytes, lo: int = 0) -> int:
    """An integer in lo..LONG_MAX, else ``message`` (also for a non-number),
    as Redis's getRangeLong...OrReply with a message."""
    value = parse_int(arg, message)
    if value < lo:
        raise CommandError(message)
    return value


_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_HEX = re.compile(rb"([+-]?)0[xX]([0-9a-fA-F]*)\.?([0-9a-fA-F]*)(?:[pP]([+-]?\d+))?\Z")
_INFINITY = re.compile(rb"[+-]?(?:inf|infinity)\Z", re.IGNORECASE)
# long double (x86 80-bit): the largest finite value and half the smallest
# denormal (anything nearer zero reads as zero, with ERANGE).
_LDBL_MAX = Fraction((1 << 64) - 1, 1 << 63) * (Fraction(2) ** 16383)
_LDBL_ZERO = Fraction(1, 2) ** 16446
_MAX_TIMEOUT_CHARS = 5 * 1024
_LLONG_MAX = (1 << 63) - 1


def parse_timeout(arg: bytes, now_ms: int = 0) -> int:
    """A blocking command's timeout in seconds (a float, as C's strtold
    reads it: decimal, hex or inf; no spaces, no nan) as whole milliseconds,
    rounded up; 0 waits forever.  Redis's errors: not a float; out of range
    when the milliseconds, or the deadline (``now_ms`` plus them), pass
    2**63 - 1 (Redis 7.2, redis/redis#11338; 7.0 said "negative" for the
    first and overflowed on the second); negative."""
    bad = CommandError(errors.TIMEOUT_NOT_FLOAT)
    if not arg or len(arg) > _MAX_TIMEOUT_CHARS:
        raise bad
    if _INFINITY.match(arg):
        raise CommandError(errors.TIMEOUT_NEGATIVE if arg[0] == 0x2D
                           else errors.TIMEOUT_OUT_OF_RANGE)
    if _DECIMAL.match(arg):
        try:
            number = Decimal(arg.decode("ascii"))
        except InvalidOperation:
            raise bad from None
        if number and number.adjusted() > 4933:
            raise bad
        if number and number.adjusted() < -4952:
            raise bad
        value = Fraction(number)
    else:
        m = _HEX.match(arg)
        if m is None or not (m[2] or m[3]):
            raise bad
        digits = m[2] + m[3]
        exponent = int(m[4] or 0) - 4 * len(m[3])
        if abs(exponent) > 70000:
            raise bad
        value = Fraction(int(digits, 16)) * Fraction(2) ** exponent
        if m[1] == b"-":
            value = -value
    if abs(value) > _LDBL_MAX or (value and abs(value) < _LDBL_ZERO):
        raise bad
    if value * 1000 > _LLONG_MAX:
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    ms = ceil(value * 1000)
    if ms < 0:
        raise CommandError(errors.TIMEOUT_NEGATIVE)
    if ms > 0 and ms > _LLONG_MAX - now_ms:
        raise CommandError(errors.TIMEOUT_OUT_OF_RANGE)
    return ms


def _push(ctx: Ctx, argv: list[bytes], left: bool, only_existing: bool) -> int:
    key = argv[1]
    values = argv[2:]
    lst = _write_list(ctx, key)
    if lst is None:
        if only_existing:
            return 0
        lst = List()
        ctx.db.set(key, lst)
    length = lst.push(values, left, _fill(ctx))
    ctx.modified(key, len(values))
    ctx.ready(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_LIST, b"lpush" if left else b"rpush", key)
    return length


def _pop_effect(left: bool, key: bytes, count: int | None = None) -> list[bytes]:
    argv = [b"LPOP" if left else b"RPOP", key]
    if count is not None:
        argv.append(b"%d" % count)
    return argv


def _pop_first(ctx: Ctx, keys: list[bytes], left: bool, count: int | None) -> Any:
    """The blocking pops' and LMPOP's pop: from the first key (in order)
    holding a list; WRONGTYPE at the first key of another type before it.
    ``count`` None: one element, replied ``[key, element]``; else up to
    ``count``, replied ``[key, [elements]]``.  None when every key is empty."""
    for key in keys:
        lst = _write_list(ctx, key)
        if lst is None:
            continue
        fill = _fill(ctx)
        if count is None:
            value: Any = lst.pop(left, fill)
            ctx.effect(_pop_effect(left, key))
            ctx.modified(key)
        else:
            value = lst.pop_many(count, left, fill)
            ctx.effect(_pop_effect(left, key, len(value)))
            ctx.modified(key, len(value))
        ctx.notify(NOTIFY_LIST, b"lpop" if left else b"rpop", key)
        _emptied(ctx, key, lst)
        return [key, value]
    return None


def _move(ctx: Ctx, src: bytes, dst: bytes, left_from: bool, left_to: bool) -> bytes | None:
    """LMOVE's work: the element moved, or None when ``src`` is missing;
    WRONGTYPE when either key holds another type (dst only checked when
    there is something to move).  Declares no propagation."""
    source = _write_list(ctx, src)
    if source is None:
        return None
    target = _write_list(ctx, dst)
    fill = _fill(ctx)
    value = source.pop(left_from, fill)
    if target is None:
        target = List()
        ctx.db.set(dst, target)
    target.push([value], left_to, fill)
    ctx.modified(dst)
    ctx.ready(dst)
    ctx.notify(NOTIFY_LIST, b"lpush" if left_to else b"rpush", dst)
    ctx.modified(src)
    ctx.notify(NOTIFY_LIST, b"lpop" if left_from else b"rpop", src)
    _emptied(ctx, src, source)
    return value


def _block_on_list(keys: list[bytes], timeout_ms: int, pop: Any, timeout_reply: Any) -> Wait:
    """A Wait on ``keys``, served when a key holds a list, by running the
    pop ``pop(ctx)`` again (None: keep waiting)."""

    def retry(woken: Ctx) -> Any:
        key = woken.ready_key
        if key is not None and type(woken.db.peek(key)) is not List:
            return None  # deleted again, or now another type: still blocked
        return pop(woken)

    return Wait(keys, timeout_ms, retry, timeout_reply)


# -- pushes ------------------------------------------------------------------------------

@command("lpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="1.0.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Prepends one or more elements to a list. Creates the key if it doesn't exist.")
def lpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPUSH key element [element ...]"""
    return _push(ctx, argv, True, False)


@command("rpush", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="1.0.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Appends one or more elements to a list. Creates the key if it doesn't exist.")
def rpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPUSH key element [element ...]"""
    return _push(ctx, argv, False, False)


@command("lpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Prepends one or more elements to a list only when the list exists.")
def lpushx(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPUSHX key element [element ...]"""
    return _push(ctx, argv, True, True)


@command("rpushx", arity=-3, flags="write denyoom fast", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(1) for each element added, so O(N) to add N elements when the "
                    "command is called with multiple arguments.",
         summary="Appends an element to a list only when the list exists.")
def rpushx(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPUSHX key element [element ...]"""
    return _push(ctx, argv, False, True)


# -- pops --------------------------------------------------------------------------------

def _pop(ctx: Ctx, argv: list[bytes], left: bool) -> Any:
    if len(argv) > 3:
        raise errors.wrong_arity(b"lpop" if left else b"rpop")
    key = argv[1]
    count = None
    if len(argv) == 3:
        count = _positive(argv[2], errors.POSITIVE_OUT_OF_RANGE)
    lst = _write_list(ctx, key)
    if lst is None:
        return NULL_ARRAY if count is not None else None
    if count == 0:
        return []
    fill = _fill(ctx)
    if count is None:
        reply: Any = lst.pop(left, fill)
        ctx.modified(key)
    else:
        reply = lst.pop_many(count, left, fill)
        ctx.modified(key, len(reply))
    ctx.notify(NOTIFY_LIST, b"lpop" if left else b"rpop", key)
    _emptied(ctx, key, lst)
    ctx.propagate_argv()
    return reply


@command("lpop", arity=-2, flags="write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements returned",
         summary="Returns the first elements in a list after removing it. Deletes the list "
                 "if the last element was popped.")
def lpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPOP key [count]"""
    return _pop(ctx, argv, True)


@command("rpop", arity=-2, flags="write fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements returned",
         summary="Returns and removes the last elements of a list. Deletes the list if the "
                 "last element was popped.")
def rpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPOP key [count]"""
    return _pop(ctx, argv, False)


def _parse_mpop(argv: list[bytes], numkeys_at: int) -> tuple[list[bytes], bool, int]:
    """``numkeys key [key ...] LEFT|RIGHT [COUNT count]``: keys, left, count."""
    numkeys = _positive(argv[numkeys_at], errors.NUMKEYS_NOT_POSITIVE, 1)
    where_at = numkeys_at + numkeys + 1
    if where_at >= len(argv):
        raise CommandError(SYNTAX)
    left = _position(argv[where_at])
    count = -1
    r = ArgReader(argv, where_at + 1)
    while r.more():
        opt = r.next_upper()
        if count == -1 and opt == b"COUNT" and r.more():
            count = _positive(r.next_bytes(), errors.MPOP_COUNT_POSITIVE, 1)
        else:
            raise CommandError(SYNTAX)
    return argv[numkeys_at + 1:where_at], left, max(count, 1)


@command("lmpop", arity=-4, flags="write movablekeys", keys=(0, 0, 0), group="list",
         since="7.0.0",
         complexity="O(N+M) where N is the number of provided keys and M is the number of "
                    "elements returned.",
         summary="Returns multiple elements from a list after removing them. Deletes the list "
                 "if the last element was popped.")
def lmpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMPOP numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = _parse_mpop(argv, 1)
    reply = _pop_first(ctx, keys, left, count)
    return NULL_ARRAY if reply is None else reply


# -- blocking pops ------------------------------------------------------------------------

def _blocking_pop(ctx: Ctx, argv: list[bytes], left: bool) -> Any:
    keys = argv[1:-1]
    timeout = parse_timeout(argv[-1], ctx.now_ms())

    def pop(c: Ctx) -> Any:
        return _pop_first(c, keys, left, None)

    reply = pop(ctx)
    if reply is not None:
        return reply
    return _block_on_list(list(keys), timeout, pop, NULL_ARRAY)


@command("blpop", arity=-3, flags="write noscript blocking", keys=(1, -2, 1), group="list",
         since="2.0.0", complexity="O(N) where N is the number of provided keys.",
         summary="Removes and returns the first element in a list. Blocks until an element "
                 "is available otherwise. Deletes the list if the last element was popped.")
def blpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLPOP key [key ...] timeout"""
    return _blocking_pop(ctx, argv, True)


@command("brpop", arity=-3, flags="write noscript blocking", keys=(1, -2, 1), group="list",
         since="2.0.0", complexity="O(N) where N is the number of provided keys.",
         summary="Removes and returns the last element in a list. Blocks until an element is "
                 "available otherwise. Deletes the list if the last element was popped.")
def brpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BRPOP key [key ...] timeout"""
    return _blocking_pop(ctx, argv, False)


@command("blmpop", arity=-5, flags="write blocking movablekeys", keys=(0, 0, 0), group="list",
         since="7.0.0",
         complexity="O(N+M) where N is the number of provided keys and M is the number of "
                    "elements returned.",
         summary="Pops the first element from one of multiple lists. Blocks until an element "
                 "is available otherwise. Deletes the list if the last element was popped.")
def blmpop(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMPOP timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]"""
    keys, left, count = _parse_mpop(argv, 2)
    timeout = parse_timeout(argv[1], ctx.now_ms())

    def pop(c: Ctx) -> Any:
        return _pop_first(c, keys, left, count)

    reply = pop(ctx)
    if reply is not None:
        return reply
    return _block_on_list(list(keys), timeout, pop, NULL_ARRAY)


# -- moves -------------------------------------------------------------------------------

@command("lmove", arity=5, flags="write denyoom", keys=(1, 2, 1), group="list", since="6.2.0",
         complexity="O(1)",
         summary="Returns an element after popping it from one list and pushing it to "
                 "another. Deletes the list if the last element was moved.")
def lmove(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT>"""
    left_from, left_to = _position(argv[3]), _position(argv[4])
    value = _move(ctx, argv[1], argv[2], left_from, left_to)
    if value is not None:
        ctx.propagate_argv()
    return value


@command("rpoplpush", arity=3, flags="write denyoom", keys=(1, 2, 1), group="list",
         since="1.2.0", complexity="O(1)",
         summary="Returns the last element of a list after removing and pushing it to "
                 "another list. Deletes the list if the last element was popped.")
def rpoplpush(ctx: Ctx, argv: list[bytes]) -> Any:
    """RPOPLPUSH source destination"""
    value = _move(ctx, argv[1], argv[2], False, True)
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
        value = _move(c, src, dst, left_from, left_to)
        if value is not None:
            c.effect(effect)
        return value

    value = move(ctx)
    if value is not None or not ctx.may_block:
        return value
    return _block_on_list([src], timeout, move, NULL_ARRAY)


@command("blmove", arity=6, flags="write denyoom noscript blocking", keys=(1, 2, 1), group="list",
         since="6.2.0", complexity="O(1)",
         summary="Pops an element from a list, pushes it to another list and returns it. "
                 "Blocks until an element is available otherwise. Deletes the list if the "
                 "last element was moved.")
def blmove(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMOVE source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout"""
    left_from, left_to = _position(argv[3]), _position(argv[4])
    timeout = parse_timeout(argv[5], ctx.now_ms())
    # Propagated as LMOVE with the position words as given (Redis rewrites the argv).
    return _blocking_move(ctx, [b"LMOVE", *argv[1:5]], left_from, left_to, timeout)


@command("brpoplpush", arity=4, flags="write denyoom noscript blocking", keys=(1, 2, 1), group="list",
         since="2.2.0", complexity="O(1)",
         summary="Pops an element from a list, pushes it to another list and returns it. "
                 "Block until an element is available otherwise. Deletes the list if the last "
                 "element was popped.")
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
    count = _positive(argv[at + 1], errors.MPOP_COUNT_POSITIVE, 1)
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
    source = _write_list(ctx, src)
    if source is None:
        return None
    target = _write_list(ctx, dst)
    if exact and len(source.items) < count:
        return None
    fill = _fill(ctx)
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
    _emptied(ctx, src, source)
    return block


@command("lmovem", arity=-5, flags="write denyoom", keys=(1, 2, 1), group="list",
         since="8.10.0", complexity="O(N) where N is the number of elements moved.",
         summary="Moves up to (or exactly) a number of elements from one list to another "
                 "and returns them. Deletes the source list if it becomes empty.")
def lmovem(ctx: Ctx, argv: list[bytes]) -> Any:
    """LMOVEM source destination <LEFT | RIGHT> <LEFT | RIGHT> [<COUNT count | EXACTLY exactly> <OBO | BULK>]

    O(N), N the number of elements moved.  Replies the moved elements in
    destination order, or a null array when nothing moved; propagated as it
    came, when it moved something."""
    left_from, left_to = _position(argv[3]), _position(argv[4])
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
                 "Deletes the source list if it becomes empty.")
def blmovem(ctx: Ctx, argv: list[bytes]) -> Any:
    """BLMOVEM source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout [<COUNT count | EXACTLY exactly> <OBO | BULK>]

    O(N), N the number of elements moved.  Moves at once when the source
    holds enough (any element for COUNT, ``exactly`` of them for EXACTLY),
    else blocks on the source: a push that leaves it short keeps the client
    blocked.  A timeout, or too few inside MULTI, answers a null array.
    Propagated as ``LMOVEM ... EXACTLY <moved> <OBO | BULK>``."""  # noqa: E501 (the syntax line, whole)
    src, dst = argv[1], argv[2]
    left_from, left_to = _position(argv[3]), _position(argv[4])
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
    return _block_on_list([src], timeout, move, NULL_ARRAY)


# -- reading -----------------------------------------------------------------------------

@command("llen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(1)", summary="Returns the length of a list.")
def llen(ctx: Ctx, argv: list[bytes]) -> Any:
    """LLEN key"""
    lst = _read_list(ctx, argv[1])
    return 0 if lst is None else len(lst)


@command("lrange", arity=4, flags="readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(S+N) where S is the distance of start offset from HEAD for small lists, "
                    "from nearest end (HEAD or TAIL) for large lists; and N is the number of "
                    "elements in the specified range.",
         summary="Returns a range of elements from a list.")
def lrange(ctx: Ctx, argv: list[bytes]) -> Any:
    """LRANGE key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    lst = _read_list(ctx, argv[1])
    return [] if lst is None else lst.range(start, stop)


@command("lindex", arity=3, flags="readonly", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements to traverse to get to the element "
                    "at index. This makes asking for the first or the last element of the list "
                    "O(1).",
         summary="Returns an element from a list by its index.")
def lindex(ctx: Ctx, argv: list[bytes]) -> Any:
    """LINDEX key index"""
    lst = _read_list(ctx, argv[1])
    if lst is None:
        return None
    return lst.index(parse_int(argv[2]))


@command("lpos", arity=-3, flags="readonly", keys=(1, 1, 1), group="list", since="6.0.6",
         complexity="O(N) where N is the number of elements in the list, for the average case. "
                    "When searching for elements near the head or the tail of the list, or "
                    "when the MAXLEN option is provided, the command may run in constant time.",
         summary="Returns the index of matching elements in a list.")
def lpos(ctx: Ctx, argv: list[bytes]) -> Any:
    """LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]"""
    rank, count, maxlen = 1, -1, 0
    r = ArgReader(argv, 3)
    while r.more():
        opt = r.next_upper()
        if opt == b"RANK" and r.more():
            rank = r.next_int()
            if rank == INT64_MIN:  # Redis 7.2, redis/redis#12167
                raise CommandError(errors.LONG_OUT_OF_RANGE)
            if rank == 0:
                raise CommandError(errors.LPOS_RANK_ZERO)
        elif opt == b"COUNT" and r.more():
            count = _positive(r.next_bytes(), errors.LPOS_COUNT_NEGATIVE)
        elif opt == b"MAXLEN" and r.more():
            maxlen = _positive(r.next_bytes(), errors.LPOS_MAXLEN_NEGATIVE)
        else:
            raise CommandError(SYNTAX)
    lst = _read_list(ctx, argv[1])
    if lst is None:
        return [] if count != -1 else None
    found = lst.positions(argv[2], rank, max(count, 0) if count != -1 else 1, maxlen)
    if count != -1:
        return found
    return found[0] if found else None


# -- changing in place -------------------------------------------------------------------

@command("lset", arity=4, flags="write denyoom", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the length of the list. Setting either the first or the "
                    "last element of the list is O(1).",
         summary="Sets the value of an element in a list by its index.")
def lset(ctx: Ctx, argv: list[bytes]) -> Any:
    """LSET key index element"""
    lst = _write_list(ctx, argv[1])
    if lst is None:
        raise CommandError(errors.NO_SUCH_KEY)
    index = parse_int(argv[2])
    if not lst.set(index, argv[3], _fill(ctx)):
        raise CommandError(errors.LIST_INDEX_OUT_OF_RANGE)
    ctx.modified(argv[1])
    ctx.propagate_argv()
    ctx.notify(NOTIFY_LIST, b"lset", argv[1])
    return OK


@command("linsert", arity=5, flags="write denyoom", keys=(1, 1, 1), group="list",
         since="2.2.0",
         complexity="O(N) where N is the number of elements to traverse before seeing the "
                    "value pivot. This means that inserting somewhere on the left end on the "
                    "list (head) can be considered O(1) and inserting somewhere on the right end "
                    "(tail) is O(N).",
         summary="Inserts an element before or after another element in a list.")
def linsert(ctx: Ctx, argv: list[bytes]) -> Any:
    """LINSERT key <BEFORE | AFTER> pivot element"""
    where = argv[2].upper()
    if where not in (b"BEFORE", b"AFTER"):
        raise CommandError(SYNTAX)
    lst = _write_list(ctx, argv[1])
    if lst is None:
        return 0
    length = lst.insert(argv[3], argv[4], where == b"BEFORE", _fill(ctx))
    if length != -1:
        ctx.modified(argv[1])
        ctx.ready(argv[1])  # a BLMOVEM ... EXACTLY waiter may now have enough
        ctx.propagate_argv()
        ctx.notify(NOTIFY_LIST, b"linsert", argv[1])
    return length


@command("lrem", arity=4, flags="write", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N+M) where N is the length of the list and M is the number of elements "
                    "removed.",
         summary="Removes elements from a list. Deletes the list if the last element was "
                 "removed.")
def lrem(ctx: Ctx, argv: list[bytes]) -> Any:
    """LREM key count element"""
    count = parse_int(argv[2])
    if count == INT64_MIN:  # Redis 8.0, redis/redis#12465
        raise CommandError(errors.LONG_OUT_OF_RANGE)
    lst = _write_list(ctx, argv[1])
    if lst is None:
        return 0
    removed = lst.remove(count, argv[3], _fill(ctx))
    if removed:
        ctx.modified(argv[1], removed)
        ctx.notify(NOTIFY_LIST, b"lrem", argv[1])
        _emptied(ctx, argv[1], lst)
        ctx.propagate_argv()
    return removed


@command("ltrim", arity=4, flags="write", keys=(1, 1, 1), group="list", since="1.0.0",
         complexity="O(N) where N is the number of elements to be removed by the operation.",
         summary="Removes elements from both ends a list. Deletes the list if all elements "
                 "were trimmed.")
def ltrim(ctx: Ctx, argv: list[bytes]) -> Any:
    """LTRIM key start stop"""
    start, stop = parse_int(argv[2]), parse_int(argv[3])
    lst = _write_list(ctx, argv[1])
    if lst is None:
        return OK
    removed = lst.trim(start, stop, _fill(ctx))
    ctx.modified(argv[1], removed)  # WATCH fails even when nothing went, as in Redis
    ctx.notify(NOTIFY_LIST, b"ltrim", argv[1])  # also when nothing went, as in Redis
    if removed:
        _emptied(ctx, argv[1], lst)
        ctx.propagate_argv()
    return OK

