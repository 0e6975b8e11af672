"""Hash field expiry (Redis 7.4): HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT,
HTTL, HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST; and Redis 8.0's HGETEX
and HSETEX.

A field's deadline lives in its :class:`~tidelog.types.hash.Hash`
(``Hash.ttl``).  A field whose deadline passed is gone for every command:
the database removes due fields whenever it hands the hash out
(``Database.get``/``peek``) and its cron sweeps them with a bounded budget
(``Database.field_expire_cycle``); the key goes with its last field.  Each
expired field is propagated as ``HDEL key field``.

Per-field reply codes (redis.io/docs/latest/commands/hexpire/): -2 no such
field (or no such key), 0 the NX/XX/GT/LT condition was not met, 1 the
deadline was set, 2 the field was deleted because the time is now or in the
past.  HTTL & co: -2 no field, -1 no TTL, else the value.  HPERSIST: -2 no
field, -1 no TTL, 1 TTL removed.

Propagation (as Redis): the setters go as ``HPEXPIREAT key <abs ms> [cond]
FIELDS n <the fields that were set>`` (nothing when none was), the fields
deleted for a past time as ``HDEL key field``; HPERSIST as it came when it
removed a TTL; HGETEX as HPEXPIREAT / HPERSIST / HDEL of what it changed;
HSETEX with an absolute PXAT.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...config import NOTIFY_GENERIC, NOTIFY_HASH
from ...errors import (
    EXPIRE_NEGATIVE,
    FIELDS_MISSING,
    HSETEX_FNX_FXX,
    HSETEX_MISSING_EXPIRE,
    HSETEX_NUMFIELDS,
    HSETEX_TTL_ONE,
    HSETEX_UNKNOWN_ARGUMENT,
    NUMFIELDS_MISMATCH,
    NUMFIELDS_NOT_GREATER,
    NUMFIELDS_NOT_POSITIVE,
    WRONGTYPE,
    CommandError,
    invalid_expire,
    wrong_arity,
)
from ...types.hash import Hash
from ..args import ArgReader, parse_int
from ..lookup import lookup_read
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx

INT32_MAX = 2**31 - 1
# Redis's HFE_MAX_ABS_TIME_MSEC: field deadlines are kept in 48 bits.
MAX_ABS_MS = (1 << 48) - 1


NO_FIELD, NOT_MET, SET, DELETED = -2, 0, 1, 2
NO_TTL = -1


def _hash(ctx: Ctx, key: bytes, read: bool) -> Hash | None:
    value = lookup_read(ctx, key) if read else ctx.db.get(key)
    if value is None or type(value) is Hash:
        return value
    raise CommandError(WRONGTYPE)


def _fields(argv: list[bytes], at: int, not_positive: bytes) -> list[bytes]:
    """``FIELDS numfields field ...`` starting at ``argv[at]``, to the end."""
    if at >= len(argv) or argv[at].upper() != b"FIELDS":
        raise CommandError(FIELDS_MISSING)
    if at + 1 >= len(argv):
        raise CommandError(not_positive)
    numfields = parse_int(argv[at + 1], not_positive)
    if numfields < 1:
        raise CommandError(not_positive)
    if numfields != len(argv) - at - 2:
        raise CommandError(NUMFIELDS_MISMATCH)
    return argv[at + 2:]


def _deadline(ctx: Ctx, arg: bytes, seconds: bool, absolute: bool) -> int:
    """The absolute deadline (Unix ms) an expiry argument names, bounds
    checked as Redis's ``parseExpireTime``."""
    value = parse_int(arg)
    if value < 0:
        raise CommandError(EXPIRE_NEGATIVE)
    if seconds:
        if value > MAX_ABS_MS // 1000:
            raise invalid_expire(ctx.argv[0])
        value *= 1000
    base = 0 if absolute else ctx.now_ms()
    if value > MAX_ABS_MS - base:
        raise invalid_expire(ctx.argv[0])
    return value + base


def _drop_if_empty(ctx: Ctx, key: bytes, h: Hash) -> None:
    if not len(h):
        ctx.db.delete(key)
        ctx.ready(key)
        ctx.notify(NOTIFY_GENERIC, b"del", key)


def _apply_deadline(ctx: Ctx, key: bytes, h: Hash, field: bytes, when: int,
                    cond: bytes | None) -> int:
    """One field of the HEXPIRE family: its reply code."""
    if field not in h:
        return NO_FIELD
    current = h.ttl.get(field)
    if cond == b"NX" and current is not None:
        return NOT_MET
    if cond == b"XX" and current is None:
        return NOT_MET
    if cond == b"GT" and (current is None or when <= current):
        return NOT_MET
    if cond == b"LT" and current is not None and when >= current:
        return NOT_MET
    if when <= ctx.now_ms():
        h.delete(field)
        return DELETED
    h.set_ttl(field, when)
    ctx.db.track_fields(key, when)
    return SET


def _expire_generic(ctx: Ctx, argv: list[bytes], seconds: bool, absolute: bool) -> object:
    key = argv[1]
    h = _hash(ctx, key, read=False)
    when = _deadline(ctx, argv[2], seconds, absolute)
    at, cond = 3, None
    if at < len(argv) and argv[at].upper() in (b"NX", b"XX", b"GT", b"LT"):
        cond = argv[at].upper()
        at += 1
    fields = _fields(argv, at, NUMFIELDS_NOT_GREATER)
    if h is None:
        return [NO_FIELD] * len(fields)
    codes = [_apply_deadline(ctx, key, h, field, when, cond) for field in fields]
    deleted = [f for f, code in zip(fields, codes) if code == DELETED]
    updated = [f for f, code in zip(fields, codes) if code == SET]
    if deleted or updated:  # one event: hdel when a past deadline deleted any (Redis 7.4)
        ctx.notify(NOTIFY_HASH, b"hdel" if deleted else b"hexpire", key, deleted or updated)
        _drop_if_empty(ctx, key, h)
        ctx.modified(key, len(deleted) + len(updated))
    for field in deleted:
        ctx.effect([b"HDEL", key, field])
    if updated:
        ctx.effect([b"HPEXPIREAT", key, b"%d" % when, *([cond] if cond else []),
                    b"FIELDS", b"%d" % len(updated), *updated])
    ctx.no_propagation()
    return codes


_SETTER: dict[str, Any] = dict(
    arity=-6, flags="write denyoom fast", keys=(1, 1, 1), group="hash", since="7.4.0",
    complexity="O(N) where N is the number of specified fields")


@command("hexpire", **_SETTER, summary="Set expiry for hash field using relative time to expire "
                                       "(seconds)")
def hexpire(ctx: Ctx, argv: list[bytes]) -> object:
    """HEXPIRE key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _expire_generic(ctx, argv, seconds=True, absolute=False)


@command("hpexpire", **_SETTER, summary="Set expiry for hash field using relative time to "
                                        "expire (milliseconds)")
def hpexpire(ctx: Ctx, argv: list[bytes]) -> object:
    """HPEXPIRE key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _expire_generic(ctx, argv, seconds=False, absolute=False)


@command("hexpireat", **_SETTER, summary="Set expiry for hash field using an absolute Unix "
                                         "timestamp (seconds)")
def hexpireat(ctx: Ctx, argv: list[bytes]) -> object:
    """HEXPIREAT key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]"""
    return _expire_generic(ctx, argv, seconds=True, absolute=True)


@command("hpexpireat", **_SETTER, summary="Set expiry for hash field using an absolute Unix "
                                          "timestamp (milliseconds)")
def hpexpireat(ctx: Ctx, argv: list[bytes]) -> object:
    """HPEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field
    [field ...]"""
    return _expire_generic(ctx, argv, seconds=False, absolute=True)


def _ttl_generic(ctx: Ctx, argv: list[bytes], seconds: bool, absolute: bool) -> object:
    h = _hash(ctx, argv[1], read=True)
    fields = _fields(argv, 2, NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [NO_FIELD] * len(fields)
    now = ctx.now_ms()
    out: list[int] = []
    for field in fields:
        if field not in h:
            out.append(NO_FIELD)
            continue
        when = h.ttl.get(field)
        if when is None:
            out.append(NO_TTL)
            continue
        base = 0 if absolute else now
        out.append((when + 999 - base) // 1000 if seconds else when - base)
    return out


_GETTER: dict[str, Any] = dict(
    arity=-5, flags="readonly fast", keys=(1, 1, 1), group="hash", since="7.4.0",
    complexity="O(N) where N is the number of specified fields")


@command("httl", **_GETTER, summary="Returns the TTL in seconds of a hash field.")
def httl(ctx: Ctx, argv: list[bytes]) -> object:
    """HTTL key FIELDS numfields field [field ...]"""
    return _ttl_generic(ctx, argv, seconds=True, absolute=False)


@command("hpttl", **_GETTER, summary="Returns the TTL in milliseconds of a hash field.")
def hpttl(ctx: Ctx, argv: list[bytes]) -> object:
    """HPTTL key FIELDS numfields field [field ...]"""
    return _ttl_generic(ctx, argv, seconds=False, absolute=False)


@command("hexpiretime", **_GETTER, summary="Returns the expiration time of a hash field as a "
                                           "Unix timestamp, in seconds.")
def hexpiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """HEXPIRETIME key FIELDS numfields field [field ...]"""
    return _ttl_generic(ctx, argv, seconds=True, absolute=True)


@command("hpexpiretime", **_GETTER, summary="Returns the expiration time of a hash field as a "
                                            "Unix timestamp, in msec.")
def hpexpiretime(ctx: Ctx, argv: list[bytes]) -> object:
    """HPEXPIRETIME key FIELDS numfields field [field ...]"""
    return _ttl_generic(ctx, argv, seconds=False, absolute=True)


@command("hpersist", arity=-5, flags="write fast", keys=(1, 1, 1), group="hash",
         since="7.4.0", complexity="O(N) where N is the number of specified fields",
         summary="Removes the expiration time for each specified field")
def hpersist(ctx: Ctx, argv: list[bytes]) -> object:
    """HPERSIST key FIELDS numfields field [field ...]"""
    key = argv[1]
    h = _hash(ctx, key, read=False)
    fields = _fields(argv, 2, NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [NO_FIELD] * len(fields)
    out = []
    for field in fields:
        if field not in h:
            out.append(NO_FIELD)
        else:
            out.append(1 if h.persist(field) else NO_TTL)
    if 1 in out:
        ctx.modified(key)
        ctx.propagate_argv()
        persisted = [f for f, code in zip(fields, out) if code == 1]
        ctx.notify(NOTIFY_HASH, b"hpersist", key, persisted)
    return out


# -- Redis 8.0: HGETEX, HSETEX ----------------------------------------------------------
_UNITS = {b"EX": (True, False), b"PX": (False, False), b"EXAT": (True, True),
          b"PXAT": (False, True)}


@command("hgetex", arity=-5, flags="write fast", keys=(1, 1, 1), group="hash",
         since="8.0.0", complexity="O(N) where N is the number of specified fields",
         summary="Get the value of one or more fields of a given hash key, and optionally "
                 "set their expiration.")
def hgetex(ctx: Ctx, argv: list[bytes]) -> object:
    """HGETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds |
    PXAT unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]"""
    key = argv[1]
    h = _hash(ctx, key, read=False)
    option = argv[2].upper()
    at, when, persist = 2, None, False
    if option in _UNITS:  # one option at most, right after the key (as Redis parses it)
        when = _deadline(ctx, argv[3], *_UNITS[option])
        at = 4
    elif option == b"PERSIST":
        persist, at = True, 3
    fields = _fields(argv, at, NUMFIELDS_NOT_POSITIVE)
    if h is None:
        return [None] * len(fields)
    values = [h.get(field) for field in fields]
    present = list(dict.fromkeys(f for f, v in zip(fields, values) if v is not None))
    if persist:
        persisted = [f for f in present if h.persist(f)]
        if persisted:
            ctx.modified(key)
            ctx.effect([b"HPERSIST", key, *argv[at:]])
            ctx.notify(NOTIFY_HASH, b"hpersist", key, persisted)
    elif when is not None and present:
        if when <= ctx.now_ms():
            for field in present:
                h.delete(field)
                ctx.effect([b"HDEL", key, field])
            ctx.notify(NOTIFY_HASH, b"hdel", key, present)
            _drop_if_empty(ctx, key, h)
        else:
            for field in present:
                h.set_ttl(field, when)
            ctx.db.track_fields(key, when)
            ctx.effect([b"HPEXPIREAT", key, b"%d" % when, *argv[at:]])
            ctx.notify(NOTIFY_HASH, b"hexpire", key, present)
        ctx.modified(key, len(present))
    ctx.no_propagation()
    return values


def _hsetex_args(ctx: Ctx, argv: list[bytes]) -> tuple[bytes | None, int | None, bool, int,
                                                           int]:
    """HSETEX's options, parsed as Redis does before it looks at the key:
    (FNX/FXX, deadline, KEEPTTL, where the deadline argument is (0: none),
    where FIELDS is)."""
    cond, when, keepttl, when_at = None, None, False, 0
    r = ArgReader(argv, start=2)
    while r.more():
        at = r.pos
        arg = r.next_bytes()
        option = arg.upper()
        if option == b"FIELDS":
            if r.remaining() < 3:
                raise wrong_arity(argv[0])
            numfields = r.next_int(HSETEX_NUMFIELDS)
            if not 1 <= numfields <= INT32_MAX:
                raise CommandError(HSETEX_NUMFIELDS)
            remaining = r.remaining()
            if remaining % 2 or numfields != remaining // 2:
                raise wrong_arity(argv[0])
            return cond, when, keepttl, when_at, at
        if option in _UNITS or option == b"KEEPTTL":
            if when is not None or keepttl:
                raise CommandError(HSETEX_TTL_ONE)
            if option == b"KEEPTTL":
                keepttl = True
            else:
                if not r.more():
                    raise CommandError(HSETEX_MISSING_EXPIRE)
                when_at = r.pos
                when = _deadline(ctx, r.next_bytes(), *_UNITS[option])
        elif option in (b"FNX", b"FXX"):
            if cond is not None:
                raise CommandError(HSETEX_FNX_FXX)
            cond = option
        else:
            raise CommandError(HSETEX_UNKNOWN_ARGUMENT % arg)
    raise CommandError(FIELDS_MISSING)


@command("hsetex", arity=-6, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="8.0.0", complexity="O(N) where N is the number of fields being set.",
         summary="Set the value of one or more fields of a given hash key, and optionally "
                 "set their expiration.")
def hsetex(ctx: Ctx, argv: list[bytes]) -> object:
    """HSETEX key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds |
    PXAT unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]"""
    key = argv[1]
    cond, when, keepttl, when_at, at = _hsetex_args(ctx, argv)
    pairs = argv[at + 2:]
    fields = pairs[0::2]
    h = _hash(ctx, key, read=False)
    if cond == b"FNX" and h is not None and any(f in h for f in fields):
        return 0
    if cond == b"FXX" and (h is None or not all(f in h for f in fields)):
        return 0
    if h is None:
        h = Hash()
        ctx.db.set(key, h)
        ctx.ready(key)
    longest = 0
    for i in range(0, len(pairs), 2):
        h.set(pairs[i], pairs[i + 1], keep_ttl=keepttl)
        longest = max(longest, len(pairs[i]), len(pairs[i + 1]))
    h.convert_if(ctx.config["hash-max-listpack-entries"],
                 ctx.config["hash-max-listpack-value"], longest)
    if when is not None and when <= ctx.now_ms():
        # A deadline already past deletes the fields: propagated as HDELs
        # only, and one hexpired event (no hset), as Redis 8.0 sends.
        ctx.notify(NOTIFY_HASH, b"hexpired", key, list(dict.fromkeys(fields)))
        for field in dict.fromkeys(fields):
            h.delete(field)
            ctx.effect([b"HDEL", key, field])
        _drop_if_empty(ctx, key, h)
    elif when is not None:
        for field in fields:
            h.set_ttl(field, when)
        ctx.db.track_fields(key, when)
        ctx.notify(NOTIFY_HASH, b"hset", key, fields)
        ctx.notify(NOTIFY_HASH, b"hexpire", key, fields)
        rewritten = list(argv)  # EX/PX/EXAT become PXAT <abs ms>, in place
        rewritten[when_at - 1:when_at + 1] = [b"PXAT", b"%d" % when]
        ctx.effect(rewritten)
    else:
        ctx.notify(NOTIFY_HASH, b"hset", key, fields)
        ctx.propagate_argv()
    ctx.modified(key, len(fields))
    return 1
