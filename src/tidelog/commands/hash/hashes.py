"""Hashes: HSET, HSETNX, HGET, HMGET, HMSET, HDEL, HEXISTS, HGETALL, HKEYS,
HVALS, HLEN, HSTRLEN, HINCRBY, HINCRBYFLOAT, HRANDFIELD, HSCAN and Redis
8.0's HGETDEL.  (Field expiry -- HEXPIRE, HGETEX, HSETEX -- is in
:mod:`.hash_ttl`; HSET clears a field's TTL, HINCRBY and HINCRBYFLOAT keep it.)

The value is a :class:`~tidelog.types.hash.Hash`.  Every write checks the
encoding thresholds (``hash-max-listpack-entries``,
``hash-max-listpack-value``) after it, as Redis converts a listpack to a
hashtable when a write passes them.  An emptied hash is deleted.

Propagation: the writes go to the AOF and replicas as they came, except
HINCRBYFLOAT, which goes as ``HSET key field <new value>`` (as in Redis, so
a replica does not redo the float arithmetic), and HGETDEL, which goes as
``HDEL key field ...``.  A write that changed nothing
(HDEL of absent fields, HSETNX of a present one) propagates nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...config import NOTIFY_GENERIC, NOTIFY_HASH
from ...errors import (
    FIELDS_MISSING,
    HASH_VALUE_NOT_FLOAT,
    HASH_VALUE_NOT_INTEGER,
    INCR_OVERFLOW,
    INCRBYFLOAT_NAN_OR_INF,
    NOT_A_FLOAT,
    NUMFIELDS_MISMATCH,
    NUMFIELDS_NOT_POSITIVE,
    SYNTAX,
    VALUE_NAN_OR_INFINITY,
    VALUE_OUT_OF_RANGE,
    WRONGTYPE,
    CommandError,
    value_out_of_range_between,
    wrong_arity,
)
from ...glob import glob_match
from ...resp.replies import OK, Map
from ...types import longdouble
from ...types.hash import Hash
from ..args import INT64_MAX, INT64_MIN, parse_int
from ..key_specs import ND, ks
from ..lookup import lookup_read
from ..scan_args import parse_cursor, parse_scan_options
from ..table import command

if TYPE_CHECKING:
    from ..contract import Ctx


# -- lookups ----------------------------------------------------------------------
def _read(ctx: Ctx, key: bytes) -> Hash | None:
    """The hash at key for a read (counted in keyspace hits/misses)."""
    value = lookup_read(ctx, key)
    if value is None or type(value) is Hash:
        return value
    raise CommandError(WRONGTYPE)


def _write(ctx: Ctx, key: bytes) -> Hash:
    """The hash at key, created (empty, stored) when missing."""
    h = ctx.db.get_typed(key, Hash)
    if h is None:
        h = Hash()
        ctx.db.set(key, h)
        ctx.ready(key)
    return h


def _limits(ctx: Ctx) -> tuple[int, int]:
    config = ctx.config
    return config["hash-max-listpack-entries"], config["hash-max-listpack-value"]


def _set_pairs(ctx: Ctx, h: Hash, pairs: list[bytes], keep_ttl: bool = False) -> int:
    """Set field/value pairs (a field's TTL goes, unless ``keep_ttl``); the
    number of new fields.  O(pairs)."""
    added = 0
    longest = 0
    for i in range(0, len(pairs), 2):
        field, value = pairs[i], pairs[i + 1]
        added += h.set(field, value, keep_ttl)
        longest = max(longest, len(field), len(value))
    h.convert_if(*_limits(ctx), longest)
    return added


# -- writes -----------------------------------------------------------------------
@command("hset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1) for each field/value pair added, so O(N) to add N "
                                   "field/value pairs when the command is called with "
                                   "multiple field/value pairs.",
         summary="Set the string value of a hash field")
def hset(ctx: Ctx, argv: list[bytes]) -> object:
    """HSET key field value [field value ...]"""
    if len(argv) % 2:
        raise wrong_arity(argv[0])
    key = argv[1]
    added = _set_pairs(ctx, _write(ctx, key), argv[2:])
    ctx.modified(key, (len(argv) - 2) // 2)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_HASH, b"hset", key, argv[2::2])
    return added


@command("hmset", arity=-4, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the number of fields being set.",
         summary="Set multiple hash fields to multiple values")
def hmset(ctx: Ctx, argv: list[bytes]) -> object:
    """HMSET key field value [field value ...]"""
    hset(ctx, argv)
    return OK


@command("hsetnx", arity=4, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1)",
         summary="Set the value of a hash field, only if the field does not exist",
         key_specs=[ks("RW insert", 1)])
def hsetnx(ctx: Ctx, argv: list[bytes]) -> object:
    """HSETNX key field value"""
    key = argv[1]
    h = ctx.db.get_typed(key, Hash)
    if h is not None and argv[2] in h:
        return 0
    if h is None:
        h = _write(ctx, key)
    _set_pairs(ctx, h, argv[2:4])
    ctx.modified(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_HASH, b"hset", key, [argv[2]])
    return 1


@command("hdel", arity=-3, flags="write fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the number of fields to be removed.",
         summary="Delete one or more hash fields",
         key_specs=[ks("RW delete", 1)])
def hdel(ctx: Ctx, argv: list[bytes]) -> object:
    """HDEL key field [field ...]"""
    key = argv[1]
    h = ctx.db.get_typed(key, Hash)
    if h is None:
        return 0
    gone = []
    for field in argv[2:]:
        if h.delete(field):
            gone.append(field)
        if not len(h):
            break
    deleted = len(gone)
    if deleted:
        ctx.notify(NOTIFY_HASH, b"hdel", key, gone)
        if not len(h):
            ctx.db.delete(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
        ctx.modified(key, deleted)
        ctx.propagate_argv()
    return deleted


@command("hgetdel", arity=-5, flags="write fast", keys=(1, 1, 1), group="hash",
         since="8.0.0", complexity="O(N) where N is the number of specified fields",
         summary="Returns the value of a field and deletes it from the hash.",
         key_specs=[ks("RW access delete", 1)])
def hgetdel(ctx: Ctx, argv: list[bytes]) -> object:
    """HGETDEL key FIELDS numfields field [field ...]"""
    key = argv[1]
    h = ctx.db.get_typed(key, Hash)
    if argv[2].upper() != b"FIELDS":
        raise CommandError(FIELDS_MISSING)
    numfields = parse_int(argv[3], NUMFIELDS_NOT_POSITIVE)
    if numfields < 1:
        raise CommandError(NUMFIELDS_NOT_POSITIVE)
    if numfields != len(argv) - 4:
        raise CommandError(NUMFIELDS_MISMATCH)
    if h is None:
        return [None] * numfields
    values = []
    gone = []
    for field in argv[4:]:
        value = h.get(field)
        if value is not None:
            h.delete(field)
            gone.append(field)
        values.append(value)
    deleted = len(gone)
    if deleted:
        ctx.notify(NOTIFY_HASH, b"hdel", key, gone)
        if not len(h):
            ctx.db.delete(key)
            ctx.ready(key)
            ctx.notify(NOTIFY_GENERIC, b"del", key)
        ctx.modified(key, deleted)
        ctx.effect([b"HDEL", key, *argv[4:]])
    return values


@command("hincrby", arity=4, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1)",
         summary="Increment the integer value of a hash field by the given number",
         key_specs=[ks("RW access update", 1)])
def hincrby(ctx: Ctx, argv: list[bytes]) -> object:
    """HINCRBY key field increment"""
    key, field = argv[1], argv[2]
    by = parse_int(argv[3])
    h = _write(ctx, key)
    current = h.get(field)
    old = 0
    if current is not None:
        old = parse_int(current, HASH_VALUE_NOT_INTEGER)
    new = old + by
    if not INT64_MIN <= new <= INT64_MAX:
        raise CommandError(INCR_OVERFLOW)
    _set_pairs(ctx, h, [field, b"%d" % new], keep_ttl=True)
    ctx.modified(key)
    ctx.propagate_argv()
    ctx.notify(NOTIFY_HASH, b"hincrby", key, [field])
    return new


@command("hincrbyfloat", arity=4, flags="write denyoom fast", keys=(1, 1, 1), group="hash",
         since="2.6.0", complexity="O(1)",
         summary="Increment the float value of a hash field by the given amount",
         key_specs=[ks("RW access update", 1)])
def hincrbyfloat(ctx: Ctx, argv: list[bytes]) -> object:
    """HINCRBYFLOAT key field increment"""
    key, field = argv[1], argv[2]
    by = longdouble.parse(argv[3])
    if by is None:
        raise CommandError(NOT_A_FLOAT)
    if isinstance(by, float):  # +-inf: refused before the key is looked at
        raise CommandError(VALUE_NAN_OR_INFINITY)
    h = _write(ctx, key)
    current = h.get(field)
    old: longdouble.LongDouble = longdouble.ZERO
    if current is not None:
        parsed = longdouble.parse(current)
        if parsed is None:
            raise CommandError(HASH_VALUE_NOT_FLOAT)
        old = parsed
    new = longdouble.add(old, by)
    if new is None:
        raise CommandError(INCRBYFLOAT_NAN_OR_INF)
    text = longdouble.format_human(new)
    _set_pairs(ctx, h, [field, text], keep_ttl=True)
    ctx.modified(key)
    ctx.effect([b"HSET", key, field, text])
    ctx.notify(NOTIFY_HASH, b"hincrbyfloat", key, [field])
    when = h.ttl.get(field)
    if when is not None:  # the HSET clears the replica's TTL: give it back
        ctx.effect([b"HPEXPIREAT", key, b"%d" % when, b"FIELDS", b"1", field])
    return text


# -- reads ------------------------------------------------------------------------
@command("hget", arity=3, flags="readonly fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1)", summary="Get the value of a hash field")
def hget(ctx: Ctx, argv: list[bytes]) -> object:
    """HGET key field"""
    h = _read(ctx, argv[1])
    return None if h is None else h.get(argv[2])


@command("hmget", arity=-3, flags="readonly fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the number of fields being requested.",
         summary="Get the values of all the given hash fields")
def hmget(ctx: Ctx, argv: list[bytes]) -> object:
    """HMGET key field [field ...]"""
    h = _read(ctx, argv[1])
    if h is None:
        return [None] * (len(argv) - 2)
    return [h.get(field) for field in argv[2:]]


@command("hexists", arity=3, flags="readonly fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1)", summary="Determine if a hash field exists",
         key_specs=[ks("RO", 1)])
def hexists(ctx: Ctx, argv: list[bytes]) -> object:
    """HEXISTS key field"""
    h = _read(ctx, argv[1])
    return int(h is not None and argv[2] in h)


@command("hlen", arity=2, flags="readonly fast", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(1)", summary="Get the number of fields in a hash",
         key_specs=[ks("RO", 1)])
def hlen(ctx: Ctx, argv: list[bytes]) -> object:
    """HLEN key"""
    h = _read(ctx, argv[1])
    return 0 if h is None else len(h)


@command("hstrlen", arity=3, flags="readonly fast", keys=(1, 1, 1), group="hash",
         since="3.2.0", complexity="O(1)",
         summary="Get the length of the value of a hash field",
         key_specs=[ks("RO", 1)])
def hstrlen(ctx: Ctx, argv: list[bytes]) -> object:
    """HSTRLEN key field"""
    h = _read(ctx, argv[1])
    value = None if h is None else h.get(argv[2])
    return 0 if value is None else len(value)


@command("hgetall", arity=2, flags="readonly", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the size of the hash.",
         summary="Get all the fields and values in a hash",
         tips=("nondeterministic_output_order",))
def hgetall(ctx: Ctx, argv: list[bytes]) -> object:
    """HGETALL key"""
    h = _read(ctx, argv[1])
    return Map([] if h is None else h.items())


@command("hkeys", arity=2, flags="readonly", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the size of the hash.",
         summary="Get all the fields in a hash",
         tips=("nondeterministic_output_order",))
def hkeys(ctx: Ctx, argv: list[bytes]) -> object:
    """HKEYS key"""
    h = _read(ctx, argv[1])
    return [] if h is None else h.fields()


@command("hvals", arity=2, flags="readonly", keys=(1, 1, 1), group="hash",
         since="2.0.0", complexity="O(N) where N is the size of the hash.",
         summary="Get all the values in a hash",
         tips=("nondeterministic_output_order",))
def hvals(ctx: Ctx, argv: list[bytes]) -> object:
    """HVALS key"""
    h = _read(ctx, argv[1])
    return [] if h is None else h.values()


_LONG_MAX = INT64_MAX


@command("hrandfield", arity=-2, flags="readonly", keys=(1, 1, 1), group="hash",
         since="6.2.0", complexity="O(N) where N is the number of fields returned",
         summary="Get one or multiple random fields from a hash",
         tips=(ND,))
def hrandfield(ctx: Ctx, argv: list[bytes]) -> object:
    """HRANDFIELD key [count [WITHVALUES]]"""
    if len(argv) == 2:
        h = _read(ctx, argv[1])
        if h is None:
            return None
        return h.random_items(1, False)[0][0]
    if len(argv) > 4 or (len(argv) == 4 and argv[3].upper() != b"WITHVALUES"):
        raise CommandError(SYNTAX)
    withvalues = len(argv) == 4
    count = parse_int(argv[2])
    if count < -_LONG_MAX:
        raise value_out_of_range_between(-_LONG_MAX, _LONG_MAX)
    if withvalues and not -(_LONG_MAX // 2) <= count <= _LONG_MAX // 2:
        raise CommandError(VALUE_OUT_OF_RANGE)
    h = _read(ctx, argv[1])
    if h is None or count == 0:
        return []
    pairs = h.random_items(abs(count), count > 0)
    if not withvalues:
        return [field for field, _ in pairs]
    if ctx.client.protocol >= 3:
        return [[field, value] for field, value in pairs]
    out: list[bytes] = []
    for pair in pairs:
        out += pair
    return out


@command("hscan", arity=-3, flags="readonly", keys=(1, 1, 1), group="hash",
         since="2.8.0", complexity="O(1) for every call. O(N) for a complete iteration, "
                                   "including enough command calls for the cursor to return "
                                   "back to 0. N is the number of elements inside the "
                                   "collection.",
         summary="Incrementally iterate hash fields and associated values",
         tips=(ND,))
def hscan(ctx: Ctx, argv: list[bytes]) -> object:
    """HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]"""
    cursor = parse_cursor(argv[2])
    h = _read(ctx, argv[1])
    if h is None:
        return [b"0", []]
    opts = parse_scan_options(argv, 3, keys_only_word=b"NOVALUES")  # NOVALUES: Redis 7.4
    pattern, novalues = opts.pattern, opts.keys_only
    cursor, fields = h.scan(cursor, opts.count)
    out: list[bytes] = []
    for field in fields:
        if pattern is not None and not glob_match(pattern, field):
            continue
        out.append(field)
        if not novalues:
            out.append(h.map[field])
    return [str(cursor).encode(), out]
