"""Plain strings: GET, SET, MGET and the counters (INCR, DECR, INCRBY, DECRBY).

Tidelog is a stream server; strings are here so that client health checks,
``SET``-based locks and the WRONGTYPE paths behave as in Redis.  A string is
stored as ``bytes``.  ``SET ... EX/PX/EXAT`` propagates ``SET key value PXAT
<abs-ms>`` (dropping NX/XX/GET, as Redis 7 does), so replicas and the AOF
expire the key at the same instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import DECR_OVERFLOW, INCR_OVERFLOW, SYNTAX, WRONGTYPE, CommandError, invalid_expire
from ..resp.replies import OK
from .args import INT64_MAX, INT64_MIN, ArgReader, parse_int
from .keys import key_arguments, lookup_read
from .table import command

if TYPE_CHECKING:
    from .contract import Ctx


def _read_string(ctx: Ctx, key: bytes) -> bytes | None:
    value = lookup_read(ctx, key)
    if value is None or type(value) is bytes:
        return value
    raise CommandError(WRONGTYPE)


@command("get", arity=2, flags="readonly fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)", summary="Get the value of a key")
def get(ctx: Ctx, argv: list[bytes]) -> object:
    """GET key"""
    return _read_string(ctx, argv[1])


@command("mget", arity=-2, flags="readonly fast", keys=(1, -1, 1), group="string",
         since="1.0.0", complexity="O(N) where N is the number of keys to retrieve.",
         summary="Get the values of all the given keys")
def mget(ctx: Ctx, argv: list[bytes]) -> object:
    """MGET key [key ...]"""
    values = []
    for key in key_arguments(argv):
        value = lookup_read(ctx, key)
        values.append(value if type(value) is bytes else None)
    return values


# SET's options, and the ones each excludes (Redis's parseExtendedStringArguments).
_EXPIRE_OPTIONS = (b"EX", b"PX", b"EXAT", b"PXAT")
_EXCLUDES = {
    b"NX": {b"XX"}, b"XX": {b"NX"}, b"GET": set(),
    b"KEEPTTL": set(_EXPIRE_OPTIONS),
    **{opt: {b"KEEPTTL", *(o for o in _EXPIRE_OPTIONS if o != opt)} for opt in _EXPIRE_OPTIONS},
}
_NO_OPTIONS: frozenset[bytes] = frozenset()


@command("set", arity=-3, flags="write denyoom", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Set the string value of a key")
def set_(ctx: Ctx, argv: list[bytes]) -> object:
    """SET key value [NX | XX] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""  # noqa: E501 (the syntax line, whole)
    key, value = argv[1], argv[2]
    given: set[bytes] | frozenset[bytes] = _NO_OPTIONS
    expire_option = expire_arg = None
    if len(argv) > 3:  # the plain SET key value skips the cursor
        given = set()
        r = ArgReader(argv, 3)
        while r.more():
            option = r.next_upper()
            if option not in _EXCLUDES or given & _EXCLUDES[option]:
                raise CommandError(SYNTAX)
            if option in _EXPIRE_OPTIONS:
                expire_option, expire_arg = option, r.next_bytes()
            given.add(option)
        r.finish()
    when = None
    if expire_option is not None:
        when = parse_int(expire_arg)  # type: ignore[arg-type]
        seconds = expire_option in (b"EX", b"EXAT")
        if when <= 0 or (seconds and when > INT64_MAX // 1000):
            raise invalid_expire(argv[0])
        if seconds:
            when *= 1000
        if expire_option in (b"EX", b"PX"):
            now = ctx.now_ms()
            if when > INT64_MAX - now:
                raise invalid_expire(argv[0])
            when += now
    db = ctx.db
    reply: object = OK
    if b"GET" in given:
        reply = _read_string(ctx, key)
        found = reply is not None
    else:
        found = db.get(key) is not None
    if (b"NX" in given and found) or (b"XX" in given and not found):
        return reply if b"GET" in given else None
    db.set(key, value, keep_ttl=b"KEEPTTL" in given)
    if when is not None:
        db.set_expire(key, when)
    ctx.modified(key)
    ctx.ready(key)  # a stream replaced by a string: its blocked XREADGROUPs fail
    if when is not None and expire_option != b"PXAT":
        ctx.effect([b"SET", key, value, b"PXAT", str(when).encode()])
    else:
        ctx.propagate_argv()
    return reply


def _incr(ctx: Ctx, key: bytes, by: int) -> int:
    """Add to the integer in a string, keeping its TTL.  O(1)."""
    current = ctx.db.get(key)
    if current is not None and type(current) is not bytes:
        raise CommandError(WRONGTYPE)
    old = 0 if current is None else parse_int(current)
    new = old + by
    if not INT64_MIN <= new <= INT64_MAX:
        raise CommandError(INCR_OVERFLOW)
    ctx.db.set(key, str(new).encode(), keep_ttl=True)
    ctx.modified(key)
    ctx.propagate_argv()
    return new


@command("incr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)", summary="Increment the integer value of a key by one")
def incr(ctx: Ctx, argv: list[bytes]) -> object:
    """INCR key"""
    return _incr(ctx, argv[1], 1)


@command("decr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)", summary="Decrement the integer value of a key by one")
def decr(ctx: Ctx, argv: list[bytes]) -> object:
    """DECR key"""
    return _incr(ctx, argv[1], -1)


@command("incrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Increment the integer value of a key by the given amount")
def incrby(ctx: Ctx, argv: list[bytes]) -> object:
    """INCRBY key increment"""
    return _incr(ctx, argv[1], parse_int(argv[2]))


@command("decrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Decrement the integer value of a key by the given number")
def decrby(ctx: Ctx, argv: list[bytes]) -> object:
    """DECRBY key decrement"""
    by = parse_int(argv[2])
    if by == INT64_MIN:
        raise CommandError(DECR_OVERFLOW)
    return _incr(ctx, argv[1], -by)

