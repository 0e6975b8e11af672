"""What the list commands share: lookups, the LEFT/RIGHT and count
arguments, the blocking timeout, popping from the first non-empty key, one
element moved, and the Wait a blocking command parks its client with.

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
blocks: it answers its timeout reply at once."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from math import ceil
from typing import TYPE_CHECKING, Any

from ... import errors
from ...config import NOTIFY_GENERIC, NOTIFY_LIST
from ...errors import SYNTAX, CommandError
from ...types.list import List
from ..args import parse_int
from ..contract import Wait
from ..lookup import lookup_read_typed

if TYPE_CHECKING:
    from ..contract import Ctx


LEFT, RIGHT = b"LEFT", b"RIGHT"

# -- helpers ---------------------------------------------------------------------------


def listpack_fill(ctx: Ctx) -> int:
    fill: int = ctx.config["list-max-listpack-size"]
    return fill


def read_list(ctx: Ctx, key: bytes) -> List | None:
    """The list at key for a read command (counted in keyspace hits/misses)."""
    return lookup_read_typed(ctx, key, List)


def write_list(ctx: Ctx, key: bytes) -> List | None:
    return ctx.db.get_typed(key, List)


def emptied(ctx: Ctx, key: bytes, lst: List) -> None:
    """A list that lost elements: the key goes when it is empty."""
    if not lst.items:
        ctx.db.delete(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


def parse_position(arg: bytes) -> bool:
    """LEFT (True) or RIGHT (False), any case; else a syntax error."""
    word = arg.upper()
    if word == LEFT:
        return True
    if word == RIGHT:
        return False
    raise CommandError(SYNTAX)


def parse_positive(arg: bytes, message: bytes, lo: int = 0) -> int:
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


def pop_effect(left: bool, key: bytes, count: int | None = None) -> list[bytes]:
    argv = [b"LPOP" if left else b"RPOP", key]
    if count is not None:
        argv.append(b"%d" % count)
    return argv


def pop_first(ctx: Ctx, keys: list[bytes], left: bool, count: int | None) -> Any:
    """The blocking pops' and LMPOP's pop: from the first key (in order)
    holding a list; WRONGTYPE at the first key of another type before it.
    ``count`` None: one element, replied ``[key, element]``; else up to
    ``count``, replied ``[key, [elements]]``.  None when every key is empty."""
    for key in keys:
        lst = write_list(ctx, key)
        if lst is None:
            continue
        fill = listpack_fill(ctx)
        if count is None:
            value: Any = lst.pop(left, fill)
            ctx.effect(pop_effect(left, key))
            ctx.modified(key)
        else:
            value = lst.pop_many(count, left, fill)
            ctx.effect(pop_effect(left, key, len(value)))
            ctx.modified(key, len(value))
        ctx.notify(NOTIFY_LIST, b"lpop" if left else b"rpop", key)
        emptied(ctx, key, lst)
        return [key, value]
    return None


def move_one(ctx: Ctx, src: bytes, dst: bytes, left_from: bool, left_to: bool) -> bytes | None:
    """LMOVE's work: the element moved, or None when ``src`` is missing;
    WRONGTYPE when either key holds another type (dst only checked when
    there is something to move).  Declares no propagation."""
    source = write_list(ctx, src)
    if source is None:
        return None
    target = write_list(ctx, dst)
    fill = listpack_fill(ctx)
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
    emptied(ctx, src, source)
    return value


def block_on_list(keys: list[bytes], timeout_ms: int, pop: Any, timeout_reply: Any) -> Wait:
    """A Wait on ``keys``, served when a key holds a list, by running the
    pop ``pop(ctx)`` again (None: keep waiting)."""

    def retry(woken: Ctx) -> Any:
        key = woken.ready_key
        if key is not None and type(woken.db.peek(key)) is not List:
            return None  # deleted again, or now another type: still blocked
        return pop(woken)

    return Wait(keys, timeout_ms, retry, timeout_reply)
