"""Plain strings: the whole-value commands.

GET, MGET, GETDEL, GETEX; SET (every option, 8.4's IFEQ/IFNE/IFDEQ/IFDNE
among them), SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX, MSETEX; the
counters INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT.  8.4's DELEX and DIGEST
are in :mod:`.string_conditions`, 8.8's INCREX in :mod:`.string_increx`.  The
commands on parts of a string (APPEND, STRLEN, GETRANGE, SETRANGE, LCS) are
in :mod:`.string_ranges`.

A string is stored as ``bytes``.  Propagation follows Redis 7: a relative
expiry (``SET ... EX/PX/EXAT``, SETEX, PSETEX) goes out as ``SET key value
PXAT <abs-ms>`` (dropping NX/XX/GET), GETEX as ``PEXPIREAT``/``PERSIST``/
``DEL``, GETSET as ``SET``, GETDEL as ``DEL`` and INCRBYFLOAT as ``SET key
<new value> KEEPTTL``, so replicas and the AOF reach the same state whatever
their clock or float formatting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC, NOTIFY_STRING
from ...errors import (
    DECR_OVERFLOW,
    INCR_OVERFLOW,
    INCRBYFLOAT_NAN_OR_INF,
    MSETEX_INVALID_NUMKEYS,
    MSETEX_WRONG_PAIRS,
    NOT_A_FLOAT,
    SYNTAX,
    WRONGTYPE,
    CommandError,
    invalid_expire,
    wrong_arity,
)
from ...resp.replies import OK
from ...types import longdouble
from ..args import INT64_MAX, INT64_MIN, ArgReader, parse_int
from ..encoding import mark_string_encoding
from ..key_specs import ks
from ..lookup import key_arguments, lookup_read
from ..table import command
from .string_digest import CONDITIONS, condition_holds

if TYPE_CHECKING:
    from ..contract import Ctx


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
         summary="Get the values of all the given keys",
         tips=("request_policy:multi_shard",))
def mget(ctx: Ctx, argv: list[bytes]) -> object:
    """MGET key [key ...]"""
    values = []
    for key in key_arguments(argv):
        value = lookup_read(ctx, key)
        values.append(value if type(value) is bytes else None)
    return values


# -- expiry arguments -------------------------------------------------------------
_EXPIRE_OPTIONS = (b"EX", b"PX", b"EXAT", b"PXAT")
_RELATIVE = (b"EX", b"PX")
_IN_SECONDS = (b"EX", b"EXAT")


def deadline_ms(ctx: Ctx, option: bytes, arg: bytes) -> int:
    """The absolute Unix ms an expiry option names; Redis's errors (not an
    integer; not positive or overflowing: invalid expire time)."""
    when = parse_int(arg)
    seconds = option in _IN_SECONDS
    if when <= 0 or (seconds and when > INT64_MAX // 1000):
        raise invalid_expire(ctx.argv[0])
    if seconds:
        when *= 1000
    if option in _RELATIVE:
        now = ctx.now_ms()
        if when > INT64_MAX - now:
            raise invalid_expire(ctx.argv[0])
        when += now
    return when


def _store(ctx: Ctx, key: bytes, value: bytes, when: int | None = None,
           keep_ttl: bool = False) -> None:
    """Write a whole string (replacing any value and, unless keep_ttl, its
    TTL) and do the bookkeeping of a write.  O(1)."""
    db = ctx.db
    db.set(key, value, keep_ttl=keep_ttl)
    if when is not None:
        db.set_expire(key, when)
    ctx.modified(key)
    ctx.notify(NOTIFY_STRING, b"set", key)
    if when is not None:
        ctx.notify(NOTIFY_GENERIC, b"expire", key)
    ctx.ready(key)  # a stream replaced by a string: its blocked XREADGROUPs fail


def _propagate_set(ctx: Ctx, key: bytes, value: bytes, when: int | None,
                   absolute_ms: bool) -> None:
    """SET with a deadline not given in ms goes out as ``SET k v PXAT ms``."""
    if when is not None and not absolute_ms:
        ctx.effect([b"SET", key, value, b"PXAT", str(when).encode()])
    else:
        ctx.propagate_argv()


# -- SET and its variants -----------------------------------------------------------
# SET's options, and the ones each excludes (Redis's parseExtendedStringArguments):
# NX, XX and the four conditions are one choice.
_EXISTENCE = {b"NX", b"XX", *CONDITIONS}
_EXCLUDES = {
    b"NX": {b"XX", *CONDITIONS}, b"XX": {b"NX", *CONDITIONS},
    **{opt: _EXISTENCE for opt in CONDITIONS}, b"GET": set(),
    b"KEEPTTL": set(_EXPIRE_OPTIONS),
    **{opt: {b"KEEPTTL", *(o for o in _EXPIRE_OPTIONS if o != opt)} for opt in _EXPIRE_OPTIONS},
}
_NO_OPTIONS: frozenset[bytes] = frozenset()


@command("set", arity=-3, flags="write denyoom", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Set the string value of a key",
         key_specs=[ks("RW access update variable_flags", 1,
                       notes="RW and ACCESS due to the optional `GET` argument")])
def set_(ctx: Ctx, argv: list[bytes]) -> object:
    """SET key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest] [GET] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""  # noqa: E501 (the syntax line, whole)
    # With a condition (8.4) the write goes out as the plain SET it amounts to
    # (SET k v, with PXAT ms or KEEPTTL), and nothing when the condition fails.
    key, value = argv[1], argv[2]
    given: set[bytes] | frozenset[bytes] = _NO_OPTIONS
    expire_option = expire_arg = None
    condition = condition_arg = None
    if len(argv) > 3:  # the plain SET key value skips the cursor
        given = set()
        r = ArgReader(argv, 3)
        while r.more():
            option = r.next_upper()
            if option not in _EXCLUDES or given & _EXCLUDES[option]:
                raise CommandError(SYNTAX)
            if option in _EXPIRE_OPTIONS:
                expire_option, expire_arg = option, r.next_bytes()
            elif option in CONDITIONS:
                condition, condition_arg = option, r.next_bytes()
            given.add(option)
        r.finish()
    when = None
    if expire_option is not None:
        when = deadline_ms(ctx, expire_option, expire_arg)  # type: ignore[arg-type]
    reply: object = OK
    if condition is not None:
        current = _read_string(ctx, key)  # WRONGTYPE with or without GET
        if b"GET" in given:
            reply = current  # the old value, whether the condition holds or not
        if not condition_holds(current, condition, condition_arg):  # type: ignore[arg-type]
            return reply if b"GET" in given else None
        keep_ttl = b"KEEPTTL" in given
        _store(ctx, key, value, when, keep_ttl=keep_ttl)
        effect = [b"SET", key, value]
        if when is not None:
            effect += [b"PXAT", str(when).encode()]
        elif keep_ttl:
            effect.append(b"KEEPTTL")
        ctx.effect(effect)
        return reply
    if b"GET" in given:
        reply = _read_string(ctx, key)
    found = ctx.db.get(key) is not None  # with GET a second lookup, as in Redis (LFU counts it)
    if (b"NX" in given and found) or (b"XX" in given and not found):
        return reply if b"GET" in given else None
    _store(ctx, key, value, when, keep_ttl=b"KEEPTTL" in given)
    _propagate_set(ctx, key, value, when, expire_option == b"PXAT")
    return reply


@command("setnx", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Set the value of a key, only if the key does not exist",
         key_specs=[ks("OW insert", 1)])
def setnx(ctx: Ctx, argv: list[bytes]) -> object:
    """SETNX key value"""
    key = argv[1]
    if ctx.db.get(key) is not None:
        return 0
    _store(ctx, key, argv[2])
    ctx.propagate_argv()
    return 1


def _setex(ctx: Ctx, argv: list[bytes], option: bytes) -> object:
    key, value = argv[1], argv[3]
    when = deadline_ms(ctx, option, argv[2])
    _store(ctx, key, value, when)
    _propagate_set(ctx, key, value, when, absolute_ms=False)
    return OK


@command("setex", arity=4, flags="write denyoom", keys=(1, 1, 1), group="string",
         since="2.0.0", complexity="O(1)",
         summary="Set the value and expiration of a key",
         key_specs=[ks("OW update", 1)])
def setex(ctx: Ctx, argv: list[bytes]) -> object:
    """SETEX key seconds value"""
    return _setex(ctx, argv, b"EX")


@command("psetex", arity=4, flags="write denyoom", keys=(1, 1, 1), group="string",
         since="2.6.0", complexity="O(1)",
         summary="Set the value and expiration in milliseconds of a key",
         key_specs=[ks("OW update", 1)])
def psetex(ctx: Ctx, argv: list[bytes]) -> object:
    """PSETEX key milliseconds value"""
    return _setex(ctx, argv, b"PX")


@command("getset", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Set the string value of a key and return its old value",
         key_specs=[ks("RW access update", 1)])
def getset(ctx: Ctx, argv: list[bytes]) -> object:
    """GETSET key value"""
    key, value = argv[1], argv[2]
    old = _read_string(ctx, key)
    _store(ctx, key, value)
    ctx.effect([b"SET", key, value])
    return old


@command("getdel", arity=2, flags="write fast", keys=(1, 1, 1), group="string",
         since="6.2.0", complexity="O(1)", summary="Get the value of a key and delete the key",
         key_specs=[ks("RW access delete", 1)])
def getdel(ctx: Ctx, argv: list[bytes]) -> object:
    """GETDEL key"""
    key = argv[1]
    value = _read_string(ctx, key)
    if value is not None:
        ctx.db.delete(key)
        ctx.modified(key)
        ctx.ready(key)
        ctx.effect([b"DEL", key])
        ctx.notify(NOTIFY_GENERIC, b"del", key)
    return value


# GETEX's options and the ones each excludes (PERSIST is GETEX's own).
_GETEX_EXCLUDES = {
    b"PERSIST": set(_EXPIRE_OPTIONS),
    **{opt: {b"PERSIST", *(o for o in _EXPIRE_OPTIONS if o != opt)} for opt in _EXPIRE_OPTIONS},
}


@command("getex", arity=-2, flags="write fast", keys=(1, 1, 1), group="string",
         since="6.2.0", complexity="O(1)",
         summary="Get the value of a key and optionally set its expiration",
         key_specs=[ks("RW access update", 1, notes="RW and UPDATE because it changes the TTL")])
def getex(ctx: Ctx, argv: list[bytes]) -> object:
    """GETEX key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST]"""  # noqa: E501 (the syntax line, whole)
    key = argv[1]
    given: set[bytes] = set()
    expire_option = expire_arg = None
    r = ArgReader(argv, 2)
    while r.more():
        option = r.next_upper()
        if option not in _GETEX_EXCLUDES or given & _GETEX_EXCLUDES[option]:
            raise CommandError(SYNTAX)
        if option in _EXPIRE_OPTIONS:
            expire_option, expire_arg = option, r.next_bytes()
        given.add(option)
    value = _read_string(ctx, key)  # a missing key answers nil before any expiry check
    if value is None:
        return None
    when = None
    if expire_option is not None:
        when = deadline_ms(ctx, expire_option, expire_arg)  # type: ignore[arg-type]
    db = ctx.db
    if when is not None:
        if (expire_option not in _RELATIVE and when <= ctx.now_ms()
                and ctx.client.kind not in ("aof", "master")):
            # A deadline already past: the key goes now (a replayed AOF or a
            # master's stream stores it as given, as Redis does).
            db.delete(key)
            ctx.modified(key)
            ctx.ready(key)
            ctx.effect([b"DEL", key])
            ctx.notify(NOTIFY_GENERIC, b"del", key)
        else:
            db.set_expire(key, when)
            ctx.modified(key)
            ctx.effect([b"PEXPIREAT", key, str(when).encode()])
            ctx.notify(NOTIFY_GENERIC, b"expire", key)
    elif b"PERSIST" in given and db.persist(key):
        ctx.modified(key)
        ctx.effect([b"PERSIST", key])
        ctx.notify(NOTIFY_GENERIC, b"persist", key)
    return value


def _mset_pairs(argv: list[bytes]) -> list[bytes]:
    if len(argv) % 2 == 0:
        raise wrong_arity(argv[0])
    return argv


@command("mset", arity=-3, flags="write denyoom", keys=(1, -1, 2), group="string",
         since="1.0.1", complexity="O(N) where N is the number of keys to set.",
         summary="Set multiple keys to multiple values",
         tips=("request_policy:multi_shard", "response_policy:all_succeeded"),
         key_specs=[ks("OW update", 1, -1, 2)])
def mset(ctx: Ctx, argv: list[bytes]) -> object:
    """MSET key value [key value ...]"""
    _mset_pairs(argv)
    for i in range(1, len(argv), 2):
        _store(ctx, argv[i], argv[i + 1])
    ctx.propagate_argv()
    return OK


@command("msetnx", arity=-3, flags="write denyoom", keys=(1, -1, 2), group="string",
         since="1.0.1", complexity="O(N) where N is the number of keys to set.",
         summary="Set multiple keys to multiple values, only if none of the keys exist",
         tips=("request_policy:multi_shard", "response_policy:agg_min"),
         key_specs=[ks("OW insert", 1, -1, 2)])
def msetnx(ctx: Ctx, argv: list[bytes]) -> object:
    """MSETNX key value [key value ...]"""
    _mset_pairs(argv)
    db = ctx.db
    for i in range(1, len(argv), 2):
        if db.get(argv[i]) is not None:
            return 0
    for i in range(1, len(argv), 2):
        _store(ctx, argv[i], argv[i + 1])
    ctx.propagate_argv()
    return 1


# MSETEX's options and the ones each excludes (NX/XX, then one expiry or KEEPTTL).
_MSETEX_EXCLUDES = {
    b"NX": {b"XX"}, b"XX": {b"NX"},
    **{opt: excluded for opt, excluded in _EXCLUDES.items() if opt == b"KEEPTTL" or opt in _EXPIRE_OPTIONS},
}
_INT32_MAX = 2**31 - 1


@command("msetex", arity=-4, flags="write denyoom movablekeys", group="string", since="8.4.0",
         complexity="O(N) where N is the number of keys to set.",
         summary="Atomically sets multiple string keys with a shared expiration in a single "
                 "operation. Supports flexible argument parsing where condition and expiration "
                 "flags can appear in any order.",
         key_specs=[ks("OW update", 1, keynum=(0, 1, 2))])
def msetex(ctx: Ctx, argv: list[bytes]) -> object:
    """MSETEX numkeys key value [key value ...] [NX | XX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]"""  # noqa: E501 (the syntax line, whole)
    # 1 when every key is set, 0 when NX or XX fails for one of them.  Goes out
    # as MSETEX numkeys k v ... with PXAT <abs-ms> or KEEPTTL, without NX/XX.
    numkeys = parse_int(argv[1], MSETEX_INVALID_NUMKEYS)
    if not 1 <= numkeys <= _INT32_MAX:
        raise CommandError(MSETEX_INVALID_NUMKEYS)
    end = 2 + 2 * numkeys
    if end > len(argv):
        raise CommandError(MSETEX_WRONG_PAIRS)
    given: set[bytes] = set()
    expire_option = expire_arg = None
    r = ArgReader(argv, end)
    while r.more():
        option = r.next_upper()
        if option not in _MSETEX_EXCLUDES or given & _MSETEX_EXCLUDES[option]:
            raise CommandError(SYNTAX)
        if option in _EXPIRE_OPTIONS:
            expire_option, expire_arg = option, r.next_bytes()
        given.add(option)
    when = None
    if expire_option is not None:
        when = deadline_ms(ctx, expire_option, expire_arg)  # type: ignore[arg-type]
    db = ctx.db
    if given & {b"NX", b"XX"}:
        want = b"XX" in given
        for i in range(2, end, 2):
            if (db.get(argv[i]) is not None) != want:
                return 0
    keep_ttl = b"KEEPTTL" in given
    for i in range(2, end, 2):
        _store(ctx, argv[i], argv[i + 1], when, keep_ttl=keep_ttl)
    effect = [b"MSETEX", *argv[1:end]]
    if when is not None:
        effect += [b"PXAT", str(when).encode()]
    elif keep_ttl:
        effect.append(b"KEEPTTL")
    ctx.effect(effect)
    return 1


# -- counters -------------------------------------------------------------------------
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
    ctx.notify(NOTIFY_STRING, b"incrby", key)
    if current is None:
        ctx.ready(key)
    ctx.propagate_argv()
    return new


@command("incr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)", summary="Increment the integer value of a key by one",
         key_specs=[ks("RW access update", 1)])
def incr(ctx: Ctx, argv: list[bytes]) -> object:
    """INCR key"""
    return _incr(ctx, argv[1], 1)


@command("decr", arity=2, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)", summary="Decrement the integer value of a key by one",
         key_specs=[ks("RW access update", 1)])
def decr(ctx: Ctx, argv: list[bytes]) -> object:
    """DECR key"""
    return _incr(ctx, argv[1], -1)


@command("incrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Increment the integer value of a key by the given amount",
         key_specs=[ks("RW access update", 1)])
def incrby(ctx: Ctx, argv: list[bytes]) -> object:
    """INCRBY key increment"""
    return _incr(ctx, argv[1], parse_int(argv[2]))


@command("decrby", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="1.0.0", complexity="O(1)",
         summary="Decrement the integer value of a key by the given number",
         key_specs=[ks("RW access update", 1)])
def decrby(ctx: Ctx, argv: list[bytes]) -> object:
    """DECRBY key decrement"""
    by = parse_int(argv[2])
    if by == INT64_MIN:
        raise CommandError(DECR_OVERFLOW)
    return _incr(ctx, argv[1], -by)


@command("incrbyfloat", arity=3, flags="write denyoom fast", keys=(1, 1, 1), group="string",
         since="2.6.0", complexity="O(1)",
         summary="Increment the float value of a key by the given amount",
         key_specs=[ks("RW access update", 1)])
def incrbyfloat(ctx: Ctx, argv: list[bytes]) -> object:
    """INCRBYFLOAT key increment

    Computed as Redis does, in an x87 ``long double`` (emulated exactly by
    :mod:`tidelog.types.longdouble`).  O(d^2) in the digits of the values."""
    key = argv[1]
    current = ctx.db.get(key)
    if current is not None and type(current) is not bytes:
        raise CommandError(WRONGTYPE)
    old = longdouble.parse(current) if current is not None else longdouble.ZERO
    by = longdouble.parse(argv[2])
    if old is None or by is None:
        raise CommandError(NOT_A_FLOAT)
    total = longdouble.add(old, by)
    if total is None:
        raise CommandError(INCRBYFLOAT_NAN_OR_INF)
    new = longdouble.format_human(total)
    # Redis makes a new plain string object: never "int", even for "3".
    mark_string_encoding(new, b"embstr" if len(new) <= 44 else b"raw")
    ctx.db.set(key, new, keep_ttl=True)
    ctx.modified(key)
    ctx.notify(NOTIFY_STRING, b"incrbyfloat", key)
    if current is None:
        ctx.ready(key)
    ctx.effect([b"SET", key, new, b"KEEPTTL"])
    return new
