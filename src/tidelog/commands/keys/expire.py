"""Expiry commands: the EXPIRE family, TTL/PTTL, EXPIRETIME/PEXPIRETIME and PERSIST.

Expiry deadlines are absolute Unix milliseconds (``Database.expires``);
every command that sets one from a relative time propagates ``PEXPIREAT key
<ms>`` so that replicas and the AOF agree on the instant, and a deadline
already in the past deletes the key and propagates ``DEL``, as Redis does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC
from ...errors import EXPIRE_GT_LT, EXPIRE_NX_XX_GT_LT, CommandError, invalid_expire, unsupported_option
from ..args import INT64_MAX, INT64_MIN, ArgReader, parse_int
from ..key_specs import ND
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


# -- EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT ------------------------------------------------
def _expire_flags(options: list[bytes]) -> set[bytes]:
    """The options after ``key time`` (NX, XX, GT, LT), as a set of upper-case names."""
    flags: set[bytes] = set()
    for option in options:
        upper = option.upper()
        if upper not in (b"NX", b"XX", b"GT", b"LT"):
            raise unsupported_option(option)
        flags.add(upper)
    if b"NX" in flags and len(flags) > 1:
        raise CommandError(EXPIRE_NX_XX_GT_LT)
    if b"GT" in flags and b"LT" in flags:
        raise CommandError(EXPIRE_GT_LT)
    return flags


def _expire(ctx: Ctx, argv: list[bytes], relative: bool, seconds: bool) -> int:
    """The EXPIRE family.  Cost: O(1) (plus O(log N) to file the deadline)."""
    r = ArgReader(argv)
    key, when_arg = r.next_bytes(), r.next_bytes()
    options = r.take(r.remaining())
    r.finish()
    flags = _expire_flags(options)  # checked before the time, as Redis does
    when = parse_int(when_arg)
    if seconds:
        if when > INT64_MAX // 1000 or when < -(-INT64_MIN // 1000):
            raise invalid_expire(argv[0])
        when *= 1000
    base = ctx.now_ms() if relative else 0
    if when > INT64_MAX - base:
        raise invalid_expire(argv[0])
    when += base
    db = ctx.db
    if db.get(key) is None:
        return 0
    current = db.expires.get(key)
    if b"NX" in flags and current is not None:
        return 0
    if b"XX" in flags and current is None:
        return 0
    if b"GT" in flags and (current is None or when <= current):
        return 0
    if b"LT" in flags and current is not None and when >= current:
        return 0
    if when <= ctx.now_ms():
        db.delete(key)
        ctx.modified(key)
        ctx.ready(key)
        ctx.effect([b"DEL", key])
        ctx.notify(NOTIFY_GENERIC, b"del", key)
        return 1
    db.set_expire(key, when)
    ctx.modified(key)
    ctx.effect([b"PEXPIREAT", key, str(when).encode(), *options])
    ctx.notify(NOTIFY_GENERIC, b"expire", key)
    return 1


_EXPIRE_COMPLEXITY = "O(1)"


@command("expire", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity=_EXPIRE_COMPLEXITY, summary="Set a key's time to live in seconds")
def expire(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIRE key seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=True, seconds=True)


@command("pexpire", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set a key's time to live in milliseconds")
def pexpire(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIRE key milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=True, seconds=False)


@command("expireat", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="1.2.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set the expiration for a key as a UNIX timestamp")
def expireat(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIREAT key unix-time-seconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=False, seconds=True)


@command("pexpireat", arity=-3, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity=_EXPIRE_COMPLEXITY,
         summary="Set the expiration for a key as a UNIX timestamp specified in milliseconds")
def pexpireat(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]"""
    return _expire(ctx, argv, relative=False, seconds=False)


# -- TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST -------------------------------------------
def _ttl(ctx: Ctx, key: bytes, absolute: bool, ms: bool) -> int:
    if lookup_read(ctx, key, touch=False) is None:
        return -2
    when = ctx.db.expires.get(key)
    if when is None:
        return -1
    if absolute:
        return when if ms else when // 1000
    left = max(0, when - ctx.now_ms())
    return left if ms else (left + 500) // 1000


@command("ttl", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="1.0.0", complexity="O(1)", summary="Get the time to live for a key in seconds",
         tips=(ND,))
def ttl(ctx: Ctx, argv: list[bytes]) -> object:
    """TTL key"""
    return _ttl(ctx, argv[1], absolute=False, ms=False)


@command("pttl", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="2.6.0", complexity="O(1)", summary="Get the time to live for a key in milliseconds",
         tips=(ND,))
def pttl(ctx: Ctx, argv: list[bytes]) -> object:
    """PTTL key"""
    return _ttl(ctx, argv[1], absolute=False, ms=True)


@command("expiretime", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="7.0.0", complexity="O(1)",
         summary="Get the expiration Unix timestamp for a key")
def expiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """EXPIRETIME key"""
    return _ttl(ctx, argv[1], absolute=True, ms=False)


@command("pexpiretime", arity=2, flags="readonly fast", keys=(1, 1, 1), group="generic",
         since="7.0.0", complexity="O(1)",
         summary="Get the expiration Unix timestamp for a key in milliseconds")
def pexpiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """PEXPIRETIME key"""
    return _ttl(ctx, argv[1], absolute=True, ms=True)


@command("persist", arity=2, flags="write fast", keys=(1, 1, 1), group="generic",
         since="2.2.0", complexity="O(1)", summary="Remove the expiration from a key")
def persist(ctx: Ctx, argv: list[bytes]) -> object:
    """PERSIST key"""
    key = argv[1]
    if ctx.db.get(key) is None or not ctx.db.persist(key):
        return 0
    ctx.modified(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_GENERIC, b"persist", key)
    return 1
