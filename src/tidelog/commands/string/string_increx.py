"""INCREX (Redis 8.8): one counter step with bounds and an expiry, atomically.

``INCREX key`` adds 1 like INCR; BYINT adds a 64-bit integer, BYFLOAT a
``long double`` (the arithmetic of INCRBYFLOAT, :mod:`tidelog.types.longdouble`).
The reply is ``[new value, increment applied]``: integers, or with BYFLOAT the
two numbers written as INCRBYFLOAT writes its result (RESP2 bulk strings, RESP3
doubles).

A result outside ``[LBOUND, UBOUND]`` (by default the type's own range: int64,
or the finite long doubles) is refused: the reply is ``[current, 0]`` and the
key, its TTL and every listener see nothing.  With SATURATE the result is
clamped into the range instead (even from a value already outside it), and
the reply says how much that moved it.

Expiry: none given keeps the key's TTL; EX/PX/EXAT/PXAT set one; ENX sets it
only on a key without one; PERSIST removes it.  A deadline already past
deletes the key.  Propagated as Redis does, as the SET the step amounts to:
``SET key new KEEPTTL``, ``SET key new PXAT <ms>``, ``SET key new`` (PERSIST),
or ``DEL key`` for a past deadline, so a Redis 7 replica or AOF reaches the
same value and TTL.  Keyspace events: ``incrby`` (``incrbyfloat`` with
BYFLOAT), then ``expire`` or ``persist``; only ``del`` for a past deadline.

Page: https://redis.io/docs/latest/commands/increx/
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC, NOTIFY_STRING
from ...errors import (
    INCREX_APPLIED_INFINITY,
    INCREX_APPLIED_OVERFLOW,
    INCREX_BOUND_NOT_FLOAT,
    INCREX_BOUND_NOT_INTEGER,
    INCREX_BOUNDS_CROSSED,
    INCREX_ENX_WITHOUT_EXPIRE,
    INCREX_INCREMENT_INFINITY,
    INCREX_INCREMENT_NOT_FLOAT,
    INCREX_INCREMENT_NOT_INTEGER,
    INCREX_VALUE_INFINITY,
    NOT_A_FLOAT,
    SYNTAX,
    WRONGTYPE,
    CommandError,
)
from ...resp.replies import DoubleText
from ...types import longdouble
from ..args import INT64_MAX, INT64_MIN, ArgReader, parse_int
from ..encoding import mark_string_encoding
from ..key_specs import ks
from ..table import command
from .strings import deadline_ms

if TYPE_CHECKING:
    from ..contract import Ctx

_EXPIRE_OPTIONS = (b"EX", b"PX", b"EXAT", b"PXAT")
_RELATIVE = (b"EX", b"PX")


# -- the arithmetic (pure) ------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Step:
    """What one INCREX step does: the value after it (the current one when
    refused), the increment applied (0 when refused) and whether it writes."""

    value: int | Fraction
    applied: int | Fraction
    stored: bool


def step_int(current: int, by: int, lower: int | None, upper: int | None,
             saturate: bool) -> Step:
    """``current + by`` held in ``[lower, upper]`` (default: int64's range).
    Refused when outside, unless ``saturate`` clamps it.  The applied
    increment must itself fit int64 (``applied increment would overflow``).
    O(1)."""
    lo = INT64_MIN if lower is None else lower
    hi = INT64_MAX if upper is None else upper
    want = current + by  # exact: an int64 overflow is just a result past the range
    if lo <= want <= hi:
        new = want
    elif not saturate:
        return Step(current, 0, False)
    else:
        new = lo if want < lo else hi
    applied = new - current
    if not INT64_MIN <= applied <= INT64_MAX:
        raise CommandError(INCREX_APPLIED_OVERFLOW)
    return Step(new, applied, True)


def step_float(current: Fraction, by: Fraction, lower: longdouble.LongDouble | None,
               upper: longdouble.LongDouble | None, saturate: bool) -> Step:
    """The long double ``current + by`` held in ``[lower, upper]`` (default:
    the finite long doubles; a bound may be +-inf).  A sum that overflows is
    past the range.  Refused when outside, unless ``saturate`` clamps it; a
    clamped result or an applied increment that is infinite is an error.
    O(d^2) in the digits of the values."""
    lo = -longdouble.MAX if lower is None else lower
    hi = longdouble.MAX if upper is None else upper
    want = longdouble.round_to_format(current + by)  # +-inf when it overflows
    if lo <= want <= hi and not isinstance(want, float):
        return Step(want, longdouble.round_to_format(want - current), True)  # type: ignore[arg-type]
    if not saturate:
        return Step(current, longdouble.ZERO, False)
    if want < lo:
        new = lo
    elif want > hi:
        new = hi
    else:
        new = want  # an infinite sum inside an infinite bound
    if isinstance(new, float):
        raise CommandError(INCREX_APPLIED_INFINITY)
    applied = longdouble.round_to_format(new - current)
    if isinstance(applied, float):
        raise CommandError(INCREX_APPLIED_INFINITY)
    return Step(new, applied, True)


# -- the arguments ----------------------------------------------------------------------
@dataclass(slots=True)
class IncrexArgs:
    """INCREX's options as given (numbers still text: BYFLOAT decides how the
    bounds read)."""

    by_float: bool = False
    by: bytes | None = None
    lower: bytes | None = None
    upper: bytes | None = None
    saturate: bool = False
    expire_option: bytes | None = None
    expire_arg: bytes = b""
    persist: bool = False
    enx: bool = False


def parse_increx(argv: list[bytes]) -> IncrexArgs:
    """The options after the key, in any order, each at most once: BYINT and
    BYFLOAT exclude each other, as EX/PX/EXAT/PXAT/PERSIST do, and PERSIST
    excludes ENX (all syntax errors); ENX needs an expiry.  O(N)."""
    a = IncrexArgs()
    r = ArgReader(argv, 2)
    while r.more():
        option = r.next_upper()
        if option == b"BYINT" or option == b"BYFLOAT":
            if a.by is not None:
                raise CommandError(SYNTAX)
            a.by_float, a.by = option == b"BYFLOAT", r.next_bytes()
        elif option == b"LBOUND":
            if a.lower is not None:
                raise CommandError(SYNTAX)
            a.lower = r.next_bytes()
        elif option == b"UBOUND":
            if a.upper is not None:
                raise CommandError(SYNTAX)
            a.upper = r.next_bytes()
        elif option == b"SATURATE" and not a.saturate:
            a.saturate = True
        elif option in _EXPIRE_OPTIONS and a.expire_option is None and not a.persist:
            a.expire_option, a.expire_arg = option, r.next_bytes()
        elif option == b"PERSIST" and a.expire_option is None and not a.persist and not a.enx:
            a.persist = True
        elif option == b"ENX" and not a.enx and not a.persist:
            a.enx = True
        else:
            raise CommandError(SYNTAX)
    if a.enx and a.expire_option is None:
        raise CommandError(INCREX_ENX_WITHOUT_EXPIRE)
    return a


def _int_bound(arg: bytes | None, name: bytes) -> int | None:
    return None if arg is None else parse_int(arg, INCREX_BOUND_NOT_INTEGER % name)


def _float_bound(arg: bytes | None, name: bytes) -> longdouble.LongDouble | None:
    if arg is None:
        return None
    bound = longdouble.parse(arg)
    if bound is None:
        raise CommandError(INCREX_BOUND_NOT_FLOAT % name)
    return bound


def _float_text(value: Fraction) -> bytes:
    return longdouble.format_human(value)


# -- the command ------------------------------------------------------------------------
@command("increx", arity=-2, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="8.8.0", complexity="O(1)",
         summary="Increments the numeric value of a key by a number and sets its expiration "
                 "time. Uses 0 as initial value if the key doesn't exist.",
         key_specs=[ks("RW access update", 1)])
def increx(ctx: Ctx, argv: list[bytes]) -> object:
    """INCREX key [BYFLOAT increment | BYINT increment] [LBOUND lowerbound] [UBOUND upperbound] [SATURATE] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] [ENX]

    O(1) with BYINT (O(d^2) in the digits of the values with BYFLOAT)."""  # noqa: E501 (the syntax line, whole)
    key = argv[1]
    a = parse_increx(argv)
    if a.by_float:
        by = longdouble.parse(a.by)  # type: ignore[arg-type]
        if by is None:
            raise CommandError(INCREX_INCREMENT_NOT_FLOAT)
        if isinstance(by, float):
            raise CommandError(INCREX_INCREMENT_INFINITY)
        flower = _float_bound(a.lower, b"LBOUND")
        fupper = _float_bound(a.upper, b"UBOUND")
        if flower is not None and fupper is not None and flower > fupper:
            raise CommandError(INCREX_BOUNDS_CROSSED)
    else:
        iby = 1 if a.by is None else parse_int(a.by, INCREX_INCREMENT_NOT_INTEGER)
        ilower = _int_bound(a.lower, b"LBOUND")
        iupper = _int_bound(a.upper, b"UBOUND")
        if ilower is not None and iupper is not None and ilower > iupper:
            raise CommandError(INCREX_BOUNDS_CROSSED)
    when = None
    if a.expire_option is not None:
        when = deadline_ms(ctx, a.expire_option, a.expire_arg)
    db = ctx.db
    current = db.get(key)
    if current is not None and type(current) is not bytes:
        raise CommandError(WRONGTYPE)
    if a.by_float:
        old = longdouble.parse(current) if current is not None else longdouble.ZERO
        if old is None:
            raise CommandError(NOT_A_FLOAT)
        if isinstance(old, float):
            raise CommandError(INCREX_VALUE_INFINITY)
        step = step_float(old, by, flower, fupper, a.saturate)  # type: ignore[arg-type]
        value_text = _float_text(step.value)  # type: ignore[arg-type]
        reply: list[object] = [DoubleText(value_text), DoubleText(_float_text(step.applied))]  # type: ignore[arg-type]
        event = b"incrbyfloat"
    else:
        old_int = parse_int(current) if current is not None else 0
        step = step_int(old_int, iby, ilower, iupper, a.saturate)
        value_text = str(step.value).encode()
        reply = [step.value, step.applied]
        event = b"incrby"
    if not step.stored:
        return reply  # refused: nothing written, the TTL untouched, nothing propagated
    had_ttl = current is not None and db.ttl_ms(key) is not None
    if when is not None and a.enx and had_ttl:
        when = None  # ENX: the key keeps the TTL it has
    if (when is not None and a.expire_option not in _RELATIVE and when <= ctx.now_ms()
            and ctx.client.kind not in ("aof", "master")):
        # A deadline already past: the key goes now, and only DEL goes out.
        if current is not None:
            db.delete(key)
            ctx.modified(key)
            ctx.ready(key)
            ctx.effect([b"DEL", key])
            ctx.notify(NOTIFY_GENERIC, b"del", key)
        return reply
    if a.by_float:
        # a new plain string object, as INCRBYFLOAT makes: never "int"
        mark_string_encoding(value_text, b"embstr" if len(value_text) <= 44 else b"raw")
    db.set(key, value_text, keep_ttl=True)
    ctx.modified(key)
    persisted = False
    if when is not None:
        db.set_expire(key, when)
        ctx.effect([b"SET", key, value_text, b"PXAT", str(when).encode()])
    elif a.persist:
        persisted = db.persist(key)
        ctx.effect([b"SET", key, value_text])
    else:
        ctx.effect([b"SET", key, value_text, b"KEEPTTL"])
    ctx.notify(NOTIFY_STRING, event, key)
    if when is not None:
        ctx.notify(NOTIFY_GENERIC, b"expire", key)
    elif persisted:
        ctx.notify(NOTIFY_GENERIC, b"persist", key)
    if current is None:
        ctx.ready(key)
    return reply
